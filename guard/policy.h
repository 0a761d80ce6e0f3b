// The allowlist, as data reviewed like code.
//
// Each program lists every option it accepts (exact spellings, arity, value grammar), the command
// words and entities it accepts, and an inventory of what it refuses on purpose (mutating words,
// file-reading options, endless modes), each with the rule id and reason the guard cites. The
// inventory is what lets the guard recognise `scontrol upd` as an abbreviation of `update`
// rather than merely "unknown".
//
// Every program carries examples it must accept and refuse; SelfTest() (guard/check.h) checks
// them against the guard (the test suite runs it, and slurm-guard runs it at start-up, where it
// costs microseconds).
//
//   for (const ProgramPolicy& p : Programs()) std::cout << p.name << "\n";
//   const ProgramPolicy* sdiag = FindProgram("sdiag");
#ifndef SLURM_RCA_GUARD_POLICY_H_
#define SLURM_RCA_GUARD_POLICY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guard/rule.h"

namespace slurm_rca::guard {

enum class Arity {
  kNone,              // a flag: "-N", "--noheader"
  kRequired,          // a value: short options take the next token, long ones "=value"
  kOptionalAttached,  // long only: "--json" or "--json=v0.0.42"
};

// Grammars for option values and operands. Patterns are in policy.cc; all are full matches over
// printable ASCII and none lets a value start with '-' or contain '/'.
enum class Grammar {
  kNone,
  kName,         // one user, account, partition, QOS or reservation name
  kNameList,     // comma lists and hostlists: "alice,bob", "c[1-4]", "1008_[1-3]"
  kFormat,       // output formats: "%i|%T", "%N %t", "JobID,State%20"
  kTime,         // Slurm times: "now-1hour", "2026-08-01T00:00:00"
  kSort,         // sort keys: "+P,-m"
  kDelimiter,    // sacct --delimiter: "|"
  kDataParser,   // --json/--yaml version: "v0.0.39"
  kCluster,      // a configured cluster name (comma list); checked against GuardOptions
  kGpuId,        // nvidia-smi -i: index, UUID or PCI bus id
  kGpuDisplay,   // nvidia-smi -d: "MEMORY,ECC"
  kGpuFields,    // nvidia-smi --query-gpu: "name,temperature.gpu"
  kGpuFormat,    // nvidia-smi --format: "csv,noheader,nounits"
  kOperand,      // a job id, node name or hostlist given as a positional
  kKeyValue,     // sacctmgr and scontrol filters: "users=alice", "format=account%20"
};

std::string_view GrammarName(Grammar g);
// The RE2 pattern of a grammar (empty for kNone and kCluster).
std::string_view GrammarPattern(Grammar g);

struct OptionSpec {
  std::string_view key;                     // canonical name; duplicates are found by key
  std::vector<std::string_view> spellings;  // every exact spelling accepted, e.g. {"-p", "--partition"}
  Arity arity = Arity::kNone;
  Grammar grammar = Grammar::kNone;
};

// Something refused on purpose: an option, a command word or an entity.
struct Refusal {
  std::vector<std::string_view> spellings;
  Rule rule;
  std::string_view reason;
};

// An entity of `scontrol show` or `sacctmgr show|list`.
struct EntitySpec {
  std::string_view name;
  int max_ids = 0;                       // positional ids accepted after it (Grammar::kOperand)
  bool key_values = false;               // accepts key=value filters
  std::vector<std::string_view> keys;    // allowed keys; empty = any key matching the grammar
  std::vector<std::string_view> bare_keywords;  // sacctmgr: where, tree, withassoc, ...
};

struct VerbSpec {
  std::string_view word;                // exact, lowercase: "show", "ping", "version", "topo"
  bool needs_entity = false;            // show/list need one entity
  std::vector<EntitySpec> entities;
  std::vector<Refusal> refused_entities;
  std::vector<OptionSpec> options;      // nvidia-smi subcommands: their own option table
};

// An argv the policy must accept (rule empty) or refuse with a rule.
struct Example {
  std::vector<std::string_view> argv;
  std::optional<Rule> rule;  // nullopt: must be accepted
};

enum class VerbPosition {
  kNone,      // no command words at all (sinfo, squeue, ...)
  kPermuted,  // the first positional anywhere (Slurm's getopt permutes): scontrol, sacctmgr
  kFirst,     // argv[1] when it is not an option: nvidia-smi subcommands
};

struct ProgramPolicy {
  std::string_view name;
  std::string_view summary;
  // Slurm commands use getopt: single-letter short options that could be clustered. nvidia-smi
  // has multi-letter single-dash options ("-pm", "-lgc") that are matched whole.
  bool multi_letter_short = false;
  std::vector<OptionSpec> options;
  std::vector<Refusal> refused_options;
  VerbPosition verb_position = VerbPosition::kNone;
  bool verb_optional = false;  // nvidia-smi runs without a subcommand; scontrol does not
  std::vector<VerbSpec> verbs;
  std::vector<Refusal> refused_words;
  std::vector<std::string_view> inject;  // added after argv[0] when absent: sacctmgr --readonly
  std::vector<Example> examples;
};

// The allowlist, in a fixed order.
const std::vector<ProgramPolicy>& Programs();
// nullptr when name is not on the allowlist (exact, case-sensitive).
const ProgramPolicy* FindProgram(std::string_view name);
// {"sinfo", "squeue", ...}: what the executor resolves.
const std::vector<std::string>& AllowedProgramNames();
// Known Slurm commands that change state, named in the reason when one is asked for.
const std::vector<Refusal>& RefusedPrograms();

}  // namespace slurm_rca::guard

#endif  // SLURM_RCA_GUARD_POLICY_H_
