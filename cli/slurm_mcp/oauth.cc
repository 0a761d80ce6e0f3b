#include "cli/slurm_mcp/oauth.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <ctime>
#include <iostream>

#include "base/file.h"
#include "guard/check.h"
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
  serve->add_option("--auth-scope-read", scopes.cluster,
                    "HTTP with --auth-issuer: the scope that reads what this server's account "
                    "sees (operators)")
      ->capture_default_str();
  serve->add_option("--auth-scope-own", scopes.own,
                    "HTTP with --auth-issuer: the scope that reads the caller's own jobs only "
                    "(queue, accounting, priority and fairshare narrowed to its Slurm user) and "
                    "node and partition state")
      ->capture_default_str();
  serve->add_option("--auth-scope-logs", scopes.logs,
                    "HTTP with --auth-issuer: the scope the logs topic needs besides a read scope")
      ->capture_default_str();
  serve->add_option("--auth-user-map", user_map,
                    "HTTP with --auth-issuer: a YAML map of principal (the --auth-principal-claim "
                    "value) to Slurm user name; without it a principal that is a valid Slurm "
                    "name is its own user; with it, a principal not listed has none")
      ->type_name("FILE");
}

namespace {

bool IsSlurmName(const std::string& name) {
  return guard::MatchesGrammar(guard::Grammar::kName, name);
}

// --auth-user-map: a YAML mapping of principal to Slurm user, every user a valid Slurm name.
base::Result<std::map<std::string, std::string>> LoadUserMap(const std::string& path) {
  const std::string where = "--auth-user-map " + path + ": ";
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status::InvalidArgument(where + "cannot be read");
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(where + e.what());
  }
  if (!root.IsMap()) {
    return Status::InvalidArgument(where + "must be a mapping of principal to Slurm user");
  }
  std::map<std::string, std::string> map;
  for (const auto& entry : root) {
    if (!entry.first.IsScalar() || !entry.second.IsScalar()) {
      return Status::InvalidArgument(where + "line " + std::to_string(entry.first.Mark().line + 1) +
                                     ": a principal maps to one Slurm user name");
    }
    const std::string principal = entry.first.as<std::string>();
    const std::string user = entry.second.as<std::string>();
    if (!IsSlurmName(user)) {
      return Status::InvalidArgument(where + "line " + std::to_string(entry.second.Mark().line + 1) +
                                     ": '" + user + "' is not a valid Slurm user name");
    }
    map[principal] = user;
  }
  return map;
}

// A tools/call of slurm_query's logs topic.
bool AsksForLogs(const mcp::Message& m) {
  if (m.kind != mcp::Message::Kind::kRequest || m.method != "tools/call" || !m.params.is_object()) {
    return false;
  }
  const nlohmann::json* name = m.params.contains("name") ? &m.params["name"] : nullptr;
  if (name == nullptr || *name != "slurm_query") return false;
  const nlohmann::json args = m.params.value("arguments", nlohmann::json::object());
  return args.is_object() && args.value("topic", nlohmann::json()) == "logs";
}

}  // namespace

base::Result<std::unique_ptr<OAuth>> OAuth::Make(const OAuthFlags& flags) {
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
  for (const auto& [flag, scope] : {std::pair{"--auth-scope-read", flags.scopes.cluster},
                                    std::pair{"--auth-scope-own", flags.scopes.own},
                                    std::pair{"--auth-scope-logs", flags.scopes.logs}}) {
    // RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
    const bool ok = !scope.empty() && std::all_of(scope.begin(), scope.end(), [](char c) {
      return c >= 0x21 && c <= 0x7e && c != '"' && c != '\\';
    });
    if (!ok) return Status::InvalidArgument(std::string(flag) + " is not a scope token: '" + scope + "'");
  }
  if (flags.scopes.cluster == flags.scopes.own || flags.scopes.cluster == flags.scopes.logs ||
      flags.scopes.own == flags.scopes.logs) {
    return Status::InvalidArgument("--auth-scope-read, --auth-scope-own and --auth-scope-logs must differ");
  }
  std::unique_ptr<OAuth> o(new OAuth());
  o->flags_ = flags;
  if (!flags.user_map.empty()) {
    base::Result<std::map<std::string, std::string>> map = LoadUserMap(flags.user_map);
    if (!map.ok()) return map.status();
    o->user_map_ = std::move(*map);
    o->has_user_map_ = true;
  }
  o->metadata_url_ = metadata_url;
  o->metadata_ = nlohmann::json{{"resource", flags.audience},
                                {"authorization_servers", {flags.issuer}},
                                {"bearer_methods_supported", {"header"}},
                                {"scopes_supported",
                                 {flags.scopes.cluster, flags.scopes.own, flags.scopes.logs}},
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

std::string OAuth::UserOf(const std::string& principal) const {
  if (has_user_map_) {
    auto it = user_map_.find(principal);
    return it == user_map_.end() ? std::string() : it->second;
  }
  return IsSlurmName(principal) ? principal : std::string();
}

mcp::AuthOutcome OAuth::Forbidden(const std::string& scope, const std::string& why) const {
  mcp::AuthOutcome out;
  out.status = 403;
  out.message = "insufficient scope: " + why;
  out.www_authenticate = "Bearer error=\"insufficient_scope\", scope=" + Quoted(scope) +
                         ", error_description=" + Quoted(why) +
                         ", resource_metadata=" + Quoted(metadata_url_);
  return out;
}

mcp::AuthOutcome OAuth::Authorize(std::optional<std::string_view> header,
                                  const mcp::Message* message) const {
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
    out.user = UserOf(out.principal);
    out.scopes = std::move(check.principal->scopes);
    const mcp::CallerView view =
        mcp::ViewOf(flags_.scopes, mcp::Caller{out.principal, out.user, out.scopes});
    if (!view.allowed) return Forbidden(view.needed_scope, view.refusal);
    if (message != nullptr && !view.logs && AsksForLogs(*message)) {
      return Forbidden(flags_.scopes.logs, "the logs topic needs the scope " + flags_.scopes.logs);
    }
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
