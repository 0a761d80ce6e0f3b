#include "mcp/backend/replay_backend.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

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

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
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

// Validates one JSON object against its required and optional keys; the first problem wins.
class Checker {
 public:
  Checker(std::string manifest, std::string* error)
      : manifest_(std::move(manifest)), error_(error) {}

  bool Fail(const std::string& where, const std::string& what) {
    *error_ = manifest_ + ": " + (where.empty() ? "" : where + ": ") + what;
    return false;
  }

  // Every key of obj is in allowed, every key of required is present.
  bool Keys(const json& obj, const std::string& where, const std::set<std::string>& required,
            const std::set<std::string>& optional) {
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
    return true;
  }

  bool String(const json& obj, const std::string& where, const std::string& key, std::string* out,
              bool non_empty = true) {
    const json& v = obj.at(key);
    if (!v.is_string()) return Fail(Field(where, key), Expected("a string", v));
    *out = v.get<std::string>();
    if (non_empty && out->empty()) return Fail(Field(where, key), "must not be empty");
    return true;
  }

  bool Time(const json& obj, const std::string& where, const std::string& key, std::string* out) {
    if (!String(obj, where, key, out)) return false;
    if (!IsIsoUtc(*out)) {
      return Fail(Field(where, key),
                  "\"" + *out + "\" is not an ISO 8601 UTC time like 2026-11-30T13:14:37Z");
    }
    return true;
  }

  bool Number(const json& obj, const std::string& where, const std::string& key, double* out) {
    const json& v = obj.at(key);
    if (!v.is_number()) return Fail(Field(where, key), Expected("a number", v));
    *out = v.get<double>();
    if (!std::isfinite(*out)) return Fail(Field(where, key), "must be finite");
    return true;
  }

  static std::string Field(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }
  static std::string Expected(const std::string& what, const json& v) {
    return "expected " + what + ", got " + TypeName(v);
  }

 private:
  std::string manifest_;
  std::string* error_;
};

// A stream file named by the manifest: relative, inside the bundle, a readable regular file.
bool LoadStream(const fs::path& dir, const std::string& name, const std::string& field,
                Checker& check, std::map<std::string, std::string>& loaded, std::string* out) {
  if (auto it = loaded.find(name); it != loaded.end()) {
    *out = it->second;
    return true;
  }
  fs::path rel(name);
  if (rel.is_absolute())
    return check.Fail(field, "\"" + name + "\" must be relative to the bundle");
  for (const fs::path& part : rel) {
    if (part == "..") return check.Fail(field, "\"" + name + "\" must not leave the bundle (..)");
  }
  const fs::path full = dir / rel;
  std::error_code ec;
  if (!fs::is_regular_file(full, ec)) {
    return check.Fail(field, "cannot read " + full.string() + ": " +
                                 (ec ? ec.message() : std::string("not a regular file")));
  }
  std::ifstream f(full, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  if (!f.good() && !f.eof()) return check.Fail(field, "cannot read " + full.string());
  *out = ss.str();
  loaded.emplace(name, *out);
  return true;
}

}  // namespace

