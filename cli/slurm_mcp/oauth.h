// slurm-mcp serve --auth-issuer URL --auth-audience URI: the HTTP endpoint as an OAuth 2.1
// resource server (MCP authorization, issue #38). The flags, and the authorizer the transport
// calls on every request (mcp::HttpOptions::authorize): the bearer token checked by
// mcp/auth/token_validator.h against the issuer's keys (discovered from its metadata, or read
// from --auth-jwks-file), the refusal's WWW-Authenticate naming the resource metadata, and the
// metadata document itself (RFC 9728).
#ifndef SLURM_RCA_CLI_SLURM_MCP_OAUTH_H_
#define SLURM_RCA_CLI_SLURM_MCP_OAUTH_H_

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "mcp/auth/token_validator.h"
#include "mcp/protocol/http_transport.h"
#include "mcp/topics/scoped_backend.h"

namespace slurm_rca::cli::slurm_mcp {

struct OAuthFlags {
  std::string issuer;
  std::string audience;
  std::string jwks_file;
  std::string principal_claim = "sub";
  std::int64_t leeway_s = 60;
  mcp::ScopeNames scopes;  // --auth-scope-read, --auth-scope-own, --auth-scope-logs
  std::string user_map;    // --auth-user-map: principal -> Slurm user (YAML)
  double fetch_timeout_s = 3;

  void Add(CLI::App* serve);
  bool enabled() const { return !issuer.empty() || !audience.empty(); }
};

class OAuth {
 public:
  // Checks the flags, fetches the issuer's keys once (a failure is not
  // fatal: every request is then refused with 503 until a refetch succeeds, and readiness says
  // why). InvalidArgument names the flag that is wrong.
  static base::Result<std::unique_ptr<OAuth>> Make(const OAuthFlags& flags);

  // The token checked, its principal mapped to a Slurm user (the map, or the principal itself when
  // it is a valid Slurm name and no map is given), and its scopes held against what is asked:
  // 403 insufficient_scope when they allow no view (mcp/topics/scoped_backend.h), or when the
  // message (null on the header check) is a tools/call of the logs topic without the logs scope.
  mcp::AuthOutcome Authorize(std::optional<std::string_view> authorization_header,
                             const mcp::Message* message) const;
  const mcp::ScopeNames& scopes() const { return flags_.scopes; }
  const std::string& MetadataJson() const { return metadata_; }
  const std::string& MetadataUrl() const { return metadata_url_; }
  // {"issuer", "audience", "keys", "problem"} for the readiness document.
  nlohmann::json Readiness() const;
  const mcp::auth::TokenValidator& validator() const { return *validator_; }

 private:
  OAuth() = default;
  OAuthFlags flags_;
  std::unique_ptr<mcp::auth::TokenValidator> validator_;
  std::string metadata_;
  std::string metadata_url_;
  std::map<std::string, std::string> user_map_;
  bool has_user_map_ = false;

  // The Slurm user of a principal; empty when it has none.
  std::string UserOf(const std::string& principal) const;
  mcp::AuthOutcome Forbidden(const std::string& scope, const std::string& why) const;
};

}  // namespace slurm_rca::cli::slurm_mcp

#endif  // SLURM_RCA_CLI_SLURM_MCP_OAUTH_H_
