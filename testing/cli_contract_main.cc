// cli_contract: runs the CLI contract cases of one file (testing/cli_contract.h) and prints one
// FAIL paragraph per failing case, then "N passed, M failed". ${TMP} is a fresh directory,
// removed at the end; other variables come from the command line.
//
//   cli_contract tests/cli/slurm-guard.cases SLURM_GUARD=build/bin/slurm-guard SRC=.
//
// Exit codes: 0 every case passed, 1 a case failed (or the file holds none), 2 usage or a
// malformed case file.
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <iostream>

#include "base/file.h"
#include "testing/cli_contract.h"

int main(int argc, char** argv) {
  namespace t = slurm_rca::testing;
  if (argc < 2) {
    std::cerr << "usage: cli_contract CASES_FILE [NAME=VALUE...]\n";
    return 2;
  }
  std::map<std::string, std::string> vars;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "cli_contract: '" << a << "' is not NAME=VALUE\n";
      return 2;
    }
    vars[a.substr(0, eq)] = a.substr(eq + 1);
  }
  std::string tmp = (std::filesystem::temp_directory_path() / "cli_contract_XXXXXX").string();
  if (!mkdtemp(tmp.data())) {
    std::cerr << "cli_contract: cannot create a temporary directory\n";
    return 2;
  }
  vars["TMP"] = tmp;
  std::optional<std::string> text = slurm_rca::base::ReadFile(argv[1]);
  if (!text) {
    std::cerr << "cli_contract: cannot read " << argv[1] << "\n";
    std::filesystem::remove_all(tmp);
    return 2;
  }
  auto cases = t::ParseCliCases(*text, argv[1], vars);
  if (!cases.ok()) {
    std::cerr << "cli_contract: " << cases.status().message() << "\n";
    std::filesystem::remove_all(tmp);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);  // a child that exits before reading its stdin is not our death
  int passed = 0, failed = 0;
  for (const t::CliCase& c : *cases) {
    std::vector<std::string> failures = t::CheckCli(c, t::RunCli(c));
    if (failures.empty()) {
      ++passed;
      continue;
    }
    ++failed;
    std::cout << "FAIL " << c.Where() << " " << c.description << "\n";
    for (const std::string& f : failures) std::cout << "  " << f << "\n";
  }
  std::filesystem::remove_all(tmp);
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 && passed > 0 ? 0 : 1;
}