std::unique_ptr<ReplayBackend> ReplayBackend::Open(const std::string& dir, std::string* error) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  const fs::path root(dir);
  const fs::path manifest_path = root / "manifest.json";
  Checker check(manifest_path.string(), error);

  std::ifstream in(manifest_path, std::ios::binary);
  if (!in) {
    check.Fail("", "cannot open (is " + dir + " an evidence bundle?)");
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  json m;
  try {
    m = json::parse(text.str());
  } catch (const json::parse_error& e) {
    check.Fail("", std::string("not valid JSON: ") + e.what());
    return nullptr;
  }

  std::unique_ptr<ReplayBackend> b(new ReplayBackend());
  b->dir_ = dir;
  if (!check.Keys(m, "", {"format", "slurm_version", "recorded_at", "snapshots"},
                  {"scenario", "generator", "comment", "trials", "profile", "seed"})) {
    return nullptr;
  }
  std::string format;
  if (!check.String(m, "", "format", &format)) return nullptr;
  if (format != kEvidenceBundleFormat && format != kEvidenceBundleFormat2) {
    check.Fail("format", "\"" + format + "\" is not " + kEvidenceBundleFormat + " or " +
                             kEvidenceBundleFormat2);
    return nullptr;
  }
  if (m.contains("trials")) {
    if (format != kEvidenceBundleFormat2) {
      check.Fail("trials", std::string("is a field of ") + kEvidenceBundleFormat2);
      return nullptr;
    }
    if (!m.at("trials").is_object()) {
      check.Fail("trials", Checker::Expected("an object", m.at("trials")));
      return nullptr;
    }
    b->trials_json_ = m.at("trials").dump();
  }
  if (!check.String(m, "", "slurm_version", &b->slurm_version_) ||
      !check.Time(m, "", "recorded_at", &b->recorded_at_)) {
    return nullptr;
  }
  if (m.contains("scenario") && !check.String(m, "", "scenario", &b->scenario_)) return nullptr;
  // The background the recording lab had (the benchmark's busy profile): clean or busy, and the
  // busy profile's seed.
  if (m.contains("profile")) {
    if (!check.String(m, "", "profile", &b->profile_)) return nullptr;
    if (b->profile_ != "clean" && b->profile_ != "busy") {
      check.Fail("profile", "\"" + b->profile_ + "\" is not clean or busy");
      return nullptr;
    }
  }
  if (m.contains("seed")) {
    const json& seed = m.at("seed");
    if (!seed.is_number_unsigned()) {
      check.Fail("seed", Checker::Expected("a non-negative integer", seed));
      return nullptr;
    }
  }
  for (const char* key : {"generator", "comment"}) {
    std::string unused;
    if (m.contains(key) && !check.String(m, "", key, &unused, false)) return nullptr;
  }
  const json& snapshots = m.at("snapshots");
  if (!snapshots.is_array()) {
    check.Fail("snapshots", Checker::Expected("an array", snapshots));
    return nullptr;
  }
  if (snapshots.empty()) {
    check.Fail("snapshots", "must hold at least one snapshot");
    return nullptr;
  }

  std::map<std::string, std::string> loaded;  // stream file -> contents
  for (std::size_t si = 0; si < snapshots.size(); ++si) {
    const json& sj = snapshots[si];
    const std::string where = "snapshots[" + std::to_string(si) + "]";
    Snapshot snap;
    if (!check.Keys(sj, where, {"offset_seconds", "taken_at", "reads"}, {"comment"}) ||
        !check.Number(sj, where, "offset_seconds", &snap.offset_seconds) ||
        !check.Time(sj, where, "taken_at", &snap.taken_at)) {
      return nullptr;
    }
    if (!b->snapshots_.empty() && snap.offset_seconds <= b->snapshots_.back().offset_seconds) {
      check.Fail(where + ".offset_seconds", FormatOffset(snap.offset_seconds) +
                                                " is not after the previous snapshot's " +
                                                FormatOffset(b->snapshots_.back().offset_seconds) +
                                                " (offsets must increase)");
      return nullptr;
    }
    const json& reads = sj.at("reads");
    if (!reads.is_array()) {
      check.Fail(where + ".reads", Checker::Expected("an array", reads));
      return nullptr;
    }
    for (std::size_t ri = 0; ri < reads.size(); ++ri) {
      const json& rj = reads[ri];
      const std::string rw = where + ".reads[" + std::to_string(ri) + "]";
      if (!check.Keys(rj, rw,
                      {"argv", "exit_code", "outcome", "duration_ms", "timed_out", "stdout_file",
                       "stderr_file", "cause"},
                      {"stdout_truncated", "topic"})) {
        return nullptr;
      }
      Evidence e;
      e.source = "replay";
      e.evidence_time = snap.taken_at;

      const json& argv = rj.at("argv");
      if (!argv.is_array() || argv.empty()) {
        check.Fail(rw + ".argv", argv.is_array() ? "must not be empty"
                                                 : Checker::Expected("an array of strings", argv));
        return nullptr;
      }
      for (std::size_t ai = 0; ai < argv.size(); ++ai) {
        if (!argv[ai].is_string()) {
          check.Fail(rw + ".argv[" + std::to_string(ai) + "]",
                     Checker::Expected("a string", argv[ai]));
          return nullptr;
        }
        e.argv.push_back(argv[ai].get<std::string>());
      }

      const json& exit_code = rj.at("exit_code");
      if (!exit_code.is_number_integer()) {
        check.Fail(rw + ".exit_code", Checker::Expected("an integer", exit_code));
        return nullptr;
      }
      e.exit_code = exit_code.get<int>();

      std::string outcome;
      if (!check.String(rj, rw, "outcome", &outcome)) return nullptr;
      if (!ParseOutcome(outcome, &e.outcome)) {
        check.Fail(rw + ".outcome", "\"" + outcome +
                                        "\" is not one of ok, failed, timed_out, refused, "
                                        "unavailable");
        return nullptr;
      }
      if (e.outcome == Evidence::Outcome::kOk && e.exit_code != 0) {
        check.Fail(rw + ".exit_code",
                   "an ok read must have exit code 0, got " + std::to_string(e.exit_code));
        return nullptr;
      }

      double duration_ms = 0;
      if (!check.Number(rj, rw, "duration_ms", &duration_ms)) return nullptr;
      if (duration_ms < 0) {
        check.Fail(rw + ".duration_ms", "must not be negative");
        return nullptr;
      }
      e.seconds = duration_ms / 1000.0;

      const json& timed_out = rj.at("timed_out");
      if (!timed_out.is_boolean()) {
        check.Fail(rw + ".timed_out", Checker::Expected("a boolean", timed_out));
        return nullptr;
      }
      if (timed_out.get<bool>() != (e.outcome == Evidence::Outcome::kTimedOut)) {
        check.Fail(rw + ".timed_out", std::string(timed_out.get<bool>() ? "true" : "false") +
                                          " contradicts outcome \"" + outcome + "\"");
        return nullptr;
      }
      if (rj.contains("stdout_truncated")) {
        const json& t = rj.at("stdout_truncated");
        if (!t.is_boolean()) {
          check.Fail(rw + ".stdout_truncated", Checker::Expected("a boolean", t));
          return nullptr;
        }
        e.out_truncated = t.get<bool>();
      }
      std::string topic;
      if (rj.contains("topic") && !check.String(rj, rw, "topic", &topic)) return nullptr;

      if (!check.String(rj, rw, "cause", &e.cause, false)) return nullptr;
      if (e.outcome != Evidence::Outcome::kOk && e.cause.empty()) {
        check.Fail(rw + ".cause", "a read with outcome \"" + outcome + "\" needs its cause");
        return nullptr;
      }

      std::string stdout_file, stderr_file;
      if (!check.String(rj, rw, "stdout_file", &stdout_file) ||
          !check.String(rj, rw, "stderr_file", &stderr_file) ||
          !LoadStream(root, stdout_file, rw + ".stdout_file", check, loaded, &e.out) ||
          !LoadStream(root, stderr_file, rw + ".stderr_file", check, loaded, &e.err)) {
        return nullptr;
      }

      std::vector<std::string> key = e.argv;
      const std::string shown = JoinArgv(key);
      if (!snap.reads.emplace(std::move(key), std::move(e)).second) {
        check.Fail(rw + ".argv", "\"" + shown + "\" is recorded twice in this snapshot");
        return nullptr;
      }
    }
    b->snapshots_.push_back(std::move(snap));
  }
  b->selected_ = static_cast<int>(b->snapshots_.size()) - 1;
  b->offset_ = b->snapshots_.back().offset_seconds;
  return b;
}

void ReplayBackend::SetOffset(double offset_seconds) {
  int pick = -1;
  for (std::size_t i = 0; i < snapshots_.size(); ++i) {
    if (snapshots_[i].offset_seconds <= offset_seconds) pick = static_cast<int>(i);
  }
  offset_ = offset_seconds;
  selected_ = pick;
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
