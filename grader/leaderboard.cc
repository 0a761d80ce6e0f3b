#include "grader/leaderboard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "grader/baselines.h"

namespace slurm_rca::grader {

namespace fs = std::filesystem;

Agreement CountAgreement(const std::vector<std::map<std::string, std::string>>& runs,
                         const std::vector<std::string>& task_ids) {
  Agreement a;
  for (const std::string& id : task_ids) {
    std::set<std::optional<std::string>> answers;  // nullopt: a run that did not answer
    for (const auto& run : runs) {
      auto it = run.find(id);
      answers.insert(it == run.end() ? std::nullopt : std::optional<std::string>(it->second));
    }
    if (answers.size() == 1 && *answers.begin() == std::nullopt) continue;  // nobody answered
    ++a.answered;
    a.same += answers.size() == 1;
  }
  return a;
}

std::pair<double, double> BootstrapInterval(const std::vector<double>& values, std::uint64_t seed,
                                            int resamples) {
  if (values.empty() || resamples < 1) return {0, 0};
  std::mt19937_64 rng(seed);
  const size_t n = values.size();
  std::vector<double> means;
  means.reserve(resamples);
  for (int b = 0; b < resamples; ++b) {
    double sum = 0;
    // rng() % n, not uniform_int_distribution: the standard fixes mt19937_64's output but not the
    // distribution's, and the interval must be the same on every library for a seed.
    for (size_t i = 0; i < n; ++i) sum += values[rng() % n];
    means.push_back(sum / static_cast<double>(n));
  }
  std::sort(means.begin(), means.end());
  const size_t lo = static_cast<size_t>(std::floor(0.025 * resamples));
  const size_t hi = static_cast<size_t>(std::ceil(0.975 * resamples)) - 1;
  return {means[lo], means[std::min(hi, means.size() - 1)]};
}

Leaderboard BuildLeaderboard(const std::string& dir, const std::vector<scenarios::Scenario>& suite,
                             const LeaderboardOptions& options) {
  Leaderboard lb;
  lb.options = options;
  lb.fingerprint = SuiteFingerprint(suite);
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  struct Acc {
    Row row;
    std::vector<double> depths;
    double brier = 0, ece = 0, missing = 0;
    std::vector<double> bin_conf = std::vector<double>(10, 0), bin_right = std::vector<double>(10, 0);
    std::vector<int> bin_count = std::vector<int>(10, 0);
    std::map<std::string, double> family_sum, split_sum, difficulty_sum;
    double post_freeze_sum = 0;
    int post_freeze_runs = 0;
    std::map<std::string, double> lab_sum;
    std::vector<std::map<std::string, double>> credit;        // per run: scenario id -> credit
    std::vector<std::map<std::string, std::string>> answers;  // per run: scenario id -> root_cause
    int spend_runs = 0, cost_runs = 0;
    double input_tokens = 0, output_tokens = 0, cached_input_tokens = 0, cost_usd = 0;
  };
  for (const scenarios::Scenario& s : suite) {
    if (s.status == "runnable" &&
        std::find(lb.families.begin(), lb.families.end(), s.family) == lb.families.end()) {
      lb.families.push_back(s.family);
    }
  }
  std::sort(lb.families.begin(), lb.families.end());
  for (const Baseline& b : ComputeBaselines(suite)) {
    if (b.name != "oracle") lb.baselines.push_back({b.name, b.depth});
  }
  // The floor is the suite's, scored submission or not (a scored one sets the same values).
  if (!lb.baselines.empty()) {
    lb.floor_name = lb.baselines.front().first;
    lb.floor_depth = lb.baselines.front().second;
  }
  std::vector<scenarios::Scenario> test, large, hosts;
  for (const scenarios::Scenario& s : suite) {
    if (s.split == "test" && s.status == "runnable") test.push_back(s);
    if (!s.post_freeze.empty() && s.status == "runnable") ++lb.post_freeze_scenarios;
    if (s.Large() && s.status == "runnable") large.push_back(s);
    if (s.Hosts() && s.status == "runnable") hosts.push_back(s);
  }
  if (!hosts.empty()) {
    lb.hosts_scenarios = static_cast<int>(hosts.size());
    std::vector<Baseline> hf = ComputeBaselines(hosts);
    lb.hosts_floor_name = hf.front().name;
    lb.hosts_floor_depth = hf.front().depth;
  }
  if (!large.empty()) {
    lb.large_scenarios = static_cast<int>(large.size());
    std::vector<Baseline> lf = ComputeBaselines(large);
    lb.large_floor_name = lf.front().name;
    lb.large_floor_depth = lf.front().depth;
  }
  if (!test.empty()) {
    lb.ranked_on_test = true;
    lb.test_scenarios = static_cast<int>(test.size());
    std::vector<Baseline> tb = ComputeBaselines(test);
    lb.test_floor_name = tb.front().name;
    lb.test_floor_depth = tb.front().depth;
  }
  std::map<std::string, Acc> by_config;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    ParsedSubmission p = ParseSubmission(text.str(), f.filename().string(), suite);
    if (!p.submission) {
      lb.refused.push_back(f.filename().string() + ": " +
                           (p.problems.empty() ? "unreadable" : p.problems.front().ToString()) +
                           (p.problems.size() > 1
                                ? " (and " + std::to_string(p.problems.size() - 1) + " more)"
                                : ""));
      continue;
    }
    const Submission& s = *p.submission;
    if (!s.stopped.empty()) {
      lb.refused.push_back(f.filename().string() +
                           ": the run stopped before answering every task (" + s.stopped + ")");
      continue;
    }
    fs::path tdir = f;
    tdir.replace_extension(".transcripts");
    HarnessTimes times = ReadTranscripts(tdir.string(), suite);
    Report r = Score(s, suite, &times);
    lb.floor_name = r.floor_name;
    lb.floor_depth = r.floor_depth;
    lb.scenarios = r.scenarios;
    std::string key = s.configuration + "\n" + s.configuration_hash + "\n" + s.model;
    Acc& a = by_config[key];
    if (a.depths.empty()) {
      a.row.configuration = s.configuration;
      a.row.configuration_hash = s.configuration_hash;
      a.row.model = s.model;
      a.row.fingerprint = s.suite_fingerprint;
      a.row.first_date = a.row.last_date = s.date;
      a.row.kind = s.kind;
    }
    for (size_t b = 0; b < r.reliability.size(); ++b) {
      a.bin_count[b] += r.reliability[b].count;
      a.bin_conf[b] += r.reliability[b].mean_confidence * r.reliability[b].count;
      a.bin_right[b] += r.reliability[b].accuracy * r.reliability[b].count;
    }
    for (const auto& [fam, d] : r.depth_by_family) a.family_sum[fam] += d;
    for (const auto& [split, d] : r.depth_by_split) a.split_sum[split] += d;
    for (const auto& [k, d] : r.depth_by_difficulty) a.difficulty_sum[k] += d;
    if (r.depth_post_freeze) {
      a.post_freeze_sum += *r.depth_post_freeze;
      ++a.post_freeze_runs;
    }
    for (const auto& [k, d] : r.depth_by_lab) a.lab_sum[k] += d;
    a.row.harness_times_s.insert(a.row.harness_times_s.end(), r.harness_times_s.begin(),
                                 r.harness_times_s.end());
    a.row.harness_bytes_read.insert(a.row.harness_bytes_read.end(), r.harness_bytes_read.begin(),
                                    r.harness_bytes_read.end());
    a.row.first_date = std::min(a.row.first_date, s.date);
    a.row.last_date = std::max(a.row.last_date, s.date);
    a.depths.push_back(r.depth);
    a.credit.push_back(r.credit);
    std::map<std::string, std::string> answered;
    for (const Answer& ans : s.answers) answered[ans.scenario_id] = ans.root_cause;
    a.answers.push_back(std::move(answered));
    if (s.usage) {
      ++a.spend_runs;
      a.input_tokens += static_cast<double>(s.usage->input_tokens);
      a.output_tokens += static_cast<double>(s.usage->output_tokens);
      a.cached_input_tokens += static_cast<double>(s.usage->cached_input_tokens);
    }
    if (s.cost_usd) {
      ++a.cost_runs;
      a.cost_usd += *s.cost_usd;
    }
    a.missing += r.missing;
    if (r.brier_exact) {
      a.brier += *r.brier_exact;
      a.ece += *r.ece;
      ++a.row.calibrated_runs;
    }
  }
  for (auto& [key, a] : by_config) {
    Row row = a.row;
    row.runs = static_cast<int>(a.depths.size());
    double sum = 0;
    for (double d : a.depths) sum += d;
    row.depth_mean = sum / row.runs;
    if (row.runs > 1) {
      double ss = 0;
      for (double d : a.depths) ss += (d - row.depth_mean) * (d - row.depth_mean);
      row.depth_se = std::sqrt(ss / (row.runs - 1)) / std::sqrt(static_cast<double>(row.runs));
    }
    row.missing_mean = a.missing / row.runs;
    if (row.calibrated_runs > 0) {
      row.brier_exact_mean = a.brier / row.calibrated_runs;
      row.ece_mean = a.ece / row.calibrated_runs;
    }
    for (int b = 0; b < 10; ++b) {
      Bin bin;
      bin.count = a.bin_count[b];
      if (bin.count > 0) {
        bin.mean_confidence = a.bin_conf[b] / bin.count;
        bin.accuracy = a.bin_right[b] / bin.count;
      }
      row.reliability.push_back(bin);
    }
    for (const auto& [fam, sum] : a.family_sum) row.depth_by_family[fam] = sum / row.runs;
    for (const auto& [split, sum] : a.split_sum) row.depth_by_split[split] = sum / row.runs;
    for (const auto& [k, sum] : a.difficulty_sum) row.depth_by_difficulty[k] = sum / row.runs;
    if (a.post_freeze_runs > 0) row.depth_post_freeze = a.post_freeze_sum / a.post_freeze_runs;
    for (const auto& [k, sum] : a.lab_sum) row.depth_by_lab[k] = sum / row.runs;
    if (!row.harness_times_s.empty()) row.harness_time_median_s = Median(row.harness_times_s);
    if (!row.harness_bytes_read.empty()) row.harness_bytes_median = Median(row.harness_bytes_read);
    if (row.runs >= kMinRepeats) {
      // The scored tasks are the keys of every run's credit (the same suite for all).
      std::vector<std::string> ids;
      std::vector<double> per_task;
      for (const auto& [id, unused] : a.credit.front()) {
        ids.push_back(id);
        double sum = 0;
        for (const auto& run : a.credit) {
          auto it = run.find(id);
          sum += it == run.end() ? 0 : it->second;
        }
        per_task.push_back(sum / row.runs);
      }
      Agreement agreement = CountAgreement(a.answers, ids);
      row.agreement = agreement.share();
      row.agreement_tasks = agreement.answered;
      auto [lo, hi] =
          BootstrapInterval(per_task, options.bootstrap_seed, options.bootstrap_resamples);
      row.depth_ci_low = lo;
      row.depth_ci_high = hi;
    }
    if (a.spend_runs == row.runs) {
      row.input_tokens_mean = a.input_tokens / row.runs;
      row.output_tokens_mean = a.output_tokens / row.runs;
      row.cached_input_tokens_mean = a.cached_input_tokens / row.runs;
    }
    if (a.cost_runs == row.runs) row.cost_usd_mean = a.cost_usd / row.runs;
    lb.rows.push_back(row);
  }
  auto rank = [&](const Row& r) {
    if (!lb.ranked_on_test) return r.depth_mean;
    auto t = r.depth_by_split.find("test");
    return t == r.depth_by_split.end() ? 0.0 : t->second;
  };
  std::stable_sort(lb.rows.begin(), lb.rows.end(), [&](const Row& x, const Row& y) {
    return rank(x) != rank(y) ? rank(x) > rank(y) : x.configuration < y.configuration;
  });
  return lb;
}

