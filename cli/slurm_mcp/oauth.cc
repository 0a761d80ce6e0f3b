#include "cli/slurm_mcp/oauth.h"

#include <ctime>
#include <iostream>

#include "base/file.h"
#include "mcp/auth/issuer.h"

namespace slurm_rca::cli::slurm_mcp {

using base::Status;
namespace auth = mcp::auth;

void OAuthFlags::Add(CLI::App* serve) {
  serve->add_option("--auth-issuer", issuer,
                    "HTTP: require OAuth 2.1 access tokens (JWT) from this issuer (its `iss`, "
                    "exactly; its keys are found from its metadata)")
      ->type_name("URL");
  serve->add_option("--auth-audience", audience,
                    "HTTP with --auth-issuer: this server's resource URI (RFC 8707), which each "
                    "token's `aud` must name, e.g. https://head.example:8765/mcp")
      ->type_name("URI");
  serve->add_option("--auth-jwks-file", jwks_file,
                    "HTTP with --auth-issuer: read the issuer's keys (a JWK Set) from this file, "
                    "again on an unknown kid, instead of discovering them")
      ->type_name("FILE");
  serve->add_option("--auth-principal-claim", principal_claim,
                    "HTTP with --auth-issuer: the claim that names the caller")
      ->capture_default_str();
  serve->add_option("--auth-leeway", leeway_s, "HTTP with --auth-issuer: clock leeway in seconds for exp and nbf")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{300}))
      ->capture_default_str();
  serve->add_flag("--auth-behind-tls-proxy", behind_tls_proxy,
                  "HTTP with --auth-issuer on a non-loopback address: a reverse proxy terminates "
                  "TLS in front of this server (slurm-mcp does not speak TLS itself yet)");
}

base::Result<std::unique_ptr<OAuth>> OAuth::Make(const OAuthFlags& flags,
                                                  const std::string& listen_host) {
  if (flags.issuer.empty() || flags.audience.empty()) {
    return Status::InvalidArgument("--auth-issuer and --auth-audience go together");
  }
  if (flags.issuer.rfind("https://", 0) != 0 && flags.issuer.rfind("http://", 0) != 0) {
    return Status::InvalidArgument("--auth-issuer must be an http(s) URL: " + flags.issuer);
  }
  const std::string metadata_url = auth::ProtectedResourceMetadataUrl(flags.audience);
  if (metadata_url.empty()) {
    return Status::InvalidArgument("--auth-audience must be this server's http(s) URI: " +
                                   flags.audience);
  }
  const bool loopback = listen_host == "127.0.0.1" || listen_host == "::1" ||
                        listen_host == "localhost" || listen_host.rfind("127.", 0) == 0;
  if (!loopback && !flags.behind_tls_proxy) {
    return Status::InvalidArgument(
        "refusing to take bearer tokens on " + listen_host +
        " over plain HTTP: slurm-mcp does not speak TLS yet; put a TLS-terminating proxy in front "
        "and say so with --auth-behind-tls-proxy");
  }
  std::unique_ptr<OAuth> o(new OAuth());
  o->flags_ = flags;
  o->metadata_url_ = metadata_url;
  o->metadata_ = nlohmann::json{{"resource", flags.audience},
                                {"authorization_servers", {flags.issuer}},
                                {"bearer_methods_supported", {"header"}},
                                {"resource_name", "slurm-mcp (read-only Slurm)"}}
                     .dump();
  auth::TokenValidator::Fetch fetch;
  if (!flags.jwks_file.empty()) {
    fetch = [file = flags.jwks_file]() -> base::Result<std::string> {
      std::optional<std::string> text = base::ReadFile(file);
      if (!text) return Status::IoError("cannot read --auth-jwks-file " + file);
      return *text;
    };
  } else {
    fetch = [issuer = flags.issuer, timeout = flags.fetch_timeout_s]() {
      return auth::FetchIssuerJwks(issuer, timeout);
    };
  }
  auth::TokenPolicy policy{.issuer = flags.issuer,
                           .audience = flags.audience,
                           .leeway_s = flags.leeway_s,
                           .principal_claim = flags.principal_claim};
  base::Result<std::string> first = fetch();
  base::Result<auth::KeySet> keys =
      first.ok() ? auth::KeySet::FromJwks(*first) : base::Result<auth::KeySet>(first.status());
  std::string why;
  if (!keys.ok()) {
    why = keys.status().message();
  } else if (keys->size() == 0) {
    why = "the issuer's key set holds no RSA or EC signature key";
  }
  o->validator_ = std::make_unique<auth::TokenValidator>(
      policy, keys.ok() ? std::move(*keys) : auth::KeySet(), fetch);
  if (!why.empty()) {
    o->validator_->ReplaceKeys(auth::KeySet(), why);
    std::cerr << "slurm-mcp: no keys from the issuer (" << why
              << "): every request is refused with 503 until they can be fetched\n";
  }
  return o;
}

namespace {

// A quoted-string of RFC 9110 for the challenge: printable ASCII, no quote or backslash.
std::string Quoted(std::string s) {
  for (char& c : s) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
        static_cast<unsigned char>(c) > 0x7e) {
      c = '\'';
    }
  }
  return "\"" + s + "\"";
}

}  // namespace

mcp::AuthOutcome OAuth::Authorize(std::optional<std::string_view> header) const {
  mcp::AuthOutcome out;
  std::optional<std::string_view> token = header ? auth::BearerToken(*header) : std::nullopt;
  if (!token) {
    out.status = 401;
    out.message = "a bearer access token from " + flags_.issuer + " is required";
    out.www_authenticate = "Bearer resource_metadata=" + Quoted(metadata_url_);
    return out;
  }
  auth::TokenCheck check = validator_->Validate(*token, static_cast<std::int64_t>(std::time(nullptr)));
  if (check.principal) {
    out.principal = std::move(check.principal->name);
    out.scopes = std::move(check.principal->scopes);
    return out;
  }
  const auth::TokenRefusal& r = *check.refusal;
  if (r.fault == auth::TokenFault::kIssuerUnavailable) {
    out.status = 503;
    out.message = r.message;
    return out;
  }
  out.status = 401;
  out.message = "invalid token (" + std::string(auth::TokenFaultName(r.fault)) + "): " + r.message;
  out.www_authenticate = "Bearer error=\"invalid_token\", error_description=" + Quoted(r.message) +
                         ", resource_metadata=" + Quoted(metadata_url_);
  return out;
}

nlohmann::json OAuth::Readiness() const {
  const std::string why = validator_->WhyNoKeys();
  return {{"issuer", flags_.issuer},
          {"audience", flags_.audience},
          {"keys", validator_->KeyCount()},
          {"problem", why.empty() ? nlohmann::json(nullptr) : nlohmann::json(why)}};
}

}  // namespace slurm_rca::cli::slurm_mcp
