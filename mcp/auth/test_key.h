// Test-only: a JWT signing key made with cjose (OpenSSL underneath), its public JWK and a signer,
// for the token checks (token_validator_test) and the live own-jobs test (tests/). Never used to
// sign anything outside tests.
#ifndef SLURM_RCA_MCP_AUTH_TEST_KEY_H_
#define SLURM_RCA_MCP_AUTH_TEST_KEY_H_

#include <cjose/cjose.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace slurm_rca::mcp::auth::testing_key {

// A key made here (RSA 2048 or EC P-256) with its kid; Sign gives a compact JWS ("" on failure).
struct TestKey {
  cjose_jwk_t* jwk = nullptr;
  std::string kid;
  TestKey(bool rsa, std::string id) : kid(std::move(id)) {
    cjose_err err{};
    static const uint8_t kE[] = {0x01, 0x00, 0x01};
    jwk = rsa ? cjose_jwk_create_RSA_random(2048, kE, sizeof kE, &err)
              : cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
    cjose_jwk_set_kid(jwk, kid.data(), kid.size(), &err);
  }
  ~TestKey() { cjose_jwk_release(jwk); }
  nlohmann::json PublicJwk() const {
    cjose_err err{};
    char* text = cjose_jwk_to_json(jwk, /*priv=*/false, &err);
    nlohmann::json j = nlohmann::json::parse(text);
    cjose_get_dealloc()(text);
    return j;
  }
  std::string Sign(const nlohmann::json& payload, const std::string& alg, bool with_kid = true) const {
    return SignWith(jwk, payload, alg, with_kid ? kid : "");
  }
  static std::string SignWith(cjose_jwk_t* key, const nlohmann::json& payload, const std::string& alg,
                              const std::string& kid) {
    cjose_err err{};
    cjose_header_t* h = cjose_header_new(&err);
    cjose_header_set(h, CJOSE_HDR_ALG, alg.c_str(), &err);
    if (!kid.empty()) cjose_header_set(h, CJOSE_HDR_KID, kid.c_str(), &err);
    const std::string text = payload.dump();
    cjose_jws_t* jws = cjose_jws_sign(key, h, reinterpret_cast<const uint8_t*>(text.data()),
                                      text.size(), &err);
    if (jws == nullptr) {
      cjose_header_release(h);
      return "";  // the caller's token check then fails
    }
    const char* compact = nullptr;
    cjose_jws_export(jws, &compact, &err);
    std::string out = compact;
    cjose_jws_release(jws);
    cjose_header_release(h);
    return out;
  }
};

}  // namespace slurm_rca::mcp::auth::testing_key

#endif  // SLURM_RCA_MCP_AUTH_TEST_KEY_H_
