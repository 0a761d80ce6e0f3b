// UTC timestamps as every file and log of this project writes them: ISO 8601 with a Z.
//
//   base::IsoUtcNow()                      "2026-12-02T12:00:00Z"
//   base::IsoUtc(tp, /*millis=*/true)      "2026-12-02T12:00:00.123Z" (the audit log)
//   base::IsoUtcFromUnix(1764676800)       "2025-12-02T12:00:00Z"
#ifndef SLURM_RCA_BASE_TIME_H_
#define SLURM_RCA_BASE_TIME_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace slurm_rca::base {

std::string IsoUtc(std::chrono::system_clock::time_point t, bool millis = false);
// Any time_t (a node's output may say year 25): formatted without clock arithmetic; "" when
// gmtime cannot represent it.
std::string IsoUtcFromUnix(std::int64_t seconds);
std::string IsoUtcNow();

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_TIME_H_
