#include "mcp/backend/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "base/time.h"

namespace slurm_rca::mcp {

std::string AuditTimeNow() {
  return base::IsoUtc(std::chrono::system_clock::now(), /*millis=*/true);
}

base::Result<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
  if (fd < 0) {
    return base::Status::IoError("cannot open audit log " + path + ": " + std::strerror(errno));
  }
  // Stdout carries the stdio transport's messages: an audit line there would corrupt them.
  struct stat mine, out;
  if (::fstat(fd, &mine) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 && mine.st_dev == out.st_dev &&
      mine.st_ino == out.st_ino && !(S_ISCHR(mine.st_mode) && mine.st_rdev == makedev(1, 3))) {
    ::close(fd);
    return base::Status::InvalidArgument("audit log " + path +
                                         " is this process's stdout, which carries MCP messages");
  }
  return std::unique_ptr<AuditLog>(new AuditLog(fd, true));
}

std::unique_ptr<AuditLog> AuditLog::Stderr() {
  return std::unique_ptr<AuditLog>(new AuditLog(STDERR_FILENO, false));
}

AuditLog::~AuditLog() {
  if (owned_) ::close(fd_);
}

bool AuditLog::Record(const nlohmann::json& entry) {
  if (!entry.is_object()) return false;
  std::string line;
  if (entry.contains("time")) {
    line = entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    nlohmann::json stamped = entry;
    stamped["time"] = AuditTimeNow();
    line = stamped.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  line += '\n';

  std::lock_guard<std::mutex> lock(mu_);
  std::size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

nlohmann::json AuditRecord(std::string_view tool, std::string_view topic, const Evidence& e) {
  nlohmann::json j = nlohmann::json::object();
  j["time"] = AuditTimeNow();
  j["tool"] = std::string(tool);
  j["topic"] = std::string(topic);
  j["argv"] = e.argv;
  j["exit"] = e.exit_code;
  j["duration_ms"] = static_cast<long long>(std::llround(e.seconds * 1000.0));
  j["cached"] = e.cached;
  j["bytes"] = e.out.size();
  j["outcome"] = OutcomeName(e.outcome);
  j["source"] = e.source;
  j["evidence_time"] = e.evidence_time;
  return j;
}

}  // namespace slurm_rca::mcp
