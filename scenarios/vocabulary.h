// The closed vocabulary of the benchmark: the components an answer may name, the action verbs,
// and the fault primitives a scenario may reference (mirroring scenarios/live/faults.h
// FaultCatalog() without linking it, so that read-path code such as slurm-mcp can use this).
//
//   if (!IsComponent("db.mysql")) ...;
//   base::Result<Action> a = ParseAction("repair:storage.state_save");
//   if (!a.ok()) std::cerr << a.status().message();   // "action 'x': unknown component"
#ifndef SLURM_RCA_SCENARIOS_VOCABULARY_H_
#define SLURM_RCA_SCENARIOS_VOCABULARY_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace slurm_rca::scenarios {

inline constexpr std::string_view kUnknown = "unknown";

struct Component {
  std::string_view id;
  std::string_view meaning;
  // Words a ticket must not contain when this component is the root cause (lower case).
  std::vector<std::string_view> keywords;
};

// Sorted by id; includes the abstention `unknown`.
const std::vector<Component>& Components();
const Component* FindComponent(std::string_view id);
inline bool IsComponent(std::string_view id) { return FindComponent(id) != nullptr; }

// restart, drain, resume, repair, reset, investigate.
const std::vector<std::string_view>& ActionVerbs();

struct Action {
  std::string verb;
  std::string component;
};
// `verb:component`; the component may not be `unknown`. An invalid argument names the action and
// what is wrong with it.
base::Result<Action> ParseAction(std::string_view text);

struct FaultPrimitive {
  std::string_view name;
  std::vector<std::string_view> options;  // the FaultTarget fields it reads
};
// db-freeze, dbd-stop, munge-stop, slurmd-kill, slurmd-pause, statesave-readonly, rpc-flood,
// net-drop, drain, gpu-fake, ...; on the lab of hosts net-cut, net-loss, net-throttle, name-gone.
const std::vector<FaultPrimitive>& FaultPrimitives();
const FaultPrimitive* FindFault(std::string_view name);
// Checks one target option's value (e.g. daemon must be slurmdbd, slurmctld or mariadbd): OK, or
// an invalid argument that names the option, the value and what it may be.
base::Status CheckFaultOption(std::string_view option, std::string_view value);

// storage, accounting_db, controller, gpu, fabric, scheduler_config.
const std::vector<std::string_view>& Families();
// single_layer, multi_layer, undiagnosable.
const std::vector<std::string_view>& Difficulties();

}  // namespace slurm_rca::scenarios

#endif  // SLURM_RCA_SCENARIOS_VOCABULARY_H_
