// OAuth 2.1 access tokens for slurm-mcp over HTTP (issue #38): the server is a resource server
// (MCP authorization; ../shared/reference/mcp-authorization.md). A token is a JWT signed by the
// issuer's key (JWS compact form), checked here with cjose (Debian's libcjose, over OpenSSL): no
// signature code of ours.
//
//   KeySet keys = KeySet::FromJwks(jwks_text).value();      // RSA and EC keys only
//   TokenValidator v({.issuer = "https://sso.example", .audience = "https://head:8765/mcp"},
//                    std::move(keys));
//   TokenCheck c = v.Validate(token, base::NowUnixSeconds());
//   if (c.principal) ... c.principal->name, c.principal->scopes
//   else             ... c.refusal->fault, c.refusal->message   // never contains the token
//
// What is refused, in the order it is checked: a token over max_token_bytes; not three base64url
// parts or a header that is not JSON (malformed); an algorithm outside the allowlist (none, every
// HMAC, anything unknown: a public key is never used as an HMAC secret, and the key set holds no
// symmetric key at all); a kid the key set lacks (after at most one refetch, no sooner than
// min_refetch_interval_s after the last); a key whose type is not the algorithm's; a signature
// that does not verify; a payload that is not a JSON object; iss not exactly the issuer; aud (a
// string or an array) not naming the audience, or missing; exp missing, or past by more than the
// leeway; nbf in the future by more than the leeway (a date is a number from 0 to the end of year
// 9999: any other exp or nbf is refused); the principal claim missing or empty.
// With no keys at all (the issuer never answered) every token is refused as kIssuerUnavailable:
// authorization fails closed.
//
// Thread-safe: Validate may run on many threads while a refetch replaces the keys.

#ifndef SLURM_RCA_MCP_AUTH_TOKEN_VALIDATOR_H_
#define SLURM_RCA_MCP_AUTH_TOKEN_VALIDATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace slurm_rca::mcp::auth {

// The issuer's signing keys (a JWK Set, RFC 7517). Only asymmetric signature keys are kept: kty
// RSA or EC, use absent or "sig". Other entries are skipped, each with the reason in skipped().
class KeySet {
 public:
  static base::Result<KeySet> FromJwks(std::string_view jwks_json);
  KeySet();
  ~KeySet();
  KeySet(KeySet&&) noexcept;
  KeySet& operator=(KeySet&&) noexcept;

  std::size_t size() const;
  const std::vector<std::string>& skipped() const { return skipped_; }
  // The kids, in the set's order ("" for a key without one).
  std::vector<std::string> KeyIds() const;

  struct Key;
  // The key named kid; with no kid, the only key, if there is exactly one. nullptr: none.
  const Key* Find(const std::optional<std::string>& kid) const;

 private:
  std::vector<std::unique_ptr<Key>> keys_;
  std::vector<std::string> skipped_;
};

struct TokenPolicy {
  std::string issuer;    // the `iss` every token must carry, exactly
  std::string audience;  // this server's resource URI (RFC 8707): `aud` must name it
  std::int64_t leeway_s = 60;
  std::size_t max_token_bytes = 8192;
  std::string principal_claim = "sub";
  std::int64_t min_refetch_interval_s = 30;
  // A token that passed is remembered, by its exact text, for at most cache_seconds (and never
  // past its exp and leeway), so that the requests of one client do not verify its signature
  // again each time; new keys forget every one. At most cache_entries (then all are forgotten).
  // 0: no cache.
  std::int64_t cache_seconds = 60;
  std::size_t cache_entries = 4096;
};

enum class TokenFault {
  kMissing,            // no Authorization: Bearer header (decided by the caller)
  kTooLarge,
  kMalformed,
  kAlgorithm,
  kUnknownKey,
  kSignature,
  kIssuer,
  kAudience,
  kExpired,
  kNotYetValid,
  kClaims,
  kIssuerUnavailable,  // no keys: the issuer's key set could not be had
};
const char* TokenFaultName(TokenFault f);

struct Principal {
  std::string name;             // the principal claim's value
  std::set<std::string> scopes;  // `scope` (space-separated) or `scp` (an array)
  std::int64_t expires_at = 0;
  std::string key_id;
};

struct TokenRefusal {
  TokenFault fault;
  std::string message;  // for the client and the log: names claims and values, never the token
};

struct TokenCheck {
  std::optional<Principal> principal;
  std::optional<TokenRefusal> refusal;
  bool refetched = false;  // the key set was fetched again for this token (an unknown kid)
  bool cached = false;     // the principal came from the cache of tokens that passed
};

class TokenValidator {
 public:
  // fetch: where fresh keys come from on an unknown kid (the issuer's jwks_uri); may be empty.
  using Fetch = std::function<base::Result<std::string>()>;
  TokenValidator(TokenPolicy policy, KeySet keys, Fetch fetch = nullptr);

  TokenCheck Validate(std::string_view token, std::int64_t now) const;

  // Replace the keys (a refetch, or the caller's own refresh). An empty set is kept too: every
  // token is then refused as kIssuerUnavailable.
  void ReplaceKeys(KeySet keys, std::string why_empty = "");
  std::size_t KeyCount() const;
  // Why there are no keys ("" when there are, or when no reason was given).
  std::string WhyNoKeys() const;
  const TokenPolicy& policy() const { return policy_; }

 private:
  std::shared_ptr<const KeySet> Keys() const;
  // A refetch for an unknown kid, at most once per min_refetch_interval_s. true: keys replaced.
  bool Refetch(std::int64_t now) const;

  const TokenPolicy policy_;
  const Fetch fetch_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const KeySet> keys_;
  mutable std::string why_empty_;
  mutable std::optional<std::int64_t> last_fetch_;
  struct Remembered {
    Principal principal;
    std::int64_t until = 0;  // the last second it may be served from here
  };
  mutable std::unordered_map<std::string, Remembered> passed_;  // under mu_
  TokenCheck Check(std::string_view token, std::int64_t now) const;
};

// The `Authorization` header's bearer token, or nullopt when there is none (no header, another
// scheme, two headers, an empty token).
std::optional<std::string_view> BearerToken(std::string_view authorization_header);

}  // namespace slurm_rca::mcp::auth

#endif  // SLURM_RCA_MCP_AUTH_TOKEN_VALIDATOR_H_
