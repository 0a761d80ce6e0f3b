// The C++ MCP client against a real 2026-07-28 peer: the official TypeScript SDK v2 server
// (@modelcontextprotocol/server 2.4.0, tests/mcp_peers/sdk2, installed by setup.sh; the server is
// tests/mcp_peers/v2_server.mjs), over stdio and over HTTP. In auto mode the client finds the
// modern era and lists and calls tools and gets a prompt whose name goes base64 in Mcp-Name; a
// probe at a revision the server does not serve is answered -32022 and probed again; pinned to
// legacy, the same server still serves it through initialize. Over HTTP the server logs each
// request's headers, so the test also reads what went on the wire (no session id, no GET, no
// DELETE), and shows that the SDK does check the headers (a wrong Mcp-Name is -32020).
//
// Needs node (on PATH) and the sdk2 prefix in ${SLURM_RCA_NPM_CACHE:-~/.cache/slurm-rca/npm-peers};
// ctest runs it after mcp_peers_setup (fixture mcp_peers). Every server is stopped by PID.
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "mcp/protocol/client.h"
#include "mcp/test_temp_dir.h"
#include "scenarios/live/process.h"

namespace slurm_rca {
namespace {

namespace fs = std::filesystem;
using base::Result;
using mcp::Client;
using mcp::ClientOptions;
using mcp::Connection;
using mcp::Era;
using mcp::EraMode;
using mcp::Json;
using std::chrono::milliseconds;

const std::string kServerScript =
    std::string(SLURM_RCA_SOURCE_DIR) + "/tests/mcp_peers/v2_server.mjs";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// v2_server.mjs as a child: stdin and stdout piped, stderr to a log file.
class V2Server {
 public:
  // mode: "--stdio" or "--http" (then the port is read from its first stdout line).
  explicit V2Server(const std::string& mode) {
    dir_ = mcp::testing_tools::MakeTempDir("sdk2");
    log_ = dir_ + "/server.log";
    std::vector<std::string> path_dirs;
    std::stringstream path(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
    for (std::string d; std::getline(path, d, ':');) path_dirs.push_back(d);
    const std::string node = live::FindProgram("node", path_dirs);
    if (node.empty()) {
      error_ = "node is not on PATH";
      return;
    }
    std::vector<std::string> env;
    for (const char* keep : {"PATH", "HOME", "SLURM_RCA_NPM_CACHE"}) {
      if (const char* v = std::getenv(keep)) env.push_back(std::string(keep) + "=" + v);
    }
    live::PipedChild c = live::SpawnPiped({node, kServerScript, mode}, env, log_);
    if (!c.id) {
      error_ = c.error;
      return;
    }
    id_ = *c.id;
    to_child_ = c.to_child;
    from_child_ = c.from_child;
    if (mode == "--http") ReadPort();
  }
  ~V2Server() {
    if (to_child_ >= 0) ::close(to_child_);  // stdin EOF: the stdio server exits
    if (id_.pid > 0) live::StopProcess(id_, std::chrono::seconds(3));
    if (from_child_ >= 0) ::close(from_child_);
    if (!dir_.empty() && !::testing::Test::HasFailure()) fs::remove_all(dir_);
  }
  // "" when it runs; else why not, with its log.
  std::string error() const { return error_.empty() ? "" : error_ + "\n" + Slurp(log_); }
  std::unique_ptr<mcp::ClientTransport> StdioTransport() {
    return std::make_unique<mcp::StdioClientTransport>(from_child_, to_child_);
  }
  std::unique_ptr<mcp::ClientTransport> HttpTransport() {
    return std::make_unique<mcp::HttpClientTransport>("127.0.0.1", port_);
  }
  int port() const { return port_; }
  // The server's `http VERB ...` lines so far.
  std::vector<std::string> HttpLog() const {
    std::vector<std::string> lines;
    std::stringstream in(Slurp(log_));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("http ", 0) == 0) lines.push_back(line);
    }
    return lines;
  }

