#include "base/time.h"

#include <cstdio>
#include <ctime>

namespace slurm_rca::base {

namespace {

// secs since the epoch as ISO 8601 UTC; with millis (0-999) when it is not negative. No chrono
// arithmetic: a time_t from a node's output can be far from now (year 25), where converting it
// to the clock's nanoseconds would overflow.
std::string Format(std::time_t secs, int millis) {
  std::tm tm{};
  if (::gmtime_r(&secs, &tm) == nullptr) return "";
  char buf[48];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (millis >= 0) {
    std::snprintf(buf + n, sizeof buf - n, ".%03dZ", millis);
  } else {
    std::snprintf(buf + n, sizeof buf - n, "Z");
  }
  return buf;
}

}  // namespace

std::string IsoUtc(std::chrono::system_clock::time_point t, bool millis) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch());
  std::int64_t secs = ms.count() / 1000;
  std::int64_t rem = ms.count() % 1000;
  if (rem < 0) {  // before 1970: floor, so that the seconds and the milliseconds agree
    --secs;
    rem += 1000;
  }
  return Format(static_cast<std::time_t>(secs), millis ? static_cast<int>(rem) : -1);
}

std::string IsoUtcFromUnix(std::int64_t seconds) {
  return Format(static_cast<std::time_t>(seconds), -1);
}

std::string IsoUtcNow() { return IsoUtc(std::chrono::system_clock::now()); }

}  // namespace slurm_rca::base
