// RunStdio over pipe pairs: handshake, concurrency (ping while a slow call runs), cancellation,
// shutdown on EOF, stdout hygiene and robustness against malformed input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mcp/protocol/stdio_transport.h"
#include "mcp/protocol/test_tools.h"

namespace slurm_rca::mcp {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// A server running RunStdio on a thread, wired to the test through two pipes.
// Given `server`, it serves that one and RunStdio reports the calls still running instead of
// waiting for them (still_running()).
class Harness {
 public:
  explicit Harness(StdioOptions options = {}, Server* server = nullptr)
      : owned_(server ? nullptr : std::make_unique<Server>(testing_tools::Options())),
        server_(server ? *server : *owned_) {
    EXPECT_EQ(::pipe2(to_server_, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(from_server_, O_CLOEXEC), 0);
    runner_ = std::thread([this, options, report = server != nullptr] {
      rc_ = RunStdio(server_, to_server_[0], from_server_[1], options,
                     report ? &still_running_ : nullptr);
      returned_at_ = Clock::now();
    });
  }

  ~Harness() {
    CloseInput();
    if (runner_.joinable()) runner_.join();
    for (int fd : {to_server_[0], from_server_[0], from_server_[1]}) ::close(fd);
  }

  void SendRaw(const std::string& bytes) {
    std::string_view rest = bytes;
    while (!rest.empty()) {
      ssize_t n = ::write(to_server_[1], rest.data(), rest.size());
      ASSERT_GT(n, 0);
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void Send(const Json& message) { SendRaw(Serialize(message) + "\n"); }

  // The next line the server wrote, or nullopt after `timeout`.
  std::optional<std::string> ReadLine(milliseconds timeout) {
    auto end = Clock::now() + timeout;
    for (;;) {
      std::size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<milliseconds>(end - Clock::now()).count();
      if (left <= 0) return std::nullopt;
      struct pollfd p = {from_server_[0], POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[1 << 16];
      ssize_t n = ::read(from_server_[0], chunk, sizeof(chunk));
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // The next message; every line must be one JSON-RPC object.
  std::optional<Json> Read(milliseconds timeout = milliseconds(5000)) {
    std::optional<std::string> line = ReadLine(timeout);
    if (!line) return std::nullopt;
    EXPECT_TRUE(Json::accept(*line)) << *line;
    Json j = Json::parse(*line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << *line;
    EXPECT_EQ(j.value("jsonrpc", ""), "2.0") << *line;
    return j;
  }

  // Reads until the response with `id`; notifications seen on the way go to `notes`.
  std::optional<Json> WaitFor(const Json& id, milliseconds timeout = milliseconds(5000),
                              std::vector<Json>* notes = nullptr) {
    auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
      auto left = std::chrono::duration_cast<milliseconds>(end - Clock::now());
      std::optional<Json> m = Read(left);
      if (!m) return std::nullopt;
      if (m->contains("id") && (*m)["id"] == id) return m;
      if (notes) notes->push_back(*m);
    }
    return std::nullopt;
  }

  void Initialize() {
    Send({{"jsonrpc", "2.0"},
          {"id", "init"},
          {"method", "initialize"},
          {"params",
           {{"protocolVersion", "2025-11-25"},
            {"capabilities", Json::object()},
            {"clientInfo", {{"name", "stdio-test"}, {"version", "1"}}}}}});
    std::optional<Json> r = WaitFor("init");
    ASSERT_TRUE(r);
    ASSERT_EQ((*r)["result"]["protocolVersion"], "2025-11-25");
    Send(MakeNotification("notifications/initialized", nullptr));
  }

  void Call(const Json& id, const std::string& tool, Json arguments = Json::object(),
            Json progress_token = nullptr) {
    Json params = {{"name", tool}, {"arguments", std::move(arguments)}};
    if (!progress_token.is_null()) params["_meta"] = {{"progressToken", progress_token}};
    Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}});
  }

  void CloseInput() {
    if (to_server_[1] >= 0) {
      closed_at_ = Clock::now();
      ::close(to_server_[1]);
      to_server_[1] = -1;
    }
  }

  // Waits for RunStdio to return; its exit code and how long after EOF it returned.
  std::pair<int, milliseconds> Join() {
    runner_.join();
    return {rc_, std::chrono::duration_cast<milliseconds>(returned_at_ - closed_at_)};
  }
  int still_running() const { return still_running_; }

 private:
  std::unique_ptr<Server> owned_;
  Server& server_;
  int still_running_ = -1;
  int to_server_[2] = {-1, -1};
  int from_server_[2] = {-1, -1};
  std::thread runner_;
  int rc_ = -1;
  Clock::time_point closed_at_;
  Clock::time_point returned_at_;
  std::string buffer_;
};

Json Ping(const Json& id) { return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}}; }

TEST(StdioTest, Handshake) {
  Harness h;
  h.Initialize();
  h.Send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
  std::optional<Json> r = h.WaitFor(2);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"]["tools"].size(), testing_tools::Tools().size());
  h.Call(3, "echo", {{"text", "over stdio"}});
  r = h.WaitFor(3);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"]["structuredContent"]["echo"], "over stdio");
  h.Send(Ping(4));
  r = h.WaitFor(4);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"], Json::object());
}

TEST(StdioTest, ModernRequestsNeedNoHandshakeAndInterleaveWithALegacySession) {
  Harness h;
  const Json meta = {{kMetaProtocolVersion, "2026-07-28"}, {kMetaClientCapabilities, Json::object()}};
  // First message: a modern discover, no initialize before it.
  h.Send({{"jsonrpc", "2.0"}, {"id", "d"}, {"method", "server/discover"}, {"params", {{"_meta", meta}}}});
  std::optional<Json> r = h.WaitFor("d");
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"]["supportedVersions"], Json::array({"2026-07-28"}));
  // A modern tools/call runs on a worker like a legacy one.
  h.Send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
          {"params", {{"name", "echo"}, {"arguments", {{"text", "modern"}}}, {"_meta", meta}}}});
  r = h.WaitFor(1);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"]["structuredContent"]["echo"], "modern");
  EXPECT_EQ((*r)["result"]["resultType"], "complete");
  // Then a 2025 session on the same process, and modern requests still served beside it.
  h.Initialize();
  h.Call(2, "echo", {{"text", "legacy"}});
  r = h.WaitFor(2);
  ASSERT_TRUE(r);
  EXPECT_FALSE((*r)["result"].contains("resultType"));
  h.Send({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "ping"}, {"params", {{"_meta", meta}}}});
  r = h.WaitFor(3);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["error"]["code"], kMethodNotFound);  // removed in 2026-07-28
}

