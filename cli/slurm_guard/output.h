// slurm-guard's output (cli/slurm_guard/main.cc): a verdict, the allowlist and a run's result, each
// as text for people and as one JSON object. The formats are pinned by tests/cli/slurm-guard.cases.
#ifndef SLURM_RCA_CLI_SLURM_GUARD_OUTPUT_H_
#define SLURM_RCA_CLI_SLURM_GUARD_OUTPUT_H_

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "guard/check.h"
#include "guard/policy.h"
#include "guard/run.h"

namespace slurm_rca::cli::slurm_guard {

using Json = nlohmann::ordered_json;

// check --json: the argv, ALLOWED with the argv that would run, or DENIED with rule, reason, index.
Json VerdictJson(const std::vector<std::string>& argv, const guard::Verdict& v);

// policy --json: every program, its options, commands, entities and refusals, and the limits.
Json PolicyJson();

// policy: the same for people, on stdout.
void PrintPolicy();

// run --json: the run's argv, binary, outcome, exit code, signal, duration and output.
Json RunResultJson(const guard::RunResult& r);

// run: the command's own output on the same streams, then one stderr line saying how it ended.
void PrintRunResult(const guard::RunResult& r);

}  // namespace slurm_rca::cli::slurm_guard

#endif  // SLURM_RCA_CLI_SLURM_GUARD_OUTPUT_H_
