#include "mcp/auth/token_validator.h"

#include <cjose/cjose.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

namespace slurm_rca::mcp::auth {

using Json = nlohmann::json;

struct KeySet::Key {
  cjose_jwk_t* jwk = nullptr;
  std::optional<std::string> kid;
  cjose_jwk_kty_t kty = CJOSE_JWK_KTY_RSA;
  ~Key() {
    if (jwk) cjose_jwk_release(jwk);
  }
};

KeySet::KeySet() = default;
KeySet::~KeySet() = default;
KeySet::KeySet(KeySet&&) noexcept = default;
KeySet& KeySet::operator=(KeySet&&) noexcept = default;

std::size_t KeySet::size() const { return keys_.size(); }

std::vector<std::string> KeySet::KeyIds() const {
  std::vector<std::string> out;
  for (const auto& k : keys_) out.push_back(k->kid.value_or(""));
  return out;
}

const KeySet::Key* KeySet::Find(const std::optional<std::string>& kid) const {
  if (!kid) return keys_.size() == 1 ? keys_.front().get() : nullptr;
  for (const auto& k : keys_) {
    if (k->kid && *k->kid == *kid) return k.get();
  }
  return nullptr;
}

base::Result<KeySet> KeySet::FromJwks(std::string_view jwks_json) {
  Json doc = Json::parse(jwks_json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return base::Status::InvalidArgument("the key set is not a JSON object");
  }
  if (!doc.contains("keys") || !doc["keys"].is_array()) {
    return base::Status::InvalidArgument("the key set has no \"keys\" array");
  }
  KeySet set;
  std::size_t index = 0;
  for (const Json& entry : doc["keys"]) {
    const std::string where = "keys[" + std::to_string(index++) + "]";
    if (!entry.is_object() || !entry.contains("kty") || !entry["kty"].is_string()) {
      set.skipped_.push_back(where + ": no kty");
      continue;
    }
    const std::string kty = entry["kty"].get<std::string>();
    if (kty != "RSA" && kty != "EC") {
      set.skipped_.push_back(where + ": kty " + kty + " is not a signature key kept here (RSA, EC)");
      continue;
    }
    if (entry.contains("use") && entry["use"] != "sig") {
      set.skipped_.push_back(where + ": use is not \"sig\"");
      continue;
    }
    const std::string text = entry.dump();
    cjose_err err{};
    cjose_jwk_t* jwk = cjose_jwk_import(text.c_str(), text.size(), &err);
    if (!jwk) {
      set.skipped_.push_back(where + ": " + (err.message ? err.message : "cannot be imported"));
      continue;
    }
    auto key = std::make_unique<Key>();
    key->jwk = jwk;
    key->kty = cjose_jwk_get_kty(jwk, &err);
    if (entry.contains("kid") && entry["kid"].is_string()) key->kid = entry["kid"].get<std::string>();
    if (key->kid && set.Find(key->kid)) {
      set.skipped_.push_back(where + ": kid " + *key->kid + " twice");
      continue;
    }
    set.keys_.push_back(std::move(key));
  }
  return set;
}

const char* TokenFaultName(TokenFault f) {
  switch (f) {
    case TokenFault::kMissing: return "missing";
    case TokenFault::kTooLarge: return "too_large";
    case TokenFault::kMalformed: return "malformed";
    case TokenFault::kAlgorithm: return "algorithm";
    case TokenFault::kUnknownKey: return "unknown_key";
    case TokenFault::kSignature: return "signature";
    case TokenFault::kIssuer: return "issuer";
    case TokenFault::kAudience: return "audience";
    case TokenFault::kExpired: return "expired";
    case TokenFault::kNotYetValid: return "not_yet_valid";
    case TokenFault::kClaims: return "claims";
    case TokenFault::kIssuerUnavailable: return "issuer_unavailable";
  }
  return "unknown";
}

namespace {

// The allowlist: asymmetric signatures only, each with the key type it needs.
std::optional<cjose_jwk_kty_t> KeyTypeOf(const std::string& alg) {
  static const char* const kRsa[] = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"};
  static const char* const kEc[] = {"ES256", "ES384", "ES512"};
  for (const char* a : kRsa) {
    if (alg == a) return CJOSE_JWK_KTY_RSA;
  }
  for (const char* a : kEc) {
    if (alg == a) return CJOSE_JWK_KTY_EC;
  }
  return std::nullopt;
}

bool IsBase64Url(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

std::optional<Json> DecodeJsonPart(std::string_view part) {
  uint8_t* bytes = nullptr;
  size_t len = 0;
  cjose_err err{};
  if (!cjose_base64url_decode(part.data(), part.size(), &bytes, &len, &err)) return std::nullopt;
  std::string text(reinterpret_cast<const char*>(bytes), len);
  cjose_get_dealloc()(bytes);
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

// A claim shown in a message: short, and only printable ASCII.
std::string Shown(const Json& value) {
  std::string s = value.is_string() ? value.get<std::string>() : value.dump();
  if (s.size() > 80) s = s.substr(0, 80) + "...";
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return "\"" + s + "\"";
}

TokenCheck Refuse(TokenFault fault, std::string message, bool refetched = false) {
  TokenCheck c;
  c.refusal = TokenRefusal{fault, std::move(message)};
  c.refetched = refetched;
  return c;
}

// A NumericDate (RFC 7519): seconds since the epoch, from 0 to the end of year 9999; anything
// else (a string, a huge or negative number, not finite) is no date.
constexpr double kLastDate = 253402300799.0;
std::optional<std::int64_t> NumericDate(const Json& payload, const char* name) {
  if (!payload.contains(name)) return std::nullopt;
  const Json& v = payload[name];
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  if (!(d >= 0 && d <= kLastDate)) return std::nullopt;  // NaN fails both
  return static_cast<std::int64_t>(d);
}

}  // namespace

TokenValidator::TokenValidator(TokenPolicy policy, KeySet keys, Fetch fetch)
    : policy_(std::move(policy)),
      fetch_(std::move(fetch)),
      keys_(std::make_shared<const KeySet>(std::move(keys))) {}

std::shared_ptr<const KeySet> TokenValidator::Keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keys_;
}

std::size_t TokenValidator::KeyCount() const { return Keys()->size(); }

std::string TokenValidator::WhyNoKeys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keys_->size() == 0 ? why_empty_ : "";
}

void TokenValidator::ReplaceKeys(KeySet keys, std::string why_empty) {
  auto fresh = std::make_shared<const KeySet>(std::move(keys));
  std::lock_guard<std::mutex> lock(mu_);
  keys_ = std::move(fresh);
  why_empty_ = std::move(why_empty);
  passed_.clear();
}

bool TokenValidator::Refetch(std::int64_t now) const {
  if (!fetch_) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (last_fetch_ && now - *last_fetch_ < policy_.min_refetch_interval_s) return false;
    last_fetch_ = now;
  }
  base::Result<std::string> text = fetch_();
  base::Result<KeySet> set =
      text.ok() ? KeySet::FromJwks(*text) : base::Result<KeySet>(text.status());
  if (!set.ok() || set->size() == 0) {
    // The keys held stay: a failed refetch takes nothing away. With none held, say why.
    std::lock_guard<std::mutex> lock(mu_);
    if (keys_->size() == 0) {
      why_empty_ = set.ok() ? "the issuer's key set holds no RSA or EC signature key"
                            : set.status().message();
    }
    return false;
  }
  auto fresh = std::make_shared<const KeySet>(std::move(*set));
  std::lock_guard<std::mutex> lock(mu_);
  keys_ = std::move(fresh);
  why_empty_.clear();
  passed_.clear();
  return true;
}

