// Reference agents that need no model. They audit the benchmark; they are not contestants.
//   ticketonly  reads only the ticket and answers by keyword rules, with no tools: if it scores
//               well, the tickets leak their answers.
//   folk        the folk model the benchmark exists to beat: grep the daemons' logs for "error"
//               and blame the daemon with the most such lines, else the component the ticket
//               names.
//   graphwalk   an evidence-guided walk up the dependency graph from the component the ticket
//               names: at each step it moves to the one upstream component whose evidence shows
//               (reference rules below), stops when none does, and abstains when two do.
// Their evidence rules are written from general Slurm knowledge (log phrases and pending reasons),
// not from the scenarios' signals; the same people wrote both, which is a threat to validity the
// README states.
//
//   Diagnosis d = RunReference("graphwalk", &mcp_tools, &graph, ticket, transcript);
#ifndef SLURM_RCA_AGENTS_REFERENCE_H_
#define SLURM_RCA_AGENTS_REFERENCE_H_

#include <string>

#include "agents/graph/graph.h"
#include "agents/llm/loop.h"

namespace slurm_rca::agents {

// The component a ticket's words point at (the "reported" component), by keyword rules.
std::string TicketGuess(const std::string& ticket);

// Runs `which` (folk, graphwalk, ticketonly). `tools` offers slurm_query (ignored by
// ticketonly); `graph` is needed by graphwalk. Writes ticket, tool_call, tool_result, submit and
// end events to `transcript` (may be null) under the agent name `which`.
RunResult RunReference(const std::string& which, ToolSet* tools, const graph::Graph* graph,
                       const std::string& ticket, Transcript* transcript);

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_REFERENCE_H_
