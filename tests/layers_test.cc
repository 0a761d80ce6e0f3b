// The module map as a test: which folder may include which (README.md, "Layout"). Every
// `#include "x/..."` of a library file (tests and fuzzers aside) must follow an edge declared
// here; a new edge fails until it is declared, and a declared edge nothing uses fails too, so
// the map cannot drift from the tree. A file that must cross the map for a while is named in
// Crossings() with the reason (none today).
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = SLURM_RCA_SOURCE_DIR;

// Module -> the modules it may include, lowest layer first. A module is a folder; the deepest
// listed folder that holds a file is its module.
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> m = {
      {"base", {}},
      {"testing", {"base"}},
      {"guard", {"base"}},
      {"mcp/protocol", {"base"}},
      {"mcp/evidence", {}},
      {"mcp/telemetry", {"base", "mcp/evidence"}},
      {"mcp/backend", {"base", "guard", "mcp/evidence", "mcp/telemetry", "mcp/protocol"}},
      {"mcp/auth", {"base"}},
      {"mcp/topics",
       {"base", "guard", "mcp/protocol", "mcp/evidence", "mcp/telemetry", "mcp/backend"}},
      // mcp/backend: a claim's measured source is a file of an evidence bundle (bundle_pack.h).
      {"skills", {"base", "mcp/protocol", "mcp/backend", "mcp/topics"}},
      // The five layers' folder: their CMakeLists.txt and README.md, no source of its own.
      {"mcp", {}},
      // What slurm-mcp serves, assembled: the one module above both mcp/ and skills/.
      {"server", {"mcp/protocol", "mcp/topics", "skills"}},
      {"scenarios", {"base", "mcp/evidence", "mcp/backend", "mcp/topics"}},
      {"scenarios/live",
       {"base", "guard", "mcp/protocol", "mcp/backend", "mcp/topics", "scenarios"}},
      {"agents/llm", {"base", "scenarios"}},
      {"agents/graph", {"base", "scenarios"}},
      {"agents", {"base", "guard", "mcp/protocol", "mcp/evidence", "scenarios", "agents/llm",
                  "agents/graph"}},
      // An agent's session opened (OpenSession): the one module above both agents/ and the live
      // harness, which starts its slurm-mcp child (agents/ is the read path and never does), or
      // connects to a slurm-mcp already serving (mcp/protocol's HTTP client).
      {"session", {"base", "mcp/protocol", "mcp/backend", "scenarios", "scenarios/live", "agents"}},
      {"grader", {"base", "scenarios"}},
      {"cli",
       {"base", "mcp/backend", "mcp/auth", "scenarios", "scenarios/live", "agents", "agents/llm",
        "agents/graph", "session", "grader"}},
      // One folder per binary besides rca-bench's; each includes cli/parse.h.
      {"cli/slurm_mcp", {"base", "guard", "mcp/protocol", "mcp/evidence", "mcp/telemetry",
                         "mcp/backend", "mcp/auth", "mcp/topics", "server", "cli"}},
      {"cli/slurm_guard", {"base", "guard", "cli"}},
      {"cli/skill_lint", {"base", "skills", "cli"}},
  };
  return m;
}

// Files that cross the map, each with the step that will move it. Empty since mcp/ was split into
// layers (issue #19, item 4).
const std::map<std::string, std::string>& Crossings() {
  static const std::map<std::string, std::string> m;
  return m;
}

std::string ModuleOf(const fs::path& rel) {
  std::string best;
  std::string dir = rel.parent_path().string();
  for (const auto& [module, deps] : Allowed()) {
    if ((dir == module || dir.rfind(module + "/", 0) == 0) && module.size() > best.size()) {
      best = module;
    }
  }
  return best;
}

bool IsLibraryFile(const fs::path& p) {
  std::string name = p.filename().string();
  std::string ext = p.extension().string();
  if (ext != ".cc" && ext != ".h") return false;
  if (name.find("_test") != std::string::npos || name.find("test_") == 0) return false;
  if (name.find("fake_") == 0 || name.find("_fuzz") != std::string::npos) return false;
  return p.string().find("/fuzz/") == std::string::npos &&
         p.string().find("/testdata/") == std::string::npos;
}

struct Edge {
  std::string from, to, file;
};

std::vector<Edge> Edges() {
  static const RE2 include(R"re(^#include "([a-z_]+(?:/[a-z_]+)*)/[A-Za-z0-9_.]+")re");
  std::vector<Edge> out;
  for (const auto& [module, deps] : Allowed()) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(kRoot / module)) {
      if (!e.is_regular_file() || !IsLibraryFile(e.path())) continue;
      fs::path rel = fs::relative(e.path(), kRoot);
      if (ModuleOf(rel) != module) continue;  // a deeper module's file
      std::ifstream in(e.path());
      std::string line, dir;
      while (std::getline(in, line)) {
        if (!RE2::PartialMatch(line, include, &dir)) continue;
        std::string to = ModuleOf(fs::path(dir) / "x.h");
        if (to.empty() || to == module) continue;
        out.push_back({module, to, rel.string()});
      }
    }
  }
  return out;
}

