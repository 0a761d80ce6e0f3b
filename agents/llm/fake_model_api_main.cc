// TEST DOUBLE. fake_model_api: FakeModelServer as a process, so that shell tests and
// bench/agent_jobs_bench.sh can point `rca-bench run --backend openai` at it; never a real model,
// only 127.0.0.1.
//
//   fake_model_api PORT_FILE [FIRST_429 [RETRY_AFTER_S]] [options]   (--help lists the options)
//
// Writes its port to PORT_FILE (whole, through a rename) and serves until SIGTERM or SIGINT. The
// first FIRST_429 requests (default 0) are answered 429 with Retry-After RETRY_AFTER_S (default
// 1). Every other request is answered in the OpenAI shape. With no option, at once, with a
// submit_diagnosis of db.mysql whose confidence is a digest of the conversation's first user
// message (so that each task gets its own answer however requests are interleaved), 100 prompt
// and 10 completion tokens.
//
// The options make it behave as a model API under load does, for the benchmark of the run itself
// (issue #37, item 6); every draw is seeded:
//   --tool-turns-max K  a conversation first makes 0..K tool-call turns (K drawn from the
//                       conversation, its system and first user message, and --seed), each
//                       calling one of the tools the request offers, with arguments made from the
//                       tool's schema (an enum's member, "sinfo" for an argv); then it answers:
//                       submit_diagnosis where that is offered, else a text (a specialist's)
//   --latency-ms M      each answer waits a time drawn from a lognormal of median M ms and
//   --latency-sigma S   shape S (drawn from the conversation and the turn: the same at any --jobs)
//   --requests-per-minute R  a sliding minute of accepted requests: one past R is answered 429
//                       with Retry-After, the whole seconds until a slot frees, and not counted
//   --error-rate P      a share P of the requests (drawn in arrival order) answered 500 or 503
// Then prompt_tokens is the request body's bytes / 4 and completion_tokens 30..149; no cached
// tokens are reported. At exit it prints one line of counts on stderr (requests, answered, 429,
// 5xx, the most accepted requests in one sliding minute), and --stats FILE writes them as JSON.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "agents/llm/fake_model_server.h"

namespace {

using slurm_rca::agents::FakeModelServer;
using slurm_rca::agents::ToolCall;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

uint64_t Fnv(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

uint64_t Mix(uint64_t h, uint64_t v) {  // splitmix64 of h and v
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string Text(const Json& content) {  // a message's content, a string or an array of parts
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        out += part["text"].get<std::string>();
      }
    }
  }
  return out;
}

struct Options {
  int tool_turns_max = 0;
  double latency_ms = 0;
  double latency_sigma = 0.35;
  int requests_per_minute = 0;
  double error_rate = 0;
  uint64_t seed = 1;
};

// The realistic answers and the counts, shared by the server's worker threads.
class Model {
 public:
  explicit Model(Options o) : o_(o), errors_rng_(o.seed) {}

  FakeModelServer::Response Answer(const FakeModelServer::Request& req) {
    ++requests_;
    if (o_.requests_per_minute > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      const Clock::time_point now = Clock::now();
      while (!window_.empty() && now - window_.front() >= std::chrono::seconds(60)) {
        window_.pop_front();
      }
      if (static_cast<int>(window_.size()) >= o_.requests_per_minute) {
        ++limited_;
        const double free_in =
            std::chrono::duration<double>(window_.front() + std::chrono::seconds(60) - now).count();
        const int after = std::max(1, static_cast<int>(std::ceil(free_in)));
        return {429, R"({"error":{"type":"rate_limit","message":"fake rate limit"}})",
                {{"Retry-After", std::to_string(after)}}};
      }
      window_.push_back(now);
      peak_ = std::max(peak_, window_.size());
    }
    if (o_.error_rate > 0) {
      bool fail;
      int status;
      {
        std::lock_guard<std::mutex> lock(mu_);
        fail = std::uniform_real_distribution<double>(0, 1)(errors_rng_) < o_.error_rate;
        status = errors_rng_() % 2 ? 503 : 500;
      }
      if (fail) {
        ++errors_;
        return {status, R"({"error":{"type":"server_error","message":"fake overload"}})", {}};
      }
    }
    ++answered_;
    return Reply(req);
  }

