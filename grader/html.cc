// LeaderboardHtml: one self-contained page. Everything is inline (CSS and SVG); there is no
// script, and the Content-Security-Policy forbids the browser to load anything at all, so the page
// reads the same offline, from a file, or attached to a bug.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "grader/leaderboard.h"

namespace slurm_rca::grader {

namespace {

std::string Esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string F(double v, int digits = 3) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

// A colour per row, stable by position; reference audits are drawn grey and hatched in the legend.
const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                          "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"};

std::string Colour(const Leaderboard& lb, size_t i) {
  if (lb.rows[i].kind == "reference") {
    static const char* grey[] = {"#6b6b6b", "#9a9a9a", "#4a4a4a", "#b5b5b5"};
    size_t k = 0;
    for (size_t j = 0; j < i; ++j) k += lb.rows[j].kind == "reference";
    return grey[k % 4];
  }
  size_t k = 0;
  for (size_t j = 0; j < i; ++j) k += lb.rows[j].kind != "reference";
  return kPalette[k % 10];
}

std::string Label(const Row& r) {
  return r.configuration + (r.model.empty() ? "" : " · " + r.model) +
         (r.kind == "reference" ? " (reference)" : "");
}

// Horizontal bars of mean depth with ±SE whiskers; the floor as a dashed line across.
std::string DepthChart(const Leaderboard& lb) {
  const int left = 260, width = 480, bar = 22, gap = 10, top = 30;
  int height = top + static_cast<int>(lb.rows.size()) * (bar + gap) + 40;
  auto x = [&](double v) { return left + v * width; };
  std::ostringstream o;
  o << "<svg id=\"depth-chart\" width=\"" << left + width + 40
    << "\" height=\"" << height << "\" role=\"img\" aria-label=\"RCA depth per configuration "
    << "against the floor\">\n";
  for (int t = 0; t <= 10; t += 2) {
    double v = t / 10.0;
    o << "<line x1=\"" << x(v) << "\" y1=\"" << top - 8 << "\" x2=\"" << x(v) << "\" y2=\""
      << height - 30 << "\" stroke=\"#e3e3e3\"/>\n"
      << "<text x=\"" << x(v) << "\" y=\"" << height - 14
      << "\" text-anchor=\"middle\" class=\"tick\">" << F(v, 1) << "</text>\n";
  }
  for (size_t i = 0; i < lb.rows.size(); ++i) {
    const Row& r = lb.rows[i];
    int y = top + static_cast<int>(i) * (bar + gap);
    o << "<text x=\"" << left - 8 << "\" y=\"" << y + bar * 0.7 << "\" text-anchor=\"end\">"
      << Esc(Label(r)) << "</text>\n";
    o << "<rect class=\"bar\" x=\"" << left << "\" y=\"" << y << "\" width=\""
      << std::max(0.0, r.depth_mean * width) << "\" height=\"" << bar << "\" fill=\""
      << Colour(lb, i) << "\"><title>" << Esc(Label(r)) << ": depth " << F(r.depth_mean)
      << " over " << r.runs << " run(s)</title></rect>\n";
    if (r.runs > 1 && r.depth_se > 0) {
      double lo = std::max(0.0, r.depth_mean - r.depth_se), hi = std::min(1.0, r.depth_mean + r.depth_se);
      double cy = y + bar / 2.0;
      o << "<path d=\"M" << x(lo) << " " << cy - 6 << "v12M" << x(lo) << " " << cy << "H" << x(hi)
        << "M" << x(hi) << " " << cy - 6 << "v12\" stroke=\"#000\" fill=\"none\"/>\n";
    }
    o << "<text x=\"" << x(std::min(1.0, r.depth_mean + (r.runs > 1 ? r.depth_se : 0))) + 6
      << "\" y=\"" << y + bar * 0.7 << "\" class=\"value\">" << F(r.depth_mean)
      << (r.runs > 1 ? " ± " + F(r.depth_se) : "") << "</text>\n";
  }
  o << "<line id=\"floor-line\" x1=\"" << x(lb.floor_depth) << "\" y1=\"" << top - 14 << "\" x2=\""
    << x(lb.floor_depth) << "\" y2=\"" << height - 30
    << "\" stroke=\"#000\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n"
    << "<text x=\"" << x(lb.floor_depth) + 4 << "\" y=\"" << top - 16 << "\" class=\"floor\">floor "
    << F(lb.floor_depth) << " (" << Esc(lb.floor_name) << ")</text>\n";
  o << "</svg>\n";
  return o.str();
}

// Accuracy against mean confidence per bin, pooled over each configuration's runs; the diagonal
// is perfect calibration; a point's area grows with its count.
std::string ReliabilityChart(const Leaderboard& lb) {
  const int left = 60, size = 360, top = 20;
  auto px = [&](double v) { return left + v * size; };
  auto py = [&](double v) { return top + (1 - v) * size; };
  std::ostringstream o;
  o << "<svg id=\"reliability-chart\" width=\""
    << left + size + 420 << "\" height=\"" << top + size + 50
    << "\" role=\"img\" aria-label=\"Reliability diagram\">\n";
  o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << size << "\" height=\"" << size
    << "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (int t = 0; t <= 10; t += 2) {
    double v = t / 10.0;
    o << "<text x=\"" << px(v) << "\" y=\"" << top + size + 16
      << "\" text-anchor=\"middle\" class=\"tick\">" << F(v, 1) << "</text>\n"
      << "<text x=\"" << left - 6 << "\" y=\"" << py(v) + 4
      << "\" text-anchor=\"end\" class=\"tick\">" << F(v, 1) << "</text>\n";
  }
  o << "<line x1=\"" << px(0) << "\" y1=\"" << py(0) << "\" x2=\"" << px(1) << "\" y2=\"" << py(1)
    << "\" stroke=\"#999\" stroke-dasharray=\"4 4\"/>\n";
  o << "<text x=\"" << px(0.5) << "\" y=\"" << top + size + 36
    << "\" text-anchor=\"middle\">stated confidence</text>\n";
  o << "<text transform=\"translate(14 " << py(0.5) << ") rotate(-90)\" text-anchor=\"middle\">"
    << "fraction exactly right</text>\n";
  int legend = 0;
  for (size_t i = 0; i < lb.rows.size(); ++i) {
    const Row& r = lb.rows[i];
    if (r.calibrated_runs == 0) continue;
    std::string c = Colour(lb, i);
    std::ostringstream pts;
    int total = 0;
    for (const Bin& b : r.reliability) total += b.count;
    for (const Bin& b : r.reliability) {
      if (b.count == 0) continue;
      pts << px(b.mean_confidence) << "," << py(b.accuracy) << " ";
      double radius = 3 + 9 * std::sqrt(static_cast<double>(b.count) / std::max(1, total));
      o << "<circle class=\"bin\" cx=\"" << px(b.mean_confidence) << "\" cy=\"" << py(b.accuracy)
        << "\" r=\"" << radius << "\" fill=\"" << c << "\" fill-opacity=\"0.75\"><title>"
        << Esc(Label(r)) << ": " << b.count << " answer(s) at mean confidence "
        << F(b.mean_confidence) << ", " << F(b.accuracy) << " right</title></circle>\n";
    }
    o << "<polyline points=\"" << pts.str() << "\" fill=\"none\" stroke=\"" << c << "\"/>\n";
    int ly = top + 10 + legend++ * 20;
    o << "<rect x=\"" << left + size + 16 << "\" y=\"" << ly - 9 << "\" width=\"12\" height=\"12\" "
      << "fill=\"" << c << "\"/><text x=\"" << left + size + 34 << "\" y=\"" << ly + 1 << "\">"
      << Esc(Label(r)) << " (ECE " << F(r.ece_mean) << ")</text>\n";
  }
  if (legend == 0) {
    o << "<text x=\"" << px(0.5) << "\" y=\"" << py(0.5)
      << "\" text-anchor=\"middle\">no configuration answered anything</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

// Mean depth per family and configuration, from white (0) to dark blue (1), value in the cell.
std::string FamilyHeatMap(const Leaderboard& lb) {
  const int left = 260, cell_w = 110, cell_h = 28, top = 60;
  int width = left + cell_w * static_cast<int>(lb.families.size()) + 20;
  int height = top + cell_h * static_cast<int>(lb.rows.size()) + 20;
  std::ostringstream o;
  o << "<svg id=\"family-heatmap\" width=\"" << width
    << "\" height=\"" << height << "\" role=\"img\" aria-label=\"Depth by family\">\n";
  for (size_t f = 0; f < lb.families.size(); ++f) {
    int cx = left + static_cast<int>(f) * cell_w + cell_w / 2;
    o << "<text transform=\"translate(" << cx << " " << top - 8 << ") rotate(-20)\" "
      << "text-anchor=\"start\">" << Esc(lb.families[f]) << "</text>\n";
  }
  for (size_t i = 0; i < lb.rows.size(); ++i) {
    const Row& r = lb.rows[i];
    int y = top + static_cast<int>(i) * cell_h;
    o << "<text x=\"" << left - 8 << "\" y=\"" << y + cell_h * 0.65 << "\" text-anchor=\"end\">"
      << Esc(Label(r)) << "</text>\n";
    for (size_t f = 0; f < lb.families.size(); ++f) {
      auto it = r.depth_by_family.find(lb.families[f]);
      double d = it == r.depth_by_family.end() ? 0 : it->second;
      // White to #08306b: interpolate each channel.
      int red = static_cast<int>(255 + (8 - 255) * d), green = static_cast<int>(255 + (48 - 255) * d),
          blue = static_cast<int>(255 + (107 - 255) * d);
      char fill[16];
      std::snprintf(fill, sizeof fill, "#%02x%02x%02x", red, green, blue);
      int x = left + static_cast<int>(f) * cell_w;
      o << "<rect class=\"cell\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell_w - 2
        << "\" height=\"" << cell_h - 2 << "\" fill=\"" << fill << "\"><title>" << Esc(Label(r))
        << ", " << Esc(lb.families[f]) << ": " << F(d) << "</title></rect>\n"
        << "<text x=\"" << x + cell_w / 2 << "\" y=\"" << y + cell_h * 0.65
        << "\" text-anchor=\"middle\" fill=\"" << (d > 0.55 ? "#fff" : "#000") << "\">" << F(d, 2)
        << "</text>\n";
    }
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace

std::string LeaderboardHtml(const Leaderboard& lb) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
       "style-src 'unsafe-inline'\">\n"
    << "<title>rca-bench leaderboard</title>\n<style>\n"
    << "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#111;max-width:1100px}\n"
    << "table{border-collapse:collapse;margin:12px 0;font-size:13px}code{font-size:12px}td,th{border:1px solid #ccc;padding:4px 8px;"
       "text-align:left}th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:"
       "tabular-nums}\n"
    << "svg text{font:12px system-ui,sans-serif}svg .tick{fill:#555}svg .floor{font-weight:bold}\n"
    << "tr.reference td{color:#555;font-style:italic}.note{color:#444}\n</style>\n</head>\n<body>\n";
  o << "<h1>rca-bench leaderboard</h1>\n<p>Suite <code>" << Esc(lb.fingerprint) << "</code>, "
    << lb.scenarios << " runnable scenarios. Floor <b>" << F(lb.floor_depth) << "</b> ("
    << Esc(lb.floor_name) << ", an answer that reads nothing): every number below is read against "
    << "it.</p>\n";
  o << "<table id=\"rows\">\n<tr><th>configuration</th><th>model</th><th>runs</th><th>RCA depth "
       "(mean ± SE)</th><th>depth, bootstrap 95% CI over tasks</th><th>same answer in every "
       "repeat</th><th>tokens per run</th><th>cost per run</th><th>margin over the "
       "floor</th><th>Brier (exact)</th><th>ECE</th><th>time "
       "to hyp. (median, harness)</th><th>read to hyp. (median bytes)</th><th>missing "
       "(mean)</th><th>hash</th><th>suite</th>"
       "<th>dates</th></tr>\n";
  for (const Row& r : lb.rows) {
    o << "<tr" << (r.kind == "reference" ? " class=\"reference\"" : "") << "><td>"
      << Esc(r.configuration) << (r.kind == "reference" ? " (reference audit)" : "") << "</td><td>"
      << Esc(r.model) << "</td><td class=\"n\">" << r.runs << "</td><td class=\"n\">"
      << F(r.depth_mean) << (r.runs > 1 ? " ± " + F(r.depth_se) : "") << "</td><td class=\"n\">"
      << Esc(IntervalText(r)) << "</td><td class=\"n\">" << Esc(AgreementText(r))
      << "</td><td class=\"n\">" << Esc(TokensText(r)) << "</td><td class=\"n\">"
      << Esc(CostText(r)) << "</td><td class=\"n\">" << (r.depth_mean >= lb.floor_depth ? "+" : "")
      << F(r.depth_mean - lb.floor_depth) << "</td><td class=\"n\">"
      << (r.calibrated_runs ? F(r.brier_exact_mean) : "-") << "</td><td class=\"n\">"
      << (r.calibrated_runs ? F(r.ece_mean) : "-") << "</td><td class=\"n\">"
      << (r.harness_time_median_s
              ? F(*r.harness_time_median_s, *r.harness_time_median_s < 1 ? 3 : 1) + " s"
              : "unmeasured")
      << "</td><td class=\"n\">"
      << (r.harness_bytes_median
              ? std::to_string(static_cast<std::uint64_t>(*r.harness_bytes_median))
              : "unmeasured")
      << "</td><td class=\"n\">" << F(r.missing_mean) << "</td><td><code>"
      << Esc(r.configuration_hash) << "</code></td><td><code>" << Esc(r.fingerprint)
      << "</code></td><td>" << Esc(r.first_date)
      << (r.last_date != r.first_date ? ".." + Esc(r.last_date) : "") << "</td></tr>\n";
  }
  o << "</table>\n";
  o << "<p class=\"note\" id=\"repeats\">Same answer: of the tasks some run answered, the share "
       "whose root_cause is the same in every run of the configuration (\"unknown\" included; no "
       "answer differs from any answer). The interval resamples the tasks, each task's credit "
       "averaged over the runs, "
    << lb.options.bootstrap_resamples << " times with seed " << lb.options.bootstrap_seed
    << " (95% percentile interval). Both need at least " << kMinRepeats
    << " repeats. Tokens per run: input (cached part) / output, from the submissions' headers; "
       "cost only for runs given a price file.</p>\n";
  if (lb.rows.empty()) o << "<p>No submission could be scored.</p>\n";
  o << "<h2>RCA depth against the floor</h2>\n" << DepthChart(lb);
  o << "<h2>Reliability</h2>\n<p class=\"note\">Brier and ECE are read beside depth, never alone: "
       "an agent that is never right at confidence 0 is perfectly calibrated and useless.</p>\n"
    << ReliabilityChart(lb);
  o << "<h2>Depth by family</h2>\n" << FamilyHeatMap(lb);
  o << "<h2>Degenerate baselines</h2>\n<table id=\"baselines\">\n<tr><th>strategy</th><th>RCA "
       "depth</th></tr>\n";
  for (const auto& [name, depth] : lb.baselines) {
    o << "<tr><td>" << Esc(name) << "</td><td class=\"n\">" << F(depth) << "</td></tr>\n";
  }
  o << "</table>\n";
  bool reference = false;
  for (const Row& r : lb.rows) reference |= r.kind == "reference";
  if (reference) {
    o << "<p class=\"note\">Reference audits need no model: they bound the benchmark and are not "
         "contestants. If <i>ticketonly</i> scores well, the tickets leak their answers.</p>\n";
  }
  if (!lb.refused.empty()) {
    o << "<h2>Refused</h2>\n<ul id=\"refused\">\n";
    for (const std::string& why : lb.refused) o << "<li>" << Esc(why) << "</li>\n";
    o << "</ul>\n";
  }
  o << "</body>\n</html>\n";
  return o.str();
}

}  // namespace slurm_rca::grader
