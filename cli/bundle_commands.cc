// rca-bench bundle pack, unpack, digest: evidence bundles as one file each
// (mcp/backend/bundle_pack.h; fixtures/README.md, "Packed bundles").
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/common.h"
#include "mcp/backend/bundle_pack.h"
#include "mcp/backend/replay_backend.h"

namespace slurm_rca::cli {
namespace {

namespace fs = std::filesystem;

// Whether the two serve the same evidence: every snapshot's offset and time, every read's
// outcome, exit status, streams, cause and duration.
std::string Difference(const mcp::ReplayBackend& a, const mcp::ReplayBackend& b) {
  if (a.slurm_version() != b.slurm_version() || a.scenario() != b.scenario() ||
      a.profile() != b.profile() || a.recorded_at() != b.recorded_at() ||
      a.trials_json() != b.trials_json()) {
    return "the manifests' headers differ";
  }
  if (a.snapshots().size() != b.snapshots().size()) return "the snapshot counts differ";
  for (std::size_t i = 0; i < a.snapshots().size(); ++i) {
    const auto& x = a.snapshots()[i];
    const auto& y = b.snapshots()[i];
    const std::string where = "snapshot " + std::to_string(i);
    if (x.offset_seconds != y.offset_seconds || x.taken_at != y.taken_at) return where + " differs";
    if (x.reads.size() != y.reads.size()) return where + ": the read counts differ";
    for (const auto& [argv, e] : x.reads) {
      auto it = y.reads.find(argv);
      if (it == y.reads.end()) return where + ": a read is missing";
      const mcp::Evidence& f = it->second;
      if (e.outcome != f.outcome || e.exit_code != f.exit_code || e.out != f.out ||
          e.err != f.err || e.cause != f.cause || e.seconds != f.seconds ||
          e.out_truncated != f.out_truncated || e.evidence_time != f.evidence_time) {
        return where + ": a read differs";
      }
    }
  }
  return "";
}

std::uint64_t Bytes(const mcp::BundleFiles& files) {
  std::uint64_t n = 0;
  for (const auto& [path, bytes] : files) n += bytes.size();
  return n;
}

// Every directory bundle under root (a directory whose manifest.json is an evidence manifest),
// in path order; the captures of fixtures/slurm-*/ have another format and are left alone.
std::vector<std::string> DirectoryBundlesUnder(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    const fs::path manifest = it->path() / "manifest.json";
    if (!fs::is_regular_file(manifest, ec)) continue;
    std::ifstream in(manifest);
    nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
    if (m.is_object() && m.contains("format") && m["format"].is_string() &&
        m["format"].get<std::string>().rfind("slurm-rca-evidence/", 0) == 0) {
      out.push_back(it->path().string());
      it.disable_recursion_pending();  // a bundle's reads/ hold no bundles
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

class BundleCommands : public CommandGroup {
 public:
  explicit BundleCommands(CLI::App& app) {
    group = app.add_subcommand(
        "bundle",
        "Evidence bundles as one file each: pack a bundle directory into DIR.evidence.gz "
        "(checked to serve the same evidence, then the directory removed), unpack one, or print "
        "a bundle's digest (the same for a directory and its pack)");
    group->require_subcommand(1);
    pack = group->add_subcommand(
        "pack",
        "Pack bundle directories: each DIR becomes DIR.evidence.gz, read back and compared "
        "with the directory (files byte for byte, digest, and every read the replay back-end "
        "serves) before the directory is removed");
    pack->add_option("paths", pack_paths,
                     "Bundle directories, or with --all directories to search for them")
        ->required();
    pack->add_flag("--all", pack_all,
                   "Pack every bundle directory found under PATHS (an evidence manifest.json; "
                   "the captures of fixtures/slurm-*/ are another format and stay)");
    pack->add_flag("--keep-directory", keep_directory, "Leave each directory in place");
    unpack = group->add_subcommand("unpack", "Write a pack's files into a new directory");
    unpack->add_option("pack", unpack_from, "A pack (or its path without .evidence.gz)")->required();
    unpack->add_option("dir", unpack_to, "The directory to create (it must not exist)")->required();
    digest = group->add_subcommand(
        "digest", "Each bundle's digest, files and bytes (a directory and its pack agree)");
    digest->add_option("paths", digest_paths, "Bundles: directories or packs")->required();
  }

  std::optional<int> Run() override {
    if (!*group) return std::nullopt;
    if (*pack) return Pack();
    if (*unpack) return Unpack();
    return Digest();
  }

 private:
  int Pack() {
    std::vector<std::string> dirs;
    for (const std::string& p : pack_paths) {
      if (!pack_all) {
        dirs.push_back(p);
        continue;
      }
      std::vector<std::string> found = DirectoryBundlesUnder(p);
      dirs.insert(dirs.end(), found.begin(), found.end());
    }
    if (dirs.empty()) {
      std::cerr << "rca-bench: no bundle directory under " << pack_paths.front()
                << " (nothing to pack)\n";
      return 0;
    }
    std::uint64_t files_before = 0, bytes_before = 0, bytes_after = 0;
    int failed = 0;
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      std::string d = dirs[i];
      while (d.size() > 1 && d.back() == '/') d.pop_back();
      const std::string out = d + mcp::kBundlePackSuffix;
      std::string why;
      std::uint64_t packed_bytes = 0;
      base::Result<mcp::BundleFiles> files = mcp::ReadBundleDirectory(d);
      if (!files.ok()) why = files.status().message();
      if (why.empty()) why = PackOne(d, *files, out, &packed_bytes);
      std::cerr << "[" << i + 1 << "/" << dirs.size() << "] ";
      if (!why.empty()) {
        std::cerr << d << ": NOT packed: " << why << "\n";
        ++failed;
        continue;
      }
      files_before += files->size();
      bytes_before += Bytes(*files);
      bytes_after += packed_bytes;
      std::cerr << d << ": " << files->size() << " files, " << Bytes(*files) << " bytes -> "
                << out << ": " << packed_bytes << " bytes, " << mcp::BundleDigest(*files)
                << (keep_directory ? "" : " (directory removed)") << "\n";
    }
    std::cout << "packed " << dirs.size() - failed << " of " << dirs.size() << " bundles: "
              << files_before << " files, " << bytes_before << " bytes -> " << dirs.size() - failed
              << " files, " << bytes_after << " bytes\n";
    return failed == 0 ? 0 : 1;
  }

  // Writes the pack, proves it serves what the directory serves, then removes the directory.
  // Returns why not, "" when done.
  std::string PackOne(const std::string& dir, const mcp::BundleFiles& files, const std::string& out,
                      std::uint64_t* packed_bytes) {
    auto from_dir = mcp::ReplayBackend::Open(dir);
    if (!from_dir.ok()) return "it does not open as a bundle: " + from_dir.status().message();
    if (base::Status st = mcp::WritePack(files, out); !st.ok()) return st.message();
    base::Result<mcp::BundleFiles> back = mcp::ReadPack(out);
    std::string why;
    if (!back.ok()) {
      why = "the pack does not read back: " + back.status().message();
    } else if (*back != files || mcp::BundleDigest(*back) != mcp::BundleDigest(files)) {
      why = "the pack's files differ from the directory's";
    } else {
      auto from_pack = mcp::ReplayBackend::Open(out);
      if (!from_pack.ok()) {
        why = "the pack does not open: " + from_pack.status().message();
      } else {
        why = Difference(**from_dir, **from_pack);
      }
    }
    std::error_code ec;
    if (!why.empty()) {
      fs::remove(out, ec);
      return why;
    }
    *packed_bytes = fs::file_size(out, ec);
    if (!keep_directory) {
      fs::remove_all(dir, ec);
      if (ec) return "packed, but the directory was not removed: " + ec.message();
    }
    return "";
  }

  int Unpack() {
    std::error_code ec;
    if (fs::exists(unpack_to, ec)) return Fail(unpack_to + " exists: unpack into a new directory");
    const mcp::BundleLocation where = mcp::LocateBundle(unpack_from);
    if (where.kind != mcp::BundleLocation::Kind::kPack) {
      return Fail("no pack at " + unpack_from + " (nor " + unpack_from + mcp::kBundlePackSuffix + ")");
    }
    base::Result<mcp::BundleFiles> files = mcp::ReadPack(where.path);
    if (!files.ok()) return Fail(files.status().message());
    if (base::Status st = mcp::WriteBundleDirectory(*files, unpack_to); !st.ok()) {
      return Fail(st.message());
    }
    std::cout << unpack_to << ": " << files->size() << " files, " << Bytes(*files) << " bytes, "
              << mcp::BundleDigest(*files) << "\n";
    return 0;
  }

  int Digest() {
    int failed = 0;
    for (const std::string& p : digest_paths) {
      const mcp::BundleLocation where = mcp::LocateBundle(p);
      base::Result<mcp::BundleFiles> files = mcp::ReadBundle(p);
      if (!files.ok()) {
        std::cerr << "rca-bench: " << files.status().message() << "\n";
        ++failed;
        continue;
      }
      std::cout << mcp::BundleDigest(*files) << "  "
                << (where.kind == mcp::BundleLocation::Kind::kPack ? "pack" : "directory") << "  "
                << files->size() << " files  " << Bytes(*files) << " bytes  " << where.path << "\n";
    }
    return failed == 0 ? 0 : 1;
  }

  CLI::App* group = nullptr;
  CLI::App* pack = nullptr;
  CLI::App* unpack = nullptr;
  CLI::App* digest = nullptr;
  std::vector<std::string> pack_paths;
  bool pack_all = false;
  bool keep_directory = false;
  std::string unpack_from, unpack_to;
  std::vector<std::string> digest_paths;
};

}  // namespace

std::unique_ptr<CommandGroup> AddBundleCommands(CLI::App& app) {
  return std::make_unique<BundleCommands>(app);
}

}  // namespace slurm_rca::cli
