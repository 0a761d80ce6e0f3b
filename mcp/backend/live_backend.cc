#include "mcp/backend/live_backend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <utility>

#include "base/time.h"

namespace slurm_rca::mcp {

namespace {

using Clock = std::chrono::steady_clock;
using WallClock = std::chrono::system_clock;

constexpr std::size_t kMaxCauseLine = 300;

std::string IsoUtc(WallClock::time_point t) { return base::IsoUtc(t); }

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// "20 s", "0.25 s".
std::string FormatSeconds(std::chrono::milliseconds ms) {
  char buf[32];
  if (ms.count() % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>(ms.count() / 1000));
  } else {
    std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ms.count()) / 1000.0);
  }
  return buf;
}

// What a failed command's stderr says, for a one-sentence cause: its first non-blank line and,
// when there are more, its last one, each trimmed and bounded. A Slurm client may open with a
// hint and end with its verdict; without munged, squeue writes "If munged is up, restart with
// --num-threads=10" first and "slurm_load_jobs error: Protocol authentication error" last, and
// the first line alone would hand an agent the hint instead of the failure.
std::string StderrGist(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    std::size_t b = line.find_first_not_of(" \t\r");
    if (b != std::string::npos) {
      std::size_t e = line.find_last_not_of(" \t\r");
      line = line.substr(b, e - b + 1);
      if (line.size() > kMaxCauseLine) line = line.substr(0, kMaxCauseLine) + "...";
      lines.push_back(std::move(line));
    }
    pos = end + 1;
  }
  if (lines.empty()) return "(no stderr)";
  if (lines.size() == 1 || lines.front() == lines.back()) return lines.front();
  return lines.front() + " ... " + lines.back();
}

constexpr char kNotEmpty[] = ". The read failed; this is not an empty result.";

Evidence NoEvidence(Evidence::Outcome outcome, const std::vector<std::string>& argv,
                    WallClock::time_point when, std::string cause) {
  Evidence e;
  e.outcome = outcome;
  e.source = "live";
  e.evidence_time = IsoUtc(when);
  e.argv = argv;
  e.cause = std::move(cause);
  return e;
}

// `timed_out_note`: a sentence added to the cause when the read timed out ("": none).
Evidence FromRun(const guard::Approved& approved, const guard::RunResult& r,
                 WallClock::time_point started, const std::string& timed_out_note) {
  const std::string& program = approved.program();
  Evidence e;
  e.source = "live";
  e.evidence_time = IsoUtc(started);
  e.argv = approved.argv();
  e.out = r.stdout_data;
  e.err = r.stderr_data;
  e.out_truncated = r.stdout_truncated;
  e.out_bytes = r.stdout_bytes;
  e.seconds = std::chrono::duration<double>(r.duration).count();
  switch (r.outcome) {
    case guard::Outcome::kExited:
      e.exit_code = r.exit_code;
      if (r.exit_code == 0) {
        e.outcome = Evidence::Outcome::kOk;
      } else {
        e.outcome = Evidence::Outcome::kFailed;
        e.cause = program + " exited " + std::to_string(r.exit_code) + ": " +
                  StderrGist(r.stderr_data) + kNotEmpty;
      }
      break;
    case guard::Outcome::kSignaled:
      e.outcome = Evidence::Outcome::kFailed;
      e.cause = program + " was killed by signal " + std::to_string(r.term_signal) + ": " +
                StderrGist(r.stderr_data) + kNotEmpty;
      break;
    case guard::Outcome::kTimedOut:
      e.outcome = Evidence::Outcome::kTimedOut;
      e.cause = program + " " + r.error;
      if (!timed_out_note.empty()) e.cause += ". " + timed_out_note;
      break;
    case guard::Outcome::kNotInstalled:
    case guard::Outcome::kUntrusted:
      e.outcome = Evidence::Outcome::kUnavailable;
      e.cause = r.error;
      break;
    case guard::Outcome::kSpawnFailed:
      e.outcome = Evidence::Outcome::kFailed;
      e.cause = "could not start " + program + ": " + r.error + kNotEmpty;
      break;
  }
  return e;
}

// The last `lines` whole lines of text (all when lines <= 0).
std::string LastLines(const std::string& text, int lines) {
  if (lines <= 0 || text.empty()) return text;
  std::size_t pos = text.size();
  if (text.back() == '\n') --pos;  // the terminator of the last line is not a line break
  int seen = 0;
  while (pos > 0) {
    std::size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text;
    if (++seen == lines) return text.substr(nl + 1);
    pos = nl;
  }
  return text;
}

}  // namespace

