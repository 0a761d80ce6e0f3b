#include "agents/llm/http_client.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace slurm_rca::agents {

using base::Result;
using base::Status;

namespace {

std::string Excerpt(const std::string& body) {
  constexpr size_t kMax = 300;
  std::string s = body.substr(0, kMax);
  std::replace(s.begin(), s.end(), '\n', ' ');
  return body.size() > kMax ? s + "…" : s;
}

// Seconds from a Retry-After header given in seconds; nullopt for an HTTP date or garbage.
std::optional<double> RetryAfterSeconds(const httplib::Response& res) {
  if (!res.has_header("Retry-After")) return std::nullopt;
  const std::string v = res.get_header_value("Retry-After");
  try {
    size_t used = 0;
    double s = std::stod(v, &used);
    if (used == 0 || !(s >= 0)) return std::nullopt;
    return s;
  } catch (...) {
    return std::nullopt;
  }
}

void SetTimeouts(httplib::ClientImpl* c, double timeout_s) {
  auto secs = static_cast<time_t>(timeout_s);
  auto usecs = static_cast<time_t>((timeout_s - static_cast<double>(secs)) * 1e6);
  c->set_connection_timeout(secs, usecs);
  c->set_read_timeout(secs, usecs);
  c->set_write_timeout(secs, usecs);
}

}  // namespace

bool Endpoint::IsLoopback() const {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

std::string Endpoint::ToString() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return scheme + "://" + h + ":" + std::to_string(port) + path_prefix;
}

Result<Endpoint> ParseUrl(const std::string& url) {
  Endpoint e;
  const size_t sep = url.find("://");
  if (sep == std::string::npos) {
    return Status::InvalidArgument("URL '" + url + "' has no scheme (http:// or https://)");
  }
  e.scheme = url.substr(0, sep);
  std::transform(e.scheme.begin(), e.scheme.end(), e.scheme.begin(), ::tolower);
  if (e.scheme != "http" && e.scheme != "https") {
    return Status::InvalidArgument("URL '" + url + "': scheme must be http or https");
  }
  std::string rest = url.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument("URL '" + url + "': a base URL has no query or fragment");
  }
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  e.path_prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!e.path_prefix.empty() && e.path_prefix.back() == '/') e.path_prefix.pop_back();
  if (authority.find('@') != std::string::npos) {
    return Status::InvalidArgument("URL '" + url + "': credentials in the URL are refused; use "
                                   "the key environment variable");
  }
  std::string port;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return Status::InvalidArgument("URL '" + url + "': bad IPv6");
    e.host = authority.substr(1, close - 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return Status::InvalidArgument("URL '" + url + "': bad host");
      port = after.substr(1);
    }
  } else {
    const size_t colon = authority.find(':');
    e.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (e.host.empty()) return Status::InvalidArgument("URL '" + url + "' has no host");
  if (port.empty()) {
    e.port = e.scheme == "https" ? 443 : 80;
  } else {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument("URL '" + url + "': port '" + port + "' is not a number");
    }
    e.port = std::stoi(port);
    if (e.port < 1 || e.port > 65535) {
      return Status::InvalidArgument("URL '" + url + "': port out of range");
    }
  }
  return e;
}

JsonPoster::JsonPoster(Endpoint endpoint, HttpOptions options)
    : endpoint_(std::move(endpoint)), options_(std::move(options)) {
  if (endpoint_.scheme == "https") {
    auto ssl = std::make_unique<httplib::SSLClient>(endpoint_.host, endpoint_.port);
    if (!options_.ca_file.empty()) ssl->set_ca_cert_path(options_.ca_file);
    ssl->enable_server_certificate_verification(true);
    client_ = std::move(ssl);
  } else {
    client_ = std::make_unique<httplib::ClientImpl>(endpoint_.host, endpoint_.port);
  }
  SetTimeouts(client_.get(), options_.timeout_s);
  client_->set_keep_alive(true);
  client_->set_tcp_nodelay(true);  // headers and body go in separate writes
}

JsonPoster::~JsonPoster() = default;

