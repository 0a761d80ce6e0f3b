// Packed bundles (bundle_pack.h): a directory packs and unpacks byte for byte with the same
// digest, the replay back-end serves the same evidence from either, and a pack that is damaged
// in any of the ways the reader checks is refused with a message that names the file and why.
#include "mcp/backend/bundle_pack.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mcp/backend/replay_backend.h"
#include "mcp/test_temp_dir.h"
#include "nlohmann/json.hpp"

namespace slurm_rca::mcp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void Write(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
  ASSERT_TRUE(f.good()) << path;
}

// `text` gzipped as a file, with no checks of ours in the way: how a damaged pack is made.
void WriteGzip(const std::string& path, const std::string& text) {
  gzFile g = gzopen(path.c_str(), "wb");
  ASSERT_NE(g, nullptr);
  if (!text.empty()) ASSERT_EQ(gzwrite(g, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(g), Z_OK);
}

json Read(std::vector<std::string> argv, const std::string& out, const std::string& err,
          const std::string& outcome = "ok", int exit_code = 0, const std::string& cause = "") {
  return {{"argv", argv},         {"exit_code", exit_code}, {"outcome", outcome},
          {"duration_ms", 12},    {"timed_out", outcome == "timed_out"},
          {"stdout_file", out},   {"stderr_file", err},     {"cause", cause}};
}

// A two-snapshot bundle whose reads share an empty stderr, and whose sinfo did not change.
BundleFiles SampleBundle() {
  json manifest = {
      {"format", "slurm-rca-evidence/1"},
      {"slurm_version", "22.05.8"},
      {"scenario", "pack-sample"},
      {"recorded_at", "2026-12-05T10:00:00Z"},
      {"snapshots",
       {{{"offset_seconds", -1},
         {"taken_at", "2026-12-05T10:00:00Z"},
         {"reads", {Read({"sinfo"}, "reads/a", "reads/e"), Read({"squeue"}, "reads/b", "reads/e")}}},
        {{"offset_seconds", 30},
         {"taken_at", "2026-12-05T10:00:31Z"},
         {"reads",
          {Read({"sinfo"}, "reads/a", "reads/e"),
           Read({"squeue"}, "reads/e", "reads/c", "failed", 1,
                "squeue exited 1: the read failed; this is not an empty result")}}}}}};
  return {{"manifest.json", manifest.dump(2) + "\n"},
          {"reads/a", "node[1-4] idle\n"},
          {"reads/b", "1001 R\n1002 PD\n"},
          {"reads/c", "squeue: error: Unable to contact slurm controller\n"},
          {"reads/e", ""}};
}

class BundlePackTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing_tools::MakeTempDir("pack"); }
  void TearDown() override { fs::remove_all(dir_); }

  // The pack's index and blobs written raw, then gzipped: for packs the writer would never make.
  std::string Raw(const json& index, const std::string& body) {
    const std::string path = dir_ + "/raw.evidence.gz";
    WriteGzip(path, index.dump() + "\n" + body);
    return path;
  }
  std::string RefusedWith(const std::string& path) {
    base::Result<BundleFiles> r = ReadPack(path);
    EXPECT_FALSE(r.ok()) << path << " was accepted";
    if (r.ok()) return "";
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
    return r.status().message();
  }

  std::string dir_;
};

TEST_F(BundlePackTest, DirectoryPacksAndUnpacksByteForByteWithTheSameDigest) {
  const BundleFiles files = SampleBundle();
  ASSERT_TRUE(WriteBundleDirectory(files, dir_ + "/bundle").ok());
  base::Result<BundleFiles> from_dir = ReadBundleDirectory(dir_ + "/bundle");
  ASSERT_TRUE(from_dir.ok()) << from_dir.status().message();
  EXPECT_EQ(*from_dir, files);

  ASSERT_TRUE(WritePack(*from_dir, dir_ + "/bundle.evidence.gz").ok());
  base::Result<BundleFiles> from_pack = ReadPack(dir_ + "/bundle.evidence.gz");
  ASSERT_TRUE(from_pack.ok()) << from_pack.status().message();
  EXPECT_EQ(*from_pack, files);
  EXPECT_EQ(BundleDigest(*from_pack), BundleDigest(*from_dir));

  ASSERT_TRUE(WriteBundleDirectory(*from_pack, dir_ + "/unpacked").ok());
  base::Result<BundleFiles> again = ReadBundleDirectory(dir_ + "/unpacked");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, files);
}

