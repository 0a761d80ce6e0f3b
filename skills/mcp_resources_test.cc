// Resources: resources/list, resources/read and resources/templates/list of Server with
// resources, and the runbooks of skills/ turned into skill:// resources.
#include "skills/mcp_resources.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

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


TEST(SkillEntries, EveryFileIsAServedResourceWithItsDigestAndSize) {
  SkillResourceLoad load = LoadSkillResources(std::string(SLURM_RCA_SOURCE_DIR) + "/skills");
  ASSERT_TRUE(load.error.empty()) << load.error;
  ASSERT_EQ(load.skills.size(), 11u);
  ASSERT_EQ(load.prompts.size(), 11u);
  std::map<std::string, const Resource*> served;
  for (const Resource& r : load.resources) served[r.uri] = &r;
  std::size_t files = 0;
  for (const SkillEntry& s : load.skills) {
    ASSERT_EQ(s.files.front().uri, s.uri);  // SKILL.md first
    EXPECT_TRUE(s.frontmatter["name"].is_string()) << s.uri;
    EXPECT_EQ("skill://" + s.frontmatter["name"].get<std::string>() + "/SKILL.md", s.uri);
    EXPECT_TRUE(s.frontmatter["description"].is_string()) << s.uri;
    EXPECT_TRUE(s.frontmatter["metadata"].is_object()) << s.uri;  // nested maps stay maps
    for (const SkillFile& f : s.files) {
      ASSERT_TRUE(served.count(f.uri)) << f.uri << " is listed but not served";
      EXPECT_EQ(f.size, served[f.uri]->text.size()) << f.uri;
      EXPECT_EQ(f.digest, skills::Sha256Digest(served[f.uri]->text)) << f.uri;
      ++files;
    }
  }
  EXPECT_EQ(files, load.resources.size());  // and nothing served is left out of an entry
}

TEST(SkillEntries, Sha256DigestIsTheStandardOne) {
  // FIPS 180-2 test vector "abc", and the empty string.
  EXPECT_EQ(skills::Sha256Digest("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(skills::Sha256Digest(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(SkillEntries, YamlScalarsAreTypedByTheCoreSchema) {
  const YAML::Node node = YAML::Load(
      "a: null\nb: ~\nc:\nd: true\ne: False\nf: 42\ng: -7\nh: 0x1F\ni: 0o17\nj: 1.5\n"
      "k: 1e3\nl: \"42\"\nm: 'true'\nn: yes\no: .inf\np: plain text\nq: [1, two]\n"
      "r: {s: 1}\nt: 1.2.3\n");
  const Json j = skills::YamlToJson(node);
  EXPECT_TRUE(j["a"].is_null());
  EXPECT_TRUE(j["b"].is_null());
  EXPECT_TRUE(j["c"].is_null());
  EXPECT_EQ(j["d"], true);
  EXPECT_EQ(j["e"], false);
  EXPECT_EQ(j["f"], 42);
  EXPECT_EQ(j["g"], -7);
  EXPECT_EQ(j["h"], 31);
  EXPECT_EQ(j["i"], 15);
  EXPECT_EQ(j["j"], 1.5);
  EXPECT_EQ(j["k"], 1000.0);
  EXPECT_EQ(j["l"], "42");    // quoted: a string
  EXPECT_EQ(j["m"], "true");  // quoted: a string
  EXPECT_EQ(j["n"], "yes");   // YAML 1.1's boolean, a string in 1.2
  EXPECT_EQ(j["o"], ".inf");  // JSON has no infinity
  EXPECT_EQ(j["p"], "plain text");
  EXPECT_EQ(j["q"], Json::array({1, "two"}));
  EXPECT_EQ(j["r"], (Json{{"s", 1}}));
  EXPECT_EQ(j["t"], "1.2.3");
}

TEST(SkillPrompts, ARunbookBecomesAPromptWithARequiredSymptom) {
  SkillResourceLoad load = LoadSkillResources(std::string(SLURM_RCA_SOURCE_DIR) + "/skills");
  ASSERT_FALSE(load.prompts.empty());
  const Prompt* queue = nullptr;
  for (const Prompt& p : load.prompts) {
    if (p.name == "queue-not-draining") queue = &p;
  }
  ASSERT_NE(queue, nullptr);
  ASSERT_EQ(queue->arguments.size(), 1u);
  EXPECT_EQ(queue->arguments[0].name, "symptom");
  EXPECT_TRUE(queue->arguments[0].required);
  EXPECT_FALSE(queue->description.empty());
  const Json messages = queue->render({{"symptom", "jobs pend in gpu"}});
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["role"], "user");
  const std::string text = messages[0]["content"]["text"];
  EXPECT_NE(text.find("Symptom: jobs pend in gpu"), std::string::npos);
  EXPECT_NE(text.find("# Queue not draining"), std::string::npos) << text.substr(0, 400);
}

}  // namespace
}  // namespace slurm_rca::mcp
