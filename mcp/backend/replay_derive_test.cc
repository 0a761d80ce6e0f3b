#include "mcp/backend/replay_derive.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "mcp/backend/replay_backend.h"

namespace slurm_rca::mcp {
namespace {

namespace fs = std::filesystem;
using Outcome = Evidence::Outcome;
using Argv = std::vector<std::string>;

const fs::path kFixtures = fs::path(SLURM_RCA_SOURCE_DIR) / "fixtures";
const Argv kNodes = {"sinfo", "--noheader", "-N", "-o", "%N|%P|%T|%C|%G|%E"};
const Argv kQueue = {"squeue", "--noheader", "-o", "%i|%P|%u|%T|%M|%D|%R"};

Argv With(Argv argv, const Argv& more) {
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A whole read as the recorder keeps it: ok, exit 0, snapshot 3.
Evidence Whole(const Argv& argv, std::string out) {
  Evidence e;
  e.outcome = Outcome::kOk;
  e.source = "replay";
  e.evidence_time = "2026-11-30T13:00:10Z";
  e.argv = argv;
  e.exit_code = 0;
  e.out = std::move(out);
  e.read_id = 3;
  e.seconds = 0.05;
  return e;
}

const char kSinfo[] =
    "node1|cpu*|idle|0/2/0/2|gpu:2|none\n"
    "node1|gpu|idle|0/2/0/2|gpu:2|none\n"
    "node2|gpu|drained|0/0/2/2|gpu:2|ECC error\n"
    "node2|cpu*|drained|0/0/2/2|gpu:2|ECC error\n"
    "node3|cpu*|idle|0/2/0/2|(null)|a|reason with a bar\n";
const char kSqueue[] =
    "7|gpu|bob|PENDING|0:00|1|(Resources)\n"
    "5|cpu|alice|RUNNING|1:02|1|node3\n"
    "6|gpu|alice|RUNNING|0:40|1|node1\n";

Evidence Derive(const Argv& argv, const Evidence& whole) {
  std::optional<DerivableRead> d = ParseDerivable(argv);
  EXPECT_TRUE(d.has_value());
  if (!d) return Evidence{};
  EXPECT_EQ(d->whole, whole.argv);
  return DeriveRead(*d, whole, argv);
}

TEST(ReplayDeriveTest, NodeFilterKeepsTheNodesRowsInEveryPartitionInTheWholeReadsOrder) {
  const Argv argv = With(kNodes, {"-n", "node2"});
  Evidence e = Derive(argv, Whole(kNodes, kSinfo));
  ASSERT_EQ(e.outcome, Outcome::kOk) << e.cause;
  EXPECT_EQ(e.out,
            "node2|gpu|drained|0/0/2/2|gpu:2|ECC error\n"
            "node2|cpu*|drained|0/0/2/2|gpu:2|ECC error\n");
  EXPECT_EQ(e.argv, argv);
  EXPECT_EQ(e.derived_from, kNodes);
  EXPECT_EQ(e.read_id, 3u);  // the snapshot's: pages of a derived read hold
  EXPECT_EQ(e.evidence_time, "2026-11-30T13:00:10Z");
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_EQ(e.out_bytes, e.out.size());
  EXPECT_TRUE(Has(e.derivation, "derived from the whole read `sinfo --noheader -N"))
      << e.derivation;
  EXPECT_TRUE(Has(e.derivation, "node (%N) is in node2")) << e.derivation;

  Evidence range = Derive(With(kNodes, {"-n", "node[1-2],node9"}), Whole(kNodes, kSinfo));
  ASSERT_EQ(range.outcome, Outcome::kOk) << range.cause;
  EXPECT_EQ(std::count(range.out.begin(), range.out.end(), '\n'), 4);
  EXPECT_TRUE(Has(range.derivation, "1 of the 3 names given (node9) have no row"))
      << range.derivation;
}

TEST(ReplayDeriveTest, AnUnknownNodeGivesZeroRowsMarkedDerived) {
  Evidence e = Derive(With(kNodes, {"-n", "node99"}), Whole(kNodes, kSinfo));
  ASSERT_EQ(e.outcome, Outcome::kOk) << e.cause;
  EXPECT_EQ(e.out, "");
  EXPECT_EQ(e.derived_from, kNodes);
  EXPECT_TRUE(Has(e.derivation, "have no row in it (sinfo -n gives no row for a name it does "
                                "not know)"))
      << e.derivation;
}

TEST(ReplayDeriveTest, PartitionFilterMatchesTheDefaultByNameAndKeepsItsMark) {
  // sinfo's _print_partition appends '*' to the default partition whatever -p says.
  Evidence cpu = Derive(With(kNodes, {"-p", "cpu"}), Whole(kNodes, kSinfo));
  ASSERT_EQ(cpu.outcome, Outcome::kOk) << cpu.cause;
  EXPECT_EQ(cpu.out,
            "node1|cpu*|idle|0/2/0/2|gpu:2|none\n"
            "node2|cpu*|drained|0/0/2/2|gpu:2|ECC error\n"
            "node3|cpu*|idle|0/2/0/2|(null)|a|reason with a bar\n");
  Evidence both = Derive(With(kNodes, {"-p", "gpu", "-n", "node[1-3]"}), Whole(kNodes, kSinfo));
  ASSERT_EQ(both.outcome, Outcome::kOk) << both.cause;
  EXPECT_EQ(both.out,
            "node1|gpu|idle|0/2/0/2|gpu:2|none\n"
            "node2|gpu|drained|0/0/2/2|gpu:2|ECC error\n");
  // "cpu*" is no partition name: a filter on it matches nothing, so it is not derived.
  EXPECT_EQ(Derive(With(kNodes, {"-p", "cpu*"}), Whole(kNodes, kSinfo)).outcome,
            Outcome::kUnavailable);
}

TEST(ReplayDeriveTest, APartitionWithoutARowIsNotDerived) {
  // sinfo -p implies --all: the partition may be hidden, its rows absent from the whole read.
  Evidence e = Derive(With(kNodes, {"-p", "gpu,secret"}), Whole(kNodes, kSinfo));
  EXPECT_EQ(e.outcome, Outcome::kUnavailable);
  EXPECT_EQ(e.out, "");
  EXPECT_TRUE(e.derived_from.empty());
  EXPECT_TRUE(Has(e.cause, "partition secret has no row in it, and sinfo -p shows hidden "
                           "partitions too; no evidence, not an empty result"))
      << e.cause;
}

TEST(ReplayDeriveTest, UserFilterKeepsTheUsersJobsAndSaysWhatAnEmptyAnswerCannotShow) {
  Evidence alice = Derive(With(kQueue, {"-u", "alice"}), Whole(kQueue, kSqueue));
  ASSERT_EQ(alice.outcome, Outcome::kOk) << alice.cause;
  EXPECT_EQ(alice.out,
            "5|cpu|alice|RUNNING|1:02|1|node3\n"
            "6|gpu|alice|RUNNING|0:40|1|node1\n");
  EXPECT_FALSE(Has(alice.derivation, "Invalid user")) << alice.derivation;

  Evidence carol = Derive(With(kQueue, {"-u", "carol,bob"}), Whole(kQueue, kSqueue));
  ASSERT_EQ(carol.outcome, Outcome::kOk) << carol.cause;
  EXPECT_EQ(carol.out, "7|gpu|bob|PENDING|0:00|1|(Resources)\n");
  EXPECT_TRUE(Has(carol.derivation, "user (%u) is one of carol,bob")) << carol.derivation;
  EXPECT_TRUE(Has(carol.derivation, "no job of the whole queue has user carol, which cannot "
                                    "tell a user without jobs from a name that is no Slurm "
                                    "user"))
      << carol.derivation;
}

TEST(ReplayDeriveTest, OnlyEqualitiesOnTheTopicsColumnsAreDerivable) {
  for (const Argv& argv : {
           kNodes,                                  // the whole read itself
           With(kNodes, {"-t", "drained"}),         // states: not a column equality
           With(kNodes, {"-n", "node1", "-t", "idle"}),
           With(kNodes, {"-n", "node1", "-n", "node2"}),  // a flag twice
           With(kNodes, {"-n"}),
           With(kNodes, {"-n", "node[01-02]-ib"}),  // Slurm 22.05 refuses a suffix
           With(kNodes, {"-n", "node:1"}),
           With(kNodes, {"-p", "gpu,,cpu"}),
           With(kQueue, {"-A", "research"}),        // accounts are not in the output
           With(kQueue, {"-t", "PENDING"}),
           With(kQueue, {"-w", "node[1-4]"}),       // hostlists of running jobs
           With(kQueue, {"-p", "gpu"}),             // implies --all (the bundles test)
           With(kQueue, {"-u", "1000"}),            // a uid, printed as a name
           With(kQueue, {"-u", "alice", "-p", "gpu"}),
           Argv{"sacct", "-a", "-X", "-u", "alice"},
           Argv{"sinfo", "--noheader", "-n", "node1"},  // another format
       }) {
    EXPECT_FALSE(ParseDerivable(argv).has_value()) << ::testing::PrintToString(argv);
  }
}

TEST(ReplayDeriveTest, ACutOrFailedWholeReadGivesNoEvidenceSayingWhy) {
  const Argv argv = With(kNodes, {"-n", "node1"});
  Evidence cut = Whole(kNodes, "node1|cpu*|idle|0/2/0/2|gpu:2|none\nnode2|cp");
  cut.out_truncated = true;
  cut.out_bytes = 9000;
  Evidence e = Derive(argv, cut);
  EXPECT_EQ(e.outcome, Outcome::kUnavailable);
  EXPECT_EQ(e.out, "");
  EXPECT_TRUE(e.derived_from.empty());
  EXPECT_TRUE(Has(e.cause, "cannot be derived from the whole read `sinfo --noheader -N -o "
                           "%N|%P|%T|%C|%G|%E` of this snapshot: that read was cut at 43 bytes "
                           "of 9000, so the filtered rows would be a lower bound; no evidence"))
      << e.cause;

  Evidence failed = Whole(kNodes, "");
  failed.outcome = Outcome::kTimedOut;
  failed.exit_code = -1;
  failed.cause = "sinfo timed out after 20 s";
  e = Derive(argv, failed);
  EXPECT_EQ(e.outcome, Outcome::kUnavailable);
  EXPECT_TRUE(Has(e.cause, "that read gave no evidence (timed_out, exit -1): sinfo timed out"))
      << e.cause;

  Evidence nonzero = Whole(kNodes, kSinfo);  // an ok read must have exited 0
  nonzero.exit_code = 1;
  EXPECT_EQ(Derive(argv, nonzero).outcome, Outcome::kUnavailable);

  Evidence short_rows = Whole(kQueue, "7|gpu\n");  // not the output this derivation knows
  e = Derive(With(kQueue, {"-u", "bob"}), short_rows);
  EXPECT_EQ(e.outcome, Outcome::kUnavailable);
  EXPECT_TRUE(Has(e.cause, "its row 1 has no user (%u) column")) << e.cause;
}

// ---- the bundles -------------------------------------------------------------------------------

std::vector<fs::path> Bundles() {
  std::vector<fs::path> packs;
  for (const fs::path& dir : {kFixtures, kFixtures / "busy", kFixtures / "busy-25.11",
                              kFixtures / "large-1024"}) {
    for (const fs::directory_entry& f : fs::directory_iterator(dir)) {
      const std::string name = f.path().filename().string();
      if (name.size() > 12 && name.substr(name.size() - 12) == ".evidence.gz") {
        packs.push_back(f.path());
      }
    }
  }
  std::sort(packs.begin(), packs.end());
  return packs;
}

std::vector<std::string_view> Rows(std::string_view out) {
  std::vector<std::string_view> rows;
  while (!out.empty()) {
    std::size_t nl = out.find('\n');
    rows.push_back(out.substr(0, nl));
    out.remove_prefix(nl == std::string_view::npos ? out.size() : nl + 1);
  }
  return rows;
}

// The first `n` fields of every row: what identifies it (sinfo: node, partition; squeue: job id,
// partition, user). sinfo sorts by node name only, so the rows of one node are compared as a set.
std::vector<std::string> Keys(std::string_view out, std::size_t n, bool node_runs_as_sets) {
  std::vector<std::string> keys;
  for (std::string_view row : Rows(out)) {
    std::size_t end = 0;
    for (std::size_t i = 0; i < n && end != std::string_view::npos; ++i) {
      end = row.find('|', i == 0 ? 0 : end + 1);
    }
    keys.emplace_back(row.substr(0, end));
  }
  if (node_runs_as_sets) {
    auto node = [](const std::string& k) { return k.substr(0, k.find('|')); };
    for (std::size_t i = 0; i < keys.size();) {
      std::size_t j = i;
      while (j < keys.size() && node(keys[j]) == node(keys[i])) ++j;
      std::sort(keys.begin() + i, keys.begin() + j);
      i = j;
    }
  }
  return keys;
}

// The main proof: wherever a bundle recorded both a whole read and a derivable filtered read in
// one snapshot, the derivation of the whole read is what Slurm printed under the filter. The two
// reads were taken moments apart, so a pair is one of:
//   exact       byte for byte;
//   tie order   sinfo printed one node's partitions in the other order (it sorts by node name
//               only, with qsort), rows otherwise byte for byte;
//   moved       the same rows by key in the same order, some other column changed between the
//               reads (state, CPUs, elapsed time, reason);
// and never a different set or order of rows. The count of exact pairs is printed.
TEST(ReplayDeriveTest, DerivedEqualsRecordedInEveryBundle) {
  std::map<std::string, std::map<std::string, int>> counts;  // flag -> class -> pairs
  int bundles = 0;
  for (const fs::path& pack : Bundles()) {
    auto opened = ReplayBackend::Open(pack.string());
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    ++bundles;
    for (const ReplayBackend::Snapshot& snap : (*opened)->snapshots()) {
      for (const auto& [argv, recorded] : snap.reads) {
        std::optional<DerivableRead> d = ParseDerivable(argv);
        if (!d) continue;
        auto whole = snap.reads.find(d->whole);
        ASSERT_NE(whole, snap.reads.end()) << pack << ": no whole read beside one filtered";
        std::string flags;
        for (const DerivableRead::Equality& eq : d->keep) flags += eq.flag + " " + eq.given;
        const std::string key = argv[0] + " " + flags;
        Evidence derived = DeriveRead(*d, whole->second, argv);
        if (!recorded.ok() || recorded.out_truncated || !derived.ok()) {
          // A whole read that failed, timed out or was cut derives nothing; a filtered read
          // that did gives nothing to compare.
          EXPECT_TRUE(!derived.ok() || !recorded.ok())
              << pack << " +" << snap.offset_seconds << " " << key << ": " << derived.cause;
          ++counts[key][derived.ok() ? "filtered read without evidence" : "not derived"];
          continue;
        }
        const bool sinfo = argv[0] == "sinfo";
        if (derived.out == recorded.out) {
          ++counts[key]["exact"];
        } else if (sinfo && Keys(derived.out, 6, true) == Keys(recorded.out, 6, true)) {
          ++counts[key]["tie order"];
        } else if (Keys(derived.out, sinfo ? 2 : 3, sinfo) ==
                   Keys(recorded.out, sinfo ? 2 : 3, sinfo)) {
          ++counts[key]["moved"];
        } else {
          ADD_FAILURE() << pack << " +" << snap.offset_seconds << " " << key
                        << ": derived\n" << derived.out << "recorded\n" << recorded.out;
        }
      }
    }
  }
  int compared = 0;
  for (const auto& [key, by_class] : counts) {
    std::cout << key << ":";
    for (const auto& [what, n] : by_class) {
      std::cout << " " << what << " " << n;
      if (what == "exact" || what == "tie order" || what == "moved") compared += n;
    }
    std::cout << "\n";
  }
  std::cout << compared << " pairs compared in " << bundles << " bundles\n";
  EXPECT_GE(bundles, 290);
  // Each derivable filter the recorder reads is compared, mostly byte for byte.
  for (const char* key : {"sinfo -n node[1-4]", "sinfo -p gpu", "squeue -u alice"}) {
    EXPECT_GE(counts[key]["exact"], 1000) << key;
  }
}

// Why squeue -p is not derived: it implies --all, and a recording shows a job under -p that the
// whole read (and every other read of the snapshot) lacks.
TEST(ReplayDeriveTest, SqueuePartitionIsNotDerivedAsARecordingShows) {
  auto opened = ReplayBackend::Open(
      (kFixtures / "S35-accounting-refused-key-blamed@gpu-jobs.evidence.gz").string());
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  const ReplayBackend::Snapshot& snap = (*opened)->snapshots().at(1);
  const Evidence& whole = snap.reads.at(kQueue);
  const Evidence& gpu = snap.reads.at(With(kQueue, {"-p", "gpu"}));
  EXPECT_FALSE(Has(whole.out, "\n2|gpu|")) << whole.out;
  EXPECT_TRUE(Has(gpu.out, "\n2|gpu|root|RUNNING|")) << gpu.out;
  EXPECT_FALSE(ParseDerivable(With(kQueue, {"-p", "gpu"})).has_value());
}

// Through ReplayBackend::Read: on the 1,024-node bundle at +10 s, node700 (drained there) is
// derived; a recorded filter is served as recorded; a state filter stays not recorded.
TEST(ReplayDeriveTest, ReadDerivesOnlyWhatTheSnapshotDoesNotHold) {
  auto opened = ReplayBackend::Open((kFixtures / "large-1024/drain-node700").string());
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  ReplayBackend& replay = **opened;
  replay.SetOffset(10);
  Evidence node700 = replay.Read(With(kNodes, {"-n", "node700"}));
  ASSERT_EQ(node700.outcome, Outcome::kOk) << node700.cause;
  EXPECT_EQ(node700.derived_from, kNodes);
  EXPECT_EQ(node700.read_id, static_cast<std::uint64_t>(replay.selected() + 1));
  std::vector<std::string_view> rows = Rows(node700.out);
  ASSERT_FALSE(rows.empty());
  for (std::string_view row : rows) {
    EXPECT_EQ(row.substr(0, 8), "node700|") << row;
    EXPECT_TRUE(Has(std::string(row), "|draining|")) << row;
  }

  Evidence recorded = replay.Read(With(kNodes, {"-n", "node[1-4]"}));
  ASSERT_EQ(recorded.outcome, Outcome::kOk) << recorded.cause;
  EXPECT_TRUE(recorded.derived_from.empty());
  EXPECT_TRUE(recorded.derivation.empty());

  Evidence state = replay.Read(With(kNodes, {"-t", "down"}));
  EXPECT_EQ(state.outcome, Outcome::kUnavailable);
  EXPECT_TRUE(Has(state.cause, "is not recorded in this bundle (recorded: ")) << state.cause;
  EXPECT_TRUE(state.derived_from.empty());
}

}  // namespace
}  // namespace slurm_rca::mcp
