#include "mcp/backend/replay_backend.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "base/status.h"
#include "mcp/backend/bundle_pack.h"
#include "mcp/backend/replay_derive.h"
#include "nlohmann/json.hpp"

namespace slurm_rca::mcp {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::size_t kMaxListedArgv = 12;

const char* TypeName(const json& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  return v.type_name();
}

// "2026-11-30T13:14:37Z" or "2026-11-30T13:14:37.123Z".
bool IsIsoUtc(const std::string& s) {
  const std::string shape = "dddd-dd-ddTdd:dd:dd";
  if (s.size() < shape.size() + 1 || s.back() != 'Z') return false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != shape[i]) {
      return false;
    }
  }
  std::string rest = s.substr(shape.size(), s.size() - shape.size() - 1);
  if (rest.empty()) return true;
  if (rest.size() < 2 || rest[0] != '.') return false;
  for (std::size_t i = 1; i < rest.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(rest[i]))) return false;
  }
  return true;
}

std::string FormatOffset(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", seconds);
  return buf;
}

bool ParseOutcome(const std::string& name, Evidence::Outcome* out) {
  for (Evidence::Outcome o :
       {Evidence::Outcome::kOk, Evidence::Outcome::kFailed, Evidence::Outcome::kTimedOut,
        Evidence::Outcome::kRefused, Evidence::Outcome::kUnavailable}) {
    if (name == OutcomeName(o)) {
      *out = o;
      return true;
    }
  }
  return false;
}

// Validates one JSON object against its required and optional keys. Each check returns OK or
// what it found, the message prefixed by the manifest's path; Open stops at the first problem,
// so that is the one reported.
class Checker {
 public:
  explicit Checker(std::string manifest) : manifest_(std::move(manifest)) {}

  base::Status Fail(const std::string& where, const std::string& what,
                    base::Status::Code code = base::Status::Code::kInvalidArgument) const {
    return base::Status(code, manifest_ + ": " + (where.empty() ? "" : where + ": ") + what);
  }

  // Every key of obj is in allowed, every key of required is present.
  base::Status Keys(const json& obj, const std::string& where,
                    const std::set<std::string>& required, const std::set<std::string>& optional) {
    if (!obj.is_object()) {
      return Fail(where, std::string("expected an object, got ") + TypeName(obj));
    }
    for (const std::string& key : required) {
      if (!obj.contains(key)) return Fail(Field(where, key), "missing");
    }
    for (const auto& [key, value] : obj.items()) {
      if (!required.count(key) && !optional.count(key)) {
        std::string allowed;
        for (const auto* set : {&required, &optional}) {
          for (const std::string& k : *set) allowed += (allowed.empty() ? "" : ", ") + k;
        }
        return Fail(Field(where, key), "unknown field (allowed: " + allowed + ")");
      }
    }
    return base::Status();
  }

  base::Status String(const json& obj, const std::string& where, const std::string& key,
                      std::string* out, bool non_empty = true) {
    const json& v = obj.at(key);
    if (!v.is_string()) return Fail(Field(where, key), Expected("a string", v));
    *out = v.get<std::string>();
    if (non_empty && out->empty()) return Fail(Field(where, key), "must not be empty");
    return base::Status();
  }

  base::Status Time(const json& obj, const std::string& where, const std::string& key,
                    std::string* out) {
    if (base::Status st = String(obj, where, key, out); !st.ok()) return st;
    if (!IsIsoUtc(*out)) {
      return Fail(Field(where, key),
                  "\"" + *out + "\" is not an ISO 8601 UTC time like 2026-11-30T13:14:37Z");
    }
    return base::Status();
  }

  base::Status Number(const json& obj, const std::string& where, const std::string& key,
                      double* out) {
    const json& v = obj.at(key);
    if (!v.is_number()) return Fail(Field(where, key), Expected("a number", v));
    *out = v.get<double>();
    if (!std::isfinite(*out)) return Fail(Field(where, key), "must be finite");
    return base::Status();
  }

