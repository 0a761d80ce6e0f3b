#include "skills/mcp_resources.h"

#include <openssl/evp.h>
#include <re2/re2.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

namespace slurm_rca::skills {

namespace {

// The first "# " heading of the body, or "".
std::string Heading(const std::string& body) {
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) return line.substr(2);
  }
  return "";
}

std::string SkillName(const Skill& s) { return s.name.empty() ? s.dir_name : s.name; }

// A plain scalar typed by the YAML 1.2 core schema (yaml.org/spec/1.2.2, 10.3.2).
mcp::Json CoreScalar(const std::string& v) {
  static const RE2 kNull("null|Null|NULL|~|");
  static const RE2 kTrue("true|True|TRUE");
  static const RE2 kFalse("false|False|FALSE");
  static const RE2 kDecimal("[-+]?[0-9]+");
  static const RE2 kOctal("0o([0-7]+)");
  static const RE2 kHex("0x([0-9a-fA-F]+)");
  static const RE2 kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (RE2::FullMatch(v, kNull)) return nullptr;
  if (RE2::FullMatch(v, kTrue)) return true;
  if (RE2::FullMatch(v, kFalse)) return false;
  try {
    std::string digits;
    if (RE2::FullMatch(v, kDecimal)) return std::stoll(v);
    if (RE2::FullMatch(v, kOctal, &digits)) return std::stoll(digits, nullptr, 8);
    if (RE2::FullMatch(v, kHex, &digits)) return std::stoll(digits, nullptr, 16);
    if (RE2::FullMatch(v, kFloat)) return std::stod(v);
  } catch (const std::out_of_range&) {
    // Beyond what JSON numbers hold here: keep the text.
  }
  return v;
}

}  // namespace

mcp::Json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      mcp::Json out = mcp::Json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      mcp::Json out = mcp::Json::array();
      for (const auto& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar:
      // yaml-cpp tags a quoted scalar "!" (non-specific, never resolved) and a plain one "?".
      if (node.Tag() == "!") return node.Scalar();
      return CoreScalar(node.Scalar());
    default:
      return nullptr;
  }
}

std::string Sha256Digest(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr);
  std::string out = "sha256:";
  char hex[3];
  for (unsigned int i = 0; i < n; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", md[i]);
    out += hex;
  }
  return out;
}

std::vector<mcp::SkillEntry> SkillEntries(const Catalog& catalog) {
  std::vector<mcp::SkillEntry> out;
  for (const Skill& s : catalog.skills) {
    const std::string root = "skill://" + SkillName(s) + "/";
    mcp::SkillEntry entry{.uri = root + "SKILL.md", .frontmatter = YamlToJson(s.meta)};
    entry.files.push_back({.uri = entry.uri, .digest = Sha256Digest(s.text), .size = s.text.size()});
    for (const SkillFile& f : s.references) {
      entry.files.push_back(
          {.uri = root + f.relative_path, .digest = Sha256Digest(f.text), .size = f.text.size()});
    }
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<mcp::Prompt> SkillPrompts(const Catalog& catalog) {
  std::vector<mcp::Prompt> out;
  for (const Skill& s : catalog.skills) {
    const std::string name = SkillName(s);
    const std::string body = s.body;
    out.push_back(mcp::Prompt{
        .name = name,
        .title = Heading(s.body),
        .description = s.description,
        .arguments = {{.name = "symptom",
                       .description = "What is wrong, as an operator or a ticket says it (for "
                                      "example: jobs pend for hours in the gpu partition)",
                       .required = true}},
        .render = [name, body](const std::map<std::string, std::string>& args) {
          const std::string text =
              "Diagnose this Slurm symptom with the " + name +
              " runbook below, reading the cluster only through slurm-mcp's read-only tools. "
              "Name the component at fault and the evidence that shows it; a read that failed "
              "or timed out is no evidence, never an empty answer.\n\nSymptom: " +
              args.at("symptom") + "\n\n" + body;
          return mcp::Json::array(
              {{{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}}});
        }});
  }
  return out;
}

std::vector<mcp::Resource> SkillResources(const Catalog& catalog) {
  std::vector<mcp::Resource> out;
  for (const Skill& s : catalog.skills) {
    const std::string name = s.name.empty() ? s.dir_name : s.name;
    out.push_back(mcp::Resource{.uri = "skill://" + name + "/SKILL.md",
                           .name = name,
                           .title = Heading(s.body),
                           .description = s.description,
                           .text = s.text});
    for (const SkillFile& f : s.references) {
      out.push_back(mcp::Resource{.uri = "skill://" + name + "/" + f.relative_path,
                             .name = name + "/" + f.relative_path,
                             .title = Heading(f.text),
                             .description = "Reference of the " + name + " runbook",
                             .text = f.text});
    }
  }
  return out;
}

SkillResourceLoad LoadSkillResources(const std::string& skills_dir) {
  SkillResourceLoad load;
  std::error_code ec;
  if (!std::filesystem::is_directory(skills_dir, ec)) {
    load.error = "no skills directory " + skills_dir;
    return load;
  }
  Catalog catalog = LoadCatalog(skills_dir);
  for (const LoadProblem& p : catalog.problems) load.warnings.push_back(p.ToString());
  if (catalog.skills.empty()) {
    load.error = "no skill (a folder holding SKILL.md) in " + skills_dir;
    return load;
  }
  load.resources = SkillResources(catalog);
  load.skills = SkillEntries(catalog);
  load.prompts = SkillPrompts(catalog);
  return load;
}

}  // namespace slurm_rca::skills
