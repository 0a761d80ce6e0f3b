#include "base/diagnostic.h"

namespace slurm_rca::base {

std::string Diagnostic::ToString() const {
  return file + ":" + std::to_string(line) + ": " + (rule.empty() ? "" : rule + ": ") + message;
}

}  // namespace slurm_rca::base
