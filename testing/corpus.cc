#include "testing/corpus.h"

#include <gtest/gtest.h>

namespace slurm_rca::testing {

void ExpectCorpusPasses(const base::CorpusReport& report) {
  for (const std::string& f : report.Failures()) ADD_FAILURE() << f;
}

}  // namespace slurm_rca::testing
