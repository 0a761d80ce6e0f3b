#include "base/time.h"

#include <cstdio>
#include <ctime>

namespace slurm_rca::base {

std::string IsoUtc(std::chrono::system_clock::time_point t, bool millis) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch());
  std::int64_t secs = ms.count() / 1000;
  std::int64_t rem = ms.count() % 1000;
  if (rem < 0) {  // before 1970: floor, so that the seconds and the milliseconds agree
    --secs;
    rem += 1000;
  }
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[40];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (millis) {
    std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(rem));
  } else {
    std::snprintf(buf + n, sizeof buf - n, "Z");
  }
  return buf;
}

std::string IsoUtcFromUnix(std::int64_t seconds) {
  return IsoUtc(std::chrono::system_clock::time_point(std::chrono::seconds(seconds)));
}

std::string IsoUtcNow() { return IsoUtc(std::chrono::system_clock::now()); }

}  // namespace slurm_rca::base