std::string AgreementText(const Row& r) {
  if (r.runs < kMinRepeats) return "n/a (needs ≥3 repeats)";
  if (!r.agreement) return "n/a (no task answered)";
  char b[64];
  std::snprintf(b, sizeof b, "%.3f of %d tasks", *r.agreement, r.agreement_tasks);
  return b;
}

std::string IntervalText(const Row& r) {
  if (!r.depth_ci_low || !r.depth_ci_high) return "n/a (needs ≥3 repeats)";
  char b[64];
  std::snprintf(b, sizeof b, "[%.3f, %.3f]", *r.depth_ci_low, *r.depth_ci_high);
  return b;
}

std::string TokensText(const Row& r) {
  if (!r.input_tokens_mean || !r.output_tokens_mean) return "unmeasured";
  auto whole = [](double v) { return std::to_string(static_cast<std::int64_t>(std::llround(v))); };
  return whole(*r.input_tokens_mean) + " in (" + whole(*r.cached_input_tokens_mean) +
         " cached) / " + whole(*r.output_tokens_mean) + " out";
}

std::string CostText(const Row& r) {
  if (!r.cost_usd_mean) return "unmeasured";
  char b[32];
  std::snprintf(b, sizeof b, "$%.2f", *r.cost_usd_mean);
  return b;
}

