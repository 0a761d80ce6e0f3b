// libFuzzer target for the guard. Input: argv elements separated by '\n' (so NUL and every other
// byte can appear inside an element). Oracle: guard/oracle.h, an independent model of "this argv
// could change state, touch a file, leak secrets or never end". Any approved argv the oracle
// flags, any approved argv that does not render back exactly, and any malformed denial abort.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "guard/check.h"
#include "guard/corpus.h"
#include "guard/oracle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace slurm_rca::guard;
  static const Guard guard(GuardOptions{.clusters = {"rca"}});
  std::vector<std::string> argv;
  if (size > 0) {
    std::string current;
    for (size_t i = 0; i < size; ++i) {
      if (data[i] == '\n') {
        argv.push_back(std::move(current));
        current.clear();
      } else {
        current += static_cast<char>(data[i]);
      }
    }
    argv.push_back(std::move(current));
  }
  Verdict v = guard.Check(argv);
  if (v.ok()) {
    if (auto harm = oracle::Violation(argv)) {
      std::fprintf(stderr, "VIOLATION: approved %s, but the oracle says: %s\n",
                   FormatArgv(argv).c_str(), harm->c_str());
      std::abort();
    }
    if (Render(v.approved().tokens()) != argv) {
      std::fprintf(stderr, "RENDER MISMATCH: %s\n", FormatArgv(argv).c_str());
      std::abort();
    }
  } else {
    const Denial& d = v.denial();
    if (d.reason.empty() || RuleFromId(RuleId(d.rule)) != d.rule || d.index < -1 ||
        d.index >= static_cast<int>(argv.size())) {
      std::fprintf(stderr, "MALFORMED DENIAL for %s: %s\n", FormatArgv(argv).c_str(),
                   d.ToString().c_str());
      std::abort();
    }
  }
  return 0;
}
