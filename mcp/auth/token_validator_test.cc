#include "mcp/auth/token_validator.h"

#include "mcp/auth/test_key.h"

#include <gtest/gtest.h>

#include <cjose/cjose.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

namespace slurm_rca::mcp::auth {
namespace {

using Json = nlohmann::json;
using testing_key::TestKey;

constexpr std::int64_t kNow = 1'800'000'000;
const char* const kIssuer = "https://sso.example.test";
const char* const kAudience = "https://head.example.test:8765/mcp";

std::string B64(const std::string& s) {
  char* out = nullptr;
  size_t len = 0;
  cjose_err err{};
  cjose_base64url_encode(reinterpret_cast<const uint8_t*>(s.data()), s.size(), &out, &len, &err);
  std::string r(out, len);
  cjose_get_dealloc()(out);
  return r;
}

Json Claims(std::int64_t exp = kNow + 300) {
  return {{"iss", kIssuer}, {"aud", kAudience}, {"sub", "alice"}, {"exp", exp},
          {"iat", kNow - 10}, {"scope", "slurm:read slurm:logs"}};
}

class Tokens : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    rsa_ = new TestKey(true, "rsa-1");
    ec_ = new TestKey(false, "ec-1");
    other_ = new TestKey(true, "rsa-1");  // the same kid, another key: a forger's
  }
  static void TearDownTestSuite() {
    delete rsa_;
    delete ec_;
    delete other_;
  }
  static std::string Jwks(std::initializer_list<const TestKey*> keys) {
    Json set = {{"keys", Json::array()}};
    for (const TestKey* k : keys) set["keys"].push_back(k->PublicJwk());
    return set.dump();
  }
  static TokenValidator Validator(std::initializer_list<const TestKey*> keys,
                                  TokenValidator::Fetch fetch = nullptr) {
    KeySet set = KeySet::FromJwks(Jwks(keys)).value();
    return TokenValidator({.issuer = kIssuer, .audience = kAudience}, std::move(set),
                          std::move(fetch));
  }
  static TokenFault FaultOf(const TokenCheck& c) {
    EXPECT_FALSE(c.principal);
    return c.refusal ? c.refusal->fault : TokenFault::kMissing;
  }
  static TestKey* rsa_;
  static TestKey* ec_;
  static TestKey* other_;
};
TestKey* Tokens::rsa_ = nullptr;
TestKey* Tokens::ec_ = nullptr;
TestKey* Tokens::other_ = nullptr;

TEST_F(Tokens, AGoodTokenGivesItsPrincipalAndScopes) {
  TokenValidator v = Validator({rsa_, ec_});
  for (const std::string& token : {rsa_->Sign(Claims(), "RS256"), rsa_->Sign(Claims(), "PS256"),
                                   ec_->Sign(Claims(), "ES256")}) {
    TokenCheck c = v.Validate(token, kNow);
    ASSERT_TRUE(c.principal) << c.refusal->message;
    EXPECT_EQ(c.principal->name, "alice");
    EXPECT_EQ(c.principal->scopes, (std::set<std::string>{"slurm:read", "slurm:logs"}));
    EXPECT_EQ(c.principal->expires_at, kNow + 300);
  }
  Json scp = Claims();
  scp.erase("scope");
  scp["scp"] = {"slurm:own"};
  scp["aud"] = {"https://other.example", kAudience};
  TokenCheck c = v.Validate(ec_->Sign(scp, "ES256"), kNow);
  ASSERT_TRUE(c.principal);
  EXPECT_EQ(c.principal->scopes, (std::set<std::string>{"slurm:own"}));
}