  base::Status Boolean(const json& obj, const std::string& where, const std::string& key,
                       bool* out) {
    const json& v = obj.at(key);
    if (!v.is_boolean()) return Fail(Field(where, key), Expected("a boolean", v));
    *out = v.get<bool>();
    return base::Status();
  }

  static std::string Field(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }
  static std::string Expected(const std::string& what, const json& v) {
    return "expected " + what + ", got " + TypeName(v);
  }

 private:
  std::string manifest_;
};

// The stdout and stderr files the manifest names. Each is read once: reads of several snapshots
// may share a file (an empty stderr, say).
class StreamFiles {
 public:
  // From the bundle's directory, or from a pack's files (already read and checked whole).
  explicit StreamFiles(fs::path root, const BundleFiles* packed = nullptr)
      : root_(std::move(root)), packed_(packed) {}

  // A stream file named by the manifest: relative, inside the bundle, a readable regular file.
  // `field` is where the manifest names it, for the message.
  base::Status Load(const std::string& name, const std::string& field, Checker& check,
                    std::string* out) {
    if (auto it = loaded_.find(name); it != loaded_.end()) {
      *out = it->second;
      return base::Status();
    }
    fs::path rel(name);
    if (rel.is_absolute())
      return check.Fail(field, "\"" + name + "\" must be relative to the bundle");
    for (const fs::path& part : rel) {
      if (part == "..") return check.Fail(field, "\"" + name + "\" must not leave the bundle (..)");
    }
    const fs::path full = root_ / rel;
    if (packed_ != nullptr) {
      auto it = packed_->find(rel.lexically_normal().generic_string());
      if (it == packed_->end()) {
        return check.Fail(field, "cannot read " + name + ": not in the pack " + root_.string(),
                          base::Status::Code::kIoError);
      }
      *out = it->second;
      loaded_.emplace(name, *out);
      return base::Status();
    }
    std::error_code ec;
    if (!fs::is_regular_file(full, ec)) {
      return check.Fail(field,
                        "cannot read " + full.string() + ": " +
                            (ec ? ec.message() : std::string("not a regular file")),
                        base::Status::Code::kIoError);
    }
    std::ifstream f(full, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    if (!f.good() && !f.eof()) {
      return check.Fail(field, "cannot read " + full.string(), base::Status::Code::kIoError);
    }
    *out = ss.str();
    loaded_.emplace(name, *out);
    return base::Status();
  }

 private:
  fs::path root_;
  const BundleFiles* packed_;
  std::map<std::string, std::string> loaded_;  // stream file -> contents
};

// The manifest's top-level fields other than `snapshots`: what the bundle says about itself.
struct BundleHeader {
  std::string slurm_version;
  std::string scenario;
  std::string profile;
  std::string recorded_at;
  std::string trials_json;
};

// Step 1: manifest.json opens and is JSON. A manifest that cannot be opened most often means a
// wrong directory, so the message asks whether `dir` is a bundle at all.
// `packed`: the pack's manifest.json, when the bundle is a pack.
base::Status ParseManifest(const fs::path& path, const std::string& dir, Checker& check,
                           const std::string* packed, json* out) {
  std::stringstream text;
  if (packed != nullptr) {
    text << *packed;
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return check.Fail("", "cannot open (is " + dir + " an evidence bundle?)",
                        base::Status::Code::kIoError);
    }
    text << in.rdbuf();
  }
  try {
    *out = json::parse(text.str());
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number no double holds (1e999): both are bad input,
    // never an exception out of Open.
    return check.Fail("", std::string("not valid JSON: ") + e.what());
  }
  return base::Status();
}