TEST_F(BundlePackTest, DigestChangesWithAnyByteOrName) {
  const BundleFiles files = SampleBundle();
  BundleFiles byte = files;
  byte["reads/b"][0] = '2';
  BundleFiles name = files;
  name["reads/z"] = name["reads/b"];
  name.erase("reads/b");
  EXPECT_NE(BundleDigest(byte), BundleDigest(files));
  EXPECT_NE(BundleDigest(name), BundleDigest(files));
  EXPECT_EQ(BundleDigest(files).rfind("sha256:", 0), 0u);
}

TEST_F(BundlePackTest, SameFilesGiveTheSameBytesAndSharedContentIsStoredOnce) {
  BundleFiles files = SampleBundle();
  base::Result<std::string> one = PackBytes(files);
  base::Result<std::string> two = PackBytes(files);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(*one, *two);

  // Ten files of one 64 KiB content: one blob, so the pack is about one copy, not ten.
  std::string big;
  for (int i = 0; big.size() < 65536; ++i) big += std::to_string(i * 7919 % 100003) + "\n";
  BundleFiles same = files;
  for (int i = 0; i < 10; ++i) same["reads/same" + std::to_string(i)] = big;
  ASSERT_TRUE(WritePack(same, dir_ + "/same.evidence.gz").ok());
  gzFile g = gzopen((dir_ + "/same.evidence.gz").c_str(), "rb");
  ASSERT_NE(g, nullptr);
  std::string unpacked;
  char buf[8192];
  for (int n; (n = gzread(g, buf, sizeof buf)) > 0;) unpacked.append(buf, n);
  gzclose(g);
  std::size_t bodies = 0;
  for (const auto& [path, bytes] : files) bodies += bytes.size();
  EXPECT_LT(unpacked.size(), big.size() + bodies + 4096) << "the shared content was stored more than once";
  base::Result<BundleFiles> back = ReadPack(dir_ + "/same.evidence.gz");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, same);
}

TEST_F(BundlePackTest, ReplayServesTheSameEvidenceFromThePackAsFromTheDirectory) {
  const BundleFiles files = SampleBundle();
  ASSERT_TRUE(WriteBundleDirectory(files, dir_ + "/b").ok());
  ASSERT_TRUE(WritePack(files, dir_ + "/p" + kBundlePackSuffix).ok());
  auto from_dir = ReplayBackend::Open(dir_ + "/b");
  // Named without its suffix, as fixtures/demo names fixtures/demo.evidence.gz.
  auto from_pack = ReplayBackend::Open(dir_ + "/p");
  ASSERT_TRUE(from_dir.ok()) << from_dir.status().message();
  ASSERT_TRUE(from_pack.ok()) << from_pack.status().message();
  const auto& a = (*from_dir)->snapshots();
  const auto& b = (*from_pack)->snapshots();
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].offset_seconds, b[i].offset_seconds);
    ASSERT_EQ(a[i].reads.size(), b[i].reads.size());
    for (const auto& [argv, e] : a[i].reads) {
      const Evidence& f = b[i].reads.at(argv);
      EXPECT_EQ(e.outcome, f.outcome);
      EXPECT_EQ(e.out, f.out);
      EXPECT_EQ(e.err, f.err);
      EXPECT_EQ(e.cause, f.cause);
      EXPECT_EQ(e.exit_code, f.exit_code);
    }
  }
  EXPECT_EQ((*from_pack)->Read({"squeue"}).outcome, Evidence::Outcome::kFailed);
  EXPECT_EQ((*from_pack)->Read({"sinfo"}).out, "node[1-4] idle\n");
}