  std::string Counts() const {
    return std::to_string(requests_) + " requests, " + std::to_string(answered_) + " answered, " +
           std::to_string(limited_) + " answered 429, " + std::to_string(errors_) +
           " answered 5xx, at most " + std::to_string(peak_) + " accepted in one minute";
  }
  Json CountsJson() const {
    return {{"requests", requests_.load()}, {"answered", answered_.load()},
            {"rate_limited", limited_.load()}, {"server_errors", errors_.load()},
            {"peak_per_minute", peak_}};
  }

 private:
  FakeModelServer::Response Reply(const FakeModelServer::Request& req) const {
    std::string system, first_user;
    int turn = 0;
    const Json& messages = req.json.is_object() && req.json.contains("messages")
                               ? req.json["messages"]
                               : Json::array();
    for (const auto& m : messages) {
      if (!m.is_object()) continue;
      const std::string role = m.value("role", "");
      if (role == "assistant") ++turn;
      if (role == "system" && system.empty() && m.contains("content")) system = Text(m["content"]);
      if (role == "user" && first_user.empty() && m.contains("content")) {
        first_user = Text(m["content"]);
      }
    }
    // The default reply, as before the options: confidence from the first user message alone.
    uint32_t h32 = 2166136261u;
    for (unsigned char c : first_user) h32 = (h32 ^ c) * 16777619u;
    const double confidence = static_cast<double>(5 + h32 % 90) / 100.0;
    const int prompt = o_.tool_turns_max > 0 || o_.latency_ms > 0
                           ? static_cast<int>(req.body.size() / 4)
                           : 100;
    const uint64_t conversation = Mix(Fnv(system + "\x1f" + first_user), o_.seed);
    const uint64_t here = Mix(conversation, static_cast<uint64_t>(turn));
    const int completion = o_.tool_turns_max > 0 ? 30 + static_cast<int>(here % 120) : 10;
    double delay_s = 0;
    if (o_.latency_ms > 0) {
      std::mt19937_64 rng(here);
      delay_s = std::lognormal_distribution<double>(std::log(o_.latency_ms / 1000.0),
                                                    o_.latency_sigma)(rng);
    }
    std::vector<std::pair<std::string, Json>> offered;  // name, parameters
    bool can_submit = false;
    if (req.json.is_object() && req.json.contains("tools") && req.json["tools"].is_array()) {
      for (const auto& t : req.json["tools"]) {
        if (!t.is_object() || !t.contains("function") || !t["function"].is_object()) continue;
        const std::string name = t["function"].value("name", "");
        if (name == "submit_diagnosis") {
          can_submit = true;
        } else if (!name.empty()) {
          offered.emplace_back(name, t["function"].value("parameters", Json::object()));
        }
      }
    }
    const int tool_turns =
        o_.tool_turns_max > 0 ? static_cast<int>(conversation % (o_.tool_turns_max + 1)) : 0;
    std::vector<ToolCall> calls;
    std::string text;
    if (turn < tool_turns && !offered.empty()) {
      const auto& [name, params] = offered[Mix(here, 1) % offered.size()];
      calls.push_back({"c" + std::to_string(turn), name, Arguments(params, Mix(here, 2))});
    } else if (can_submit || o_.tool_turns_max == 0) {
      calls.push_back({"c" + std::to_string(turn), "submit_diagnosis",
                       {{"root_cause", "db.mysql"}, {"confidence", confidence}}});
    } else {
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(here));
      text = std::string("fake finding ") + hex + ": nothing conclusive in what I read";
    }
    return {200, FakeModelServer::OpenAiReply(text, calls, prompt, completion), {}, delay_s};
  }

  // Arguments for a tool from its JSON schema: every required property, an enum's member where
  // there is one, else a value of its type ("sinfo" in a string array: run_command's argv).
  static Json Arguments(const Json& params, uint64_t h) {
    Json args = Json::object();
    if (!params.is_object() || !params.contains("required") || !params["required"].is_array()) {
      return args;
    }
    const Json props = params.value("properties", Json::object());
    for (const auto& r : params["required"]) {
      if (!r.is_string()) continue;
      const std::string name = r.get<std::string>();
      const Json p = props.is_object() ? props.value(name, Json::object()) : Json::object();
      h = Mix(h, 3);
      const std::string type = p.is_object() && p.contains("type") && p["type"].is_string()
                                   ? p["type"].get<std::string>()
                                   : "string";
      if (p.is_object() && p.contains("enum") && p["enum"].is_array() && !p["enum"].empty()) {
        args[name] = p["enum"][h % p["enum"].size()];
      } else if (type == "array") {
        args[name] = Json::array({"sinfo"});
      } else if (type == "integer" || type == "number") {
        args[name] = 1;
      } else if (type == "boolean") {
        args[name] = false;
      } else if (type == "object") {
        args[name] = Json::object();
      } else {
        char hex[9];
        std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(h));
        args[name] = std::string("what does the evidence show? (") + hex + ")";
      }
    }
    return args;
  }

  const Options o_;
  std::mutex mu_;
  std::mt19937_64 errors_rng_;
  std::deque<Clock::time_point> window_;
  size_t peak_ = 0;
  std::atomic<uint64_t> requests_{0}, answered_{0}, limited_{0}, errors_{0};
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fake_model_api: a TEST DOUBLE of an OpenAI-compatible model API on 127.0.0.1"};
  std::string port_file, stats_file;
  int first_429 = 0, threads = 64;
  std::string retry_after = "1";
  Options o;
  app.add_option("PORT_FILE", port_file, "where the port is written (through a rename)")->required();
  app.add_option("FIRST_429", first_429, "the first N requests are answered 429")
      ->check(CLI::NonNegativeNumber);
  app.add_option("RETRY_AFTER_S", retry_after, "their Retry-After, in seconds");
  app.add_option("--tool-turns-max", o.tool_turns_max,
                 "a conversation makes 0..K tool-call turns before it answers (0: answer at once)")
      ->check(CLI::Range(0, 30));
  app.add_option("--latency-ms", o.latency_ms, "median of the lognormal time per answer (0: none)")
      ->check(CLI::Range(0.0, 60000.0));
  app.add_option("--latency-sigma", o.latency_sigma, "shape of that lognormal")
      ->check(CLI::Range(0.0, 3.0));
  app.add_option("--requests-per-minute", o.requests_per_minute,
                 "429 with Retry-After past this many accepted requests in a sliding minute (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--error-rate", o.error_rate, "share of requests answered 500 or 503")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", o.seed, "seed of every draw");
  app.add_option("--threads", threads, "worker threads; each keep-alive connection holds one")
      ->check(CLI::Range(1, 1024));
  app.add_option("--stats", stats_file, "write the counts as JSON here at exit");
  CLI11_PARSE(app, argc, argv);

  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before the server's threads start
  FakeModelServer server(threads);
  if (!server.ok()) {
    std::cerr << "fake_model_api: cannot listen on 127.0.0.1\n";
    return 1;
  }
  server.KeepRequests(false);
  for (int i = 0; i < first_429; ++i) {
    server.Enqueue({429, R"({"error":"fake rate limit"})", {{"Retry-After", retry_after}}});
  }
  Model model(o);
  server.SetResponder([&model](const FakeModelServer::Request& r) { return model.Answer(r); });
  {
    std::ofstream out(port_file + ".tmp");
    out << server.port() << "\n";
  }
  if (std::rename((port_file + ".tmp").c_str(), port_file.c_str()) != 0) return 1;
  int sig = 0;
  sigwait(&stop, &sig);
  std::cerr << "fake_model_api: " << server.request_count() << " requests (" << model.Counts()
            << " by the responder)\n";
  if (!stats_file.empty()) {
    Json stats = model.CountsJson();
    stats["requests_total"] = server.request_count();
    std::ofstream(stats_file) << stats.dump() << "\n";
  }
  return 0;
}