// Step 2a: `format` names a revision this reader knows, and `trials` (the timing of every
// recorded trial) appears only in revision 2, as an object; it is kept as JSON text.
base::Status ReadFormat(const json& m, Checker& check, std::string* trials_json) {
  std::string format;
  if (base::Status st = check.String(m, "", "format", &format); !st.ok()) return st;
  if (format != kEvidenceBundleFormat && format != kEvidenceBundleFormat2) {
    return check.Fail("format", "\"" + format + "\" is not " + kEvidenceBundleFormat + " or " +
                                    kEvidenceBundleFormat2);
  }
  if (!m.contains("trials")) return base::Status();
  if (format != kEvidenceBundleFormat2) {
    return check.Fail("trials", std::string("is a field of ") + kEvidenceBundleFormat2);
  }
  if (!m.at("trials").is_object()) {
    return check.Fail("trials", Checker::Expected("an object", m.at("trials")));
  }
  *trials_json = m.at("trials").dump();
  return base::Status();
}

// Step 2b: the background the recording lab had (the benchmark's busy profile), both optional:
// `profile` clean, busy or large (scenarios/SCHEMA.md, "The large profile"), and `seed`, the
// profile's seed (checked, not kept).
base::Status ReadBackground(const json& m, Checker& check, std::string* profile) {
  if (m.contains("profile")) {
    if (base::Status st = check.String(m, "", "profile", profile); !st.ok()) return st;
    if (*profile != "clean" && *profile != "busy" && *profile != "large") {
      return check.Fail("profile", "\"" + *profile + "\" is not clean, busy or large");
    }
  }
  if (m.contains("seed") && !m.at("seed").is_number_unsigned()) {
    return check.Fail("seed", Checker::Expected("a non-negative integer", m.at("seed")));
  }
  return base::Status();
}

// Step 2: the top-level fields, always checked in this order, so that a manifest with several
// problems reports the same one every time; `generator` and `comment` are free text for
// people, checked only to be strings.
base::Status ReadHeader(const json& m, Checker& check, BundleHeader* h) {
  base::Status st = check.Keys(m, "", {"format", "slurm_version", "recorded_at", "snapshots"},
                               {"scenario", "generator", "comment", "trials", "profile", "seed"});
  if (st.ok()) st = ReadFormat(m, check, &h->trials_json);
  if (st.ok()) st = check.String(m, "", "slurm_version", &h->slurm_version);
  if (st.ok()) st = check.Time(m, "", "recorded_at", &h->recorded_at);
  if (st.ok() && m.contains("scenario")) st = check.String(m, "", "scenario", &h->scenario);
  if (st.ok()) st = ReadBackground(m, check, &h->profile);
  for (const char* key : {"generator", "comment"}) {
    std::string unused;
    if (st.ok() && m.contains(key)) st = check.String(m, "", key, &unused, false);
  }
  return st;
}

// Step 5a: `argv`, a non-empty array of strings: the key a replayed Read is looked up by.
base::Status ReadArgv(const json& rj, const std::string& rw, Checker& check,
                      std::vector<std::string>* out) {
  const json& argv = rj.at("argv");
  if (!argv.is_array() || argv.empty()) {
    return check.Fail(rw + ".argv", argv.is_array()
                                        ? "must not be empty"
                                        : Checker::Expected("an array of strings", argv));
  }
  for (std::size_t ai = 0; ai < argv.size(); ++ai) {
    if (!argv[ai].is_string()) {
      return check.Fail(rw + ".argv[" + std::to_string(ai) + "]",
                        Checker::Expected("a string", argv[ai]));
    }
    out->push_back(argv[ai].get<std::string>());
  }
  return base::Status();
}

// Step 5b: how the read ended: `outcome` is one of Evidence's outcomes, and an ok read exited 0
// (a recording that says otherwise is inconsistent, not a success to trust).
base::Status ReadOutcome(const json& rj, const std::string& rw, Checker& check, Evidence* e) {
  const json& exit_code = rj.at("exit_code");
  if (!exit_code.is_number_integer()) {
    return check.Fail(rw + ".exit_code", Checker::Expected("an integer", exit_code));
  }
  e->exit_code = exit_code.get<int>();
  std::string outcome;
  if (base::Status st = check.String(rj, rw, "outcome", &outcome); !st.ok()) return st;
  if (!ParseOutcome(outcome, &e->outcome)) {
    return check.Fail(rw + ".outcome", "\"" + outcome +
                                           "\" is not one of ok, failed, timed_out, refused, "
                                           "unavailable");
  }
  if (e->outcome == Evidence::Outcome::kOk && e->exit_code != 0) {
    return check.Fail(rw + ".exit_code",
                      "an ok read must have exit code 0, got " + std::to_string(e->exit_code));
  }
  return base::Status();
}

