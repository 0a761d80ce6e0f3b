// LiveFlags: the live back-end's settings as a command line gives them (slurm-mcp's back-end
// flags, rca-bench diagnose's), and the one mapping from them to LiveOptions. slurm-mcp parses
// its flags into a LiveFlags; rca-bench hands one to the slurm-mcp child it starts (ServeArgs)
// and maps the same one for its own back-end, so the two read the cluster alike.
//
//   LiveFlags flags;
//   flags.clusters = "rca";
//   flags.log_files = {"slurmctld=/var/log/slurm/slurmctld.log"};
//   base::Result<LiveOptions> options = LiveOptionsFromFlags(flags);
//   if (!options.ok()) usage(options.status().message());  // names the flag and the value
//   LiveBackend live(*options);
//
// Refuses (InvalidArgument, the message naming the flag): a trusted directory or a fabric root
// that is not absolute, a --log-file that is not DAEMON=PATH.
//
// The read timeout against the controller's MessageTimeout (slurm.conf). A Slurm client whose
// controller is down (connection refused) retries until MessageTimeout and only then fails with
// "Unable to contact slurm controller (connect failure)"; killed before that, its read is timed
// out, exactly as a hung controller's is. So slurm-mcp reads MessageTimeout once at start
// (`scontrol show config`, the config topic's read) and ChooseReadTimeout decides:
//   MessageTimeout below the read timeout     the read timeout stays; nothing is said
//   at or above it, --timeout not given       reads time out at MessageTimeout + 10 s; said
//   at or above it, --timeout given           --timeout stays; a warning
//   unknown (the read or its parse failed)    the read timeout stays; said
// and, in the last two cases, every Slurm read that times out says why in its cause
// (LiveBackend::SetReadTimeout): no evidence, and what bounds it.
#ifndef SLURM_RCA_MCP_BACKEND_LIVE_FLAGS_H_
#define SLURM_RCA_MCP_BACKEND_LIVE_FLAGS_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "mcp/backend/live_backend.h"

namespace slurm_rca::mcp {

struct LiveFlags {
  // --slurm-conf: SLURM_CONF for the Slurm commands; "": theirs.
  std::string slurm_conf;
  // --clusters: the names -M may name, comma-separated; empty items are dropped.
  std::string clusters;
  // --trusted-dirs: where the Slurm programs are, colon-separated; each must be absolute.
  std::string trusted_dirs = "/usr/bin:/usr/local/bin";
  // --timeout: seconds before a read is killed.
  double timeout = 20;
  // --timeout was given (even at its default): ChooseReadTimeout keeps it.
  bool timeout_given = false;
  // --cache-ttl: seconds a read is reused; 0: no cache.
  double cache_ttl = 10;
  // --max-concurrent: Slurm commands at once.
  int max_concurrent = 2;
  // --max-per-minute: commands started per minute; 0: no budget.
  int max_per_minute = 60;
  // --max-output-mib: MiB of a read's stdout kept; a read past it is answered as a lower bound.
  double max_output_mib = static_cast<double>(kLiveMaxOutputBytes) / (1 << 20);
  // --log-file, repeated: DAEMON=PATH of a Slurm log for the logs topic.
  std::vector<std::string> log_files;
  // --fabric-root: read the fabric topic's sys, proc and sys/fs/cgroup under this absolute
  // directory instead of /; "": /.
  std::string fabric_root;
};

// The LiveOptions `flags` say (LiveOptions' defaults where they say nothing: the flags' defaults
// are the same), or InvalidArgument naming the flag that cannot be used and its value.
base::Result<LiveOptions> LiveOptionsFromFlags(const LiveFlags& flags);

// slurm-mcp arguments that give its back-end `flags`: each flag that differs from its default
// (and --timeout when it was given), --slurm-conf, --clusters and --log-file first.
std::vector<std::string> ServeArgs(const LiveFlags& flags);

// The controller's MessageTimeout in seconds from the text of `scontrol show config` (its line
// "MessageTimeout          = 10 sec"), or MalformedReply saying why not: no such line, or a
// value that is not a whole number of seconds followed by "sec".
base::Result<int> ParseMessageTimeout(const std::string& config);
// The same from the start-up read's evidence; Unavailable saying why when the read gave none.
base::Result<int> MessageTimeoutOf(const Evidence& config);

// What the read timeout becomes once MessageTimeout is known or not (the table above).
struct ReadTimeoutChoice {
  double timeout = 0;          // seconds
  std::string message;         // one line for stderr, after "slurm-mcp: "; "": nothing to say
  std::string timed_out_note;  // the sentence for a timed-out read's cause; "": none
};
// `timeout`: --timeout's value; `timeout_given`: whether it was given; `message_timeout`: what
// the start-up read found (MessageTimeoutOf).
ReadTimeoutChoice ChooseReadTimeout(double timeout, bool timeout_given,
                                    const base::Result<int>& message_timeout);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_BACKEND_LIVE_FLAGS_H_
