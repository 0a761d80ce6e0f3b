// The tool sets agents are given (agents/llm/loop.h ToolSet), one per configuration element:
//   McpTools        the three slurm-mcp tools through the C++ MCP client (B-E), optionally
//                   restricted to some topics (a specialist's view);
//   RawCommandTools run_command and read_log: argv checked by the guard's allowlist, then read
//                   from an mcp::Backend (the bundle in replay, the cluster live) (A);
//   GraphTools      graph_causes: the dependency graph's causes and refutations (C-E);
//   SpecialistTools ask_specialist: runs a specialist sub-agent in its own context and returns
//                   its report (D, E);
//   CombinedTools   the union of several.
// Every result is text as a model reads it; a failed, refused or timed-out read says so ("NO
// EVIDENCE") and is never an empty answer.
//
// Threads: a ToolSet is used by one run on one thread.
#ifndef SLURM_RCA_AGENTS_TOOLS_H_
#define SLURM_RCA_AGENTS_TOOLS_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agents/graph/graph.h"
#include "agents/llm/loop.h"
#include "guard/check.h"
#include "mcp/evidence/evidence.h"
#include "mcp/protocol/client.h"

namespace slurm_rca::agents {

class McpTools : public ToolSet {
 public:
  // `client` is initialized and outlives this. `topics` empty: every topic; otherwise
  // slurm_query and slurm_describe refuse other topics and slurm_overview is not offered.
  McpTools(mcp::Client* client, std::set<std::string> topics = {});
  // tools/list; an error names what failed.
  base::Status Load();
  std::vector<ToolSpec> Specs() const override;
  ToolResult Call(const std::string& name, const nlohmann::json& arguments) override;
  int calls() const { return calls_; }

 private:
  mcp::Client* client_;
  std::set<std::string> topics_;
  std::vector<ToolSpec> specs_;
  int calls_ = 0;
};

class RawCommandTools : public ToolSet {
 public:
  // `backend` outlives this; `guard` decides what may run (its options name the clusters).
  RawCommandTools(mcp::Backend* backend, guard::GuardOptions guard_options);
  std::vector<ToolSpec> Specs() const override;
  ToolResult Call(const std::string& name, const nlohmann::json& arguments) override;
  int calls() const { return calls_; }

 private:
  mcp::Backend* backend_;
  guard::Guard guard_;
  int calls_ = 0;
};

class GraphTools : public ToolSet {
 public:
  explicit GraphTools(const graph::Graph* graph) : graph_(graph) {}
  std::vector<ToolSpec> Specs() const override;
  ToolResult Call(const std::string& name, const nlohmann::json& arguments) override;

 private:
  const graph::Graph* graph_;
};

// Which topics each specialist reads, and its instructions.
struct Specialist {
  std::string name;
  std::set<std::string> topics;  // empty: every topic (the validator)
  std::string instructions;
};
const std::vector<Specialist>& Specialists();
const Specialist* FindSpecialist(const std::string& name);

class SpecialistTools : public ToolSet {
 public:
  // The specialists named run on `model` with their own McpTools over `client`, each call in a
  // fresh context, writing into `transcript` under "specialist:<name>".
  SpecialistTools(Backend* model, mcp::Client* client, std::vector<std::string> names,
                  Budget budget, Transcript* transcript);
  std::vector<ToolSpec> Specs() const override;
  ToolResult Call(const std::string& name, const nlohmann::json& arguments) override;
  int mcp_calls() const { return mcp_calls_; }

 private:
  Backend* model_;
  mcp::Client* client_;
  std::vector<std::string> names_;
  Budget budget_;
  Transcript* transcript_;
  int mcp_calls_ = 0;
};

class CombinedTools : public ToolSet {
 public:
  void Add(ToolSet* tools) { parts_.push_back(tools); }
  std::vector<ToolSpec> Specs() const override;
  ToolResult Call(const std::string& name, const nlohmann::json& arguments) override;

 private:
  std::vector<ToolSet*> parts_;
};

// An Evidence as text for a model: provenance, then output, or NO EVIDENCE with the cause.
std::string RenderEvidence(const mcp::Evidence& e);

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_TOOLS_H_