// Step 5c: how long the read took, and `timed_out`, which restates the outcome and must agree
// with it (true exactly when the outcome is timed_out).
base::Status ReadTiming(const json& rj, const std::string& rw, Checker& check, Evidence* e) {
  double duration_ms = 0;
  if (base::Status st = check.Number(rj, rw, "duration_ms", &duration_ms); !st.ok()) return st;
  if (duration_ms < 0) return check.Fail(rw + ".duration_ms", "must not be negative");
  e->seconds = duration_ms / 1000.0;
  bool timed_out = false;
  if (base::Status st = check.Boolean(rj, rw, "timed_out", &timed_out); !st.ok()) return st;
  if (timed_out != (e->outcome == Evidence::Outcome::kTimedOut)) {
    return check.Fail(rw + ".timed_out", std::string(timed_out ? "true" : "false") +
                                             " contradicts outcome \"" + OutcomeName(e->outcome) +
                                             "\"");
  }
  return base::Status();
}

// Step 5: one recorded read (`rw` names it: snapshots[i].reads[j]) as the Evidence that Read
// will return for its argv: source "replay", the snapshot's time, the recorded streams. A read
// that is not ok must carry its cause: a failure never replays as an empty answer.
base::Status ReadRecordedRead(const json& rj, const std::string& rw, const std::string& taken_at,
                              StreamFiles& files, Checker& check, Evidence* e) {
  base::Status st = check.Keys(rj, rw,
                               {"argv", "exit_code", "outcome", "duration_ms", "timed_out",
                                "stdout_file", "stderr_file", "cause"},
                               {"stdout_truncated", "topic"});
  if (!st.ok()) return st;
  e->source = "replay";
  e->evidence_time = taken_at;
  st = ReadArgv(rj, rw, check, &e->argv);
  if (st.ok()) st = ReadOutcome(rj, rw, check, e);
  if (st.ok()) st = ReadTiming(rj, rw, check, e);
  if (st.ok() && rj.contains("stdout_truncated")) {
    st = check.Boolean(rj, rw, "stdout_truncated", &e->out_truncated);
  }
  if (!st.ok()) return st;
  std::string topic;  // the topic whose read it was; checked, not kept
  if (rj.contains("topic")) st = check.String(rj, rw, "topic", &topic);
  if (st.ok()) st = check.String(rj, rw, "cause", &e->cause, false);
  if (!st.ok()) return st;
  if (e->outcome != Evidence::Outcome::kOk && e->cause.empty()) {
    return check.Fail(rw + ".cause", std::string("a read with outcome \"") +
                                         OutcomeName(e->outcome) + "\" needs its cause");
  }
  std::string stdout_file, stderr_file;
  st = check.String(rj, rw, "stdout_file", &stdout_file);
  if (st.ok()) st = check.String(rj, rw, "stderr_file", &stderr_file);
  if (st.ok()) st = files.Load(stdout_file, rw + ".stdout_file", check, &e->out);
  if (st.ok()) st = files.Load(stderr_file, rw + ".stderr_file", check, &e->err);
  return st;
}