TEST_F(Tokens, EachBadTokenIsRefusedForItsOwnReason) {
  TokenValidator v = Validator({rsa_, ec_});
  const std::string good = rsa_->Sign(Claims(), "RS256");
  EXPECT_EQ(FaultOf(v.Validate("", kNow)), TokenFault::kMalformed);
  EXPECT_EQ(FaultOf(v.Validate("abc.def", kNow)), TokenFault::kMalformed);
  EXPECT_EQ(FaultOf(v.Validate("a.b.c.d", kNow)), TokenFault::kMalformed);
  EXPECT_EQ(FaultOf(v.Validate("!!!.e30.sig", kNow)), TokenFault::kMalformed);
  EXPECT_EQ(FaultOf(v.Validate(B64("not json") + "." + B64("{}") + ".c2ln", kNow)),
            TokenFault::kMalformed);
  // alg none, unsigned and with a signature part
  const std::string none = B64(R"({"alg":"none"})") + "." + B64(Claims().dump()) + ".";
  EXPECT_EQ(FaultOf(v.Validate(none, kNow)), TokenFault::kAlgorithm);
  EXPECT_EQ(FaultOf(v.Validate(none + "c2ln", kNow)), TokenFault::kAlgorithm);
  // HS256 keyed with the public key's own bytes: the classic confusion
  const std::string pub = rsa_->PublicJwk().dump();
  cjose_err err{};
  cjose_jwk_t* hmac = cjose_jwk_create_oct_spec(reinterpret_cast<const uint8_t*>(pub.data()),
                                                pub.size(), &err);
  const std::string confused = TestKey::SignWith(hmac, Claims(), "HS256", "rsa-1");
  cjose_jwk_release(hmac);
  TokenCheck c = v.Validate(confused, kNow);
  EXPECT_EQ(FaultOf(c), TokenFault::kAlgorithm);
  EXPECT_NE(c.refusal->message.find("HS256"), std::string::npos) << c.refusal->message;
  // a signature by another key under the same kid; one byte of the signature changed
  EXPECT_EQ(FaultOf(v.Validate(other_->Sign(Claims(), "RS256"), kNow)), TokenFault::kSignature);
  std::string flipped = good;
  flipped[flipped.size() - 5] = flipped[flipped.size() - 5] == 'A' ? 'B' : 'A';
  EXPECT_EQ(FaultOf(v.Validate(flipped, kNow)), TokenFault::kSignature);
  // the payload changed under a good signature
  const std::size_t d1 = good.find('.'), d2 = good.find('.', d1 + 1);
  Json admin = Claims();
  admin["sub"] = "root";
  EXPECT_EQ(FaultOf(v.Validate(good.substr(0, d1 + 1) + B64(admin.dump()) + good.substr(d2), kNow)),
            TokenFault::kSignature);
  // an EC algorithm on an RSA key's kid
  EXPECT_EQ(FaultOf(v.Validate(TestKey::SignWith(ec_->jwk, Claims(), "ES256", "rsa-1"), kNow)),
            TokenFault::kAlgorithm);
  EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(Claims(kNow - 61), "RS256"), kNow)),
            TokenFault::kExpired);
  Json later = Claims();
  later["nbf"] = kNow + 61;
  EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(later, "RS256"), kNow)), TokenFault::kNotYetValid);
  Json iss = Claims();
  iss["iss"] = std::string(kIssuer) + "/";
  EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(iss, "RS256"), kNow)), TokenFault::kIssuer);
  Json aud = Claims();
  aud["aud"] = "https://other.example/mcp";
  EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(aud, "RS256"), kNow)), TokenFault::kAudience);
  aud.erase("aud");  // Keycloak without an audience mapper
  EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(aud, "RS256"), kNow)), TokenFault::kAudience);
  Json noexp = Claims();
  noexp.erase("exp");
  EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(noexp, "RS256"), kNow)), TokenFault::kClaims);
  // Dates that are no dates: a float past int64, negative, a string (the fuzzer found the first).
  for (const Json& bad : {Json(1.8e55), Json(-5), Json("1800000300")}) {
    Json odd = Claims();
    odd["nbf"] = bad;
    EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(odd, "RS256"), kNow)), TokenFault::kClaims) << bad;
    odd = Claims();
    odd["exp"] = bad;
    EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(odd, "RS256"), kNow)), TokenFault::kClaims) << bad;
  }
  Json nosub = Claims();
  nosub["sub"] = "";
  EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(nosub, "RS256"), kNow)), TokenFault::kClaims);
  Json big = Claims();
  big["pad"] = std::string(9000, 'x');
  EXPECT_EQ(FaultOf(v.Validate(rsa_->Sign(big, "RS256"), kNow)), TokenFault::kTooLarge);
  // and the good one, still
  EXPECT_TRUE(v.Validate(good, kNow).principal);
}