TEST(StdioTest, ModernLadderOverStdio) {
  // Raw lines, each rung of the ladder that stdio has (no headers there): envelope, revision,
  // method; the error echoes the id and the session stays untouched.
  Harness h;
  const std::vector<std::pair<std::string, int>> cases = {
      {R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})",
       kInvalidParams},
      {R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}}})",
       kInvalidParams},
      {R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}})",
       kUnsupportedProtocolVersion},
      {R"({"jsonrpc":"2.0","id":4,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})",
       kMethodNotFound},
      {R"({"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"debug","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})",
       kMethodNotFound},
      {R"({"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"skill://x/SKILL.md","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})",
       kMethodNotFound},  // the test server has no resources: not offered at all
  };
  for (const auto& [line, code] : cases) {
    h.SendRaw(line + "\n");
    const Json id = Json::parse(line)["id"];
    std::optional<Json> r = h.WaitFor(id, milliseconds(2000));
    ASSERT_TRUE(r) << line;
    EXPECT_EQ((*r)["error"]["code"], code) << line;
  }
  // The modern initialize did not start a session: a 2025 request is still refused before one.
  h.Send({{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/list"}});
  std::optional<Json> r = h.WaitFor(7, milliseconds(2000));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["error"]["code"], kInvalidRequest);
}

TEST(StdioTest, EarlyRequestIsRefusedAtOnce) {
  Harness h;
  h.Send(
      {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "server/discover"}, {"params", Json::object()}});
  std::optional<Json> r = h.WaitFor(1, milliseconds(1000));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["error"]["code"], kMethodNotFound);
  h.Send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
  r = h.WaitFor(2, milliseconds(1000));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["error"]["code"], kInvalidRequest);
}

