#include "skills/catalog.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include "base/file.h"

namespace slurm_rca::skills {

namespace fs = std::filesystem;

namespace {

// The line starting at `pos` without its end-of-line, and the position after it.
std::string LineAt(const std::string& text, size_t pos, size_t* next) {
  size_t end = text.find('\n', pos);
  size_t stop = end == std::string::npos ? text.size() : end;
  *next = end == std::string::npos ? text.size() : end + 1;
  std::string line = text.substr(pos, stop - pos);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

std::string ScalarOrEmpty(const YAML::Node& meta, const char* key) {
  const YAML::Node v = meta[key];
  return v && v.IsScalar() ? v.Scalar() : "";
}

}  // namespace

SkillLoad LoadSkill(const std::string& dir) {
  SkillLoad load;
  Skill& s = load.skill;
  s.dir = dir;
  s.dir_name = fs::path(dir).lexically_normal().filename().string();
  if (s.dir_name.empty()) {  // "skills/x/" normalises to "skills/x/", whose filename is ""
    s.dir_name = fs::path(dir).lexically_normal().parent_path().filename().string();
  }
  s.path = (fs::path(dir) / "SKILL.md").string();
  auto problem = [&](const char* rule, int line, std::string message) {
    load.problems.push_back({s.path, line, rule, std::move(message)});
    return load;
  };
  std::optional<std::string> text = base::ReadFile(s.path);
  if (!text) return problem("missing-skill-md", 0, "a skill directory needs a readable SKILL.md");
  s.text = std::move(*text);
  size_t pos = 0;
  if (LineAt(s.text, 0, &pos) != "---") {
    return problem("frontmatter-missing", 1,
                   "SKILL.md must start with a '---' line opening the YAML frontmatter");
  }
  size_t yaml_begin = pos;
  int line = 2;
  bool closed = false;
  while (pos < s.text.size()) {
    size_t next;
    std::string l = LineAt(s.text, pos, &next);
    if (l == "---") {
      s.frontmatter = s.text.substr(yaml_begin, pos - yaml_begin);
      s.body = s.text.substr(next);
      s.body_line = line + 1;
      closed = true;
      break;
    }
    pos = next;
    ++line;
  }
  if (!closed) return problem("frontmatter-unclosed", 1, "no '---' line closes the frontmatter");
  try {
    s.meta = YAML::Load(s.frontmatter);
  } catch (const YAML::Exception& e) {
    return problem("yaml-invalid", s.frontmatter_line + std::max(0, e.mark.line),
                   "frontmatter is not valid YAML: " + e.msg);
  }
  if (!s.meta.IsMap()) {
    return problem("frontmatter-not-mapping", s.frontmatter_line,
                   "the frontmatter must be a YAML mapping of keys to values");
  }
  s.name = ScalarOrEmpty(s.meta, "name");
  s.description = ScalarOrEmpty(s.meta, "description");

  std::error_code ec;
  fs::path refs = fs::path(dir) / "references";
  if (fs::is_directory(refs, ec)) {
    for (fs::recursive_directory_iterator it(refs, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code entry_ec;
      if (!it->is_regular_file(entry_ec) || it->path().extension() != ".md") continue;
      SkillFile f;
      f.path = it->path().string();
      f.relative_path = it->path().lexically_relative(dir).generic_string();
      std::optional<std::string> ref_text = base::ReadFile(f.path);
      if (!ref_text) continue;  // links to it are checked by the linter
      f.text = std::move(*ref_text);
      s.references.push_back(std::move(f));
    }
    std::sort(s.references.begin(), s.references.end(), [](const SkillFile& a, const SkillFile& b) {
      return a.relative_path < b.relative_path;
    });
  }
  return load;
}

bool IsSkillDir(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / "SKILL.md", ec) ||
         fs::is_directory(fs::path(dir) / "references", ec);
}

Catalog LoadCatalog(const std::string& root) {
  Catalog catalog;
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;  // an entry that cannot be inspected is not a skill
    if (it->is_directory(entry_ec) && IsSkillDir(it->path().string())) dirs.push_back(it->path());
  }
  if (ec) {
    catalog.problems.push_back(
        {root, 0, "no-skills", "cannot read the directory: " + ec.message()});
    return catalog;
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& d : dirs) {
    SkillLoad load = LoadSkill(d.string());
    if (load.ok()) {
      catalog.skills.push_back(std::move(load.skill));
    } else {
      catalog.problems.insert(catalog.problems.end(), load.problems.begin(), load.problems.end());
    }
  }
  return catalog;
}

}  // namespace slurm_rca::skills