 private:
  void ReadPort() {
    std::string out;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    static const std::regex kServing(R"(serving MCP on http://127\.0\.0\.1:(\d+)/mcp)");
    std::smatch m;
    while (!std::regex_search(out, m, kServing)) {
      const auto left =
          std::chrono::duration_cast<milliseconds>(end - std::chrono::steady_clock::now());
      struct pollfd p = {from_child_, POLLIN, 0};
      char chunk[512];
      ssize_t n = 0;
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0 ||
          (n = ::read(from_child_, chunk, sizeof(chunk))) <= 0) {
        error_ = "the HTTP server named no port within 30 s (stdout: " + out + ")";
        return;
      }
      out.append(chunk, static_cast<std::size_t>(n));
    }
    port_ = std::stoi(m[1]);
  }

  std::string dir_, log_, error_;
  live::ProcessId id_;
  int to_child_ = -1, from_child_ = -1;
  int port_ = 0;
};

std::vector<std::string> ToolNames(Client& client) {
  Result<std::vector<Json>> tools = client.ListTools();
  EXPECT_TRUE(tools.ok()) << tools.status().ToString();
  std::vector<std::string> names;
  if (tools.ok()) {
    for (const Json& t : *tools) names.push_back(t.value("name", ""));
  }
  return names;
}

// What every connection checks: the tools listed and called, whatever the era.
void ListAndCall(Client& client) {
  EXPECT_EQ(ToolNames(client), (std::vector<std::string>{"echo", "add"}));
  Result<mcp::ToolCallResult> echo = client.CallTool("echo", {{"text", "héllo"}});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_FALSE(echo->is_error);
  EXPECT_EQ(echo->Text(), "héllo");
  ASSERT_TRUE(echo->structured);
  EXPECT_EQ((*echo->structured)["echo"], "héllo");
  Result<mcp::ToolCallResult> add = client.CallTool("add", {{"a", 2}, {"b", 3.5}});
  ASSERT_TRUE(add.ok()) << add.status().ToString();
  EXPECT_EQ(add->Text(), "5.5");
  Result<mcp::ToolCallResult> unknown = client.CallTool("no_such_tool", Json::object());
  EXPECT_TRUE(!unknown.ok() || unknown->is_error) << "an unknown tool succeeded";
  // A prompt with a non-ASCII name (over HTTP, Mcp-Name carries it base64 and the SDK decodes it
  // before comparing it with the body).
  Result<Json> prompt =
      client.Call("prompts/get", {{"name", "grüße"}, {"arguments", {{"name", "C++"}}}});
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ((*prompt)["messages"][0]["content"]["text"], "Grüße, C++");
}

void ExpectModern(Client& client, const Result<Connection>& c) {
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->era, Era::kModern);
  EXPECT_EQ(client.era(), Era::kModern);
  EXPECT_EQ(c->protocol_version, "2026-07-28");
  EXPECT_EQ(c->server_info["name"], "sdk2-peer");
  EXPECT_TRUE(c->capabilities.contains("tools")) << c->capabilities.dump();
  EXPECT_EQ(c->instructions, "A test peer: echo and add.");
  EXPECT_EQ(c->fallback, "");
  EXPECT_EQ(client.Ping().rpc_code(), mcp::kMethodNotFound);  // refused here: modern has no ping
}

TEST(ClientSdk2Test, StdioAutoIsModern) {
  V2Server server("--stdio");
  ASSERT_EQ(server.error(), "");
  Client client(server.StdioTransport());
  Result<Connection> c = client.Connect("mcp_client_sdk2_test", "1");
  ExpectModern(client, c);
  ListAndCall(client);
}

TEST(ClientSdk2Test, StdioUnservedRevisionIsProbedAgain) {
  V2Server server("--stdio");
  ASSERT_EQ(server.error(), "");
  ClientOptions options;
  options.modern_protocol_version = "2099-01-01";  // the SDK answers -32022, supported [2026-07-28]
  Client client(server.StdioTransport(), options);
  ExpectModern(client, client.Connect("mcp_client_sdk2_test", "1"));
  EXPECT_EQ(ToolNames(client), (std::vector<std::string>{"echo", "add"}));
}

TEST(ClientSdk2Test, StdioPinnedLegacyStillWorks) {
  V2Server server("--stdio");
  ASSERT_EQ(server.error(), "");
  Client client(server.StdioTransport());
  Result<Connection> c = client.Connect("mcp_client_sdk2_test", "1", EraMode::kLegacy);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->era, Era::kLegacy);
  EXPECT_EQ(c->protocol_version, "2025-11-25");
  EXPECT_EQ(c->server_info["name"], "sdk2-peer");
  EXPECT_TRUE(client.Ping().ok());
  ListAndCall(client);
}

