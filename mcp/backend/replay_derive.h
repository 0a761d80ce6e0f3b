// Derived replay reads: a filtered sinfo or squeue read that a bundle did not record, answered
// from the whole (unfiltered) read of the same snapshot, where Slurm's filter is an equality on a
// column of that output and the whole read is complete evidence.
//
// The recorder reads each topic whole and each filter only at its documented example value
// (`-n node[1-4]`, `-u alice`), so a replayed `nodes` with node=node700 was "not recorded". Only
// these filters are derived; each keeps the rows of the whole read whose column equals a value
// given, byte for byte and in the whole read's order:
//   sinfo --noheader -N -o %N|%P|%T|%C|%G|%E   -n HOSTLIST   %N (1) in the expanded hostlist
//                                              -p PART[,..]  %P (2), its default '*' stripped,
//                                                            each PART having a row in the read
//   squeue --noheader -o %i|%P|%u|%T|%M|%D|%R  -u USER[,..]  %u (3), names only (no uid)
// Anything else is not derivable: states (-t), accounts (-A), squeue -w and squeue -p (it
// implies --all: a recording shows a job under -p that the whole read lacks), sacct, sprio, a
// flag given twice, a uid, a hostlist Slurm 22.05 would not parse. The whole read must have
// exited 0 with outcome ok and not been cut (Evidence::out_truncated): a cut read would make the
// filtered answer a lower bound, so it gives no evidence instead.
//
//   std::optional<DerivableRead> d = ParseDerivable(argv);   // nullopt: not derivable
//   if (d && whole_read_recorded) Evidence e = DeriveRead(*d, whole, argv);
//
// What a derived answer cannot show, said in Evidence::derivation: that a user named by -u exists
// (squeue -u prints "Invalid user" for one that does not; a derived empty answer cannot); that a
// name given to -n is not a host name sinfo would map to a node. sinfo sorts rows by node name
// only, so the rows of a node in several partitions come in either order from one read to the
// next; the derived answer keeps the whole read's.
#ifndef SLURM_RCA_MCP_BACKEND_REPLAY_DERIVE_H_
#define SLURM_RCA_MCP_BACKEND_REPLAY_DERIVE_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcp/evidence/evidence.h"

namespace slurm_rca::mcp {

// A filtered read that can be derived: the whole read it comes from and what it keeps.
struct DerivableRead {
  struct Equality {
    std::size_t column = 0;        // 0-based, in the '|'-separated row
    std::string column_name;       // "node (%N)", for the derivation's sentence
    std::string flag;              // "-n", "-p", "-u"
    std::string given;             // the value as given: "node[1-4]"
    std::set<std::string> values;  // a row is kept when its column is one of them
    bool strip_default_mark = false;      // sinfo %P: "cpu*" equals "cpu"
    bool each_value_must_appear = false;  // sinfo -p: a partition without a row is not derived
  };
  std::vector<std::string> whole;  // the topic's bare argv
  std::vector<Equality> keep;      // all must hold (one per flag)
};

// argv as one line, its words joined by spaces: how replay's causes show a read.
std::string JoinArgv(const std::vector<std::string>& argv);

// The derivation of argv, or nullopt when argv is not a derivable filtered read (including the
// bare argv itself and every argv of another program or shape).
std::optional<DerivableRead> ParseDerivable(const std::vector<std::string>& argv);

// The answer to `argv` derived from `whole`, the recorded read of d.whole in the same snapshot.
// ok, with derived_from and derivation set, when `whole` is complete evidence; otherwise
// kUnavailable with a cause that says why the answer could not be derived. source,
// evidence_time, read_id and seconds are whole's.
Evidence DeriveRead(const DerivableRead& d, const Evidence& whole,
                    const std::vector<std::string>& argv);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_BACKEND_REPLAY_DERIVE_H_
