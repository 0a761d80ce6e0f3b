// The allowlist against the option and command tables of every Slurm release in fixtures/.
//
// fixtures/slurm-RELEASE/tables.txt is extracted from that release's sources by
// scripts/slurm-tables.py: each client's getopt optstring and long-option table, and the command
// words and `show` entities scontrol and sacctmgr test, in their order and with how each is
// matched. For every release the guard may meet, this test holds:
//   - every option spelling the guard accepts exists there, with the same arity (a flag the
//     guard takes as valueless but Slurm gives a value to would swallow the next token, and the
//     other way round a guard "value" would become a command word);
//   - every command word and entity the guard accepts dispatches, in Slurm's own matching
//     (case-insensitive, first match in source order, per-literal minimum lengths), to a word
//     the guard allows and never to one it refuses;
//   - every other word and entity of the release is named in the guard's inventory of refusals,
//     so a word a release adds is classified by a person, not passed by default, and the guard
//     refuses it, its shortest abbreviation and every option the guard does not list.
// What a release lacks that the guard accepts is listed below with why it is harmless.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "guard/check.h"
#include "guard/policy.h"

namespace slurm_rca::guard {
namespace {

namespace fs = std::filesystem;

struct WordRule {
  std::string literal;
  std::string how;  // prefix, lead, exact
  size_t n = 0;
};

struct ProgramTable {
  std::map<char, std::string> shorts;        // letter -> none|required|optional
  std::map<std::string, std::string> longs;  // name -> none|required|optional
  std::vector<WordRule> words;
  std::vector<WordRule> entities;
};

struct ReleaseTable {
  std::string release;  // "25.11", from the directory name
  std::map<std::string, ProgramTable> programs;
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// xstrncasecmp(tag, literal, k) == 0 as C computes it: the first k characters, a string's end
// compared as a NUL.
bool CEqual(std::string_view tag, std::string_view literal, size_t k) {
  for (size_t i = 0; i < k; ++i) {
    int a = i < tag.size() ? std::tolower(static_cast<unsigned char>(tag[i])) : 0;
    int b = i < literal.size() ? std::tolower(static_cast<unsigned char>(literal[i])) : 0;
    if (a != b) return false;
    if (a == 0) return true;
  }
  return true;
}

bool Matches(const WordRule& r, std::string_view tag) {
  if (r.how == "prefix") return CEqual(tag, r.literal, std::max(tag.size(), r.n));
  if (r.how == "lead") return CEqual(tag, r.literal, r.n);
  return CEqual(tag, r.literal, std::max(tag.size(), r.literal.size()) + 1);
}

// The literal Slurm dispatches tag to, lowercased; "" when none matches.
std::string Dispatch(const std::vector<WordRule>& rules, std::string_view tag) {
  for (const WordRule& r : rules) {
    if (Matches(r, tag)) return Lower(r.literal);
  }
  return "";
}

std::vector<ReleaseTable> LoadTables() {
  std::vector<ReleaseTable> out;
  fs::path root = fs::path(SLURM_RCA_SOURCE_DIR) / "fixtures";
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    if (e.is_directory() && name.rfind("slurm-", 0) == 0) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& d : dirs) {
    ReleaseTable t;
    t.release = d.filename().string().substr(6);
    std::ifstream in(d / "tables.txt");
    if (!in) {
      ADD_FAILURE() << d << " has no tables.txt: run scripts/slurm-tables.py on its sources";
      continue;
    }
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.empty() || line[0] == '#') continue;
      std::istringstream s(line);
      std::string program, kind, name, how;
      size_t k = 0;
      s >> program >> kind >> name >> how;
      ProgramTable& p = t.programs[program];
      if (kind == "short" && name.size() == 1) {
        p.shorts[name[0]] = how;
      } else if (kind == "long") {
        p.longs[name] = how;
      } else if ((kind == "word" || kind == "entity") && (s >> k)) {
        (kind == "word" ? p.words : p.entities).push_back({name, how, k});
      } else {
        ADD_FAILURE() << d / "tables.txt" << ":" << n << ": cannot read '" << line << "'";
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

// What the guard accepts that a release does not have, and why that is harmless. Slurm answers
// these with an error and changes nothing; the guard keeps them for the releases that have them.
struct Absent {
  std::string release, program, what;
};
const std::vector<Absent>& KnownAbsent() {
  static const std::vector<Absent> k = {
      // Options added after 22.05. getopt_long answers "unrecognized option" and the client
      // exits before it contacts anything (the test also checks that none of them is a prefix
      // of an option 22.05 has, which getopt would expand).
      {"22.05", "sinfo", "-F"},        {"22.05", "sinfo", "--future"},
      {"22.05", "sacct", "--array"},   {"22.05", "sdiag", "--json"},
      {"22.05", "sdiag", "--yaml"},    {"22.05", "sshare", "--json"},
      {"22.05", "sshare", "--yaml"},   {"22.05", "scontrol", "--json"},
      {"22.05", "scontrol", "--yaml"}, {"22.05", "sacctmgr", "--json"},
      {"22.05", "sacctmgr", "--yaml"},
      // `sacctmgr ping` arrived after 22.05: 22.05's sacctmgr says "invalid keyword: ping".
      {"22.05", "sacctmgr", "word ping"},
      // Front-end nodes were removed in 25.05: scontrol says "invalid entity:frontend".
      {"25.11", "scontrol", "entity frontend"},
      {"26.05", "scontrol", "entity frontend"},
  };
  return k;
}

bool IsKnownAbsent(const std::string& release, std::string_view program, const std::string& what) {
  for (const Absent& a : KnownAbsent()) {
    if (a.release == release && a.program == program && a.what == what) return true;
  }
  return false;
}

std::set<std::string> RefusedSpellings(const std::vector<Refusal>& refusals) {
  std::set<std::string> out;
  for (const Refusal& r : refusals) {
    for (std::string_view s : r.spellings) out.insert(Lower(s));
  }
  return out;
}

class ReleaseTables : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tables_ = new std::vector<ReleaseTable>(LoadTables()); }
  static void TearDownTestSuite() { delete tables_; }
  static std::vector<ReleaseTable>* tables_;
  Guard guard_{GuardOptions{.clusters = {"rca"}}};
};
std::vector<ReleaseTable>* ReleaseTables::tables_ = nullptr;

TEST_F(ReleaseTables, EveryReleaseInFixturesHasATableOfEveryAllowedSlurmClient) {
  ASSERT_GE(tables_->size(), 3u) << "fixtures/slurm-22.05, -25.11 and -26.05 at least";
  for (const ReleaseTable& t : *tables_) {
    for (const ProgramPolicy& p : Programs()) {
      if (p.name == "nvidia-smi") continue;
      auto it = t.programs.find(std::string(p.name));
      ASSERT_NE(it, t.programs.end()) << t.release << ": no table for " << p.name;
      EXPECT_GE(it->second.longs.size(), 5u) << t.release << " " << p.name;
      EXPECT_GE(it->second.shorts.size(), 3u) << t.release << " " << p.name;
      if (p.verb_position == VerbPosition::kPermuted) {
        EXPECT_GE(it->second.words.size(), 10u) << t.release << " " << p.name;
        EXPECT_GE(it->second.entities.size(), 10u) << t.release << " " << p.name;
      }
    }
  }
}

TEST_F(ReleaseTables, EveryAcceptedOptionExistsWithTheSameArity) {
  for (const ReleaseTable& t : *tables_) {
    for (const ProgramPolicy& p : Programs()) {
      auto it = t.programs.find(std::string(p.name));
      if (it == t.programs.end()) continue;
      const ProgramTable& pt = it->second;
      for (const OptionSpec& o : p.options) {
        for (std::string_view s : o.spellings) {
          std::string what = std::string(p.name) + " " + std::string(s) + " on " + t.release;
          std::string arity;
          if (s.substr(0, 2) == "--") {
            auto l = pt.longs.find(std::string(s.substr(2)));
            if (l == pt.longs.end()) {
              EXPECT_TRUE(IsKnownAbsent(t.release, p.name, std::string(s)))
                  << what << ": no such long option in the release (harmless? then list it in "
                             "KnownAbsent with why)";
              // getopt_long expands a unique prefix: an absent name must not be one.
              for (const auto& [name, arity] : pt.longs) {
                EXPECT_NE(name.rfind(s.substr(2), 0), 0u)
                    << what << " is absent but a prefix of --" << name << ", which Slurm would run";
              }
              continue;
            }
            arity = l->second;
          } else {
            auto c = pt.shorts.find(s[1]);
            if (c == pt.shorts.end()) {
              EXPECT_TRUE(IsKnownAbsent(t.release, p.name, std::string(s)))
                  << what << ": no such short option in the release (harmless? then list it in "
                             "KnownAbsent with why)";
              continue;
            }
            arity = c->second;
          }
          switch (o.arity) {
            case Arity::kNone: EXPECT_EQ(arity, "none") << what; break;
            case Arity::kRequired: EXPECT_EQ(arity, "required") << what; break;
            case Arity::kOptionalAttached:
              // Only "--json" or "--json=V" is accepted: no next token can be taken either way.
              EXPECT_TRUE(arity == "optional" || arity == "none") << what << ": " << arity;
              break;
          }
        }
      }
    }
  }
}

TEST_F(ReleaseTables, EveryOptionTheGuardDoesNotListIsRefused) {
  size_t probed = 0;
  for (const ReleaseTable& t : *tables_) {
    for (const ProgramPolicy& p : Programs()) {
      auto it = t.programs.find(std::string(p.name));
      if (it == t.programs.end()) continue;
      std::set<std::string_view> listed;
      for (const OptionSpec& o : p.options) listed.insert(o.spellings.begin(), o.spellings.end());
      // A verb where the program needs one, so that only the option is judged.
      std::vector<std::string> tail;
      if (p.verb_position == VerbPosition::kPermuted) tail = {"ping"};
      auto probe = [&](const std::string& spelling, std::vector<std::string> values) {
        if (listed.count(spelling.substr(0, spelling.find('=')))) return;
        for (const std::string& v : values) {
          std::vector<std::string> argv = {std::string(p.name), spelling};
          if (!v.empty()) argv.push_back(v);
          argv.insert(argv.end(), tail.begin(), tail.end());
          ++probed;
          EXPECT_FALSE(guard_.Check(argv).ok())
              << t.release << ": the guard approves an option it does not list: " << argv[1];
        }
      };
      for (const auto& [c, arity] : it->second.shorts) probe(std::string("-") + c, {"", "x"});
      for (const auto& [name, arity] : it->second.longs) {
        probe("--" + name, {""});
        probe("--" + name + "=x", {""});
      }
    }
  }
  EXPECT_GE(probed, 500u);
}

// Command words and entities: what the accepted ones reach, and that nothing is unclassified.
void CheckWords(const ReleaseTable& t, const ProgramPolicy& p, const Guard& guard) {
  const ProgramTable& pt = t.programs.at(std::string(p.name));
  std::set<std::string> refused_words = RefusedSpellings(p.refused_words);
  std::set<std::string> reached_words, reached_entities;
  std::set<std::string> refused_entities;
  for (const VerbSpec& v : p.verbs) {
    std::set<std::string> r = RefusedSpellings(v.refused_entities);
    refused_entities.insert(r.begin(), r.end());
  }
  for (const VerbSpec& v : p.verbs) {
    std::string word(v.word);
    std::string d = Dispatch(pt.words, word);
    if (d.empty()) {
      EXPECT_TRUE(IsKnownAbsent(t.release, p.name, "word " + word))
          << t.release << ": " << p.name << " has no command word '" << word
          << "', which the guard accepts (harmless? then list it in KnownAbsent with why)";
      continue;
    }
    EXPECT_FALSE(refused_words.count(d)) << t.release << ": " << p.name << " '" << word
                                         << "' dispatches to refused '" << d << "'";
    reached_words.insert(d);
    for (const EntitySpec& e : v.entities) {
      std::string entity(e.name);
      std::string de = Dispatch(pt.entities, entity);
      if (de.empty()) {
        EXPECT_TRUE(IsKnownAbsent(t.release, p.name, "entity " + entity))
            << t.release << ": " << p.name << " " << word << " has no entity '" << entity
            << "', which the guard accepts (harmless? then list it in KnownAbsent with why)";
        continue;
      }
      EXPECT_FALSE(refused_entities.count(de))
          << t.release << ": " << p.name << " " << word << " '" << entity
          << "' dispatches to refused '" << de << "'";
      reached_entities.insert(de);
    }
  }
  std::string verb = p.verbs.empty() ? "" : std::string(p.verbs.front().word);
  for (const WordRule& r : pt.words) {
    std::string l = Lower(r.literal);
    if (reached_words.count(l) || l.rfind('\\', 0) == 0) continue;  // "\q" is quit
    EXPECT_TRUE(refused_words.count(l))
        << t.release << ": " << p.name << " command word '" << r.literal
        << "' is neither allowed nor in the guard's inventory of refusals (guard/policy.cc): "
           "classify it and add a deny line to guard/testdata/releases.txt";
    EXPECT_FALSE(guard.Check({std::string(p.name), l}).ok()) << t.release << " " << l;
    std::string shortest = l.substr(0, std::max<size_t>(r.n, 1));
    if (Matches(r, shortest) && Dispatch(pt.words, shortest) == l) {
      EXPECT_FALSE(guard.Check({std::string(p.name), shortest}).ok())
          << t.release << ": " << p.name << " " << shortest << " (" << l << ")";
    }
  }
  for (const WordRule& r : pt.entities) {
    std::string l = Lower(r.literal);
    if (reached_entities.count(l)) continue;
    EXPECT_TRUE(refused_entities.count(l))
        << t.release << ": " << p.name << " entity '" << r.literal
        << "' is neither allowed nor in the guard's inventory of refused entities "
           "(guard/policy.cc): classify it and add a deny line to guard/testdata/releases.txt";
    EXPECT_FALSE(guard.Check({std::string(p.name), verb, l}).ok()) << t.release << " " << l;
  }
}

TEST_F(ReleaseTables, CommandWordsAndEntitiesAreAllClassified) {
  int programs = 0;
  for (const ReleaseTable& t : *tables_) {
    for (const ProgramPolicy& p : Programs()) {
      if (p.verb_position != VerbPosition::kPermuted) continue;
      if (!t.programs.count(std::string(p.name))) continue;
      SCOPED_TRACE(t.release + " " + std::string(p.name));
      CheckWords(t, p, guard_);
      ++programs;
    }
  }
  EXPECT_GE(programs, 6);  // scontrol and sacctmgr on three releases
}

// The matcher itself, on the cases that decide it: minimum lengths, leads, and order.
TEST(ReleaseTablesMatcher, FollowsXstrncasecmp) {
  std::vector<WordRule> r = {{"hold", "lead", 4}, {"release", "prefix", 3}, {"show", "prefix", 3},
                             {"shutdown", "prefix", 8}, {"\\q", "lead", 2}};
  EXPECT_EQ(Dispatch(r, "holdx"), "hold");  // a lead of 4 takes any longer tag
  EXPECT_EQ(Dispatch(r, "hol"), "");
  EXPECT_EQ(Dispatch(r, "REL"), "release");
  EXPECT_EQ(Dispatch(r, "re"), "");
  EXPECT_EQ(Dispatch(r, "releases"), "");  // longer than the literal
  EXPECT_EQ(Dispatch(r, "sho"), "show");
  EXPECT_EQ(Dispatch(r, "shut"), "");       // under shutdown's minimum
  EXPECT_EQ(Dispatch(r, "Shutdown"), "shutdown");
  EXPECT_EQ(Dispatch(r, "\\q"), "\\q");
}

}  // namespace
}  // namespace slurm_rca::guard