TEST_F(BundlePackTest, LocatesADirectoryBeforeAPackAndNamesWhatIsMissing) {
  const BundleFiles files = SampleBundle();
  EXPECT_EQ(LocateBundle(dir_ + "/x").kind, BundleLocation::Kind::kNone);
  EXPECT_FALSE(BundleExists(dir_ + "/x"));
  ASSERT_TRUE(WritePack(files, dir_ + "/x" + kBundlePackSuffix).ok());
  EXPECT_EQ(LocateBundle(dir_ + "/x").kind, BundleLocation::Kind::kPack);
  EXPECT_EQ(LocateBundle(dir_ + "/x").path, dir_ + "/x" + kBundlePackSuffix);
  ASSERT_TRUE(WriteBundleDirectory(files, dir_ + "/x").ok());
  EXPECT_EQ(LocateBundle(dir_ + "/x").kind, BundleLocation::Kind::kDirectory);
  base::Result<BundleFiles> none = ReadBundle(dir_ + "/nowhere");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no evidence bundle at " + dir_ + "/nowhere"),
            std::string::npos);
}

TEST_F(BundlePackTest, AManifestNamingAStreamThePackLacksIsRefusedByReplay) {
  BundleFiles files = SampleBundle();
  files.erase("reads/c");
  ASSERT_TRUE(WritePack(files, dir_ + "/p" + kBundlePackSuffix).ok());
  auto opened = ReplayBackend::Open(dir_ + "/p");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find(":manifest.json: snapshots[1].reads[1].stderr_file"),
            std::string::npos)
      << opened.status().message();
  EXPECT_NE(opened.status().message().find("not in the pack"), std::string::npos);
}

