// One file per evidence bundle: the pack (fixtures/README.md, "Packed bundles").
//
// A bundle was always a directory: manifest.json and a file per recorded stream. A pack holds
// the same files in one gzip file, content-addressed: a JSON index line, then each distinct
// content once, in the order the index gives.
//
//   {"format":"slurm-rca-evidence-pack/1",
//    "files":{"manifest.json":"<sha256>","reads/36be9715cb155fae":"<sha256>",...},
//    "blobs":[{"sha256":"<sha256>","bytes":1234},...]}\n
//   <the bytes of blob 1><the bytes of blob 2>...
//
// Nothing is re-encoded: a file unpacks byte for byte, so a pack and the directory it was made
// from have the same BundleDigest, and the replay back-end serves the same evidence from either
// (ReplayBackend::Open accepts both). The writer is deterministic: the same files give the same
// bytes, so re-packing an unchanged bundle changes nothing in git.
//
//   base::Result<BundleFiles> files = ReadBundle("fixtures/busy/S04-gpu-ecc-drain");  // either
//   base::Status st = WritePack(*files, "/tmp/S04.evidence.gz");
#ifndef SLURM_RCA_MCP_BACKEND_BUNDLE_PACK_H_
#define SLURM_RCA_MCP_BACKEND_BUNDLE_PACK_H_

#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"

namespace slurm_rca::mcp {

inline constexpr char kBundlePackFormat[] = "slurm-rca-evidence-pack/1";
// A pack is named like its directory would be, plus this: fixtures/busy/S04-gpu-ecc-drain.evidence.gz.
inline constexpr char kBundlePackSuffix[] = ".evidence.gz";
// Bounds on what a pack may unpack to, so that a damaged or hostile file cannot exhaust memory.
inline constexpr std::uint64_t kMaxPackBytes = std::uint64_t{2} << 30;  // all files, unpacked
inline constexpr std::uint64_t kMaxPackIndexBytes = std::uint64_t{64} << 20;

// A bundle's files by their path relative to the bundle ("manifest.json", "reads/..."), verbatim.
using BundleFiles = std::map<std::string, std::string>;

// Where the bundle named `path` is. A directory holding manifest.json, or a regular file (a
// pack), is `path` itself; otherwise `path` + kBundlePackSuffix when that is a regular file, so
// that "fixtures/demo" names the pack fixtures/demo.evidence.gz once the directory is packed.
struct BundleLocation {
  enum class Kind { kNone, kDirectory, kPack };
  Kind kind = Kind::kNone;
  std::string path;  // what was found; `path` as given when kNone
};
BundleLocation LocateBundle(const std::string& path);
// LocateBundle(path).kind != kNone.
bool BundleExists(const std::string& path);

// Every regular file under a bundle directory (symbolic links and other kinds refused, so that
// nothing outside the bundle is read). IoError when the directory cannot be read.
base::Result<BundleFiles> ReadBundleDirectory(const std::string& dir);
// A pack, checked whole: gzip intact, the index as described above and nothing else, every
// path relative and inside the bundle, every file's blob present and every blob's bytes of the
// size and SHA-256 the index says, no blob unreferenced, no byte left over. The message names
// the file and what is wrong.
base::Result<BundleFiles> ReadPack(const std::string& file);
// Either, by LocateBundle.
base::Result<BundleFiles> ReadBundle(const std::string& path);

// The pack's bytes (gzip, level 9, no name or time in its header).
base::Result<std::string> PackBytes(const BundleFiles& files);
// Writes the pack to `file` through a temporary beside it, renamed into place, so that a reader
// never sees half a pack.
base::Status WritePack(const BundleFiles& files, const std::string& file);
// Writes the files under `dir` (created; files already there are overwritten, others kept).
base::Status WriteBundleDirectory(const BundleFiles& files, const std::string& dir);

// A file named by a path through a bundle, as citations name them
// ("fixtures/S01-x/manifest.json", "fixtures/busy/S03-y/reads/05f79977aac00752"): the file itself
// when it exists, else that file of the pack the path passes through (fixtures/S01-x.evidence.gz).
// IoError when neither holds it.
base::Result<std::string> ReadFileThroughBundles(const std::string& path);

// The bundle's identity, whatever holds it: "sha256:" + the SHA-256 of, for each file in path
// order, its path, a NUL, the SHA-256 of its bytes in hex and a newline. A directory and the
// pack made from it have the same digest.
std::string BundleDigest(const BundleFiles& files);

// The SHA-256 of `bytes`, 64 lowercase hex digits.
std::string Sha256OfBytes(const std::string& bytes);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_BACKEND_BUNDLE_PACK_H_
