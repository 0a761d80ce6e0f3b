// What a run's tokens cost: a price file the user gives (`rca-bench run --prices FILE`), never a
// built-in table, so that a price is never guessed or stale.
//
//   # USD per million tokens, per model name as the run's --model gives it
//   claude-sonnet-4-5: {input: 3.00, output: 15.00, cached_input: 0.30, cache_write: 3.75}
//   gpt-4.1:           {input: 2.00, output: 8.00,  cached_input: 0.50}
//
//   Result<PriceTable> t = PriceTable::Load("prices.yaml");     // YAML, or JSON (also YAML)
//   Result<ModelPrice> p = t->For("gpt-4.1", "openai");
//   double usd = Cost(*p, usage);
//
// Refused, with the file and the model named: an unreadable or unparsable file, a top level that
// is not a mapping of model names, an unknown or missing key, a price that is not a number or is
// negative (or not finite), a model the file does not name, and an Anthropic model without
// cache_write (Anthropic bills the prompt cache's writes apart; OpenAI reports none).
#ifndef SLURM_RCA_AGENTS_PRICES_H_
#define SLURM_RCA_AGENTS_PRICES_H_

#include <map>
#include <optional>
#include <string>

#include "agents/llm/backend.h"
#include "base/status.h"

namespace slurm_rca::agents {

// USD per million tokens.
struct ModelPrice {
  double input = 0;  // prompt tokens not read from the cache
  double output = 0;
  double cached_input = 0;            // prompt tokens read from the cache
  std::optional<double> cache_write;  // prompt tokens written to the cache (Anthropic)
};

class PriceTable {
 public:
  static base::Result<PriceTable> Load(const std::string& path);
  // Parses `text` as the file `path` would be (tests).
  static base::Result<PriceTable> Parse(const std::string& text, const std::string& path);

  // The model's prices; `backend_kind` "anthropic" also needs cache_write.
  base::Result<ModelPrice> For(const std::string& model, const std::string& backend_kind) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::map<std::string, ModelPrice> models_;
};

// USD for `usage`: uncached input (input - cached - cache writes) at input, cached at
// cached_input, cache writes at cache_write (input where the price has none: such usage has no
// cache writes, For saw to that), output at output.
double Cost(const ModelPrice& price, const Usage& usage);

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_PRICES_H_
