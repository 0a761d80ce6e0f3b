#include "agents/prices.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/file.h"

namespace slurm_rca::agents {

using base::Result;
using base::Status;

namespace {

// A price: a plain scalar that is a finite number >= 0, all of it.
std::optional<double> Price(const YAML::Node& n) {
  if (!n.IsScalar() || n.Tag() == "!") return std::nullopt;  // "!": a quoted scalar
  const std::string& text = n.Scalar();
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

}  // namespace

Result<PriceTable> PriceTable::Load(const std::string& path) {
  std::optional<std::string> text = base::ReadFile(path);
  if (!text) return Status::InvalidArgument("cannot read the price file " + path);
  return Parse(*text, path);
}

Result<PriceTable> PriceTable::Parse(const std::string& text, const std::string& path) {
  PriceTable t;
  t.path_ = path;
  const std::string where = "price file " + path + ": ";
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(where + "not YAML or JSON: " + e.msg);
  }
  if (!root.IsMap() || root.size() == 0) {
    return Status::InvalidArgument(
        where +
        "expected a mapping of model name to {input, output, cached_input[, cache_write]} "
        "in USD per million tokens");
  }
  const char* const kRequired[] = {"input", "output", "cached_input"};
  for (const auto& entry : root) {
    const std::string model = entry.first.Scalar();
    const YAML::Node& p = entry.second;
    const std::string in = where + "model '" + model + "': ";
    if (!p.IsMap()) {
      return Status::InvalidArgument(in + "expected {input, output, cached_input[, cache_write]}");
    }
    ModelPrice price;
    for (const auto& kv : p) {
      const std::string key = kv.first.Scalar();
      double* field = key == "input"          ? &price.input
                      : key == "output"       ? &price.output
                      : key == "cached_input" ? &price.cached_input
                                              : nullptr;
      if (!field && key != "cache_write") {
        return Status::InvalidArgument(in + "unknown key '" + key +
                                       "' (input, output, cached_input, cache_write)");
      }
      std::optional<double> v = Price(kv.second);
      if (!v) {
        return Status::InvalidArgument(
            in + key + " must be a non-negative number (USD per million tokens), got '" +
            (kv.second.IsScalar() ? kv.second.Scalar() : std::string("not a scalar")) + "'");
      }
      if (field) {
        *field = *v;
      } else {
        price.cache_write = *v;
      }
    }
    for (const char* key : kRequired) {
      if (!p[key]) return Status::InvalidArgument(in + "missing key '" + key + "'");
    }
    if (!t.models_.emplace(model, price).second) {
      return Status::InvalidArgument(in + "named twice");
    }
  }
  return t;
}

Result<ModelPrice> PriceTable::For(const std::string& model,
                                   const std::string& backend_kind) const {
  auto it = models_.find(model);
  if (it == models_.end()) {
    std::string names;
    for (const auto& [name, unused] : models_) names += (names.empty() ? "" : ", ") + name;
    return Status::InvalidArgument("model '" + model + "' has no prices in the price file " +
                                   path_ + " (it names " + names + "); prices are never guessed");
  }
  if (backend_kind == "anthropic" && !it->second.cache_write) {
    return Status::InvalidArgument("model '" + model + "' in the price file " + path_ +
                                   " has no cache_write price, which Anthropic charges for "
                                   "writing the prompt cache");
  }
  return it->second;
}

double Cost(const ModelPrice& price, const Usage& usage) {
  const int64_t uncached = std::max<int64_t>(
      0, usage.input_tokens - usage.cached_input_tokens - usage.cache_creation_input_tokens);
  const double usd = static_cast<double>(uncached) * price.input +
                     static_cast<double>(usage.cached_input_tokens) * price.cached_input +
                     static_cast<double>(usage.cache_creation_input_tokens) *
                         price.cache_write.value_or(price.input) +
                     static_cast<double>(usage.output_tokens) * price.output;
  return usd / 1e6;
}

}  // namespace slurm_rca::agents
