#include "mcp/auth/client_credentials.h"

#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcp/auth/issuer.h"

namespace slurm_rca::mcp::auth {

namespace {

// A token is renewed this long before it expires, so that it does not expire in flight.
constexpr std::int64_t kRenewBeforeS = 30;
// A token whose answer gave no expires_in is kept this long (RFC 6749 makes it optional).
constexpr std::int64_t kDefaultLifetimeS = 300;

}  // namespace

ClientCredentials::ClientCredentials(ClientCredentialsOptions options,
                                     std::function<std::int64_t()> clock)
    : options_(std::move(options)),
      clock_(clock ? std::move(clock)
                   : std::function<std::int64_t()>([] {
                       return static_cast<std::int64_t>(std::time(nullptr));
                     })) {}

int ClientCredentials::fetches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetches_;
}

base::Result<std::string> ClientCredentials::Token(bool refresh) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::int64_t now = clock_();
  if (!refresh && !token_.empty() && now + kRenewBeforeS < expires_at_) return token_;
  token_.clear();
  if (endpoint_.empty()) {
    base::Result<std::string> found = DiscoverTokenEndpoint(options_.issuer, options_.timeout_s);
    if (!found.ok()) return found.status();
    endpoint_ = *found;
  }
  std::vector<std::pair<std::string, std::string>> form = {
      {"grant_type", "client_credentials"},
      {"client_id", options_.client_id},
      {"client_secret", options_.client_secret}};
  if (!options_.scope.empty()) form.emplace_back("scope", options_.scope);
  if (!options_.resource.empty()) form.emplace_back("resource", options_.resource);
  int status = 0;
  ++fetches_;
  base::Result<std::string> body = HttpPostForm(endpoint_, form, options_.timeout_s, &status);
  if (!body.ok()) return body.status();
  const nlohmann::json j = nlohmann::json::parse(*body, nullptr, false);
  const bool object = j.is_object();
  if (status != 200) {
    std::string why = endpoint_ + ": HTTP " + std::to_string(status);
    if (object && j.contains("error") && j["error"].is_string()) {
      why += ": " + j["error"].get<std::string>();
      if (j.contains("error_description") && j["error_description"].is_string()) {
        why += " (" + j["error_description"].get<std::string>() + ")";
      }
    }
    return base::Status::HttpError(why);
  }
  if (!object || !j.contains("access_token") || !j["access_token"].is_string() ||
      j["access_token"].get<std::string>().empty()) {
    return base::Status::MalformedReply(endpoint_ + ": no access_token in the answer");
  }
  std::int64_t lifetime = kDefaultLifetimeS;
  if (j.contains("expires_in") && j["expires_in"].is_number_integer()) {
    lifetime = j["expires_in"].get<std::int64_t>();
  }
  token_ = j["access_token"].get<std::string>();
  expires_at_ = now + lifetime;
  return token_;
}

base::Result<std::string> ReadSecretFile(const std::string& path, const std::string& flag) {
  std::ifstream in(path);
  if (!in) return base::Status::InvalidArgument("cannot read " + flag + " " + path);
  std::string t((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t;
}

base::Result<TokenFunction> MakeTokenSource(const ClientTokenFlags& flags,
                                            const std::string& server_url,
                                            const std::string& prefix) {
  const std::string token_flag = prefix + "token-file";
  const std::string oauth = prefix + "oauth-";
  if (!flags.token_file.empty()) {
    if (!flags.issuer.empty()) {
      return base::Status::InvalidArgument(token_flag + " and " + oauth + "issuer exclude each other");
    }
    base::Result<std::string> first = ReadSecretFile(flags.token_file, token_flag);
    if (!first.ok()) return first.status();
    return TokenFunction([file = flags.token_file, token_flag, first = *first](bool refresh) {
      return refresh ? ReadSecretFile(file, token_flag) : base::Result<std::string>(first);
    });
  }
  if (flags.issuer.empty()) {
    if (!flags.client_id.empty() || !flags.client_secret_file.empty() || !flags.scope.empty() ||
        !flags.resource.empty()) {
      return base::Status::InvalidArgument(oauth + "client-id, " + oauth + "client-secret-file, " +
                                           oauth + "scope and " + oauth + "resource go with " +
                                           oauth + "issuer");
    }
    return TokenFunction();
  }
  if (flags.client_id.empty() || flags.client_secret_file.empty()) {
    return base::Status::InvalidArgument(oauth + "issuer needs " + oauth + "client-id and " + oauth +
                                         "client-secret-file");
  }
  base::Result<std::string> secret = ReadSecretFile(flags.client_secret_file,
                                                    oauth + "client-secret-file");
  if (!secret.ok()) return secret.status();
  auto credentials = std::make_shared<ClientCredentials>(ClientCredentialsOptions{
      .issuer = flags.issuer,
      .client_id = flags.client_id,
      .client_secret = *secret,
      .scope = flags.scope,
      .resource = flags.resource.empty() ? server_url : flags.resource});
  return TokenFunction([credentials](bool refresh) { return credentials->Token(refresh); });
}

}  // namespace slurm_rca::mcp::auth