struct LiveBackend::Flight {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Evidence evidence;
  Clock::time_point finished;
};

LiveBackend::LiveBackend(LiveOptions options)
    : options_(std::move(options)),
      guard_(guard::GuardOptions{.clusters = options_.clusters}),
      executor_(options_.executor),
      max_concurrent_(std::max(1, options_.max_concurrent)),
      read_timeout_(options_.executor.timeout) {
  for (const guard::Resolution& r : executor_.resolutions()) {
    last_reads_[r.program].program = r.program;
    if (r.problem != guard::Outcome::kExited) last_reads_[r.program].unusable = r.error;
  }
}

std::vector<ProgramReads> LiveBackend::LastReads() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ProgramReads> out;
  for (const auto& [program, reads] : last_reads_) out.push_back(reads);
  return out;
}

void LiveBackend::Remember(const std::string& program, const Evidence& e) {
  std::lock_guard<std::mutex> lock(mu_);
  ProgramReads& r = last_reads_[program];
  r.program = program;
  r.last_read = e.evidence_time;
  r.outcome = OutcomeName(e.outcome);
  r.cause = e.cause;
  r.seconds = e.seconds;
  if (e.ok()) r.last_ok = e.evidence_time;
}

LiveBackend::~LiveBackend() = default;

void LiveBackend::SetReadTimeout(std::chrono::milliseconds timeout, std::string timed_out_note) {
  std::lock_guard<std::mutex> lock(mu_);
  read_timeout_ = timeout;
  timed_out_note_ = std::move(timed_out_note);
}

std::uint64_t LiveBackend::reads_started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return started_;
}

Evidence LiveBackend::ReadAs(const std::vector<std::string>& argv, const std::string& principal) {
  const WallClock::time_point asked = WallClock::now();
  guard::Verdict verdict = guard_.Check(argv);
  if (!verdict.ok()) {
    return NoEvidence(Evidence::Outcome::kRefused, argv, asked, verdict.denial().ToString());
  }
  const bool caching = options_.cache_ttl_seconds > 0;

  std::shared_ptr<Flight> flight;
  bool leader = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::time_point now = Clock::now();
    if (caching) {
      PurgeExpiredLocked(now);
      auto hit = cache_.find(argv);
      if (hit != cache_.end()) {
        Evidence e = hit->second.evidence;
        e.cached = true;
        e.cache_age_seconds = Seconds(now - hit->second.stored);
        if (options_.metrics) options_.metrics->CacheHit();
        return e;
      }
      if (options_.metrics) options_.metrics->CacheMiss();
    }
    auto running = flights_.find(argv);
    if (running != flights_.end()) {
      flight = running->second;
    } else {
      flight = std::make_shared<Flight>();
      flights_.emplace(argv, flight);
      leader = true;
    }
  }

  if (!leader) {
    if (options_.metrics) options_.metrics->SingleFlightMerge();
    std::unique_lock<std::mutex> lock(flight->mu);
    flight->cv.wait(lock, [&] { return flight->done; });
    Evidence e = flight->evidence;
    // A follower started no process: to the audit log and the caller it is a cached answer.
    if (e.outcome != Evidence::Outcome::kRefused && e.outcome != Evidence::Outcome::kUnavailable) {
      e.cached = true;
      e.cache_age_seconds = Seconds(Clock::now() - flight->finished);
    }
    return e;
  }

  Evidence e;
  try {
    // A follower of this flight, whoever asks, gets what the leader got: the same argv reads the
    // same, and a refusal of the leader's fair share reaches a follower as a refusal too (rare:
    // it needs the identical argv at the same moment).
    e = Lead(verdict.approved(), principal);
  } catch (const std::exception& ex) {
    // Only allocation can throw here; the followers must still be released.
    e = NoEvidence(Evidence::Outcome::kFailed, argv, asked,
                   std::string("internal error while reading: ") + ex.what() + kNotEmpty);
  }
  const Clock::time_point finished = Clock::now();
  {
    // Storing and leaving the flight together: a later reader either hits the cache or leads a
    // new flight, never both.
    std::lock_guard<std::mutex> lock(mu_);
    if (caching && e.ok()) cache_[argv] = CacheEntry{e, finished};
    flights_.erase(argv);
  }
  {
    std::lock_guard<std::mutex> lock(flight->mu);
    flight->evidence = e;
    flight->finished = finished;
    flight->done = true;
  }
  flight->cv.notify_all();
  return e;
}