TEST(StdioTest, SlowCallDoesNotBlockPingAndCancellationSilencesIt) {
  Harness h;
  h.Initialize();
  h.Call("slow", "slow");
  ASSERT_TRUE(testing_tools::WaitForSlowStart());
  auto sent = Clock::now();
  h.Send(Ping("p1"));
  std::vector<Json> seen;
  std::optional<Json> r = h.WaitFor("p1", milliseconds(2000), &seen);
  ASSERT_TRUE(r);
  EXPECT_LT(Clock::now() - sent, milliseconds(500));
  EXPECT_EQ(testing_tools::slow_running.load(), 1);  // the slow call is still running

  h.Send(MakeNotification("notifications/cancelled", {{"requestId", "slow"}, {"reason", "t"}}));
  // The tool notices within a poll; then no response for it may ever come.
  auto end = Clock::now() + milliseconds(2000);
  while (testing_tools::slow_running.load() != 0 && Clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(testing_tools::slow_running.load(), 0);
  h.Send(Ping("p2"));
  r = h.WaitFor("p2", milliseconds(2000), &seen);
  ASSERT_TRUE(r);
  // Nothing more arrives for the cancelled call.
  while (std::optional<Json> m = h.Read(milliseconds(200))) seen.push_back(*m);
  for (const Json& m : seen) {
    EXPECT_FALSE(m.contains("id") && m["id"] == "slow") << m.dump();
  }
}

TEST(StdioTest, ProgressFlowsWhileACallRuns) {
  Harness h;
  h.Initialize();
  h.Call(5, "slow", {{"seconds", 0.2}}, "tok");
  std::vector<Json> notes;
  std::optional<Json> r = h.WaitFor(5, milliseconds(3000), &notes);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"]["content"][0]["text"], "finished");
  ASSERT_GE(notes.size(), 2u);
  double last = 0;
  for (const Json& n : notes) {
    EXPECT_EQ(n["method"], "notifications/progress");
    EXPECT_EQ(n["params"]["progressToken"], "tok");
    EXPECT_GT(n["params"]["progress"].get<double>(), last);
    last = n["params"]["progress"].get<double>();
  }
}

TEST(StdioTest, LogNotificationsPrecedeTheResponse) {
  Harness h;
  h.Initialize();
  h.Send({{"jsonrpc", "2.0"},
          {"id", 1},
          {"method", "logging/setLevel"},
          {"params", {{"level", "debug"}}}});
  ASSERT_TRUE(h.WaitFor(1));
  h.Call(2, "log");
  std::vector<Json> notes;
  ASSERT_TRUE(h.WaitFor(2, milliseconds(3000), &notes));
  ASSERT_EQ(notes.size(), 4u);
  EXPECT_EQ(notes[0]["params"]["level"], "debug");
  EXPECT_EQ(notes[3]["params"]["level"], "error");
}

TEST(StdioTest, EofReturnsPromptly) {
  Harness h;
  h.Initialize();
  h.CloseInput();
  auto [rc, after] = h.Join();
  EXPECT_EQ(rc, 0);
  EXPECT_LT(after, milliseconds(300));
}

TEST(StdioTest, EofWithACallInFlightReturnsWithinASecond) {
  Harness h;
  h.Initialize();
  h.Call("slow", "slow");  // 10 s unless cancelled
  ASSERT_TRUE(testing_tools::WaitForSlowStart());
  h.CloseInput();
  auto [rc, after] = h.Join();
  EXPECT_EQ(rc, 0);
  EXPECT_LT(after, milliseconds(1000));
  // The call was cancelled, so no response was written.
  while (std::optional<Json> m = h.Read(milliseconds(100))) {
    EXPECT_FALSE(m->contains("id") && (*m)["id"] == "slow") << m->dump();
  }
  auto end = Clock::now() + milliseconds(1000);
  while (testing_tools::slow_running.load() != 0 && Clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(5));
  }
}

