// libFuzzer target for the access-token path of slurm-mcp's OAuth (mcp/auth/token_validator.h).
// The first byte picks the mode:
//   0: the rest is the token, as a client could send it (JWS parsing, header, algorithm, kid);
//   1: the rest is a payload that the target signs with its own ES256 key under the key set's kid,
//      so the claim checks (iss, aud, exp, nbf, the principal) see any bytes past a good signature.
// Aborts when a token is accepted whose payload an independent reading says must be refused (not
// a JSON object, iss not the issuer, aud not naming the audience, exp past the leeway, nbf ahead of
// it, the principal empty), or when a refusal's message carries the token's signature.
#include <cjose/cjose.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "mcp/auth/token_validator.h"

namespace {

namespace auth = slurm_rca::mcp::auth;
using Json = nlohmann::json;

constexpr std::int64_t kNow = 1'800'000'000;
constexpr char kIssuer[] = "https://sso.example.test";
constexpr char kAudience[] = "https://head.example.test/mcp";

struct Fixture {
  cjose_jwk_t* key = nullptr;
  auth::TokenValidator* validator = nullptr;
  Fixture() {
    cjose_err err{};
    key = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
    cjose_jwk_set_kid(key, "k1", 2, &err);
    char* pub = cjose_jwk_to_json(key, false, &err);
    const std::string jwks = "{\"keys\":[" + std::string(pub) + "]}";
    cjose_get_dealloc()(pub);
    validator = new auth::TokenValidator(
        {.issuer = kIssuer, .audience = kAudience, .max_token_bytes = 4096},
        auth::KeySet::FromJwks(jwks).value());
  }
  std::string Sign(std::string_view payload) const {
    cjose_err err{};
    cjose_header_t* h = cjose_header_new(&err);
    cjose_header_set(h, CJOSE_HDR_ALG, CJOSE_HDR_ALG_ES256, &err);
    cjose_header_set(h, CJOSE_HDR_KID, "k1", &err);
    cjose_jws_t* jws = cjose_jws_sign(key, h, reinterpret_cast<const uint8_t*>(payload.data()),
                                      payload.size(), &err);
    std::string out;
    const char* compact = nullptr;
    if (jws && cjose_jws_export(jws, &compact, &err)) out = compact;
    cjose_jws_release(jws);
    cjose_header_release(h);
    return out;
  }
};

void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "token_fuzz: %s: %.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// What an independent reading of the payload says: must this token be refused?
bool MustBeRefused(std::string_view payload_text) {
  Json p = Json::parse(payload_text, nullptr, false);
  if (p.is_discarded() || !p.is_object()) return true;
  if (!p.contains("iss") || p["iss"] != kIssuer) return true;
  bool aud = false;
  if (p.contains("aud") && p["aud"].is_string()) aud = p["aud"] == kAudience;
  if (p.contains("aud") && p["aud"].is_array()) {
    for (const Json& a : p["aud"]) aud = aud || (a.is_string() && a == kAudience);
  }
  if (!aud) return true;
  // A date is a number from 0 to the end of year 9999.
  auto date = [&](const char* name) -> double {
    if (!p[name].is_number()) return -1;
    const double d = p[name].get<double>();
    return d >= 0 && d <= 253402300799.0 ? d : -1;
  };
  if (!p.contains("exp") || date("exp") < 0) return true;
  if (date("exp") < static_cast<double>(kNow - 60) - 1) return true;
  if (p.contains("nbf") && (date("nbf") < 0 || date("nbf") > kNow + 60 + 1)) return true;
  if (!p.contains("sub") || !p["sub"].is_string() || p["sub"].get<std::string>().empty()) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fixture;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string token;
  if (data[0] == 1) {
    token = fixture.Sign(rest);
    if (token.empty()) return 0;
  } else {
    token.assign(rest);
  }
  auth::TokenCheck c = fixture.validator->Validate(token, kNow);
  if (c.principal.has_value() == c.refusal.has_value()) Fail("neither or both", token);
  if (c.principal && data[0] == 1 && MustBeRefused(rest)) Fail("accepted a payload to refuse", rest);
  if (c.principal && data[0] != 1) Fail("accepted a token not signed by the key", token);
  if (c.refusal) {
    // A message quotes at most 80 characters of a claim or header value, never the token: not the
    // whole of one over 100 bytes, nor the signature the target made (random, 86 characters).
    if (token.size() > 100 && c.refusal->message.find(token) != std::string::npos) {
      Fail("the message carries the token", c.refusal->message);
    }
    const std::size_t dot = token.rfind('.');
    if (data[0] == 1 && dot != std::string::npos && token.size() - dot > 32 &&
        c.refusal->message.find(token.substr(dot + 1, 32)) != std::string::npos) {
      Fail("the message carries the signature", c.refusal->message);
    }
  }
  return 0;
}
