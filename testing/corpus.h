// A refusal corpus as a gtest: the one loader and runner is base::RunCorpus (base/corpus.h);
// this turns its report into one gtest failure per failing case. A module's test is an adapter
// and two lines:
//
//   base::CorpusReport report = base::RunCorpus(
//       {.path = kSource + "/scenarios/testdata/broken", .extension = ".yaml"},
//       [](const base::CorpusCase& c) { return scenarios::CheckFile(c.path); });
//   testing::ExpectCorpusPasses(report);   // one gtest failure per failing case
//
// Linked by tests only. (Inside namespace slurm_rca, gtest's namespace is ::testing.)
#ifndef SLURM_RCA_TESTING_CORPUS_H_
#define SLURM_RCA_TESTING_CORPUS_H_

#include "base/corpus.h"

namespace slurm_rca::testing {

// One gtest failure per entry of report.Failures(): each failing case (its name, what it
// expected, what it got), each case that could not be read, or the corpus having no case.
void ExpectCorpusPasses(const base::CorpusReport& report);

}  // namespace slurm_rca::testing

#endif  // SLURM_RCA_TESTING_CORPUS_H_