TokenCheck TokenValidator::Validate(std::string_view token, std::int64_t now) const {
  if (policy_.cache_seconds > 0 && token.size() <= policy_.max_token_bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = passed_.find(std::string(token));
    if (it != passed_.end()) {
      if (now <= it->second.until) {
        TokenCheck c;
        c.principal = it->second.principal;
        c.cached = true;
        return c;
      }
      passed_.erase(it);
    }
  }
  TokenCheck c = Check(token, now);
  if (c.principal && policy_.cache_seconds > 0) {
    const std::int64_t until =
        std::min(now + policy_.cache_seconds, c.principal->expires_at + policy_.leeway_s);
    std::lock_guard<std::mutex> lock(mu_);
    if (passed_.size() >= policy_.cache_entries) passed_.clear();
    passed_[std::string(token)] = Remembered{*c.principal, until};
  }
  return c;
}

TokenCheck TokenValidator::Check(std::string_view token, std::int64_t now) const {
  if (token.size() > policy_.max_token_bytes) {
    return Refuse(TokenFault::kTooLarge, "the token is " + std::to_string(token.size()) +
                                             " bytes, over the limit of " +
                                             std::to_string(policy_.max_token_bytes));
  }
  const std::size_t dot1 = token.find('.');
  const std::size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return Refuse(TokenFault::kMalformed, "not a JWT: expected three dot-separated parts");
  }
  const std::string_view header_part = token.substr(0, dot1);
  const std::string_view payload_part = token.substr(dot1 + 1, dot2 - dot1 - 1);
  const std::string_view signature_part = token.substr(dot2 + 1);
  if (!IsBase64Url(header_part) || !IsBase64Url(payload_part)) {
    return Refuse(TokenFault::kMalformed, "not a JWT: a part is not base64url");
  }
  std::optional<Json> header = DecodeJsonPart(header_part);
  if (!header) return Refuse(TokenFault::kMalformed, "not a JWT: the header is not a JSON object");
  if (!header->contains("alg") || !(*header)["alg"].is_string()) {
    return Refuse(TokenFault::kMalformed, "the header names no algorithm");
  }
  const std::string alg = (*header)["alg"].get<std::string>();
  const std::optional<cjose_jwk_kty_t> kty = KeyTypeOf(alg);
  if (!kty) {
    return Refuse(TokenFault::kAlgorithm,
                  "algorithm " + Shown(alg) +
                      " is refused: only RS256/384/512, PS256/384/512 and ES256/384/512 are accepted");
  }
  if (header->contains("crit")) {
    return Refuse(TokenFault::kMalformed, "the header has critical extensions, none understood here");
  }
  if (!IsBase64Url(signature_part)) return Refuse(TokenFault::kSignature, "the token is unsigned");
  std::optional<std::string> kid;
  if (header->contains("kid")) {
    if (!(*header)["kid"].is_string()) return Refuse(TokenFault::kMalformed, "kid is not a string");
    kid = (*header)["kid"].get<std::string>();
  }

  std::shared_ptr<const KeySet> keys = Keys();
  if (keys->size() == 0) {
    std::string why;
    {
      std::lock_guard<std::mutex> lock(mu_);
      why = why_empty_;
    }
    bool refetched = Refetch(now);
    if (!refetched) {
      return Refuse(TokenFault::kIssuerUnavailable,
                    "the issuer's keys are not available" + (why.empty() ? "" : ": " + why));
    }
    keys = Keys();
  }
  bool refetched = false;
  const KeySet::Key* key = keys->Find(kid);
  if (!key) {
    refetched = Refetch(now);
    if (refetched) {
      keys = Keys();
      key = keys->Find(kid);
    }
  }
  if (!key) {
    return Refuse(TokenFault::kUnknownKey,
                  kid ? "no key of the issuer has kid " + Shown(*kid) +
                            (refetched ? " (the key set was fetched again)" : "")
                      : "the token names no kid and the issuer has more than one key",
                  refetched);
  }
  if (key->kty != *kty) {
    return Refuse(TokenFault::kAlgorithm, "algorithm " + alg + " does not fit the key " +
                                              Shown(key->kid.value_or("")) + "'s type",
                  refetched);
  }

  cjose_err err{};
  cjose_jws_t* jws = cjose_jws_import(token.data(), token.size(), &err);
  if (!jws) return Refuse(TokenFault::kMalformed, "not a JWS: " + std::string(err.message ? err.message : "?"), refetched);
  const bool verified = cjose_jws_verify(jws, key->jwk, &err);
  if (!verified) {
    cjose_jws_release(jws);
    return Refuse(TokenFault::kSignature, "the signature does not verify with key " +
                                              Shown(key->kid.value_or("")),
                  refetched);
  }
  uint8_t* plain = nullptr;
  size_t plain_len = 0;
  std::string payload_text;
  if (cjose_jws_get_plaintext(jws, &plain, &plain_len, &err)) {
    payload_text.assign(reinterpret_cast<const char*>(plain), plain_len);  // owned by the jws
  }
  cjose_jws_release(jws);
  Json payload = Json::parse(payload_text, nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded() || !payload.is_object()) {
    return Refuse(TokenFault::kMalformed, "the payload is not a JSON object", refetched);
  }

  if (!payload.contains("iss") || payload["iss"] != policy_.issuer) {
    return Refuse(TokenFault::kIssuer,
                  "iss " + (payload.contains("iss") ? Shown(payload["iss"]) : "(none)") +
                      " is not the issuer " + Shown(policy_.issuer),
                  refetched);
  }
  bool audience_ok = false;
  if (payload.contains("aud")) {
    const Json& aud = payload["aud"];
    if (aud.is_string()) audience_ok = aud == policy_.audience;
    if (aud.is_array()) {
      audience_ok = std::any_of(aud.begin(), aud.end(),
                                [&](const Json& a) { return a.is_string() && a == policy_.audience; });
    }
  }
  if (!audience_ok) {
    return Refuse(TokenFault::kAudience,
                  "aud " + (payload.contains("aud") ? Shown(payload["aud"]) : "(none)") +
                      " does not name this resource " + Shown(policy_.audience),
                  refetched);
  }
  const std::optional<std::int64_t> exp = NumericDate(payload, "exp");
  if (!exp) return Refuse(TokenFault::kClaims, "exp is missing or not a date", refetched);
  if (now > *exp + policy_.leeway_s) {
    return Refuse(TokenFault::kExpired,
                  "the token expired " + std::to_string(now - *exp) + " s ago", refetched);
  }
  if (payload.contains("nbf")) {
    const std::optional<std::int64_t> nbf = NumericDate(payload, "nbf");
    if (!nbf) return Refuse(TokenFault::kClaims, "nbf is not a date", refetched);
    if (now + policy_.leeway_s < *nbf) {
      return Refuse(TokenFault::kNotYetValid,
                    "the token is valid only in " + std::to_string(*nbf - now) + " s", refetched);
    }
  }
  const std::string& claim = policy_.principal_claim;
  if (!payload.contains(claim) || !payload[claim].is_string() ||
      payload[claim].get<std::string>().empty()) {
    return Refuse(TokenFault::kClaims, "the principal claim " + claim + " is missing or empty",
                  refetched);
  }
  Principal p;
  p.name = payload[claim].get<std::string>();
  p.expires_at = *exp;
  p.key_id = key->kid.value_or("");
  if (payload.contains("scope") && payload["scope"].is_string()) {
    const std::string s = payload["scope"].get<std::string>();
    std::size_t at = 0;
    while (at < s.size()) {
      std::size_t end = s.find(' ', at);
      if (end == std::string::npos) end = s.size();
      if (end > at) p.scopes.insert(s.substr(at, end - at));
      at = end + 1;
    }
  } else if (payload.contains("scp") && payload["scp"].is_array()) {
    for (const Json& s : payload["scp"]) {
      if (s.is_string()) p.scopes.insert(s.get<std::string>());
    }
  }
  TokenCheck c;
  c.principal = std::move(p);
  c.refetched = refetched;
  return c;
}

std::optional<std::string_view> BearerToken(std::string_view header) {
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = header[i];
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (lower != kScheme[i]) return std::nullopt;
  }
  std::string_view token = header.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty() || token.find(' ') != std::string_view::npos) return std::nullopt;
  return token;
}

}  // namespace slurm_rca::mcp::auth
