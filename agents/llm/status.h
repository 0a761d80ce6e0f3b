// Errors as values for the agent loop and the model back-ends: base's Status (OK, or a code and a
// message) and Result<T> (a value, or the Status that says why there is none), under the names
// agents/ uses.
//
//   Result<Reply> r = backend.Complete(conversation, tools);
//   if (!r.ok()) return Fail(r.status().ToString());   // "http error: 401 from https://…: …"
//   Use(r->text);
//
// Nothing in agents/llm throws out of its API; these types carry every failure.
#ifndef SLURM_RCA_AGENTS_LLM_STATUS_H_
#define SLURM_RCA_AGENTS_LLM_STATUS_H_

#include "base/status.h"

namespace slurm_rca::agents {

using Status = base::Status;
template <typename T>
using Result = base::Result<T>;

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_STATUS_H_
