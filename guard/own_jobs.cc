// The own-jobs view of the guard (GuardOptions::own_user, documented in guard/check.h): the rules
// an argv the allowlist approved must pass when the caller may read only its own jobs.
#include "guard/check.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace slurm_rca::guard {
namespace {

// One token of the approved argv with its argv index and, for an option, its policy key.
struct Part {
  const Token* token;
  int index;
  std::string_view key;  // the option's key; its spelling when the program table lacks it
};

std::vector<Part> Parts(const ProgramPolicy& program, const std::vector<Token>& tokens) {
  std::vector<Part> parts;
  int index = 0;
  for (const Token& t : tokens) {
    std::string_view key = t.spelling;
    if (t.kind != Token::Kind::kPositional && t.kind != Token::Kind::kProgram) {
      for (const OptionSpec& o : program.options) {
        if (std::find(o.spellings.begin(), o.spellings.end(), t.spelling) != o.spellings.end()) {
          key = o.key;
        }
      }
    }
    parts.push_back({&t, index, key});
    index += t.kind == Token::Kind::kOption ? 2 : 1;
  }
  return parts;
}

const Part* Find(const std::vector<Part>& parts, std::string_view key) {
  for (const Part& p : parts) {
    if (p.token->kind != Token::Kind::kPositional && p.token->kind != Token::Kind::kProgram &&
        p.key == key) {
      return &p;
    }
  }
  return nullptr;
}

std::vector<const Part*> Positionals(const std::vector<Part>& parts) {
  std::vector<const Part*> out;
  for (const Part& p : parts) {
    if (p.token->kind == Token::Kind::kPositional) out.push_back(&p);
  }
  return out;
}

Denial Filter(std::string reason, int index = -1) {
  return Denial{Rule::kOwnJobsFilter, "this caller may read only its own jobs: " + reason, index};
}

Denial Unfilterable(std::string reason, int index = -1) {
  return Denial{Rule::kOwnJobsUnfilterable,
                "this caller may read only its own jobs, and " + reason, index};
}

// The user filter `key` must be present once with exactly `user` (a list would add others).
std::optional<Denial> NeedsUser(const std::vector<Part>& parts, std::string_view program,
                                std::string_view key, const std::string& user) {
  const std::string wanted = "--" + std::string(key) + "=" + user;
  const Part* p = Find(parts, key);
  if (p == nullptr) {
    return Filter(std::string(program) + " needs " + wanted + " (the caller's Slurm user)");
  }
  if (p->token->value != user) {
    return Filter(std::string(program) + " names '" + p->token->value + "'; only " + wanted +
                      " is allowed",
                  p->index);
  }
  return std::nullopt;
}

std::optional<Denial> Refuses(const std::vector<Part>& parts, std::string_view program,
                              std::string_view key, std::string_view why) {
  if (const Part* p = Find(parts, key)) {
    return Filter(std::string(program) + " " + p->token->spelling + " " + std::string(why),
                  p->index);
  }
  return std::nullopt;
}

std::optional<Denial> CheckScontrol(const std::vector<Part>& parts) {
  const std::vector<const Part*> pos = Positionals(parts);
  if (pos.size() < 2 || pos[0]->token->spelling != "show") return std::nullopt;
  static constexpr std::array<std::string_view, 4> kUnfilterable = {"job", "step", "assoc_mgr",
                                                                    "burstbuffer"};
  const std::string& entity = pos[1]->token->spelling;
  if (std::find(kUnfilterable.begin(), kUnfilterable.end(), entity) != kUnfilterable.end()) {
    return Unfilterable("scontrol show " + entity +
                            " has no user filter (read the queue or accounting, which are "
                            "narrowed to this caller)",
                        pos[1]->index);
  }
  return std::nullopt;
}

std::optional<Denial> CheckSacctmgr(const std::vector<Part>& parts) {
  if (const Part* p = Find(parts, "associations")) {
    return Unfilterable("sacctmgr " + p->token->spelling + " lists every user's associations",
                        p->index);
  }
  const std::vector<const Part*> pos = Positionals(parts);
  static constexpr std::array<std::string_view, 14> kUnfilterable = {
      "account", "accounts", "assoc", "association", "associations", "user", "users",
      "wckey", "wckeys", "problem", "problems", "stats", "transaction", "transactions"};
  for (std::size_t i = 0; i < pos.size(); ++i) {
    const std::string& word = pos[i]->token->spelling;
    if (i == 1 && std::find(kUnfilterable.begin(), kUnfilterable.end(), word) !=
                      kUnfilterable.end()) {
      return Unfilterable("sacctmgr show " + word + " lists other users (its filters are "
                              "prefix-matched keys the guard cannot pin to one user)",
                          pos[i]->index);
    }
    if (i >= 2 && (word == "withassoc" || word == "withcoord")) {
      return Unfilterable("sacctmgr " + word + " lists other users", pos[i]->index);
    }
  }
  return std::nullopt;
}

std::optional<Denial> CheckNvidiaSmi(const std::vector<Part>& parts) {
  for (std::string_view key : {"query-compute-apps", "query-accounted-apps"}) {
    if (const Part* p = Find(parts, key)) {
      return Unfilterable("nvidia-smi " + p->token->spelling + " lists every user's processes",
                          p->index);
    }
  }
  const std::vector<const Part*> pos = Positionals(parts);
  if (!pos.empty() && pos[0]->token->spelling == "topo") return std::nullopt;
  if (Find(parts, "query")) {
    const Part* display = Find(parts, "display");
    if (display == nullptr) {
      return Unfilterable(
          "nvidia-smi -q without -d includes the process list; name the sections with -d "
          "(not PIDS or ACCOUNTING)");
    }
    std::string_view sections = display->token->value;
    while (!sections.empty()) {
      const std::size_t comma = sections.find(',');
      // The display grammar is upper case (PIDS, not pids): compared as written.
      const std::string section(sections.substr(0, comma));
      if (section == "PIDS" || section == "ACCOUNTING") {
        return Unfilterable("nvidia-smi -d " + section + " lists every user's processes",
                            display->index);
      }
      sections = comma == std::string_view::npos ? std::string_view() : sections.substr(comma + 1);
    }
    return std::nullopt;
  }
  for (std::string_view key : {"query-gpu", "query-retired-pages", "query-remapped-rows",
                               "query-supported-clocks", "list-gpus", "list-excluded-gpus",
                               "version", "help", "help-query-gpu", "unit"}) {
    if (Find(parts, key)) return std::nullopt;
  }
  return Unfilterable(
      "nvidia-smi's default table lists every user's processes; use --query-gpu=... or -q -d "
      "with the sections wanted");
}

}  // namespace