// Starts a 1.5 s call that ignores cancellation, closes stdin once it runs, and waits for
// RunStdio: its exit code and how long after EOF it returned.
std::pair<int, milliseconds> CloseInputDuringADeafCall(Harness& h) {
  h.Initialize();
  h.Call("deaf", "slow", {{"seconds", 1.5}, {"deaf", true}});
  EXPECT_TRUE(testing_tools::WaitForSlowStart());
  h.CloseInput();
  return h.Join();
}

TEST(StdioTest, EofWaitsForACallThatIgnoresCancellationBeforeTheServerMayGo) {
  // The harness destroys its server once RunStdio returns: a call still running on a worker
  // would then use freed memory (what ASan caught in CI when a cancelled call was slow to end).
  Harness h;
  auto [rc, after] = CloseInputDuringADeafCall(h);
  EXPECT_EQ(rc, 0);
  // Drain (500 ms) and grace (200 ms) are over long before the call's 1.5 s: it was waited for.
  EXPECT_EQ(testing_tools::slow_running.load(), 0);
  EXPECT_GT(after, milliseconds(900));
  // It finished after the output was closed, so its answer was not written.
  while (std::optional<Json> m = h.Read(milliseconds(100))) {
    EXPECT_FALSE(m->contains("id") && (*m)["id"] == "deaf") << m->dump();
  }
}

TEST(StdioTest, EofCanLeaveACallThatIgnoresCancellationToACallerThatExits) {
  // slurm-mcp's way: RunStdio returns after the grace and says a call still runs; the server
  // outlives it (here a server never destroyed; slurm-mcp ends the process with _Exit).
  static Server* kept = new Server(testing_tools::Options());
  Harness h({}, kept);
  auto [rc, after] = CloseInputDuringADeafCall(h);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(h.still_running(), 1);
  EXPECT_LT(after, milliseconds(1400));
  auto end = Clock::now() + milliseconds(3000);
  while (testing_tools::slow_running.load() != 0 && Clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(testing_tools::slow_running.load(), 0);
}

TEST(StdioTest, EofStillDeliversACallThatFinishesInTime) {
  // `printf '...' | slurm-mcp` must still print the answer of a short call.
  Harness h;
  h.Initialize();
  h.Call(9, "slow", {{"seconds", 0.1}});
  h.CloseInput();
  std::optional<Json> r = h.WaitFor(9, milliseconds(2000));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"]["content"][0]["text"], "finished");
  EXPECT_EQ(h.Join().first, 0);
}

TEST(StdioTest, LastLineWithoutNewlineIsHandled) {
  Harness h;
  h.SendRaw(Serialize(Ping(1)));
  h.CloseInput();
  std::optional<Json> r = h.WaitFor(1, milliseconds(2000));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"], Json::object());
}

TEST(StdioTest, BusyWhenTheQueueIsFull) {
  StdioOptions options;
  options.workers = 1;
  options.max_queued = 1;
  Harness h(options);
  h.Initialize();
  h.Call(1, "slow");
  ASSERT_TRUE(testing_tools::WaitForSlowStart());
  h.Call(2, "slow");  // waits for the worker
  h.Call(3, "slow");  // refused
  std::optional<Json> r = h.WaitFor(3, milliseconds(2000));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["error"]["code"], -32000);
  // Cancelling the queued call means it never runs and never answers.
  h.Send(MakeNotification("notifications/cancelled", {{"requestId", 2}}));
  h.Send(MakeNotification("notifications/cancelled", {{"requestId", 1}}));
  h.Send(Ping("after"));
  std::vector<Json> seen;
  ASSERT_TRUE(h.WaitFor("after", milliseconds(2000), &seen));
  while (std::optional<Json> m = h.Read(milliseconds(300))) seen.push_back(*m);
  for (const Json& m : seen) EXPECT_FALSE(m.contains("id")) << m.dump();
}