// Step 4: one snapshot (`where` names it: snapshots[i]). Offsets must increase strictly, so
// that SetOffset's "latest at or before" picks one snapshot; an argv appears at most once, so
// that Read has one answer.
base::Status ReadSnapshot(const json& sj, const std::string& where,
                          const std::vector<ReplayBackend::Snapshot>& earlier, StreamFiles& files,
                          Checker& check, ReplayBackend::Snapshot* snap) {
  base::Status st = check.Keys(sj, where, {"offset_seconds", "taken_at", "reads"}, {"comment"});
  if (st.ok()) st = check.Number(sj, where, "offset_seconds", &snap->offset_seconds);
  if (st.ok()) st = check.Time(sj, where, "taken_at", &snap->taken_at);
  if (!st.ok()) return st;
  if (!earlier.empty() && snap->offset_seconds <= earlier.back().offset_seconds) {
    return check.Fail(where + ".offset_seconds", FormatOffset(snap->offset_seconds) +
                                                     " is not after the previous snapshot's " +
                                                     FormatOffset(earlier.back().offset_seconds) +
                                                     " (offsets must increase)");
  }
  const json& reads = sj.at("reads");
  if (!reads.is_array()) return check.Fail(where + ".reads", Checker::Expected("an array", reads));
  for (std::size_t ri = 0; ri < reads.size(); ++ri) {
    const std::string rw = where + ".reads[" + std::to_string(ri) + "]";
    Evidence e;
    st = ReadRecordedRead(reads[ri], rw, snap->taken_at, files, check, &e);
    if (!st.ok()) return st;
    e.read_id = earlier.size() + 1;  // the snapshot it belongs to: one read per argv in each
    std::vector<std::string> key = e.argv;
    const std::string shown = JoinArgv(key);
    if (!snap->reads.emplace(std::move(key), std::move(e)).second) {
      return check.Fail(rw + ".argv", "\"" + shown + "\" is recorded twice in this snapshot");
    }
  }
  return base::Status();
}

// Step 3: `snapshots` is a non-empty array (a bundle without one could answer nothing), each
// snapshot read in turn.
base::Status ReadSnapshots(const json& m, StreamFiles& files, Checker& check,
                           std::vector<ReplayBackend::Snapshot>* out) {
  const json& snapshots = m.at("snapshots");
  if (!snapshots.is_array()) {
    return check.Fail("snapshots", Checker::Expected("an array", snapshots));
  }
  if (snapshots.empty()) return check.Fail("snapshots", "must hold at least one snapshot");
  for (std::size_t si = 0; si < snapshots.size(); ++si) {
    ReplayBackend::Snapshot snap;
    base::Status st = ReadSnapshot(snapshots[si], "snapshots[" + std::to_string(si) + "]", *out,
                                   files, check, &snap);
    if (!st.ok()) return st;
    out->push_back(std::move(snap));
  }
  return base::Status();
}

}  // namespace

// Reads the whole bundle before building anything, so that a bundle is served entirely or not
// at all: manifest.json (step 1), its header (2), the snapshots (3), each snapshot (4) and each
// recorded read (5), with the stream files the reads name.
base::Result<std::unique_ptr<ReplayBackend>> ReplayBackend::Open(const std::string& dir) {
  // A directory, or a pack (bundle_pack.h): read whole and checked first, then validated exactly
  // as a directory is, its manifest named PACK:manifest.json in messages.
  const BundleLocation where = LocateBundle(dir);
  BundleFiles packed;
  const bool is_pack = where.kind == BundleLocation::Kind::kPack;
  if (is_pack) {
    base::Result<BundleFiles> read = ReadPack(where.path);
    if (!read.ok()) return read.status();
    packed = std::move(read).value();
  }
  const fs::path root(is_pack ? where.path : dir);
  const std::string manifest_name =
      is_pack ? where.path + ":manifest.json" : (root / "manifest.json").string();
  Checker check(manifest_name);
  StreamFiles files(root, is_pack ? &packed : nullptr);
  json manifest;
  BundleHeader header;
  std::vector<Snapshot> snapshots;
  base::Status st = ParseManifest(root / "manifest.json", dir, check,
                                  is_pack ? &packed.at("manifest.json") : nullptr, &manifest);
  if (st.ok()) st = ReadHeader(manifest, check, &header);
  if (st.ok()) st = ReadSnapshots(manifest, files, check, &snapshots);
  if (!st.ok()) return st;

  std::unique_ptr<ReplayBackend> b(new ReplayBackend());
  b->dir_ = dir;
  b->slurm_version_ = std::move(header.slurm_version);
  b->scenario_ = std::move(header.scenario);
  b->profile_ = std::move(header.profile);
  b->recorded_at_ = std::move(header.recorded_at);
  b->trials_json_ = std::move(header.trials_json);
  b->snapshots_ = std::move(snapshots);
  // Until SetOffset says otherwise, serve the last snapshot: the bundle's final state.
  b->selected_ = static_cast<int>(b->snapshots_.size()) - 1;
  b->offset_ = b->snapshots_.back().offset_seconds;
  return b;
}

