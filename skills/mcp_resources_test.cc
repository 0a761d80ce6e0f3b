// Resources: resources/list, resources/read and resources/templates/list of Server with
// resources, and the runbooks of skills/ turned into skill:// resources.
#include "skills/mcp_resources.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "mcp/protocol/server.h"

namespace slurm_rca::mcp {
namespace {

using skills::LoadSkillResources;
using skills::SkillResourceLoad;

Message Request(const Json& id, const std::string& method, Json params = nullptr) {
  Json j = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) j["params"] = params;
  ParsedMessage p = ParseMessage(Serialize(j));
  EXPECT_TRUE(p.ok());
  return p.ok() ? *p.message : Message{};
}

class ResourcesTest : public ::testing::Test {
 protected:
  ResourcesTest() : server_(Options()) {}

  static ServerOptions Options() {
    ServerOptions o;
    o.resources.push_back(Resource{.uri = "skill://a/SKILL.md",
                                   .name = "a",
                                   .title = "A",
                                   .description = "first",
                                   .text = "---\nname: a\n---\n# A\n"});
    o.resources.push_back(Resource{.uri = "skill://b/SKILL.md", .name = "b", .text = "b"});
    return o;
  }

  Json Send(const Message& m) {
    std::optional<Json> r = server_.Handle(m, session_, [](const Json&) {});
    EXPECT_TRUE(r.has_value());
    return r.value_or(Json());
  }

  void Initialize() {
    Send(Request(0, "initialize",
                 {{"protocolVersion", "2025-11-25"},
                  {"capabilities", Json::object()},
                  {"clientInfo", {{"name", "t"}, {"version", "1"}}}}));
  }

  Server server_;
  Session session_;
};

TEST_F(ResourcesTest, CapabilityDeclaredOnlyWithResources) {
  Json r = Send(Request(1, "initialize",
                        {{"protocolVersion", "2025-11-25"},
                         {"capabilities", Json::object()},
                         {"clientInfo", {{"name", "t"}, {"version", "1"}}}}));
  EXPECT_EQ(r["result"]["capabilities"]["resources"],
            (Json{{"subscribe", false}, {"listChanged", false}}));
  Server bare{ServerOptions{}};
  Session s;
  std::optional<Json> b = bare.Handle(Request(1, "initialize",
                                              {{"protocolVersion", "2025-11-25"},
                                               {"capabilities", Json::object()},
                                               {"clientInfo", {{"name", "t"}, {"version", "1"}}}}),
                                      s, [](const Json&) {});
  ASSERT_TRUE(b);
  EXPECT_FALSE((*b)["result"]["capabilities"].contains("resources"));
  b = bare.Handle(Request(2, "resources/read", {{"uri", "skill://a/SKILL.md"}}), s,
                  [](const Json&) {});
  EXPECT_EQ((*b)["error"]["code"], kMethodNotFound);
}

TEST_F(ResourcesTest, ListsInOrderWithMetadata) {
  Initialize();
  Json r = Send(Request(2, "resources/list"));
  const Json& list = r["result"]["resources"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], (Json{{"uri", "skill://a/SKILL.md"},
                           {"name", "a"},
                           {"title", "A"},
                           {"description", "first"},
                           {"mimeType", "text/markdown"},
                           {"size", 20}}));
  EXPECT_EQ(list[1]["uri"], "skill://b/SKILL.md");
  EXPECT_FALSE(list[1].contains("title"));
  r = Send(Request(3, "resources/list", {{"cursor", "x"}}));
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
  r = Send(Request(4, "resources/templates/list"));
  EXPECT_EQ(r["result"]["resourceTemplates"], Json::array());
}

TEST_F(ResourcesTest, ReadsTextAndRefusesUnknownUris) {
  Initialize();
  Json r = Send(Request(5, "resources/read", {{"uri", "skill://a/SKILL.md"}}));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["result"]["contents"], Json::array({{{"uri", "skill://a/SKILL.md"},
                                                   {"mimeType", "text/markdown"},
                                                   {"text", "---\nname: a\n---\n# A\n"}}}));
  r = Send(Request(6, "resources/read", {{"uri", "skill://nope/SKILL.md"}}));
  EXPECT_EQ(r["error"]["code"], kResourceNotFound);
  EXPECT_EQ(r["error"]["data"]["uri"], "skill://nope/SKILL.md");
  EXPECT_EQ(r["id"], 6);
  r = Send(Request(7, "resources/read", {{"uri", 3}}));
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
  r = Send(Request(8, "resources/read"));
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
}

TEST_F(ResourcesTest, RefusedBeforeInitialize) {
  Json r = Send(Request(1, "resources/list"));
  EXPECT_EQ(r["error"]["code"], kInvalidRequest);
}

TEST(SkillResources, TheShippedRunbooks) {
  const std::string dir = std::string(SLURM_RCA_SOURCE_DIR) + "/skills";
  SkillResourceLoad load = LoadSkillResources(dir);
  ASSERT_TRUE(load.error.empty()) << load.error;
  EXPECT_TRUE(load.warnings.empty()) << load.warnings[0];
  std::set<std::string> uris;
  for (const Resource& r : load.resources) uris.insert(r.uri);
  EXPECT_EQ(uris.size(), load.resources.size()) << "URIs are unique";
  for (const char* name :
       {"queue-not-draining", "gpu-node-drained", "accounting-path-stalled", "backfill-not-running",
        "slinky-authkey-rotation", "state-save-unwritable", "partition-limit-starvation",
        "controller-rpc-saturation", "fabric-degraded-collectives", "gpu-allocated-but-idle",
        "evidence-is-gone"}) {
    EXPECT_TRUE(uris.count(std::string("skill://") + name + "/SKILL.md")) << name;
  }
  EXPECT_TRUE(uris.count("skill://gpu-node-drained/references/operator-handoff.md"));
  const Resource& first = load.resources[0];
  EXPECT_EQ(first.uri, "skill://accounting-path-stalled/SKILL.md");
  EXPECT_EQ(first.title, "Accounting path stalled");
  EXPECT_NE(first.description.find("Use when"), std::string::npos);
  EXPECT_EQ(first.text.substr(0, 4), "---\n");
}

TEST(SkillResources, MissingOrEmptyDirectoryIsAnError) {
  EXPECT_FALSE(LoadSkillResources("/nonexistent/skills").error.empty());
  const std::string data = std::string(SLURM_RCA_SOURCE_DIR) + "/skills/testdata/no-skills";
  EXPECT_FALSE(LoadSkillResources(data).error.empty());
  // A skill that fails to load is a warning; the others are served.
  SkillResourceLoad partial =
      LoadSkillResources(std::string(SLURM_RCA_SOURCE_DIR) + "/skills/testdata/yaml-invalid");
  EXPECT_FALSE(partial.error.empty());  // its only skill failed: nothing to serve
  ASSERT_EQ(partial.warnings.size(), 1u);
  EXPECT_NE(partial.warnings[0].find("yaml-invalid"), std::string::npos);
}

}  // namespace
}  // namespace slurm_rca::mcp