std::optional<Denial> CheckOwnJobs(const std::string& user, const ProgramPolicy& program,
                                   const std::vector<Token>& tokens) {
  if (!MatchesGrammar(Grammar::kName, user)) {
    return Filter("its Slurm user name is not a valid name, so nothing is read");
  }
  const std::vector<Part> parts = Parts(program, tokens);
  const std::string_view name = program.name;
  if (name == "squeue") {
    if (auto d = Refuses(parts, name, "me", "is the server's own user, not the caller")) return d;
    return NeedsUser(parts, name, "user", user);
  }
  if (name == "sprio") return NeedsUser(parts, name, "user", user);
  if (name == "sacct") {
    if (auto d = Refuses(parts, name, "allusers", "reads every user's jobs")) return d;
    return NeedsUser(parts, name, "user", user);
  }
  if (name == "sshare") {
    if (auto d = Refuses(parts, name, "all", "lists every user")) return d;
    return NeedsUser(parts, name, "users", user);
  }
  if (name == "sdiag") {
    return Unfilterable("sdiag counts RPCs by user for every user; read the overview instead");
  }
  if (name == "scontrol") return CheckScontrol(parts);
  if (name == "sacctmgr") return CheckSacctmgr(parts);
  if (name == "nvidia-smi") return CheckNvidiaSmi(parts);
  if (name == "sinfo") return std::nullopt;
  // A program added to the allowlist later is refused here until its own-jobs rule is written.
  return Unfilterable(std::string(name) + " has no own-jobs rule yet");
}

}  // namespace slurm_rca::guard
