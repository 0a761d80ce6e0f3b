// The parse-or-exit step every binary's main begins with: CLI11 parses argv, and a request for
// help or the version, or a command line it refuses, ends the program with an exit code.
//
//   if (std::optional<int> code = cli::ParseOrExit(app, argc, argv, {"slurm-guard", 2})) {
//     return *code;
//   }
//
// CLI11's --help, --help-all and --version print and exit 0. A refused command line exits with
// the binary's usage code after one stderr line, "<binary>: <what> (see <binary> --help)", or,
// for a binary whose contract pins CLI11's own wording (skill-lint), CLI11's message.
#ifndef SLURM_RCA_CLI_PARSE_H_
#define SLURM_RCA_CLI_PARSE_H_

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string>

namespace slurm_rca::cli {

struct Usage {
  std::string binary;  // the program's name in the message
  int exit_code = 2;   // returned after a refused command line
  // CLI11's own message ("<what>", "Run with --help for more information.") instead of the
  // one-line form.
  bool cli11_message = false;
};

// nullopt: argv parsed, the binary goes on. Else the code main returns (see above).
inline std::optional<int> ParseOrExit(CLI::App& app, int argc, char** argv, const Usage& usage) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (usage.cli11_message) {
      app.exit(e);
      return usage.exit_code;
    }
    std::string what = e.what();
    if (what.empty()) what = "bad arguments";
    std::cerr << usage.binary << ": " << what << " (see " << usage.binary << " --help)\n";
    return usage.exit_code;
  }
  return std::nullopt;
}

}  // namespace slurm_rca::cli

#endif  // SLURM_RCA_CLI_PARSE_H_