TEST(LayersTest, EveryIncludeFollowsTheModuleMap) {
  std::vector<Edge> edges = Edges();
  ASSERT_GT(edges.size(), 50u);  // the scan found the tree
  std::vector<std::string> offenders;
  for (const Edge& e : edges) {
    if (Allowed().at(e.from).count(e.to) || Crossings().count(e.file)) continue;
    offenders.push_back(e.file + " (" + e.from + ") includes " + e.to);
  }
  std::string all;
  for (const std::string& o : offenders) all += "\n  " + o;
  EXPECT_TRUE(offenders.empty()) << "includes against the module map (tests/layers_test.cc):"
                                 << all;
}

TEST(LayersTest, TheMapIsADagAndEveryEdgeIsUsed) {
  // Acyclic: a module may include only modules declared before it in layer order.
  std::map<std::string, int> depth;
  std::function<int(const std::string&, int)> Depth = [&](const std::string& m, int guard) {
    EXPECT_LT(guard, 20) << "a cycle through " << m;
    if (guard >= 20) return 0;
    int d = 0;
    for (const std::string& dep : Allowed().at(m)) d = std::max(d, Depth(dep, guard + 1) + 1);
    return d;
  };
  for (const auto& [m, deps] : Allowed()) depth[m] = Depth(m, 0);
  EXPECT_EQ(depth["base"], 0);
  std::set<std::pair<std::string, std::string>> used;
  for (const Edge& e : Edges()) {
    if (!Crossings().count(e.file)) used.insert({e.from, e.to});
  }
  for (const auto& [m, deps] : Allowed()) {
    for (const std::string& d : deps) {
      EXPECT_TRUE(used.count({m, d})) << m << " may include " << d
                                      << " but nothing does: take the edge out of the map";
    }
  }
  // Each crossing still crosses: one that no longer does leaves the list.
  std::set<std::string> crossing;
  for (const Edge& e : Edges()) {
    if (!Allowed().at(e.from).count(e.to)) crossing.insert(e.file);
  }
  for (const auto& [file, why] : Crossings()) {
    EXPECT_TRUE(crossing.count(file)) << file << " no longer crosses the map; remove it from "
                                      << "Crossings() (" << why << ")";
  }
}

// No cycle of includes inside a folder (issue #34, item 6): a file pair (x.h with x.cc) includes
// the pairs of its own folder only in one direction, so a folder reads bottom-up. A cycle that must
// stay a while is named in KnownFolderCycles() with the step that will break it (none today); one
// that no longer exists must leave the list.
const std::map<std::string, std::string>& KnownFolderCycles() {
  static const std::map<std::string, std::string> m;
  return m;
}

// "folder/x" (a .cc counted with its .h) -> the pairs of the same folder it includes.
std::map<std::string, std::set<std::string>> FolderIncludes() {
  static const RE2 include(R"re(^#include "((?:[a-z_]+/)*[a-z_]+)/([A-Za-z0-9_]+)\.h")re");
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [module, deps] : Allowed()) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(kRoot / module)) {
      if (!e.is_regular_file() || !IsLibraryFile(e.path())) continue;
      fs::path rel = fs::relative(e.path(), kRoot);
      if (ModuleOf(rel) != module) continue;  // a deeper module's file, scanned with it
      const std::string folder = rel.parent_path().string();
      const std::string unit = (rel.parent_path() / rel.stem()).string();
      out[unit];
      std::ifstream in(e.path());
      std::string line, dir, name;
      while (std::getline(in, line)) {
        if (!RE2::PartialMatch(line, include, &dir, &name) || dir != folder) continue;
        if (dir + "/" + name != unit) out[unit].insert(dir + "/" + name);
      }
    }
  }
  return out;
}

// Every cycle found by a depth-first search, each spelt from its smallest unit: "a -> b -> a".
std::set<std::string> FolderCycles(const std::map<std::string, std::set<std::string>>& g) {
  std::set<std::string> cycles;
  std::map<std::string, int> state;  // 1: on the current path, 2: done
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& u) {
    state[u] = 1;
    path.push_back(u);
    auto it = g.find(u);
    for (const std::string& v : it == g.end() ? std::set<std::string>{} : it->second) {
      if (state[v] == 1) {
        // The cycle is the path from v's place to here; rotate it to start at its smallest unit.
        std::vector<std::string> c(std::find(path.begin(), path.end(), v), path.end());
        std::rotate(c.begin(), std::min_element(c.begin(), c.end()), c.end());
        std::string spelt;
        for (const std::string& x : c) spelt += x + " -> ";
        cycles.insert(spelt + c.front());
      } else if (state[v] == 0) {
        visit(v);
      }
    }
    path.pop_back();
    state[u] = 2;
  };
  for (const auto& [u, to] : g) {
    if (state[u] == 0) visit(u);
  }
  return cycles;
}