TEST(StdioTest, OverlongLineIsRefusedAndSkipped) {
  Harness h;  // default limit: 4 MiB
  h.Initialize();
  std::string huge = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":")" +
                     std::string(5u << 20, 'a') + "\"}}\n";
  std::thread writer([&] { h.SendRaw(huge + Serialize(Ping(2)) + "\n"); });
  std::optional<Json> r = h.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["error"]["code"], kInvalidRequest);
  EXPECT_TRUE((*r)["id"].is_null());
  EXPECT_NE((*r)["error"]["message"].get<std::string>().find("longer than"), std::string::npos);
  r = h.Read();
  writer.join();
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["id"], 2);
  EXPECT_EQ((*r)["result"], Json::object());
}

// Lines a confused or hostile client might send.
std::vector<std::string> MalformedLines(int count) {
  std::mt19937 rng(20250618);
  const std::vector<std::string> valid = {
      R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":"x","method":"tools/list","params":{}})",
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}})",
      R"({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}})",
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})",
      R"({"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})",
  };
  const std::vector<std::string> fixed = {
      "[]",
      "[1,2,3]",
      "null",
      "42",
      "\"str\"",
      "{}",
      "{\"jsonrpc\":\"2.0\"}",
      R"({"jsonrpc":"2.0","id":null,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":{},"method":"ping"})",
      R"({"jsonrpc":"2.0","id":1,"method":7})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[]}})",
      std::string(1000, '[') + std::string(1000, ']'),
      std::string(5000, '{'),
      "\xff\xfe\xfd",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xc3\x28\"}",
      std::string("\0\0\0", 3),
      "1e999",
      R"({"jsonrpc":"2.0","id":1e999,"method":"ping"})",
      "   ",
      "\t",
      "\r",
  };
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    std::string line;
    switch (rng() % 4) {
      case 0: {  // random bytes
        std::size_t length = rng() % 200;
        for (std::size_t j = 0; j < length; ++j) line.push_back(static_cast<char>(rng() % 256));
        break;
      }
      case 1: {  // a valid message, truncated
        const std::string& v = valid[rng() % valid.size()];
        line = v.substr(0, rng() % v.size());
        break;
      }
      case 2: {  // a valid message with a byte changed
        line = valid[rng() % valid.size()];
        line[rng() % line.size()] = static_cast<char>(rng() % 256);
        break;
      }
      default:
        line = fixed[rng() % fixed.size()];
    }
    for (char& c : line) {
      if (c == '\n') c = ' ';
    }
    lines.push_back(line);
  }
  return lines;
}

TEST(StdioTest, TenThousandMalformedLinesLeaveItAnswering) {
  StdioOptions options;
  options.max_line_bytes = 4096;  // the 5000-brace line is also an overlong one
  Harness h(options);
  std::vector<std::string> lines = MalformedLines(10000);
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  all += Serialize(Ping("final")) + "\n";
  std::thread writer([&] { h.SendRaw(all); });

  int responses = 0;
  int errors = 0;
  std::optional<Json> final_reply;
  auto end = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < end) {
    std::optional<std::string> line = h.ReadLine(milliseconds(10000));
    ASSERT_TRUE(line) << "no output after " << responses << " responses";
    ASSERT_TRUE(Json::accept(*line)) << "stdout carried a non-JSON line: " << *line;
    Json m = Json::parse(*line);
    ASSERT_TRUE(m.is_object());
    ASSERT_EQ(m["jsonrpc"], "2.0");
    if (m.contains("id")) {
      ++responses;
      ASSERT_TRUE(m.contains("result") != m.contains("error")) << *line;
      if (m.contains("error")) {
        ++errors;
        ASSERT_TRUE(m["error"]["code"].is_number_integer());
        ASSERT_TRUE(m["error"]["message"].is_string());
      }
      if (m["id"] == "final") {
        final_reply = m;
        break;
      }
    }
  }
  writer.join();
  ASSERT_TRUE(final_reply);
  EXPECT_EQ((*final_reply)["result"], Json::object());
  // Most lines are garbage and each gets an error; the valid ones (a few) may not.
  EXPECT_GT(errors, 5000);
  EXPECT_LE(responses, 10001);
  h.CloseInput();
  auto [rc, after] = h.Join();
  EXPECT_EQ(rc, 0);
  EXPECT_LT(after, milliseconds(1000));
}

}  // namespace
}  // namespace slurm_rca::mcp