TEST_F(Tokens, TheLeewayIsBothWays) {
  TokenValidator v = Validator({rsa_});
  EXPECT_TRUE(v.Validate(rsa_->Sign(Claims(kNow - 60), "RS256"), kNow).principal);
  Json soon = Claims();
  soon["nbf"] = kNow + 60;
  EXPECT_TRUE(v.Validate(rsa_->Sign(soon, "RS256"), kNow).principal);
}

TEST_F(Tokens, NoMessageContainsTheToken) {
  TokenValidator v = Validator({rsa_});
  const std::string good = rsa_->Sign(Claims(), "RS256");
  const std::string signature = good.substr(good.rfind('.') + 1);
  for (const std::string& token :
       {other_->Sign(Claims(), "RS256"), rsa_->Sign(Claims(kNow - 1000), "RS256"), good + "x",
        good.substr(0, good.size() - 3)}) {
    TokenCheck c = v.Validate(token, kNow);
    ASSERT_TRUE(c.refusal);
    EXPECT_EQ(c.refusal->message.find(token.substr(token.rfind('.') + 1, 20)), std::string::npos)
        << c.refusal->message;
    EXPECT_EQ(c.refusal->message.find(signature.substr(0, 20)), std::string::npos);
  }
}

TEST_F(Tokens, AnUnknownKidRefetchesOnceAtABoundedRate) {
  std::atomic<int> fetches{0};
  std::string served = Jwks({rsa_});
  TokenValidator v = Validator({rsa_}, [&]() -> base::Result<std::string> {
    ++fetches;
    return served;
  });
  // A key the issuer does not have: one refetch, then refused; again at once: no refetch.
  TestKey stranger(false, "ec-unknown");
  TokenCheck c = v.Validate(stranger.Sign(Claims(), "ES256"), kNow);
  EXPECT_EQ(FaultOf(c), TokenFault::kUnknownKey);
  EXPECT_TRUE(c.refetched);
  EXPECT_EQ(fetches, 1);
  EXPECT_EQ(FaultOf(v.Validate(stranger.Sign(Claims(), "ES256"), kNow + 1)), TokenFault::kUnknownKey);
  EXPECT_EQ(fetches, 1);
  // The issuer rotates: its new key signs; after the interval one refetch finds it.
  served = Jwks({rsa_, ec_});
  EXPECT_EQ(FaultOf(v.Validate(ec_->Sign(Claims(), "ES256"), kNow + 5)), TokenFault::kUnknownKey);
  EXPECT_EQ(fetches, 1);
  c = v.Validate(ec_->Sign(Claims(kNow + 400), "ES256"), kNow + 31);
  ASSERT_TRUE(c.principal) << c.refusal->message;
  EXPECT_TRUE(c.refetched);
  EXPECT_EQ(fetches, 2);
  EXPECT_EQ(v.KeyCount(), 2u);
  // A failing fetch takes nothing away.
  TokenValidator failing = Validator({rsa_}, [&]() -> base::Result<std::string> {
    ++fetches;
    return base::Status::Unavailable("connection refused");
  });
  EXPECT_EQ(FaultOf(failing.Validate(ec_->Sign(Claims(), "ES256"), kNow)), TokenFault::kUnknownKey);
  EXPECT_EQ(fetches, 3);
  EXPECT_TRUE(failing.Validate(rsa_->Sign(Claims(), "RS256"), kNow).principal);
}

TEST_F(Tokens, WithNoKeysEveryTokenIsRefusedAsIssuerUnavailable) {
  TokenValidator v({.issuer = kIssuer, .audience = kAudience}, KeySet(),
                   []() -> base::Result<std::string> {
                     return base::Status::Unavailable("connect to sso.example.test: refused");
                   });
  v.ReplaceKeys(KeySet(), "the issuer's metadata could not be fetched: refused");
  TokenCheck c = v.Validate(rsa_->Sign(Claims(), "RS256"), kNow);
  EXPECT_EQ(FaultOf(c), TokenFault::kIssuerUnavailable);
  EXPECT_NE(c.refusal->message.find("could not be fetched"), std::string::npos);
}

