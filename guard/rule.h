// Rule ids the guard cites when it refuses an argv. Each id is stable: tests, corpora and the
// audit log name rules by id, so an id is never renamed or reused.
#ifndef SLURM_RCA_GUARD_RULE_H_
#define SLURM_RCA_GUARD_RULE_H_

#include <optional>
#include <string_view>
#include <vector>

namespace slurm_rca::guard {

enum class Rule {
  // Shape of the whole argv.
  kEmptyArgv,         // empty-argv
  kTooManyArgs,       // too-many-args
  kArgTooLong,        // arg-too-long
  kControlByte,       // control-byte: NUL, CR, LF, TAB, ESC, DEL, ...
  kNonAscii,          // non-ascii: lookalike dashes and anything else above 0x7e
  // The program.
  kBinaryPath,        // binary-path: argv[0] must be a bare name
  kUnknownBinary,     // unknown-binary
  // Options.
  kEndOfOptions,      // end-of-options: "--"
  kAbbreviatedOption, // abbreviated-option: a prefix Slurm's getopt_long would expand
  kCaseVariant,       // case-variant: an option, word or entity in the wrong case
  kClusteredShort,    // clustered-short: "-ar", "-j1008"
  kUnknownOption,     // unknown-option
  kDuplicateOption,   // duplicate-option: the same option (or --json with --yaml) twice
  kMissingValue,      // missing-value
  kDashValue,         // dash-value: a value that starts with '-'
  kDetachedValue,     // detached-value: "--format X" must be "--format=X"
  kUnexpectedValue,   // unexpected-value: "--noheader=1"
  kBadValue,          // bad-value: the value does not match the option's grammar
  kUnknownCluster,    // unknown-cluster: -M/--clusters naming an unconfigured cluster
  kMutatingOption,    // mutating-option: sdiag --reset, sacctmgr --immediate, nvidia-smi -r
  kFileOption,        // file-option: sacct --file, nvidia-smi --filename
  kSecretOption,      // secret-option: sacct --batch-script, --env-vars
  kScopeOption,       // scope-option: sacct --allclusters, scontrol --uid
  kEndlessMode,       // endless-mode: --iterate, nvidia-smi -l, dmon, scontrol wait_job
  // Command words, entities and operands.
  kInteractiveMode,   // interactive-mode: scontrol/sacctmgr with no command reads stdin
  kAbbreviatedWord,   // abbreviated-word: "scontrol u", "show part"
  kMutatingWord,      // mutating-word: update, delete, modify, set, ...
  kFileWord,          // file-word: scontrol write, sacctmgr dump, show hostlist
  kUnknownWord,       // unknown-word: a command or entity not on the allowlist
  kMissingOperand,    // missing-operand: "scontrol show"
  kExtraOperand,      // extra-operand: "scontrol show config extra", "sinfo x"
  kBadOperand,        // bad-operand: an id or key=value that does not match the grammar
  // The own-jobs view (GuardOptions::own_user): a caller who may read only its own jobs.
  kOwnJobsFilter,        // own-jobs-filter: a job read without the caller's user filter, or
                         // one that names another user or widens it (sacct -a, squeue --me)
  kOwnJobsUnfilterable,  // own-jobs-unfilterable: a read no argv can narrow to one user
                         // (scontrol show job, sdiag's per-user RPCs, nvidia-smi's processes)
};

// The stable id, e.g. "mutating-word".
std::string_view RuleId(Rule rule);
// The inverse of RuleId; nullopt for an unknown id.
std::optional<Rule> RuleFromId(std::string_view id);
// Every rule, in declaration order.
const std::vector<Rule>& AllRules();

}  // namespace slurm_rca::guard

#endif  // SLURM_RCA_GUARD_RULE_H_
