#include "mcp/evidence.h"

namespace slurm_rca::mcp {

const char* OutcomeName(Evidence::Outcome o) {
  switch (o) {
    case Evidence::Outcome::kOk:
      return "ok";
    case Evidence::Outcome::kFailed:
      return "failed";
    case Evidence::Outcome::kTimedOut:
      return "timed_out";
    case Evidence::Outcome::kRefused:
      return "refused";
    case Evidence::Outcome::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

}  // namespace slurm_rca::mcp