Evidence LiveBackend::Lead(const guard::Approved& approved, const std::string& principal) {
  const std::string& program = approved.program();
  // The read timeout and its note as they are when this read starts (SetReadTimeout).
  const bool nvidia_smi = program == "nvidia-smi";
  std::chrono::milliseconds read_timeout;
  std::string timed_out_note;
  {
    std::lock_guard<std::mutex> lock(mu_);
    read_timeout = read_timeout_;
    if (!nvidia_smi) timed_out_note = timed_out_note_;
  }
  const std::chrono::milliseconds timeout =
      nvidia_smi ? std::min(read_timeout, options_.nvidia_smi_timeout) : read_timeout;
  const std::chrono::milliseconds slot_wait = options_.slot_wait.value_or(read_timeout);
  // A program that cannot run spends neither budget nor slot.
  for (const guard::Resolution& r : executor_.resolutions()) {
    if (r.program == program && r.problem != guard::Outcome::kExited) {
      Evidence e =
          NoEvidence(Evidence::Outcome::kUnavailable, approved.argv(), WallClock::now(), r.error);
      Remember(program, e);
      return e;
    }
  }

  base::Result<Clock::time_point> admitted = Admit(principal);
  if (!admitted.ok()) {
    if (options_.metrics) options_.metrics->BudgetRefusal("per_minute");
    return NoEvidence(Evidence::Outcome::kRefused, approved.argv(), WallClock::now(),
                      admitted.status().message());
  }
  const Clock::time_point start = *admitted;
  if (!AcquireSlot(slot_wait)) {
    GiveBackStart(start);
    if (options_.metrics) options_.metrics->BudgetRefusal("concurrent");
    return NoEvidence(Evidence::Outcome::kRefused, approved.argv(), WallClock::now(),
                      "busy: waited " + FormatSeconds(slot_wait) + " for a free read slot (" +
                          std::to_string(max_concurrent_) +
                          " at once, all held by slower reads, to spare slurmctld); retry "
                          "shortly or reuse the last answer");
  }
  struct SlotHolder {
    LiveBackend* self;
    ~SlotHolder() { self->ReleaseSlot(); }
  } holder{this};
  std::uint64_t read_id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    read_id = ++started_;
  }
  const WallClock::time_point started = WallClock::now();
  // Counted while it runs, and its latency observed whatever it ends in (a throw included).
  struct ReadCounter {
    Metrics* metrics;
    const std::string& program;
    Clock::time_point start = Clock::now();
    ~ReadCounter() {
      if (metrics) metrics->ReadFinished(program, Seconds(Clock::now() - start));
    }
  };
  if (options_.metrics) options_.metrics->ReadStarted(program);
  guard::RunResult result;
  {
    ReadCounter counter{options_.metrics, program};
    result = executor_.Run(approved, timeout);
  }
  Evidence e = FromRun(approved, result, started, timed_out_note);
  e.read_id = read_id;
  Remember(program, e);
  return e;
}

base::Result<Clock::time_point> LiveBackend::Admit(const std::string& principal) {
  const Clock::time_point start = Clock::now();
  if (options_.max_per_minute <= 0) return start;
  const auto window = options_.budget_window;
  const std::string per = " in the last " + FormatSeconds(window);
  std::lock_guard<std::mutex> lock(mu_);
  while (!starts_.empty() && start - starts_.front().when >= window) starts_.pop_front();
  for (auto it = asking_.begin(); it != asking_.end();) {
    it = start - it->second >= window ? asking_.erase(it) : std::next(it);
  }
  if (!principal.empty()) asking_[principal] = start;
  auto retry_in = [&](Clock::time_point oldest) {
    const long long retry = static_cast<long long>(std::ceil(Seconds(window - (start - oldest))));
    return std::to_string(std::max(1LL, retry));
  };
  const std::size_t limit = static_cast<std::size_t>(options_.max_per_minute);
  if (starts_.size() >= limit) {
    return base::Status::Unavailable("rate budget: " + std::to_string(starts_.size()) +
                                     " reads started" + per + "; retry in " +
                                     retry_in(starts_.front().when) +
                                     " s or reuse the last answer");
  }
  if (!principal.empty() && asking_.size() > 1) {
    const std::size_t share = std::max<std::size_t>(1, limit / asking_.size());
    std::size_t mine = 0;
    std::optional<Clock::time_point> oldest;
    for (const Start& s : starts_) {
      if (s.principal != principal) continue;
      ++mine;
      if (!oldest) oldest = s.when;
    }
    if (mine >= share) {
      return base::Status::Unavailable(
          "rate budget: this caller started " + std::to_string(mine) + " of the " +
          std::to_string(limit) + " reads allowed" + per + ", its fair share while " +
          std::to_string(asking_.size()) + " callers read; retry in " + retry_in(*oldest) +
          " s or reuse the last answer");
    }
  }
  starts_.push_back(Start{start, principal});
  return start;
}

