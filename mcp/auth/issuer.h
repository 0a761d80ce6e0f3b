// The authorization server's signing keys, found as a client finds them (RFC 8414, OpenID
// Connect Discovery): ISSUER/.well-known/oauth-authorization-server, else
// ISSUER/.well-known/openid-configuration; its `issuer` must be ISSUER exactly, and its
// `jwks_uri` gives the keys. Reads over HTTP or HTTPS (cpp-httplib over OpenSSL, certificates
// verified), a timeout per read, at most 1 MiB a document, no redirect followed.
//
//   base::Result<std::string> jwks = FetchIssuerJwks("https://sso.example", 5.0);
#ifndef SLURM_RCA_MCP_AUTH_ISSUER_H_
#define SLURM_RCA_MCP_AUTH_ISSUER_H_

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace slurm_rca::mcp::auth {

// GET url: the body of a 200 response, or why there is none.
base::Result<std::string> HttpGetDocument(const std::string& url, double timeout_s);

// The issuer's jwks_uri, from its metadata.
base::Result<std::string> DiscoverJwksUri(const std::string& issuer, double timeout_s);

// The issuer's token_endpoint, from its metadata.
base::Result<std::string> DiscoverTokenEndpoint(const std::string& issuer, double timeout_s);

// POST an application/x-www-form-urlencoded form to url: the body of the answer, whatever its
// status (stored in *status when not null), or why there is none. At most 1 MiB.
base::Result<std::string> HttpPostForm(const std::string& url,
                                       const std::vector<std::pair<std::string, std::string>>& form,
                                       double timeout_s, int* status);

// The issuer's JWK Set text: discovery, then jwks_uri.
base::Result<std::string> FetchIssuerJwks(const std::string& issuer, double timeout_s);

// RFC 9728's metadata URL of a resource: "/.well-known/oauth-protected-resource" inserted between
// the resource's authority and its path ("https://h:8765/mcp" →
// "https://h:8765/.well-known/oauth-protected-resource/mcp"). Empty when the URI is not http(s).
std::string ProtectedResourceMetadataUrl(const std::string& resource);

}  // namespace slurm_rca::mcp::auth

#endif  // SLURM_RCA_MCP_AUTH_ISSUER_H_
