#include "mcp/backend/bundle_pack.h"

#include <openssl/evp.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace slurm_rca::mcp {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// A path a bundle may hold: relative, non-empty, no empty, "." or ".." part.
bool SafeRelative(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return path.find('\0') == std::string::npos;
}

base::Result<std::string> Gzip(const std::string& in) {
  z_stream z{};
  // 15 + 16: a gzip wrapper; deflate writes its header with no name and a zero time, so the
  // same input always gives the same bytes.
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
    return base::Status::Error("zlib: deflateInit2 failed");
  }
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(in.size())) + 64);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t written = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return base::Status::Error("zlib: deflate did not finish");
  out.resize(written);
  return out;
}

// The gzip stream of `in`, at most `limit` bytes of it; a longer one is an error, never cut.
base::Result<std::string> Gunzip(const std::string& in, std::uint64_t limit) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return base::Status::Error("zlib: inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      std::string why = z.msg ? z.msg : (rc == Z_BUF_ERROR ? "the file ends early" : "damaged");
      inflateEnd(&z);
      return base::Status::InvalidArgument("not an intact gzip stream: " + why);
    }
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > limit) {
      inflateEnd(&z);
      return base::Status::InvalidArgument("unpacks to more than " + std::to_string(limit) +
                                           " bytes");
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      return base::Status::InvalidArgument("not an intact gzip stream: the file ends early");
    }
  }
  const bool trailing = z.avail_in != 0;
  inflateEnd(&z);
  if (trailing) return base::Status::InvalidArgument("bytes after the gzip stream");
  return out;
}

base::Result<std::string> ReadWhole(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return base::Status::IoError("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return base::Status::IoError("cannot read " + path);
  return ss.str();
}

}  // namespace

std::string Sha256OfBytes(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, sha256 ? sha256 : EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

BundleLocation LocateBundle(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / "manifest.json", ec)) {
    return {BundleLocation::Kind::kDirectory, path};
  }
  if (fs::is_regular_file(path, ec)) return {BundleLocation::Kind::kPack, path};
  if (fs::is_regular_file(path + kBundlePackSuffix, ec)) {
    return {BundleLocation::Kind::kPack, path + kBundlePackSuffix};
  }
  return {BundleLocation::Kind::kNone, path};
}

bool BundleExists(const std::string& path) {
  return LocateBundle(path).kind != BundleLocation::Kind::kNone;
}

base::Result<BundleFiles> ReadBundleDirectory(const std::string& dir) {
  BundleFiles files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec) return base::Status::IoError("cannot read " + dir + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return base::Status::IoError("cannot read " + dir + ": " + ec.message());
    const fs::directory_entry& e = *it;
    if (e.is_symlink(ec)) {
      return base::Status::InvalidArgument(e.path().string() +
                                           ": a symbolic link (a bundle holds regular files only)");
    }
    if (e.is_directory(ec)) continue;
    if (!e.is_regular_file(ec)) {
      return base::Status::InvalidArgument(e.path().string() + ": not a regular file");
    }
    const std::string rel = fs::relative(e.path(), dir, ec).generic_string();
    if (ec || !SafeRelative(rel)) {
      return base::Status::InvalidArgument(e.path().string() + ": not a path inside " + dir);
    }
    base::Result<std::string> bytes = ReadWhole(e.path().string());
    if (!bytes.ok()) return bytes.status();
    files.emplace(rel, std::move(bytes).value());
  }
  if (!files.count("manifest.json")) {
    return base::Status::IoError(dir + ": no manifest.json (is it an evidence bundle?)");
  }
  return files;
}

base::Result<BundleFiles> ReadPack(const std::string& file) {
  auto bad = [&](const std::string& why) {
    return base::Status::InvalidArgument(file + ": " + why);
  };
  base::Result<std::string> raw = ReadWhole(file);
  if (!raw.ok()) return raw.status();
  base::Result<std::string> unpacked = Gunzip(*raw, kMaxPackBytes + kMaxPackIndexBytes);
  if (!unpacked.ok()) return bad(unpacked.status().message());
  const std::string& all = *unpacked;
  const std::size_t nl = all.find('\n');
  if (nl == std::string::npos || nl > kMaxPackIndexBytes) {
    return bad("no index line (is it an evidence pack?)");
  }
  Json index = Json::parse(all.substr(0, nl), nullptr, false);
  if (index.is_discarded() || !index.is_object()) return bad("the index line is not a JSON object");
  for (const auto& [key, value] : index.items()) {
    if (key != "format" && key != "files" && key != "blobs") {
      return bad("index: unknown field \"" + key + "\"");
    }
  }
  if (!index.contains("format") || index["format"] != kBundlePackFormat) {
    return bad(std::string("index: format is not ") + kBundlePackFormat);
  }
  if (!index.contains("files") || !index["files"].is_object()) {
    return bad("index: files must be an object of path to sha256");
  }
  if (!index.contains("blobs") || !index["blobs"].is_array()) {
    return bad("index: blobs must be an array");
  }
  // The blobs, in order, each its bytes checked against its size and digest.
  std::map<std::string, std::string> blobs;
  std::size_t at = nl + 1;
  const Json& list = index["blobs"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& b = list[i];
    const std::string where = "index: blobs[" + std::to_string(i) + "]";
    if (!b.is_object() || b.size() != 2 || !b.contains("sha256") || !b["sha256"].is_string() ||
        !b.contains("bytes") || !b["bytes"].is_number_unsigned()) {
      return bad(where + ": expected {\"sha256\": string, \"bytes\": non-negative integer}");
    }
    const std::string sha = b["sha256"].get<std::string>();
    const std::uint64_t n = b["bytes"].get<std::uint64_t>();
    if (n > all.size() - at) return bad(where + ": " + std::to_string(n) + " bytes, past the end");
    std::string bytes = all.substr(at, n);
    at += n;
    if (Sha256OfBytes(bytes) != sha) return bad(where + ": its bytes do not have SHA-256 " + sha);
    if (!blobs.emplace(sha, std::move(bytes)).second) return bad(where + ": " + sha + " twice");
  }
  if (at != all.size()) {
    return bad(std::to_string(all.size() - at) + " bytes after the last blob");
  }
  BundleFiles files;
  std::set<std::string> used;
  for (const auto& [path, sha] : index["files"].items()) {
    if (!SafeRelative(path)) return bad("index: files: \"" + path + "\" is not a path inside a bundle");
    if (!sha.is_string()) return bad("index: files[\"" + path + "\"]: expected a sha256 string");
    auto it = blobs.find(sha.get<std::string>());
    if (it == blobs.end()) return bad("index: files[\"" + path + "\"]: no blob " + sha.get<std::string>());
    used.insert(it->first);
    files.emplace(path, it->second);
  }
  if (used.size() != blobs.size()) return bad("a blob no file names");
  if (!files.count("manifest.json")) return bad("no manifest.json in the pack");
  return files;
}

