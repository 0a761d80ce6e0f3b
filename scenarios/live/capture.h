// Captures what real Slurm prints for every read the guard allows, as test data for the MCP
// topic parsers.
//
// CaptureReads() brings up a private lab (its own directory under /tmp, port base 21800),
// puts it into a known state (jobs that completed, failed, were cancelled, run and wait; a
// drained node; a future reservation), runs every allowed argv of the guard corpus through
// guard::Guard and guard::Executor, tears the lab down and writes, under options.out_dir:
//
//   reads/<slug>-<hash>.txt   one file per argv: a header (Slurm version, argv, outcome), then
//                             stdout and stderr as captured
//   manifest.json             every file with its argv, outcome, exit code and sizes
//   README.md                 the known state and how to regenerate (`rca-bench cluster capture`)
//
// The lab's directory is replaced by kLabPlaceholder in everything written, so the files do
// not depend on the temporary directory's name.
//
//   Status s = CaptureReads(CaptureOptions{}, std::cout);   // needs root, like the lab
//
// PlanCapture() and ParseCaptureFile() are pure; the fixture test uses them to check the
// committed files against the corpus.
#ifndef SLURM_RCA_SCENARIOS_LIVE_CAPTURE_H_
#define SLURM_RCA_SCENARIOS_LIVE_CAPTURE_H_

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "guard/check.h"
#include "guard/corpus.h"
#include "scenarios/live/lab.h"

namespace slurm_rca::live {

inline constexpr std::string_view kLabPlaceholder = "/LAB";
inline constexpr std::string_view kCaptureBanner =
    "# slurm-rca capture of a real Slurm read (scenarios/live/capture.cc)";

struct CaptureOptions {
  // The tree the defaults below are in (base::DataPaths::source; main sets it).
  std::string source = ".";
  // The fixture directory; empty: SOURCE/fixtures/slurm-MAJOR.MINOR of the lab's release.
  std::string out_dir;
  // A guard corpus file or directory; empty: SOURCE/guard/testdata.
  std::string corpus;
  int port_base = 21800;  // below the ephemeral range (32768-60999)
  int nodes = 4;
  // Where the lab lives; empty: a fresh mkdtemp directory /tmp/rca-capture-XXXXXX.
  std::string lab_dir;
  // A built Slurm release to capture (LabOptions::slurm_prefix); empty: Debian's. The default
  // out_dir is then fixtures/slurm-MAJOR.MINOR of the version the lab reports.
  std::string slurm_prefix;
};

// One argv to capture, and why.
struct PlannedRead {
  std::vector<std::string> argv;
  // "corpus": an allow case of the guard corpus; "json-variant": the --json form of a corpus
  // read of squeue, sinfo or sacct (the read less its text-layout options, plus --json).
  std::string origin;
  std::vector<std::string> corpus_files;  // the corpus files holding it (file names)
  std::vector<std::string> base;          // json-variant: the corpus argv it derives from
};

struct CapturePlan {
  std::vector<PlannedRead> reads;
  std::vector<std::string> excluded;  // "argv: why" for allowed reads not captured
};

// Every distinct allowed argv of the corpus except nvidia-smi ones, then the --json variants,
// each approved by guard. Deterministic: corpus order, then variants in the order of their
// first base.
// An invalid argument ("FILE:LINE: ARGV is an allow case the guard refuses: ...") when the guard
// refuses a read the corpus allows.
base::Result<CapturePlan> PlanCapture(const std::vector<guard::ArgvCase>& cases,
                                      const guard::Guard& guard);

// "squeue-noheader-o-i-P-u-T-M-D-R-3fa2c1.txt": a slug of the argv and 6 hex digits of a
// stable hash (FNV-1a) of FormatArgv(argv).
std::string CaptureFileName(const std::vector<std::string>& argv);

// A capture file, read back.
struct CaptureFile {
  std::string slurm_version;
  std::string argv_line;  // FormatArgv(argv)
  std::string exec_line;  // what ran, when it differs (sacctmgr gets --readonly); else empty
  std::string outcome;    // guard::OutcomeName: "exited", "timed_out", ...
  int exit_code = -1;
  long duration_ms = 0;
  std::string stdout_text;
  std::string stderr_text;
};

// An invalid argument naming the first thing wrong ("no '--- stderr' line after stdout").
base::Result<CaptureFile> ParseCaptureFile(std::string_view text);
std::string RenderCaptureFile(const CaptureFile& file);

// The current UTC time, ISO 8601 to the second ("2026-11-30T13:45:59Z").
std::string NowIso();
// Writes text to path (creating its directories), replacing what was there.
bool WriteText(const std::filesystem::path& path, const std::string& text);

// Replaces every occurrence of `from` in text with `to`.
std::string ReplaceAll(std::string text, std::string_view from, std::string_view to);

base::Status CaptureReads(const CaptureOptions& options, std::ostream& progress);

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_CAPTURE_H_