std::string LeaderboardMarkdown(const Leaderboard& lb) {
  auto f3 = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", v);
    return std::string(b);
  };
  std::ostringstream o;
  o << "suite " << lb.fingerprint << "; floor " << f3(lb.floor_depth) << " (" << lb.floor_name
    << ", an answer that reads nothing)\n";
  if (lb.baselines.size() > 1) {
    o << "other answers that read nothing:";
    for (size_t i = 1; i < lb.baselines.size() && i < 5; ++i) {
      o << (i > 1 ? "," : "") << " " << lb.baselines[i].first << " " << f3(lb.baselines[i].second);
    }
    for (const auto& [name, depth] : lb.baselines) {
      if (name == "uniform-random") o << ", uniform-random " << f3(depth);
    }
    o << " (rca-bench baselines)\n";
  }
  if (lb.ranked_on_test) {
    o << "ranked on the test split (" << lb.test_scenarios << " scenarios; its floor "
      << f3(lb.test_floor_depth) << ", " << lb.test_floor_name
      << "); dev is where thresholds are fitted\n";
  }
  if (lb.large_scenarios > 0) {
    o << "on the large lab: " << lb.large_scenarios << " tasks (their floor "
      << f3(lb.large_floor_depth) << ", " << lb.large_floor_name << "; column large)\n";
  }
  if (lb.hosts_scenarios > 0) {
    o << "on the lab of hosts: " << lb.hosts_scenarios << " tasks (their floor "
      << f3(lb.hosts_floor_depth) << ", " << lb.hosts_floor_name << "; column hosts)\n";
  }
  o << "\n";
  auto split = [&](const Row& r, const char* name) {
    auto it = r.depth_by_split.find(name);
    return it == r.depth_by_split.end() ? std::string("-") : f3(it->second);
  };
  auto lab = [&](const Row& r, const char* name) {
    auto it = r.depth_by_lab.find(name);
    return it == r.depth_by_lab.end() ? std::string("-") : f3(it->second);
  };
  o << "| configuration | model | runs | test | dev | post-freeze | large | hosts | "
       "RCA depth, all (mean ± SE) | "
       "depth, bootstrap 95% CI over tasks | same answer in every repeat | tokens per run | cost "
       "per run | margin over the floor | Brier (exact) | ECE | time to hyp. (median, harness) | "
       "read to hyp. (median bytes) | missing answers (mean) | hash | dates |\n";
  o << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : lb.rows) {
    o << "| " << r.configuration << (r.kind == "reference" ? " (reference audit)" : "") << " | "
      << r.model << " | " << r.runs << " | " << split(r, "test") << " | " << split(r, "dev")
      << " | " << (r.depth_post_freeze ? f3(*r.depth_post_freeze) : std::string("-")) << " | "
      << lab(r, "large") << " | " << lab(r, "hosts") << " | " << f3(r.depth_mean) << " ± "
      << (r.runs > 1 ? f3(r.depth_se) : std::string("-")) << " | "
      << IntervalText(r) << " | " << AgreementText(r) << " | " << TokensText(r) << " | "
      << CostText(r) << " | " << (r.depth_mean >= lb.floor_depth ? "+" : "")
      << f3(r.depth_mean - lb.floor_depth) << " | "
      << (r.calibrated_runs ? f3(r.brier_exact_mean) : "-") << " | "
      << (r.calibrated_runs ? f3(r.ece_mean) : "-") << " | "
      << (r.harness_time_median_s ? f3(*r.harness_time_median_s) + " s" : "unmeasured") << " | "
      << (r.harness_bytes_median
              ? std::to_string(static_cast<std::uint64_t>(*r.harness_bytes_median))
              : std::string("unmeasured"))
      << " | " << f3(r.missing_mean) << " | " << r.configuration_hash << " | " << r.first_date
      << (r.last_date != r.first_date ? ".." + r.last_date : "") << " |\n";
  }
  o << "\nRepeats: \"same answer\" is, of the tasks some run answered, the share whose root_cause "
       "is the same in every run of the configuration (\"unknown\" included; no answer differs "
       "from any answer). The "
       "interval resamples the tasks (each task's credit averaged over the runs) "
    << lb.options.bootstrap_resamples << " times, seed " << lb.options.bootstrap_seed
    << ", 95% percentile interval. Both need ≥" << kMinRepeats
    << " repeats. Tokens per run: input (cached part in parentheses) / output, from the "
       "submissions' headers; cost only where rca-bench run was given --prices.\n";
  for (const Row& r : lb.rows) {
    if (r.kind == "reference") {
      o << "\nReference audits need no model: folk (blames what the logs or the ticket name), "
           "graphwalk (walks the dependency graph with the evidence) and ticketonly (reads the "
           "ticket alone; if it scores well, the tickets leak their answers). They bound the "
           "benchmark; they are not contestants.\n";
      break;
    }
  }
  // Where each configuration's depth comes from: difficulty and family (means over runs).
  if (!lb.rows.empty()) {
    std::vector<std::string> difficulties;
    for (const Row& r : lb.rows) {
      for (const auto& [k, v] : r.depth_by_difficulty) {
        if (std::find(difficulties.begin(), difficulties.end(), k) == difficulties.end()) {
          difficulties.push_back(k);
        }
      }
    }
    std::sort(difficulties.begin(), difficulties.end());
    o << "\n| configuration |";
    for (const std::string& d : difficulties) o << " " << d << " |";
    for (const std::string& f : lb.families) o << " " << f << " |";
    o << "\n|---|";
    for (size_t i = 0; i < difficulties.size() + lb.families.size(); ++i) o << "---|";
    o << "\n";
    for (const Row& r : lb.rows) {
      o << "| " << r.configuration << " |";
      for (const std::string& d : difficulties) {
        auto it = r.depth_by_difficulty.find(d);
        o << " " << (it == r.depth_by_difficulty.end() ? std::string("-") : f3(it->second)) << " |";
      }
      for (const std::string& f : lb.families) {
        auto it = r.depth_by_family.find(f);
        o << " " << (it == r.depth_by_family.end() ? std::string("-") : f3(it->second)) << " |";
      }
      o << "\n";
    }
  }
  // B against C, where the graph cannot have been read out of the scenarios' own recordings.
  const Row* b = nullptr;
  const Row* c = nullptr;
  for (const Row& r : lb.rows) {
    if (r.configuration == "B" && !b) b = &r;
    if (r.configuration == "C" && !c) c = &r;
  }
  if (lb.post_freeze_scenarios > 0) {
    o << "\nB against C on the " << lb.post_freeze_scenarios
      << " scenarios written after the graph's freeze (no edge of theirs is in the frozen graph): ";
    if (b && c && b->depth_post_freeze && c->depth_post_freeze) {
      o << "B " << f3(*b->depth_post_freeze) << ", C " << f3(*c->depth_post_freeze) << " (C - B "
        << (*c->depth_post_freeze >= *b->depth_post_freeze ? "+" : "")
        << f3(*c->depth_post_freeze - *b->depth_post_freeze) << ")\n";
    } else {
      o << "needs runs of both B and C\n";
    }
  }
  if (lb.rows.empty()) o << "\n(no submission could be scored)\n";
  for (const std::string& why : lb.refused) o << "\nrefused: " << why;
  if (!lb.refused.empty()) o << "\n";
  return o.str();
}

}  // namespace slurm_rca::grader