TEST(ClientSdk2Test, HttpAutoIsModernAndTheWireSaysSo) {
  V2Server server("--http");
  ASSERT_EQ(server.error(), "");
  {
    Client client(server.HttpTransport());
    Result<Connection> c = client.Connect("mcp_client_sdk2_test", "1");
    ExpectModern(client, c);
    ListAndCall(client);
  }
  std::vector<std::string> log = server.HttpLog();
  ASSERT_GE(log.size(), 6u);
  bool prompt_seen = false, echo_seen = false;
  for (const std::string& line : log) {
    SCOPED_TRACE(line);
    // Only POSTs (no GET stream, no DELETE at the end), each with the modern headers and never a
    // session id.
    EXPECT_EQ(line.rfind("http POST mcp-method=", 0), 0u);
    EXPECT_NE(line.find(" mcp-protocol-version=2026-07-28 "), std::string::npos);
    EXPECT_NE(line.find(" mcp-session-id=-"), std::string::npos);
    prompt_seen =
        prompt_seen ||
        line.find("mcp-method=prompts/get mcp-name==?base64?Z3LDvMOfZQ==?=") != std::string::npos;
    echo_seen = echo_seen || line.find("mcp-method=tools/call mcp-name=echo ") != std::string::npos;
  }
  EXPECT_TRUE(prompt_seen) << "no prompts/get with Mcp-Name base64(grüße)";
  EXPECT_TRUE(echo_seen) << "no tools/call with Mcp-Name echo";
  EXPECT_EQ(log[0].rfind("http POST mcp-method=server/discover ", 0), 0u) << log[0];
}

TEST(ClientSdk2Test, HttpUnservedRevisionIsProbedAgain) {
  V2Server server("--http");
  ASSERT_EQ(server.error(), "");
  ClientOptions options;
  options.modern_protocol_version = "2099-01-01";
  Client client(server.HttpTransport(), options);
  ExpectModern(client, client.Connect("mcp_client_sdk2_test", "1"));
  std::vector<std::string> log = server.HttpLog();
  ASSERT_GE(log.size(), 2u);
  EXPECT_NE(log[0].find("mcp-protocol-version=2099-01-01"), std::string::npos) << log[0];
  EXPECT_NE(log[1].find("mcp-protocol-version=2026-07-28"), std::string::npos) << log[1];
}

TEST(ClientSdk2Test, HttpPinnedLegacyStillWorks) {
  V2Server server("--http");
  ASSERT_EQ(server.error(), "");
  {
    Client client(server.HttpTransport());
    Result<Connection> c = client.Connect("mcp_client_sdk2_test", "1", EraMode::kLegacy);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->era, Era::kLegacy);
    EXPECT_EQ(c->protocol_version, "2025-11-25");
    ListAndCall(client);
  }
  std::vector<std::string> log = server.HttpLog();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log[0].rfind("http POST mcp-method=- ", 0), 0u) << log[0];  // initialize, no probe
  for (const std::string& line : log) {
    EXPECT_NE(line.find("mcp-method=-"), std::string::npos) << line;  // no modern headers
  }
}

// The SDK checks the headers against the body, so the calls above prove ours right.
TEST(ClientSdk2Test, HttpServerRefusesAnMcpNameThatDisagreesWithTheBody) {
  V2Server server("--http");
  ASSERT_EQ(server.error(), "");
  httplib::Client http("127.0.0.1", server.port());
  const Json body = {{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "tools/call"},
                     {"params",
                      {{"name", "echo"},
                       {"arguments", {{"text", "x"}}},
                       {"_meta",
                        {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                         {"io.modelcontextprotocol/clientCapabilities", Json::object()}}}}}};
  httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                              {"MCP-Protocol-Version", "2026-07-28"},
                              {"Mcp-Method", "tools/call"},
                              {"Mcp-Name", "add"}};
  httplib::Result r = http.Post("/mcp", headers, body.dump(), "application/json");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 400);
  Json reply = Json::parse(r->body, nullptr, false);
  EXPECT_EQ(reply["error"]["code"], -32020) << r->body;
}

}  // namespace
}  // namespace slurm_rca
