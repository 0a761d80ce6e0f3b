#include "mcp/auth/issuer.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <memory>

namespace slurm_rca::mcp::auth {

namespace {

constexpr std::size_t kMaxDocumentBytes = 1 << 20;

struct SplitUrl {
  std::string origin;  // scheme://authority
  std::string path;    // "/..." (at least "/")
};

std::optional<SplitUrl> Split(const std::string& url) {
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return std::nullopt;
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return std::nullopt;
  std::size_t path_at = url.find('/', scheme_end + 3);
  SplitUrl s;
  s.origin = url.substr(0, path_at);
  s.path = path_at == std::string::npos ? "/" : url.substr(path_at);
  if (s.origin.size() <= scheme_end + 3) return std::nullopt;
  return s;
}

// A client of url's origin: the timeout on connecting, reading and writing, no redirect followed,
// the server's certificate verified.
base::Result<std::unique_ptr<httplib::Client>> MakeClient(const std::string& origin,
                                                          const std::string& url, double timeout_s) {
  auto client = std::make_unique<httplib::Client>(origin);
  if (!client->is_valid()) return base::Status::InvalidArgument("cannot make a client for " + url);
  const auto seconds = static_cast<time_t>(timeout_s);
  const auto micros = static_cast<time_t>((timeout_s - static_cast<double>(seconds)) * 1e6);
  client->set_connection_timeout(seconds, micros);
  client->set_read_timeout(seconds, micros);
  client->set_write_timeout(seconds, micros);
  client->set_follow_location(false);
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  client->enable_server_certificate_verification(true);
#endif
  return client;
}

}  // namespace

base::Result<std::string> HttpGetDocument(const std::string& url, double timeout_s) {
  std::optional<SplitUrl> u = Split(url);
  if (!u) return base::Status::InvalidArgument("not an http(s) URL: " + url);
  base::Result<std::unique_ptr<httplib::Client>> made = MakeClient(u->origin, url, timeout_s);
  if (!made.ok()) return made.status();
  httplib::Client& client = **made;
  std::string body;
  bool too_large = false;
  httplib::Result r = client.Get(
      u->path.c_str(), httplib::Headers{{"Accept", "application/json"}},
      [&](const char* data, size_t len) {
        if (body.size() + len > kMaxDocumentBytes) {
          too_large = true;
          return false;
        }
        body.append(data, len);
        return true;
      });
  if (too_large) return base::Status::MalformedReply(url + ": over 1 MiB");
  if (!r) return base::Status::Unavailable(url + ": " + httplib::to_string(r.error()));
  if (r->status != 200) {
    return base::Status::HttpError(url + ": HTTP " + std::to_string(r->status));
  }
  return body;
}

namespace {

// The issuer's metadata (RFC 8414, else OpenID Connect Discovery) and the string `field` of it.
base::Result<std::string> DiscoverField(const std::string& issuer, const std::string& field,
                                        double timeout_s) {
  std::optional<SplitUrl> u = Split(issuer);
  if (!u) return base::Status::InvalidArgument("the issuer is not an http(s) URL: " + issuer);
  // RFC 8414 puts the well-known part before the issuer's path; OpenID Connect after it.
  const std::string path = u->path == "/" ? "" : u->path;
  const std::string urls[] = {u->origin + "/.well-known/oauth-authorization-server" + path,
                              issuer + (issuer.back() == '/' ? "" : "/") +
                                  ".well-known/openid-configuration"};
  std::string why;
  for (const std::string& url : urls) {
    base::Result<std::string> doc = HttpGetDocument(url, timeout_s);
    if (!doc.ok()) {
      why += (why.empty() ? "" : "; ") + doc.status().message();
      continue;
    }
    nlohmann::json m = nlohmann::json::parse(*doc, nullptr, false);
    if (m.is_discarded() || !m.is_object()) {
      why += (why.empty() ? "" : "; ") + url + ": not a JSON object";
      continue;
    }
    if (!m.contains("issuer") || m["issuer"] != issuer) {
      return base::Status::MalformedReply(url + ": its issuer is not " + issuer +
                                          " (an issuer's metadata must name itself exactly)");
    }
    if (!m.contains(field) || !m[field].is_string()) {
      return base::Status::MalformedReply(url + ": no " + field);
    }
    return m[field].get<std::string>();
  }
  return base::Status::Unavailable("no metadata for issuer " + issuer + ": " + why);
}

}  // namespace

base::Result<std::string> DiscoverJwksUri(const std::string& issuer, double timeout_s) {
  return DiscoverField(issuer, "jwks_uri", timeout_s);
}

base::Result<std::string> DiscoverTokenEndpoint(const std::string& issuer, double timeout_s) {
  return DiscoverField(issuer, "token_endpoint", timeout_s);
}

base::Result<std::string> HttpPostForm(const std::string& url,
                                       const std::vector<std::pair<std::string, std::string>>& form,
                                       double timeout_s, int* status) {
  std::optional<SplitUrl> u = Split(url);
  if (!u) return base::Status::InvalidArgument("not an http(s) URL: " + url);
  base::Result<std::unique_ptr<httplib::Client>> made = MakeClient(u->origin, url, timeout_s);
  if (!made.ok()) return made.status();
  httplib::Client& client = **made;
  httplib::Params params;
  for (const auto& [k, v] : form) params.emplace(k, v);
  httplib::Result r = client.Post(u->path, httplib::Headers{{"Accept", "application/json"}}, params);
  if (!r) return base::Status::Unavailable(url + ": " + httplib::to_string(r.error()));
  if (r->body.size() > kMaxDocumentBytes) return base::Status::MalformedReply(url + ": over 1 MiB");
  if (status) *status = r->status;
  return r->body;
}

base::Result<std::string> FetchIssuerJwks(const std::string& issuer, double timeout_s) {
  base::Result<std::string> uri = DiscoverJwksUri(issuer, timeout_s);
  if (!uri.ok()) return uri.status();
  return HttpGetDocument(*uri, timeout_s);
}

std::string ProtectedResourceMetadataUrl(const std::string& resource) {
  std::optional<SplitUrl> u = Split(resource);
  if (!u) return "";
  return u->origin + "/.well-known/oauth-protected-resource" + (u->path == "/" ? "" : u->path);
}

}  // namespace slurm_rca::mcp::auth