TEST(LayersTest, NoFolderIncludesItselfInACycle) {
  std::map<std::string, std::set<std::string>> g = FolderIncludes();
  ASSERT_GT(g.size(), 50u);  // the scan found the tree
  ASSERT_TRUE(g.at("scenarios/live/runner").count("scenarios/live/lab"));  // and its edges
  // The search finds a cycle where there is one.
  EXPECT_EQ(FolderCycles({{"x/a", {"x/b"}}, {"x/b", {"x/c"}}, {"x/c", {"x/b"}}}),
            std::set<std::string>{"x/b -> x/c -> x/b"});
  std::set<std::string> cycles = FolderCycles(g);
  std::string all;
  for (const std::string& c : cycles) {
    if (!KnownFolderCycles().count(c)) all += "\n  " + c;
  }
  EXPECT_TRUE(all.empty()) << "files of one folder that include each other in a cycle (move what "
                              "both need into a third file):"
                           << all;
  for (const auto& [cycle, why] : KnownFolderCycles()) {
    EXPECT_TRUE(cycles.count(cycle)) << cycle << " is no longer a cycle; take it out of "
                                     << "KnownFolderCycles() (" << why << ")";
  }
}

// Paths are resolved once, in main (issue #19, item 6): no library reads the environment or a
// path compiled into it. A binary's own files (cli/ and its folders) may. The
// files named here still do, each with its reason.
TEST(LayersTest, NoLibraryReadsTheEnvironmentOrACompiledInPath) {
  static const std::map<std::string, std::string> kStill = {
      {"scenarios/live/mcp_child.cc",
       "passes PATH, HOME and the like to the slurm-mcp child it starts"},
  };
  static const RE2 reads(
      R"re(\bgetenv\s*\(|\bsecure_getenv\s*\(|SLURM_RCA_SOURCE_(?:DIR|ROOT)\b|SLURM_RCA_LIVE_TEMPLATES\b)re");
  int scanned = 0;
  std::vector<std::string> offenders;
  std::set<std::string> still_reading;
  for (const auto& [module, deps] : Allowed()) {
    if (module == "cli" || module.rfind("cli/", 0) == 0) continue;  // the binaries' own files
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(kRoot / module)) {
      if (!e.is_regular_file() || !IsLibraryFile(e.path())) continue;
      fs::path rel = fs::relative(e.path(), kRoot);
      if (ModuleOf(rel) != module || rel.filename() == "main.cc") continue;
      ++scanned;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      if (!RE2::PartialMatch(text.str(), reads)) continue;
      if (kStill.count(rel.string())) {
        still_reading.insert(rel.string());
      } else {
        offenders.push_back(rel.string());
      }
    }
  }
  EXPECT_GT(scanned, 100);  // the scan found the tree
  std::string all;
  for (const std::string& o : offenders) all += "\n  " + o;
  EXPECT_TRUE(offenders.empty())
      << "library files that read the environment or a compiled-in path (resolve it in main and "
         "pass it in):"
      << all;
  for (const auto& [file, why] : kStill) {
    EXPECT_TRUE(still_reading.count(file)) << file << " no longer reads one; take it out of the "
                                           << "list (" << why << ")";
  }
}

// Each module's README names what its folder builds: every library and every binary that is not
// a test or a benchmark (the docs drifted once; this keeps them honest).
TEST(LayersTest, EveryModuleReadmeNamesItsLibrariesAndBinaries) {
  static const RE2 target(R"re((?m)^\s*add_(?:library|executable)\(([A-Za-z0-9_-]+))re");
  int checked = 0;
  std::vector<std::string> missing;
  for (const auto& [module, deps] : Allowed()) {
    fs::path cmake = kRoot / module / "CMakeLists.txt";
    fs::path readme = kRoot / module / "README.md";
    if (!fs::exists(cmake)) continue;
    std::ifstream c(cmake), r(readme);
    std::stringstream cs, rs;
    cs << c.rdbuf();
    rs << r.rdbuf();
    std::string text = cs.str(), doc = rs.str();
    re2::StringPiece in(text);
    std::string name;
    while (RE2::FindAndConsume(&in, target, &name)) {
      if (name.find("test") != std::string::npos || name.find("bench") != std::string::npos ||
          name.find("fuzz") != std::string::npos || name.find('$') != std::string::npos) {
        continue;
      }
      ++checked;
      if (doc.find(name) == std::string::npos) missing.push_back(module + "/README.md: " + name);
    }
  }
  std::string all;
  for (const std::string& m : missing) all += "\n  " + m;
  EXPECT_TRUE(missing.empty()) << "targets a module README does not name:" << all;
  EXPECT_GE(checked, 15);
}

}  // namespace
