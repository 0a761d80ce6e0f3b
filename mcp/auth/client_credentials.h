// A client's access tokens from the OAuth 2.1 client credentials grant (RFC 6749 section 4.4,
// client_secret_post), bound to one resource (RFC 8707): what `slurm-mcp call` and other
// non-interactive clients present to a slurm-mcp that requires OAuth. The token endpoint is
// discovered from the issuer's metadata (mcp/auth/issuer.h). A token is kept until 30 s before
// its expires_in runs out, or until the server refuses it.
//
//   ClientCredentials creds({.issuer = "https://sso.example", .client_id = "oncall-agent",
//                            .client_secret = secret, .scope = "slurm:read",
//                            .resource = "https://head.example:8765/mcp"});
//   base::Result<std::string> token = creds.Token(/*refresh=*/false);
#ifndef SLURM_RCA_MCP_AUTH_CLIENT_CREDENTIALS_H_
#define SLURM_RCA_MCP_AUTH_CLIENT_CREDENTIALS_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"

namespace slurm_rca::mcp::auth {

struct ClientCredentialsOptions {
  std::string issuer;
  std::string client_id;
  std::string client_secret;
  std::string scope;     // space-separated; empty: the client's default scopes
  std::string resource;  // the server's resource URI (its --auth-audience)
  double timeout_s = 5;
};

class ClientCredentials {
 public:
  // `clock`: unix seconds now (tests); default the system clock.
  explicit ClientCredentials(ClientCredentialsOptions options,
                             std::function<std::int64_t()> clock = {});

  // The token kept, or a new one when none is kept, it is within 30 s of expiring, or `refresh`
  // (the server refused it). Thread-safe. The error names the endpoint and what it said (its
  // `error` and `error_description`), never the secret.
  base::Result<std::string> Token(bool refresh);

  // Token endpoint requests made (discovery aside).
  int fetches() const;

 private:
  const ClientCredentialsOptions options_;
  const std::function<std::int64_t()> clock_;
  mutable std::mutex mu_;
  std::string endpoint_;
  std::string token_;
  std::int64_t expires_at_ = 0;
  int fetches_ = 0;
};

// A secret kept in a file (a token, a client secret): its contents less trailing newlines.
// InvalidArgument "cannot read FLAG PATH" when it cannot be read.
base::Result<std::string> ReadSecretFile(const std::string& path, const std::string& flag);

// Where a client's bearer tokens come from, as its flags name them (slurm-mcp call, rca-bench
// diagnose --mcp-url): a file, read now and again when the server refuses its token (a token
// another process renews), or the client credentials grant; or neither (no token).
struct ClientTokenFlags {
  std::string token_file;          // --token-file
  std::string issuer;              // --oauth-issuer
  std::string client_id;           // --oauth-client-id
  std::string client_secret_file;  // --oauth-client-secret-file
  std::string scope;               // --oauth-scope
  std::string resource;            // --oauth-resource; "": the server's own URL
};
// Called with refresh false for the token to send, true after a 401 (mcp::TokenSource's shape).
using TokenFunction = std::function<base::Result<std::string>(bool refresh)>;
// The source the flags name (an empty function: no token), `server_url` the default resource.
// InvalidArgument for flags that do not go together or a file that cannot be read; `prefix` is
// put before the flag names in messages ("--mcp-" for rca-bench, "--" for slurm-mcp call).
base::Result<TokenFunction> MakeTokenSource(const ClientTokenFlags& flags,
                                            const std::string& server_url,
                                            const std::string& prefix = "--");

}  // namespace slurm_rca::mcp::auth

#endif  // SLURM_RCA_MCP_AUTH_CLIENT_CREDENTIALS_H_
