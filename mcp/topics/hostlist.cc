#include "mcp/topics/hostlist.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace slurm_rca::mcp {
namespace {

// Longer digit runs are written as they are: they would not fit the number Slurm reads them as.
constexpr std::size_t kMaxDigits = 18;

std::string Padded(std::uint64_t n, std::size_t width) {
  std::string digits = std::to_string(n);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

}  // namespace

std::string CompressHostlist(const std::vector<std::string>& names) {
  // prefix -> the digit strings that end its names; names that cannot be bracketed, as they are.
  std::map<std::string, std::set<std::string>> numbered;
  std::set<std::string> literal;
  for (const std::string& name : names) {
    if (name.empty()) continue;
    std::size_t start = name.size();
    while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
    const std::size_t digits = name.size() - start;
    const bool bracketable = digits > 0 && digits <= kMaxDigits && start > 0 &&
                             name.find_first_of("[],") == std::string::npos;
    if (bracketable) {
      numbered[name.substr(0, start)].insert(name.substr(start));
    } else {
      literal.insert(name);
    }
  }
  // Each part with the key it is ordered by.
  std::vector<std::pair<std::string, std::string>> parts;
  for (const std::string& name : literal) parts.emplace_back(name, name);
  for (const auto& [prefix, numbers] : numbered) {
    if (numbers.size() == 1) {
      parts.emplace_back(prefix, prefix + *numbers.begin());
      continue;
    }
    // The lengths some zero-padded number has: every number of such a length is written at that
    // width; the rest are unpadded (width 0) and share one bucket whatever their length.
    std::set<std::size_t> padded;
    for (const std::string& n : numbers) {
      if (n.size() > 1 && n[0] == '0') padded.insert(n.size());
    }
    std::map<std::size_t, std::vector<std::uint64_t>> buckets;  // width -> values
    for (const std::string& n : numbers) {
      buckets[padded.count(n.size()) ? n.size() : 0].push_back(std::stoull(n));
    }
    // Ranges of consecutive values, ordered by their first value, then width.
    std::vector<std::tuple<std::uint64_t, std::size_t, std::string>> ranges;
    for (auto& [width, values] : buckets) {
      std::sort(values.begin(), values.end());
      for (std::size_t i = 0; i < values.size();) {
        std::size_t j = i;
        while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
        std::string text = Padded(values[i], width);
        if (j > i) text += "-" + Padded(values[j], width);
        ranges.emplace_back(values[i], width, std::move(text));
        i = j + 1;
      }
    }
    std::sort(ranges.begin(), ranges.end());
    std::string text = prefix + "[";
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      text += (i ? "," : "") + std::get<2>(ranges[i]);
    }
    parts.emplace_back(prefix, text + "]");
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ",") + part.second;
  return out;
}

}  // namespace slurm_rca::mcp