void LiveBackend::GiveBackStart(Clock::time_point start) {
  if (options_.max_per_minute <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(starts_.rbegin(), starts_.rend(),
                         [&](const Start& s) { return s.when == start; });
  if (it != starts_.rend()) starts_.erase(std::next(it).base());
}

bool LiveBackend::AcquireSlot(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(slot_mu_);
  if (!slot_cv_.wait_for(lock, wait, [&] { return running_ < max_concurrent_; })) {
    return false;
  }
  ++running_;
  return true;
}

void LiveBackend::ReleaseSlot() {
  {
    std::lock_guard<std::mutex> lock(slot_mu_);
    --running_;
  }
  slot_cv_.notify_one();
}

void LiveBackend::PurgeExpiredLocked(Clock::time_point now) {
  for (auto it = cache_.begin(); it != cache_.end();) {
    if (Seconds(now - it->second.stored) >= options_.cache_ttl_seconds) {
      it = cache_.erase(it);
    } else {
      ++it;
    }
  }
}

Evidence LiveBackend::ReadLog(const std::string& daemon, int lines) {
  const WallClock::time_point asked = WallClock::now();
  const Clock::time_point start = Clock::now();
  const std::vector<std::string> argv = {"log", daemon};
  auto configured = options_.log_files.find(daemon);
  if (configured == options_.log_files.end()) {
    std::string names;
    for (const auto& [name, path] : options_.log_files) {
      names += (names.empty() ? "" : ", ") + name;
    }
    return NoEvidence(Evidence::Outcome::kUnavailable, argv, asked,
                      "no log file is configured for " + daemon +
                          " (configured: " + (names.empty() ? std::string("none") : names) +
                          "); this is not an empty log");
  }
  const std::string& path = configured->second;
  auto unreadable = [&](const std::string& why) {
    return NoEvidence(
        Evidence::Outcome::kUnavailable, argv, asked,
        "cannot read the " + daemon + " log " + path + ": " + why + "; this is not an empty log");
  };

  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return unreadable(std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return unreadable(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return unreadable("not a regular file");

  // Read up to the size seen now: a log that grows meanwhile does not extend this read.
  const off_t size = st.st_size;
  const off_t max_bytes = static_cast<off_t>(options_.max_log_bytes);
  const off_t from = size > max_bytes ? size - max_bytes : 0;
  std::string text(static_cast<std::size_t>(size - from), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::pread(fd, text.data() + got, text.size() - got, from + static_cast<off_t>(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return unreadable(std::strerror(errno));
    }
    if (n == 0) break;  // truncated meanwhile (log rotation)
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  if (from > 0) {
    // The cut fell inside a line: drop the fragment.
    std::size_t nl = text.find('\n');
    text.erase(0, nl == std::string::npos ? text.size() : nl + 1);
  }

  Evidence e;
  e.outcome = Evidence::Outcome::kOk;
  e.source = "live";
  e.evidence_time = IsoUtc(asked);
  e.argv = argv;
  e.exit_code = 0;
  e.out = LastLines(text, lines);
  e.out_truncated = from > 0;
  e.seconds = Seconds(Clock::now() - start);
  return e;
}

Evidence LiveBackend::ReadFabric() {
  const auto started = WallClock::now();
  FabricReport r = mcp::ReadFabric(options_.fabric);
  Evidence e;
  e.source = "live";
  e.evidence_time = IsoUtc(started);
  e.argv = {"files", "fabric"};
  e.seconds = std::chrono::duration<double>(WallClock::now() - started).count();
  if (r.evidence) {
    e.outcome = Evidence::Outcome::kOk;
    e.exit_code = 0;
    e.out = r.report.dump();
  } else {
    e.outcome = Evidence::Outcome::kUnavailable;
    e.cause = r.failure;
  }
  return e;
}

}  // namespace slurm_rca::mcp
