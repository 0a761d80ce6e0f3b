// An own-jobs caller reads only its own jobs, on a live lab (ctest label `live`, issue #38, port
// base 21300): the busy profile's users have jobs queued and finished; one real slurm-mcp serves
// the lab over HTTP with OAuth (--auth-jwks-file: tokens signed here, no issuer contacted) and a
// user map from two principals to two of those users. Each principal, holding only
// slurm:read:own, reads the queue, the accounting history, the priorities and the fairshare
// tree: every row names its own Slurm user (or, in fairshare, its account's own row), and it has
// rows. The operator's token (slurm:read) reads the same topics and sees both users, so the
// narrowing is not an empty cluster. Asking for the other user's jobs is refused by the guard.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "mcp/auth/test_key.h"
#include "mcp/protocol/client.h"
#include "scenarios/live/ctld_load.h"
#include "scenarios/live/lab.h"

#ifndef SLURM_MCP_BINARY
#define SLURM_MCP_BINARY ""
#endif

namespace slurm_rca {
namespace {

const bool kLabTemplatesSet =
    (live::SetLabTemplates(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios/live/templates"), true);

namespace fs = std::filesystem;
using mcp::Json;
using mcp::auth::testing_key::TestKey;

constexpr int kPortBase = 21300;
constexpr int kMcpPort = kPortBase + 30;
const char* const kIssuer = "https://sso.cluster.test";

// The Slurm users a read names, one per line of `out`.
std::set<std::string> Lines(const std::string& out) {
  std::set<std::string> users;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    if (!line.empty()) users.insert(line);
  }
  return users;
}

// slurm_query's rows for `topic` as `client` reads them, or the text of a refusal.
struct Answer {
  Json rows = Json::array();
  std::string text;
  bool error = false;
};
Answer Query(mcp::Client& client, const std::string& topic, const Json& filters = nullptr) {
  Json args = {{"topic", topic}};
  if (!filters.is_null()) args["filters"] = filters;
  base::Result<mcp::ToolCallResult> r = client.CallTool("slurm_query", args);
  Answer a;
  if (!r.ok()) {
    a.error = true;
    a.text = r.status().ToString();
    return a;
  }
  a.text = r->Text();
  a.error = r->is_error;
  if (r->structured && r->structured->is_object() && r->structured->contains("rows")) {
    a.rows = (*r->structured)["rows"];
  }
  return a;
}

std::set<std::string> UsersOf(const Json& rows) {
  std::set<std::string> users;
  for (const Json& row : rows) users.insert(row.value("user", std::string("(no user column)")));
  return users;
}

TEST(McpOwnJobsLive, AnOwnJobsCallerReadsOnlyItsOwnJobs) {
  if (::geteuid() != 0) GTEST_SKIP() << "the live lab needs root";
  const std::string binary = SLURM_MCP_BINARY;
  ASSERT_TRUE(fs::exists(binary)) << binary;
  char dir[] = "/tmp/rca-ownjobs-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  live::Lab lab(live::LabOptions{
      .dir = dir, .nodes = 4, .port_base = kPortBase, .profile = "busy", .seed = 7});
  struct Down {
    live::Lab& lab;
    ~Down() { lab.Down(std::cout); }
  } down{lab};
  {
    base::Status up = lab.Up(std::cout);
    ASSERT_TRUE(up.ok()) << up.message();
  }

  // Two users with jobs in the queue, as the service account sees them.
  live::ToolResult queued = lab.Client({"squeue", "--noheader", "-o", "%u"});
  ASSERT_TRUE(queued.ok()) << queued.Summary();
  const std::set<std::string> queue_users = Lines(queued.out);
  ASSERT_GE(queue_users.size(), 2u) << queued.out;
  const std::string user_a = *queue_users.begin();
  const std::string user_b = *std::next(queue_users.begin());

