// AuditLog: one JSON object per line for every read a tool call makes: the record the harness
// measures time to hypothesis from, and an operator's account of what the agents asked Slurm.
//
// Lines go to a file (opened for append, created 0640) or to stderr; never to stdout, which
// belongs to the stdio transport. Each line is written with a single write(2) under a mutex, so
// concurrent Record calls, and other processes appending to the same file, never interleave
// within a line.
//
//   auto opened = AuditLog::Open("/var/log/slurm-mcp.jsonl");  // base::Result<unique_ptr<...>>
//   if (!opened.ok()) die(opened.status().message());         // names the path and the cause
//   std::unique_ptr<AuditLog> audit = std::move(opened).value();
//   audit->Record(AuditRecord("slurm_query", "queue", evidence));
//   // {"time":"2026-11-30T13:14:37.123Z","tool":"slurm_query","topic":"queue",
//   //  "argv":["squeue",...],"exit":0,"duration_ms":41,"cached":false,"bytes":812,
//   //  "outcome":"ok","source":"live","evidence_time":"2026-11-30T13:14:37Z"}
#ifndef SLURM_RCA_MCP_BACKEND_AUDIT_LOG_H_
#define SLURM_RCA_MCP_BACKEND_AUDIT_LOG_H_

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "mcp/evidence/evidence.h"
#include "nlohmann/json.hpp"

namespace slurm_rca::mcp {

class AuditLog {
 public:
  // Appends to path; never null. An io error when it cannot be opened, an invalid argument when
  // it is this process's stdout (e.g. /dev/stdout or /proc/self/fd/1), unless that is /dev/null.
  static base::Result<std::unique_ptr<AuditLog>> Open(const std::string& path);
  // Writes to stderr.
  static std::unique_ptr<AuditLog> Stderr();

  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Writes entry (an object) as one line, adding "time" (UTC, milliseconds) when it has none.
  // Invalid UTF-8 in strings is replaced, never thrown. False when the write failed or entry is
  // not an object.
  bool Record(const nlohmann::json& entry);

 private:
  AuditLog(int fd, bool owned) : fd_(fd), owned_(owned) {}

  std::mutex mu_;
  int fd_;
  bool owned_;
};

// The audit entry for one read made by a tool call: time, tool, topic, argv, exit, duration_ms,
// cached, bytes (stdout kept), outcome, source, evidence_time.
nlohmann::json AuditRecord(std::string_view tool, std::string_view topic, const Evidence& e);

// Now as ISO 8601 UTC with milliseconds: "2026-11-30T13:14:37.123Z".
std::string AuditTimeNow();

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_BACKEND_AUDIT_LOG_H_