TEST_F(Tokens, TheKeySetKeepsOnlyAsymmetricSignatureKeys) {
  Json set = {{"keys",
               {rsa_->PublicJwk(),
                {{"kty", "oct"}, {"k", "c2VjcmV0"}, {"kid", "hmac"}},
                {{"kty", "RSA"}, {"use", "enc"}, {"kid", "enc"}, {"n", "AQAB"}, {"e", "AQAB"}},
                {{"kid", "nokty"}},
                rsa_->PublicJwk()}}};
  base::Result<KeySet> keys = KeySet::FromJwks(set.dump());
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->size(), 1u);
  EXPECT_EQ(keys->skipped().size(), 4u);
  EXPECT_FALSE(KeySet::FromJwks("[]").ok());
  EXPECT_FALSE(KeySet::FromJwks("{\"keys\": 3}").ok());
  EXPECT_FALSE(KeySet::FromJwks("not json").ok());
}

TEST_F(Tokens, APassedTokenIsRememberedForAMinuteNeverPastItsExpiryNorNewKeys) {
  TokenValidator v = Validator({rsa_, ec_});
  const std::string token = ec_->Sign(Claims(kNow + 100), "ES256");
  TokenCheck first = v.Validate(token, kNow);
  ASSERT_TRUE(first.principal);
  EXPECT_FALSE(first.cached);
  TokenCheck again = v.Validate(token, kNow + 59);
  ASSERT_TRUE(again.principal);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.principal->name, "alice");
  // Past the minute: checked again (and remembered again, now until exp + leeway at most).
  EXPECT_FALSE(v.Validate(token, kNow + 61).cached);   // remembered until kNow + 121
  EXPECT_TRUE(v.Validate(token, kNow + 121).cached);
  EXPECT_FALSE(v.Validate(token, kNow + 150).cached);  // until exp + leeway, kNow + 160
  EXPECT_TRUE(v.Validate(token, kNow + 160).cached);
  EXPECT_EQ(FaultOf(v.Validate(token, kNow + 161)), TokenFault::kExpired);
  // New keys without ec-1: the token is checked again, and refused.
  ASSERT_TRUE(v.Validate(token, kNow + 1).principal);
  v.ReplaceKeys(KeySet::FromJwks(Jwks({rsa_})).value());
  EXPECT_EQ(FaultOf(v.Validate(token, kNow + 2)), TokenFault::kUnknownKey);
  // A refusal is never remembered; a cache of 0 s remembers nothing.
  TokenValidator none({.issuer = kIssuer, .audience = kAudience, .cache_seconds = 0},
                      KeySet::FromJwks(Jwks({ec_})).value());
  ASSERT_TRUE(none.Validate(token, kNow).principal);
  EXPECT_FALSE(none.Validate(token, kNow).cached);
}

TEST_F(Tokens, ManyThreadsValidateWhileTheKeysAreReplaced) {
  TokenValidator v = Validator({rsa_, ec_});
  const std::string token = ec_->Sign(Claims(), "ES256");
  std::atomic<int> good{0}, bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) (v.Validate(token, kNow).principal ? good : bad)++;
    });
  }
  for (int i = 0; i < 20; ++i) v.ReplaceKeys(KeySet::FromJwks(Jwks({rsa_, ec_})).value());
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(good, 200);
  EXPECT_EQ(bad, 0);
}

TEST(Bearer, TheHeaderGivesTheTokenOrNothing) {
  EXPECT_EQ(BearerToken("Bearer abc.def.ghi"), "abc.def.ghi");
  EXPECT_EQ(BearerToken("bearer   abc "), "abc");
  EXPECT_FALSE(BearerToken("Basic YWxhZGRpbjpvcGVuc2VzYW1l"));
  EXPECT_FALSE(BearerToken("Bearer "));
  EXPECT_FALSE(BearerToken("Bearer a b"));
  EXPECT_FALSE(BearerToken(""));
}

}  // namespace
}  // namespace slurm_rca::mcp::auth