Result<HttpReply> JsonPoster::Post(const std::string& path,
                                   const std::multimap<std::string, std::string>& headers,
                                   const std::string& body) {
  const std::string full_path = endpoint_.path_prefix + path;
  const std::string where = endpoint_.ToString() + path;
  httplib::Headers h(headers.begin(), headers.end());
  double backoff = options_.backoff_initial_s;
  std::string last_error;
  using SteadyClock = std::chrono::steady_clock;
  auto remaining = [&] {
    if (deadline_ == SteadyClock::time_point::max()) return HUGE_VAL;
    return std::chrono::duration<double>(deadline_ - SteadyClock::now()).count();
  };
  EndpointLimiter* limiter = options_.limiter.get();
  for (int attempt = 1;; ++attempt) {
    if (remaining() <= 0) {
      return Status::DeadlineExceeded("POST " + where + " not sent: the deadline has passed" +
                                 (last_error.empty() ? "" : "; last failure: " + last_error));
    }
    EndpointLimiter::Grant grant;
    if (limiter) {
      Result<EndpointLimiter::Grant> g = limiter->Acquire(
          static_cast<int64_t>(body.size() / 4) + options_.reply_tokens, deadline_);
      if (!g.ok()) {
        return Status::DeadlineExceeded("POST " + where + " not sent: " + g.status().message() +
                                        (last_error.empty() ? "" : "; last failure: " + last_error));
      }
      grant = *g;
    }
    const double left = remaining();
    if (left <= 0) {
      return Status::DeadlineExceeded("POST " + where + " not sent: the deadline has passed" +
                                 (last_error.empty() ? "" : "; last failure: " + last_error));
    }
    const bool cut = left < options_.timeout_s;
    SetTimeouts(client_.get(), std::min(options_.timeout_s, left));
    httplib::Result res = client_->Post(full_path, h, body, "application/json");
    std::optional<double> wait;
    if (!res) {
      const httplib::Error err = res.error();
      last_error = "POST " + where + " failed: " + httplib::to_string(err);
      if (cut && (err == httplib::Error::Read || err == httplib::Error::Write ||
                  err == httplib::Error::Connection || err == httplib::Error::ConnectionTimeout)) {
        return Status::DeadlineExceeded(last_error + " (timeout cut to the deadline)");
      }
      if (err == httplib::Error::SSLServerVerification) {
        // A certificate the CA store does not trust will not become trusted by retrying.
        return Status::Unavailable(last_error + " (the server certificate is not trusted; set "
                                                "ca_file to its CA)");
      }
    } else if (res->status >= 200 && res->status < 300) {
      return HttpReply{res->status, res->body, attempt, grant};
    } else if (res->status == 429 || res->status >= 500) {
      last_error = "HTTP " + std::to_string(res->status) + " from " + where + ": " +
                   Excerpt(res->body);
      wait = RetryAfterSeconds(*res);
    } else {
      if (limiter) limiter->Settle(grant, 0);
      return Status::HttpError("HTTP " + std::to_string(res->status) + " from " + where + ": " +
                               Excerpt(res->body));
    }
    if (limiter) limiter->Settle(grant, 0);  // no reply, no usage to count
    double s = std::min(wait.value_or(backoff), options_.backoff_max_s);
    // The endpoint asked every client to slow down (a 429, or a Retry-After): every poster that
    // shares the limiter waits, not only this one; the wait is the limiter's, not a sleep here.
    const bool pause_all = limiter && res && (res->status == 429 || wait.has_value());
    if (pause_all && s > 0) {
      limiter->PauseUntil(SteadyClock::now() +
                          std::chrono::duration_cast<SteadyClock::duration>(
                              std::chrono::duration<double>(s)));
    }
    if (attempt > options_.max_retries) {
      return Status::Unavailable(last_error + " (after " + std::to_string(attempt) +
                                 " attempts)");
    }
    if (s >= remaining()) {
      return Status::DeadlineExceeded(last_error + " (no retry: the deadline comes first)");
    }
    if (limiter) limiter->NoteRetry();
    if (s > 0 && !pause_all) std::this_thread::sleep_for(std::chrono::duration<double>(s));
    backoff *= 2;
  }
}

}  // namespace slurm_rca::agents
