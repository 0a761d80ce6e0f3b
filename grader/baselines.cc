#include "grader/baselines.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "scenarios/vocabulary.h"

namespace slurm_rca::grader {

namespace sc = scenarios;

std::vector<Baseline> ComputeBaselines(const std::vector<sc::Scenario>& suite,
                                       bool include_blocked) {
  std::vector<const sc::Scenario*> in;
  for (const sc::Scenario& s : suite) {
    if (include_blocked || s.status == "runnable") in.push_back(&s);
  }
  std::vector<Baseline> out;
  if (in.empty()) return out;
  const double n = static_cast<double>(in.size());
  std::map<std::string, int> roots;
  for (const sc::Scenario* s : in) ++roots[s->RootCause()];

  auto constant = [&](const std::string& node, const std::string& name) {
    Baseline b{name, 0, 0, 0};
    for (const sc::Scenario* s : in) {
      double c = s->CreditFor(node);
      b.depth += c;
      if (s->RootCause() == node) ++b.right;
    }
    b.depth /= n;
    double p = b.right / n;
    b.brier = p * (1 - p);
    return b;
  };
  for (const sc::Component& c : sc::Components()) {
    std::string id(c.id);
    out.push_back(constant(id, id == sc::kUnknown ? "always-abstain" : "always-" + id));
  }
  Baseline uniform{"uniform-random", 0, std::nullopt, 0};
  const double k = static_cast<double>(sc::Components().size());
  for (const sc::Scenario* s : in) {
    double sum = 0;
    for (const sc::Component& c : sc::Components()) sum += s->CreditFor(std::string(c.id));
    uniform.depth += sum / k;
  }
  uniform.depth /= n;
  out.push_back(uniform);
  // The commonest root cause (ties: the first in name order).
  std::string common;
  int most = -1;
  for (const auto& [node, count] : roots) {
    if (count > most) {
      common = node;
      most = count;
    }
  }
  Baseline frequent = constant(common, "most-frequent-root-cause (" + common + ")");
  out.push_back(frequent);
  Baseline oracle{"oracle", 0, std::nullopt, 0};
  for (const sc::Scenario* s : in) {
    oracle.depth += s->CreditFor(s->RootCause());
    ++oracle.right;
  }
  oracle.depth /= n;
  out.push_back(oracle);
  std::stable_sort(out.begin(), out.end(), [](const Baseline& a, const Baseline& b) {
    return a.depth != b.depth ? a.depth > b.depth : a.name < b.name;
  });
  // The oracle is a check of the grader, not a floor: it goes last.
  auto it = std::find_if(out.begin(), out.end(), [](const Baseline& b) { return b.name == "oracle"; });
  Baseline o = *it;
  out.erase(it);
  out.push_back(o);
  return out;
}

std::vector<Baseline> Degenerate(const std::vector<Baseline>& baselines, double threshold,
                                 bool with_abstain) {
  std::vector<Baseline> out;
  for (const Baseline& b : baselines) {
    if (b.name.rfind("always-", 0) == 0 && (with_abstain || b.name != "always-abstain") &&
        b.depth >= threshold) {
      out.push_back(b);
    }
  }
  return out;
}

std::string BaselineTable(const std::vector<Baseline>& baselines, int scenarios, bool runnable,
                          int top) {
  std::ostringstream o;
  o << "degenerate baselines over " << scenarios << (runnable ? " runnable" : " designed")
    << " scenarios (depth: mean partial credit; brier: the best a constant confidence reaches "
       "against exact correctness)\n";
  o << "depth  brier  strategy\n";
  int shown = 0;
  bool floor_marked = false;
  for (const Baseline& b : baselines) {
    if (b.name == "oracle") continue;
    if (top > 0 && shown >= top) break;
    char brier[16] = "  -  ";
    if (b.brier) std::snprintf(brier, sizeof brier, "%.3f", *b.brier);
    char line[160];
    std::snprintf(line, sizeof line, "%.3f  %s  %s", b.depth, brier, b.name.c_str());
    o << line;
    if (!floor_marked && b.name.rfind("most-frequent", 0) != 0) {
      o << "  <- floor";
      floor_marked = true;
    }
    o << "\n";
    ++shown;
  }
  for (const Baseline& b : baselines) {
    if (b.name != "oracle") continue;
    char line[120];
    std::snprintf(line, sizeof line, "%.3f    -    oracle (checks the credit tables; must be 1.000)\n",
                  b.depth);
    o << line;
  }
  return o.str();
}

}  // namespace slurm_rca::grader