  // Tokens signed here; the server reads the public key from a file and maps principals to users.
  TestKey key(false, "lab-key");
  const std::string jwks = lab.Path("jwks.json");
  std::ofstream(jwks) << Json{{"keys", Json::array({key.PublicJwk()})}}.dump();
  const std::string map = lab.Path("users.yaml");
  std::ofstream(map) << "alice: " << user_a << "\nbob: " << user_b << "\n";
  const std::string audience = "http://127.0.0.1:" + std::to_string(kMcpPort) + "/mcp";
  const std::int64_t now = std::time(nullptr);
  auto token = [&](const std::string& sub, const std::string& scope) {
    return key.Sign({{"iss", kIssuer}, {"aud", audience}, {"sub", sub}, {"scope", scope},
                     {"iat", now - 5}, {"exp", now + 900}},
                    "ES256");
  };
  const std::string ops = token("ops", "slurm:read");
  auto started = live::HttpServer::Start(
      binary, lab, kMcpPort,
      {"--auth-issuer", kIssuer, "--auth-audience", audience, "--auth-jwks-file", jwks,
       "--auth-user-map", map},
      ops);
  ASSERT_TRUE(started.ok()) << started.status().message();
  std::unique_ptr<live::HttpServer> server = std::move(started).value();

  auto client_for = [&](const std::string& bearer) {
    auto c = std::make_unique<mcp::Client>(
        std::make_unique<mcp::HttpClientTransport>("127.0.0.1", kMcpPort, "/mcp", bearer));
    base::Result<mcp::Connection> connected = c->Connect("own-jobs-live", "0");
    EXPECT_TRUE(connected.ok()) << connected.status().ToString();
    return c;
  };

  // The operator sees both users in the queue and the history: the narrowing below is not an
  // empty cluster.
  auto operator_client = client_for(ops);
  std::map<std::string, std::set<std::string>> operator_sees;  // by topic
  for (const char* topic : {"queue", "accounting", "priority"}) {
    Answer a = Query(*operator_client, topic);
    ASSERT_FALSE(a.error) << topic << ": " << a.text;
    const std::set<std::string> seen = UsersOf(a.rows);
    operator_sees[topic] = seen;
    std::cout << "ops (slurm:read) " << topic << ": " << a.rows.size() << " rows, users "
              << ::testing::PrintToString(seen) << "\n";
    if (std::string(topic) != "priority") {
      EXPECT_TRUE(seen.count(user_a) && seen.count(user_b)) << topic << ": " << a.text.substr(0, 400);
    }
  }

  for (const auto& [principal, user, other] :
       {std::tuple{"alice", user_a, user_b}, std::tuple{"bob", user_b, user_a}}) {
    auto own = client_for(token(principal, "slurm:read:own"));
    for (const char* topic : {"queue", "accounting", "priority"}) {
      Answer a = Query(*own, topic);
      ASSERT_FALSE(a.error) << principal << " " << topic << ": " << a.text.substr(0, 400);
      EXPECT_NE(a.text.find("VIEW: the own jobs of Slurm user " + user), std::string::npos)
          << a.text.substr(0, 400);
      const std::set<std::string> seen = UsersOf(a.rows);
      std::cout << principal << " (" << user << ", slurm:read:own) " << topic << ": "
                << a.rows.size() << " rows, users " << ::testing::PrintToString(seen) << "\n";
      EXPECT_TRUE(seen.empty() || seen == std::set<std::string>{user})
          << principal << " " << topic << " read rows of " << ::testing::PrintToString(seen);
      // Rows wherever the operator saw this user's (a user may have nothing pending to rank).
      if (operator_sees[topic].count(user)) {
        EXPECT_FALSE(seen.empty()) << principal << " " << topic << ": " << a.text.substr(0, 400);
      }
    }
    Answer share = Query(*own, "fairshare");
    ASSERT_FALSE(share.error) << share.text.substr(0, 400);
    for (const Json& row : share.rows) {
      const std::string u = row.value("user", "");
      EXPECT_TRUE(u.empty() || u == user) << principal << " fairshare row " << row.dump();
    }
    Answer theirs = Query(*own, "queue", {{"user", other}});
    EXPECT_NE(theirs.text.find("DENIED own-jobs-filter"), std::string::npos)
        << principal << " asking for " << other << ": " << theirs.text.substr(0, 300);
    EXPECT_TRUE(UsersOf(theirs.rows).empty() || UsersOf(theirs.rows) == std::set<std::string>{user});
  }
}

}  // namespace
}  // namespace slurm_rca
