// Hostlist notation: a set of node names written the way Slurm writes and reads them
// (`node[0012,0037-0039]`), so that a group of a thousand nodes costs a line, not a thousand.
//
//   CompressHostlist({"node0037", "node0012", "node0038", "node0039"})  // "node[0012,0037-0039]"
//
// Only the last run of digits of a name is bracketed, and only when it ends the name: Slurm 22.05
// refuses a suffix after a bracket (`node[01-02]-ib`), so `node01-ib` is written as it is. A
// bracket holds ranges of one width: a zero-padded number (`0037`) joins the numbers of its
// length (`1000` beside `0999` makes `0999-1000`), an unpadded one the other unpadded ones
// (`9-11`). Names repeat once at most; the order is by prefix, then by number. What Slurm expands
// the result to (`scontrol show hostnames`) is exactly the set given: hostlist_test checks that
// against real Slurm.
#ifndef SLURM_RCA_MCP_TOPICS_HOSTLIST_H_
#define SLURM_RCA_MCP_TOPICS_HOSTLIST_H_

#include <string>
#include <vector>

namespace slurm_rca::mcp {

// The names as one hostlist expression; "" for none. Empty names are skipped.
std::string CompressHostlist(const std::vector<std::string>& names);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TOPICS_HOSTLIST_H_
