#include "grader/leaderboard.h"

#include "grader/baselines.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace slurm_rca::grader {

namespace fs = std::filesystem;

Leaderboard BuildLeaderboard(const std::string& dir, const std::vector<scenarios::Scenario>& suite) {
  Leaderboard lb;
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
  std::vector<scenarios::Scenario> test;
  for (const scenarios::Scenario& s : suite) {
    if (s.split == "test" && s.status == "runnable") test.push_back(s);
    if (!s.post_freeze.empty() && s.status == "runnable") ++lb.post_freeze_scenarios;
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
    a.row.harness_times_s.insert(a.row.harness_times_s.end(), r.harness_times_s.begin(),
                                 r.harness_times_s.end());
    a.row.harness_bytes_read.insert(a.row.harness_bytes_read.end(), r.harness_bytes_read.begin(),
                                    r.harness_bytes_read.end());
    a.row.first_date = std::min(a.row.first_date, s.date);
    a.row.last_date = std::max(a.row.last_date, s.date);
    a.depths.push_back(r.depth);
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
    if (!row.harness_times_s.empty()) row.harness_time_median_s = Median(row.harness_times_s);
    if (!row.harness_bytes_read.empty()) row.harness_bytes_median = Median(row.harness_bytes_read);
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
  o << "\n";
  auto split = [&](const Row& r, const char* name) {
    auto it = r.depth_by_split.find(name);
    return it == r.depth_by_split.end() ? std::string("-") : f3(it->second);
  };
  o << "| configuration | model | runs | test | dev | post-freeze | RCA depth, all (mean ± SE) | "
       "margin over the floor | Brier (exact) | ECE | time to hyp. (median, harness) | read to "
       "hyp. (median bytes) | missing answers (mean) | hash | dates |\n";
  o << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : lb.rows) {
    o << "| " << r.configuration << (r.kind == "reference" ? " (reference audit)" : "") << " | "
      << r.model << " | " << r.runs << " | " << split(r, "test") << " | " << split(r, "dev")
      << " | " << (r.depth_post_freeze ? f3(*r.depth_post_freeze) : std::string("-")) << " | "
      << f3(r.depth_mean) << " ± " << (r.runs > 1 ? f3(r.depth_se) : std::string("-")) << " | "
      << (r.depth_mean >= lb.floor_depth ? "+" : "") << f3(r.depth_mean - lb.floor_depth)
      << " | " << (r.calibrated_runs ? f3(r.brier_exact_mean) : "-") << " | "
      << (r.calibrated_runs ? f3(r.ece_mean) : "-") << " | "
      << (r.harness_time_median_s ? f3(*r.harness_time_median_s) + " s" : "unmeasured") << " | "
      << (r.harness_bytes_median ? std::to_string(static_cast<std::uint64_t>(*r.harness_bytes_median))
                                 : std::string("unmeasured"))
      << " | " << f3(r.missing_mean) << " | "
      << r.configuration_hash << " | " << r.first_date
      << (r.last_date != r.first_date ? ".." + r.last_date : "") << " |\n";
  }
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