void ReplayBackend::SetOffset(double offset_seconds) {
  int pick = -1;
  for (std::size_t i = 0; i < snapshots_.size(); ++i) {
    if (snapshots_[i].offset_seconds <= offset_seconds) pick = static_cast<int>(i);
  }
  // The count is odd while the selection changes, so that a reader who saw the same even count
  // before and after its reads knows that they all read one selection (EvidenceVersion).
  std::lock_guard<std::mutex> lock(set_offset_mu_);
  ++offset_sets_;
  offset_ = offset_seconds;
  selected_ = pick;
  ++offset_sets_;
}

std::optional<std::int64_t> ReplayBackend::EvidenceVersion() const {
  const std::int64_t sets = offset_sets_.load();
  if (sets % 2 != 0) return std::nullopt;
  return sets;
}

Evidence ReplayBackend::Read(const std::vector<std::string>& argv) {
  const int index = selected_.load();
  Evidence e;
  e.outcome = Evidence::Outcome::kUnavailable;
  e.source = "replay";
  e.argv = argv;
  const std::string shown = "`" + JoinArgv(argv) + "`";
  if (index < 0) {
    e.cause = shown + ": no snapshot of this bundle was taken at or before offset " +
              FormatOffset(offset_.load()) + " (the first is at " +
              FormatOffset(snapshots_.front().offset_seconds) +
              "); no evidence, not an empty result";
    return e;
  }
  const Snapshot& snap = snapshots_[static_cast<std::size_t>(index)];
  e.evidence_time = snap.taken_at;
  if (auto it = snap.reads.find(argv); it != snap.reads.end()) return it->second;
  // Not recorded: a filter of a whole read this snapshot holds may be derived from it.
  if (std::optional<DerivableRead> d = ParseDerivable(argv)) {
    if (auto whole = snap.reads.find(d->whole); whole != snap.reads.end()) {
      return DeriveRead(*d, whole->second, argv);
    }
  }

  std::string elsewhere;
  for (const Snapshot& s : snapshots_) {
    if (s.reads.count(argv))
      elsewhere += (elsewhere.empty() ? "" : ", ") + FormatOffset(s.offset_seconds);
  }
  if (!elsewhere.empty()) {
    e.cause = shown + " is not recorded in this bundle at offset " +
              FormatOffset(snap.offset_seconds) + " (it is recorded at " + elsewhere +
              "); no evidence, not an empty result";
    return e;
  }
  std::string recorded;
  std::size_t listed = 0;
  for (const auto& [key, value] : snap.reads) {
    if (listed == kMaxListedArgv) break;
    recorded += (recorded.empty() ? "`" : ", `") + JoinArgv(key) + "`";
    ++listed;
  }
  if (snap.reads.size() > listed) {
    recorded += " and " + std::to_string(snap.reads.size() - listed) + " more";
  }
  e.cause = shown + " is not recorded in this bundle (recorded: " +
            (recorded.empty() ? std::string("nothing") : recorded) +
            "); no evidence, not an empty result";
  return e;
}

Evidence ReplayBackend::ReadLog(const std::string& daemon, int lines) {
  Evidence e = Read({"log", daemon});
  if (e.ok() && lines > 0) {
    const std::string& text = e.out;
    std::size_t pos = text.size();
    if (pos > 0 && text.back() == '\n') --pos;
    int seen = 0;
    while (pos > 0) {
      std::size_t nl = text.rfind('\n', pos - 1);
      if (nl == std::string::npos) break;
      if (++seen == lines) {
        e.out = text.substr(nl + 1);
        break;
      }
      pos = nl;
    }
  }
  return e;
}

}  // namespace slurm_rca::mcp