TEST_F(BundlePackTest, DamagedPacksAreRefusedWithTheReason) {
  const std::string good = dir_ + "/good.evidence.gz";
  ASSERT_TRUE(WritePack(SampleBundle(), good).ok());
  std::string bytes;
  {
    std::ifstream f(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  // Cut short, a flipped byte inside the deflate data, garbage after the stream, not gzip.
  Write(dir_ + "/short.evidence.gz", bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(RefusedWith(dir_ + "/short.evidence.gz").find("ends early"), std::string::npos);
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x55;
  Write(dir_ + "/flipped.evidence.gz", flipped);
  EXPECT_NE(RefusedWith(dir_ + "/flipped.evidence.gz").find("not an intact gzip stream"),
            std::string::npos);
  Write(dir_ + "/tail.evidence.gz", bytes + "x");
  EXPECT_NE(RefusedWith(dir_ + "/tail.evidence.gz").find("after the gzip stream"), std::string::npos);
  Write(dir_ + "/plain.evidence.gz", "{\"format\":1}\n");
  EXPECT_NE(RefusedWith(dir_ + "/plain.evidence.gz").find("gzip"), std::string::npos);

  const std::string m = "{}", a = "abc";
  const json blobs = {{{"sha256", Sha256OfBytes(m)}, {"bytes", 2}}, {{"sha256", Sha256OfBytes(a)}, {"bytes", 3}}};
  auto index = [&](json files, json b) {
    return json{{"format", kBundlePackFormat}, {"files", files}, {"blobs", b}};
  };
  const json files = {{"manifest.json", Sha256OfBytes(m)}, {"reads/a", Sha256OfBytes(a)}};
  // The well-formed raw pack is accepted: the refusals below are each for their one fault.
  ASSERT_TRUE(ReadPack(Raw(index(files, blobs), m + a)).ok());
  struct Case {
    json index;
    std::string body;
    std::string says;
  };
  json unknown = index(files, blobs);
  unknown["comment"] = "x";
  json wrong_format = index(files, blobs);
  wrong_format["format"] = "slurm-rca-evidence-pack/9";
  json bad_blob = blobs;
  bad_blob[1]["bytes"] = -3;
  const Case cases[] = {
      {unknown, m + a, "unknown field \"comment\""},
      {wrong_format, m + a, "format is not slurm-rca-evidence-pack/1"},
      {index({{"manifest.json", Sha256OfBytes(m)}, {"../a", Sha256OfBytes(a)}}, blobs), m + a,
       "\"../a\" is not a path inside a bundle"},
      {index({{"manifest.json", Sha256OfBytes(m)}, {"/etc/a", Sha256OfBytes(a)}}, blobs), m + a,
       "\"/etc/a\" is not a path inside a bundle"},
      {index({{"manifest.json", Sha256OfBytes(m)}, {"reads//a", Sha256OfBytes(a)}}, blobs), m + a,
       "not a path inside a bundle"},
      {index({{"manifest.json", Sha256OfBytes(m)}, {"reads/a", Sha256OfBytes("zzz")}}, blobs), m + a,
       "no blob"},
      {index({{"manifest.json", Sha256OfBytes(m)}}, blobs), m + a, "a blob no file names"},
      {index({{"reads/a", Sha256OfBytes(a)}}, json::array({blobs[1]})), a, "no manifest.json"},
      {index(files, blobs), m + "abd", "do not have SHA-256"},
      {index(files, blobs), m + "ab", "past the end"},
      {index(files, blobs), m + a + "!", "1 bytes after the last blob"},
      {index(files, bad_blob), m + a, "expected {\"sha256\""},
      {index(files, json::array({blobs[0], blobs[1], blobs[1]})), m + a + a, "twice"},
  };
  for (const Case& c : cases) {
    const std::string path = Raw(c.index, c.body);
    const std::string why = RefusedWith(path);
    EXPECT_NE(why.find(c.says), std::string::npos) << "want '" << c.says << "', got: " << why;
  }
  Write(dir_ + "/noindex.evidence.gz", "");
  WriteGzip(dir_ + "/noindex.evidence.gz", "no newline at all");
  EXPECT_NE(RefusedWith(dir_ + "/noindex.evidence.gz").find("no index line"), std::string::npos);
}

TEST_F(BundlePackTest, ADirectoryWithASymbolicLinkIsNotPacked) {
  ASSERT_TRUE(WriteBundleDirectory(SampleBundle(), dir_ + "/b").ok());
  fs::create_symlink("/etc/hostname", dir_ + "/b/reads/link");
  base::Result<BundleFiles> r = ReadBundleDirectory(dir_ + "/b");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a symbolic link"), std::string::npos) << r.status().message();
  EXPECT_FALSE(WriteBundleDirectory({{"../escape", "x"}}, dir_ + "/b").ok());
  EXPECT_FALSE(fs::exists(dir_ + "/escape"));
}

// Any files, any bytes (NUL, invalid UTF-8, empty), any sharing: the pack gives them back.
RC_GTEST_PROP(BundlePackProperty, AnyFilesRoundTrip, ()) {
  const auto names = *rc::gen::container<std::vector<std::string>>(
      rc::gen::map(rc::gen::inRange(0, 40), [](int i) { return "reads/" + std::to_string(i); }));
  const auto contents = *rc::gen::container<std::vector<std::string>>(
      rc::gen::container<std::string>(rc::gen::arbitrary<char>()));
  RC_PRE(!contents.empty());
  BundleFiles files = {{"manifest.json", *rc::gen::arbitrary<std::string>()}};
  for (std::size_t i = 0; i < names.size(); ++i) files[names[i]] = contents[i % contents.size()];
  const std::string dir = testing_tools::MakeTempDir("pack-prop");
  const std::string path = dir + "/p.evidence.gz";
  RC_ASSERT(WritePack(files, path).ok());
  base::Result<BundleFiles> back = ReadPack(path);
  fs::remove_all(dir);
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == files);
  RC_ASSERT(BundleDigest(*back) == BundleDigest(files));
}

}  // namespace
}  // namespace slurm_rca::mcp
