// An agent configuration: a declarative file under agents/configs/ (NAME.yaml) that says what an
// agent is given: raw commands or the MCP tools, the dependency graph, specialists, calibrated
// abstention, its budget and its instructions. Configurations A-E are the ablation of
// reference B.2; folk, graphwalk and ticketonly are reference agents that need no model.
// The hash of the file's bytes goes into every submission header, so a result always names the
// exact configuration it came from.
//
//   base::Result<AgentConfig> c = LoadConfig(ConfigPath(dir, "C"));
//   if (!c.ok()) std::cerr << c.status().message() << "\n";   // every error, one a line
//   c->hash;   // "sha256:" + 16 hex digits of the file
//
// Refused: unknown keys, a tools value other than raw|mcp|none, specialists outside logs,
// scheduler, telemetry, validator, an abstention threshold outside [0, 1] or without a
// development split of known scenario ids, a reference agent that is not folk, graphwalk or
// ticketonly, a budget that is not positive, a name that differs from the file's.
#ifndef SLURM_RCA_AGENTS_CONFIG_H_
#define SLURM_RCA_AGENTS_CONFIG_H_

#include <optional>
#include <string>
#include <vector>

#include "agents/llm/loop.h"
#include "base/status.h"

namespace slurm_rca::agents {

struct Abstention {
  double threshold = 0;  // a committed answer below this confidence becomes `unknown`
  std::string development_split;  // "dev": the scenarios that declare split: dev
  std::string fitted;  // how the threshold was obtained (or that it was not yet)
};

struct AgentConfig {
  std::string name, file, hash;
  std::string kind = "agent";  // or "reference"
  std::string reference;       // folk | graphwalk | ticketonly (kind reference)
  std::string question;        // what this configuration asks, in one line
  std::string tools = "mcp";   // raw | mcp | none
  bool graph = false;
  std::vector<std::string> specialists;  // logs, scheduler, telemetry, validator
  std::optional<Abstention> abstention;
  Budget budget;
  std::string instructions;
};

// DIR/NAME.yaml, or NAME itself when it names a file.
std::string ConfigPath(const std::string& dir, const std::string& name);
// The names of every *.yaml under dir, sorted.
std::vector<std::string> ConfigNames(const std::string& dir);

// `known_ids`, when not empty, are the scenario ids a development split may name. Every error is
// reported, not only the first: the status's message holds them one a line, each
// "FILE: message" (an io error when the file cannot be read, else an invalid argument).
base::Result<AgentConfig> LoadConfig(const std::string& path,
                                     const std::vector<std::string>& known_ids = {});

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_CONFIG_H_
