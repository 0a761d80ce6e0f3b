// RemoteFromUrl: rca-bench diagnose --mcp-url, split into what HttpClientTransport takes, and the
// URLs it refuses with a reason. (OpenSession's kRemote is run end to end by
// tests/mcp_peers/oauth_test.mjs: rca-bench diagnose over TLS with a token from a real issuer.)
#include "session/session.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace slurm_rca::session