base::Result<BundleFiles> ReadBundle(const std::string& path) {
  const BundleLocation where = LocateBundle(path);
  switch (where.kind) {
    case BundleLocation::Kind::kDirectory:
      return ReadBundleDirectory(where.path);
    case BundleLocation::Kind::kPack:
      return ReadPack(where.path);
    case BundleLocation::Kind::kNone:
      break;
  }
  return base::Status::IoError("no evidence bundle at " + path + " (neither a directory with "
                               "manifest.json nor a pack " + path + kBundlePackSuffix + ")");
}

base::Result<std::string> ReadFileThroughBundles(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return ReadWhole(path);
  // The longest directory prefix that names a pack: fixtures/busy/S03-y/reads/x tries
  // fixtures/busy/S03-y/reads, then fixtures/busy/S03-y, ...
  for (std::size_t cut = path.rfind('/'); cut != std::string::npos && cut > 0;
       cut = path.rfind('/', cut - 1)) {
    const std::string bundle = path.substr(0, cut);
    if (!fs::is_regular_file(bundle + kBundlePackSuffix, ec)) continue;
    base::Result<BundleFiles> files = ReadPack(bundle + kBundlePackSuffix);
    if (!files.ok()) return files.status();
    auto it = files->find(path.substr(cut + 1));
    if (it == files->end()) {
      return base::Status::IoError("no file " + path.substr(cut + 1) + " in the pack " + bundle +
                                   kBundlePackSuffix);
    }
    return it->second;
  }
  return base::Status::IoError("no file " + path);
}

base::Result<std::string> PackBytes(const BundleFiles& files) {
  // Ordered: the format first, so that `zcat PACK | head -c 200` says what the file is.
  using Ordered = nlohmann::ordered_json;
  Ordered names = Ordered::object();
  std::map<std::string, const std::string*> blobs;  // sha256 -> bytes, in digest order
  for (const auto& [path, bytes] : files) {
    if (!SafeRelative(path)) {
      return base::Status::InvalidArgument("\"" + path + "\" is not a path inside a bundle");
    }
    const std::string sha = Sha256OfBytes(bytes);
    names[path] = sha;
    blobs.emplace(sha, &bytes);
  }
  Ordered list = Ordered::array();
  std::string body;
  for (const auto& [sha, bytes] : blobs) {
    list.push_back({{"sha256", sha}, {"bytes", bytes->size()}});
    body += *bytes;
  }
  Ordered index = {{"format", kBundlePackFormat}, {"files", names}, {"blobs", list}};
  return Gzip(index.dump() + "\n" + body);
}

base::Status WritePack(const BundleFiles& files, const std::string& file) {
  base::Result<std::string> bytes = PackBytes(files);
  if (!bytes.ok()) return bytes.status();
  const std::string tmp = file + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return base::Status::IoError("cannot write " + tmp);
    }
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return base::Status::IoError("cannot move the pack to " + file + ": " + ec.message());
  }
  return {};
}

base::Status WriteBundleDirectory(const BundleFiles& files, const std::string& dir) {
  for (const auto& [path, bytes] : files) {
    if (!SafeRelative(path)) {
      return base::Status::InvalidArgument("\"" + path + "\" is not a path inside a bundle");
    }
    const fs::path full = fs::path(dir) / path;
    std::error_code ec;
    fs::create_directories(full.parent_path(), ec);
    if (ec) return base::Status::IoError("cannot create " + full.parent_path().string());
    std::ofstream out(full, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) return base::Status::IoError("cannot write " + full.string());
  }
  return {};
}

std::string BundleDigest(const BundleFiles& files) {
  std::string text;
  for (const auto& [path, bytes] : files) {
    text += path;
    text += '\0';
    text += Sha256OfBytes(bytes);
    text += '\n';
  }
  return "sha256:" + Sha256OfBytes(text);
}

}  // namespace slurm_rca::mcp
