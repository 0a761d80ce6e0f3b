// RemoteFromUrl: rca-bench diagnose --mcp-url, split into what HttpClientTransport takes, and the
// URLs it refuses with a reason. (OpenSession's kRemote is run end to end by
// tests/mcp_peers/oauth_test.mjs: rca-bench diagnose over TLS with a token from a real issuer.)
// OpenSession of a replayed bundle opens what SessionOptions::child and ::backend ask for, and
// no more, with the real slurm-mcp as its child.
#include "session/session.h"

#include <gtest/gtest.h>

#include <string>

namespace slurm_rca::session {
namespace {

TEST(RemoteFromUrlTest, SplitsSchemeHostPortAndPath) {
  base::Result<SessionOptions::Remote> r = RemoteFromUrl("https://head.example:8765/mcp");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->tls);
  EXPECT_EQ(r->host, "head.example");
  EXPECT_EQ(r->port, 8765);
  EXPECT_EQ(r->path, "/mcp");
  EXPECT_EQ(r->url, "https://head.example:8765/mcp");

  r = RemoteFromUrl("http://127.0.0.1:18000");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->tls);
  EXPECT_EQ(r->path, "/mcp");  // the default path

  r = RemoteFromUrl("https://mcp.example.org/tenants/a/mcp");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->port, 443);
  EXPECT_EQ(r->path, "/tenants/a/mcp");
  EXPECT_EQ(RemoteFromUrl("http://mcp.example.org/")->port, 80);

  r = RemoteFromUrl("https://[::1]:9443/mcp");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->host, "::1");
  EXPECT_EQ(r->port, 9443);
  EXPECT_EQ(RemoteFromUrl("http://[::1]/mcp")->port, 80);
}

TEST(RemoteFromUrlTest, RefusesWhatItCannotReach) {
  const std::pair<const char*, const char*> bad[] = {
      {"ftp://host/mcp", "not an http:// or https:// URL"},
      {"head:8765/mcp", "not an http:// or https:// URL"},
      {"https://:8765/mcp", "no host"},
      {"https://user@host/mcp", "no host"},
      {"https://host:0/mcp", "the port must be 1 to 65535"},
      {"https://host:65536/mcp", "the port must be 1 to 65535"},
      {"https://host:http/mcp", "the port must be 1 to 65535"},
      {"https://host:99999999999/mcp", "the port must be 1 to 65535"},
      {"https://[::1/mcp", "an IPv6 address without its ]"},
      {"https://[::1]x/mcp", "junk after the IPv6 address"},
      {"https://host/mcp?x=1", "no query or fragment here"},
  };
  for (const auto& [url, why] : bad) {
    base::Result<SessionOptions::Remote> r = RemoteFromUrl(url);
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.status().message(), std::string("--mcp-url ") + url + ": " + why);
  }
}

SessionOptions Replay(const std::string& bundle) {
  SessionOptions o;
  o.slurm_mcp = SLURM_MCP_BIN;
  o.bundle_dir = std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/" + bundle;
  o.offset_s = 60;
  return o;
}

TEST(OpenSessionTest, ReplayOpensTheChildAndTheBackEndAsAsked) {
  SessionOptions both = Replay("S04-gpu-ecc-drain");
  auto s = OpenSession(both);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_NE((*s)->client(), nullptr);
  ASSERT_NE((*s)->backend(), nullptr);
  // The child and the back-end serve the same bundle.
  auto listed = (*s)->client()->ListTools();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_FALSE(listed->empty());
  EXPECT_TRUE((*s)->backend()->Read({"sinfo", "--noheader", "-N", "-o", "%N|%P|%T|%C|%G|%E"}).ok());

  SessionOptions raw_only = Replay("S04-gpu-ecc-drain");
  raw_only.needs.client = false;  // configuration A: raw reads only, no slurm-mcp child
  auto a = OpenSession(raw_only);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->client(), nullptr);
  ASSERT_NE((*a)->backend(), nullptr);

  SessionOptions mcp_only = Replay("S04-gpu-ecc-drain");
  mcp_only.needs.backend = false;  // the MCP configurations: the child alone reads the bundle
  auto b = OpenSession(mcp_only);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_NE((*b)->client(), nullptr);
  EXPECT_EQ((*b)->backend(), nullptr);
  EXPECT_TRUE((*b)->client()->ListTools().ok());
}

TEST(OpenSessionTest, ABundleThatDoesNotOpenIsRefusedWhoeverOpensIt) {
  SessionOptions both = Replay("no-such-bundle");
  auto s = OpenSession(both);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), base::Status::Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("bundle "), std::string::npos) << s.status().message();

  SessionOptions mcp_only = Replay("no-such-bundle");
  mcp_only.needs.backend = false;  // no back-end of its own: the child refuses the bundle
  auto b = OpenSession(mcp_only);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), base::Status::Code::kUnavailable);
  EXPECT_EQ(b.status().message().rfind("slurm-mcp: ", 0), 0u) << b.status().message();
}

}  // namespace
}  // namespace slurm_rca::session
