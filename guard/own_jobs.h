// The own-jobs view of the guard (GuardOptions::own_user, documented in guard/check.h): the rules
// an argv the allowlist approved must pass when the caller may read only its own jobs. Internal
// to the guard; Guard::Check calls it.
#ifndef SLURM_RCA_GUARD_OWN_JOBS_H_
#define SLURM_RCA_GUARD_OWN_JOBS_H_

#include <optional>
#include <string>
#include <vector>

#include "guard/check.h"
#include "guard/policy.h"

namespace slurm_rca::guard {

// Nothing when the approved argv (its tokens, as Check parsed them) cannot show a job of another
// user than `user`; otherwise the own-jobs-filter or own-jobs-unfilterable denial.
std::optional<Denial> CheckOwnJobs(const std::string& user, const ProgramPolicy& program,
                                   const std::vector<Token>& tokens);

}  // namespace slurm_rca::guard

#endif  // SLURM_RCA_GUARD_OWN_JOBS_H_
