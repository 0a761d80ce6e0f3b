// slurm-guard's output: verdicts, the allowlist and run results, as text for people and as JSON.
#include "cli/slurm_guard/output.h"

#include <iostream>
#include <string>
#include <vector>

namespace slurm_rca::cli::slurm_guard {

namespace {

std::string OptionText(const slurm_rca::guard::OptionSpec& o) {
  using slurm_rca::guard::Arity;
  std::string s;
  for (std::string_view sp : o.spellings) s += (s.empty() ? "" : "|") + std::string(sp);
  std::string g(slurm_rca::guard::GrammarName(o.grammar));
  if (o.arity == Arity::kRequired) s += " <" + g + ">";
  if (o.arity == Arity::kOptionalAttached) s += "[=<" + g + ">]";
  return s;
}

void PrintRefusals(const std::vector<slurm_rca::guard::Refusal>& refusals, const char* label) {
  for (const auto& r : refusals) {
    std::string names;
    for (std::string_view s : r.spellings) names += (names.empty() ? "" : " ") + std::string(s);
    std::cout << "  " << label << " [" << slurm_rca::guard::RuleId(r.rule) << "] " << names
              << ": " << r.reason << "\n";
  }
}

}  // namespace

Json PolicyJson() {
  using namespace slurm_rca::guard;
  Json programs = Json::array();
  auto refusals = [](const std::vector<Refusal>& rs) {
    Json a = Json::array();
    for (const auto& r : rs) {
      a.push_back({{"spellings", std::vector<std::string>(r.spellings.begin(), r.spellings.end())},
                   {"rule", std::string(RuleId(r.rule))},
                   {"reason", std::string(r.reason)}});
    }
    return a;
  };
  auto options = [](const std::vector<OptionSpec>& os) {
    Json a = Json::array();
    for (const auto& o : os) {
      const char* arity = o.arity == Arity::kNone       ? "none"
                          : o.arity == Arity::kRequired ? "required"
                                                        : "optional-attached";
      a.push_back({{"spellings", std::vector<std::string>(o.spellings.begin(), o.spellings.end())},
                   {"arity", arity},
                   {"grammar", std::string(GrammarName(o.grammar))},
                   {"pattern", std::string(GrammarPattern(o.grammar))}});
    }
    return a;
  };
  for (const ProgramPolicy& p : Programs()) {
    Json verbs = Json::array();
    for (const VerbSpec& v : p.verbs) {
      Json entities = Json::array();
      for (const EntitySpec& e : v.entities) {
        entities.push_back({{"name", std::string(e.name)},
                            {"max_ids", e.max_ids},
                            {"key_values", e.key_values}});
      }
      verbs.push_back({{"word", std::string(v.word)},
                       {"entities", entities},
                       {"refused_entities", refusals(v.refused_entities)},
                       {"options", options(v.options)}});
    }
    programs.push_back({{"name", std::string(p.name)},
                        {"summary", std::string(p.summary)},
                        {"options", options(p.options)},
                        {"refused_options", refusals(p.refused_options)},
                        {"commands", verbs},
                        {"refused_commands", refusals(p.refused_words)},
                        {"inject", std::vector<std::string>(p.inject.begin(), p.inject.end())}});
  }
  return {{"programs", programs},
          {"limits", {{"max_args", kMaxArgs}, {"max_arg_bytes", kMaxArgBytes}}}};
}

void PrintPolicy() {
  using namespace slurm_rca::guard;
  std::cout << "Read-only allowlist: " << Programs().size() << " programs; at most " << kMaxArgs
            << " arguments of at most " << kMaxArgBytes
            << " printable ASCII bytes; options exactly as spelled here.\n";
  for (const ProgramPolicy& p : Programs()) {
    std::cout << "\n" << p.name << " - " << p.summary << "\n";
    std::string line = "  options:";
    for (const OptionSpec& o : p.options) {
      std::string item = " " + OptionText(o);
      if (line.size() + item.size() > 98) {
        std::cout << line << "\n";
        line = "          ";
      }
      line += item;
    }
    std::cout << line << "\n";
    PrintRefusals(p.refused_options, "refused option");
    for (const VerbSpec& v : p.verbs) {
      std::cout << "  command: " << v.word;
      if (v.needs_entity) {
        std::cout << " <entity>:";
        for (const EntitySpec& e : v.entities) {
          std::cout << " " << e.name << (e.max_ids ? " [id]" : "")
                    << (e.key_values ? " [key=value...]" : "") << ";";
        }
      }
      for (const OptionSpec& o : v.options) std::cout << " " << OptionText(o);
      std::cout << "\n";
      PrintRefusals(v.refused_entities, "refused entity");
    }
    PrintRefusals(p.refused_words, "refused command");
    for (std::string_view i : p.inject) std::cout << "  always added: " << i << "\n";
  }
  std::cout << "\nEvery other program is refused, among them:\n";
  PrintRefusals(RefusedPrograms(), "refused program");
}

Json VerdictJson(const std::vector<std::string>& argv, const slurm_rca::guard::Verdict& v) {
  Json j;
  j["argv"] = argv;
  if (v.ok()) {
    j["verdict"] = "ALLOWED";
    j["exec_argv"] = v.approved().exec_argv();
  } else {
    j["verdict"] = "DENIED";
    j["rule"] = std::string(slurm_rca::guard::RuleId(v.denial().rule));
    j["reason"] = v.denial().reason;
    j["index"] = v.denial().index;
  }
  return j;
}

// run's result as one JSON object.
Json RunResultJson(const slurm_rca::guard::RunResult& r) {
  using slurm_rca::guard::OutcomeName;
  return {{"argv", r.argv},
          {"binary", r.binary},
          {"outcome", OutcomeName(r.outcome)},
          {"exit_code", r.exit_code},
          {"term_signal", r.term_signal},
          {"duration_ms", r.duration.count()},
          {"stdout", r.stdout_data},
          {"stderr", r.stderr_data},
          {"stdout_bytes", r.stdout_bytes},
          {"stderr_bytes", r.stderr_bytes},
          {"stdout_truncated", r.stdout_truncated},
          {"stderr_truncated", r.stderr_truncated},
          {"error", r.error}};
}

// run's result for people: the command's own output on the same streams, then one stderr line
// saying how it ended.
void PrintRunResult(const slurm_rca::guard::RunResult& r) {
  using namespace slurm_rca::guard;
  std::cout << r.stdout_data;
  std::cerr << r.stderr_data;
  std::cerr << "slurm-guard: " << OutcomeName(r.outcome);
  if (r.outcome == Outcome::kExited) std::cerr << " " << r.exit_code;
  if (r.outcome == Outcome::kSignaled) std::cerr << " by signal " << r.term_signal;
  std::cerr << " in " << r.duration.count() << " ms";
  if (r.stdout_truncated) std::cerr << "; stdout cut at " << r.stdout_data.size() << " of " << r.stdout_bytes << " bytes";
  if (r.stderr_truncated) std::cerr << "; stderr cut at " << r.stderr_data.size() << " of " << r.stderr_bytes << " bytes";
  if (!r.error.empty()) std::cerr << "; " << r.error;
  std::cerr << "\n";
}

}  // namespace slurm_rca::cli::slurm_guard
