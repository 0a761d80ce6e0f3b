#include "agents/run_journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace slurm_rca::agents {

using base::Result;
using base::Status;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr char kFormatKey[] = "rca_bench_run_journal";

std::string Short(const Json& v) {
  std::string s = v.dump();
  return s.size() > 160 ? s.substr(0, 160) + "..." : s;
}

Status WriteAll(int fd, const std::string& bytes, const std::string& path) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError("cannot write " + path + ": " + std::strerror(errno));
    off += static_cast<size_t>(n);
  }
  return Status();
}

// Writes the identity line to a new journal through a temporary file and a rename.
Status Create(const std::string& path, const Json& identity) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("cannot create " + tmp + ": " + std::strerror(errno));
  Status st = WriteAll(fd, identity.dump() + "\n", tmp);
  if (st.ok() && ::fdatasync(fd) != 0) {
    st = Status::IoError("cannot sync " + tmp + ": " + std::strerror(errno));
  }
  ::close(fd);
  if (!st.ok()) return st;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IoError("cannot rename " + tmp + ": " + std::strerror(errno));
  }
  return Status();
}

}  // namespace

RunJournal::~RunJournal() {
  if (fd_ >= 0) ::close(fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);  // releases the directory's lock
}

Result<std::unique_ptr<RunJournal>> RunJournal::Open(const std::string& path, const Json& identity,
                                                     bool fresh) {
  std::unique_ptr<RunJournal> j(new RunJournal);
  j->path_ = path;
  Json id = identity;
  id[kFormatKey] = 1;
  std::error_code ec;
  // One run at a time in a directory: a second would run the same task runs and journal them
  // twice. The lock goes with the process (a kill releases it); a file system without flock
  // (ENOLCK, EINVAL) is used unlocked.
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  j->dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (j->dir_fd_ >= 0 && ::flock(j->dir_fd_, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    return Status::InvalidArgument("another rca-bench run is writing " + dir.string() +
                                   " (it holds the directory's lock): wait for it, or use "
                                   "another --out");
  }
  if (fresh || !fs::exists(path, ec)) {
    if (Status st = Create(path, id); !st.ok()) return st;
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::IoError("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    std::string all = text.str();
    // A line cut by a kill has no newline: that task run did not finish.
    const size_t end = all.rfind('\n');
    const size_t whole = end == std::string::npos ? 0 : end + 1;
    if (whole != all.size()) {
      fs::resize_file(path, whole, ec);
      if (ec) return Status::IoError("cannot cut the unfinished last line of " + path);
      all.resize(whole);
    }
    std::istringstream lines(all);
    std::string line;
    int n = 0;
    while (std::getline(lines, line)) {
      ++n;
      Json v = Json::parse(line, nullptr, false);
      if (n == 1) {
        if (!v.is_object() || !v.contains(kFormatKey)) {
          return Status::InvalidArgument(path + " is not an rca-bench run journal");
        }
        for (const auto& [key, want] : id.items()) {
          const Json had = v.value(key, Json());
          if (had != want) {
            return Status::InvalidArgument(
                path + " was written by a run with another " + key + " (" + Short(had) +
                " there, " + Short(want) + " now): a run resumes only with the same suite, "
                "configurations, model and tasks; use another --out, or --fresh to discard it");
          }
        }
        continue;
      }
      if (!v.is_object() || !v.contains("task_id") || !v.contains("answer") ||
          !v["answer"].is_object() || !v.contains("repeat") || !v["repeat"].is_number_integer()) {
        return Status::InvalidArgument(path + " line " + std::to_string(n) +
                                       " is not a finished task run; use --fresh to discard "
                                       "the journal");
      }
      Entry e;
      e.configuration = v.value("configuration", "");
      e.configuration_hash = v.value("configuration_hash", "");
      e.repeat = v["repeat"].get<int>();
      e.task_id = v.value("task_id", "");
      e.answer = v["answer"];
      e.spend = v.value("spend", Json::object());
      e.mcp_calls = v.value("mcp_calls", 0);
      j->entries_[{e.configuration, e.repeat, e.task_id}] = std::move(e);
    }
    if (n == 0) {
      if (Status st = Create(path, id); !st.ok()) return st;
    }
  }
  j->fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (j->fd_ < 0) return Status::IoError("cannot open " + path + ": " + std::strerror(errno));
  return j;
}

const RunJournal::Entry* RunJournal::Find(const std::string& configuration, int repeat,
                                          const std::string& task_id) const {
  auto it = entries_.find({configuration, repeat, task_id});
  return it == entries_.end() ? nullptr : &it->second;
}

Status RunJournal::Append(const Entry& e) {
  Json line = {{"configuration", e.configuration},
               {"configuration_hash", e.configuration_hash},
               {"repeat", e.repeat},
               {"task_id", e.task_id},
               {"answer", e.answer},
               {"spend", e.spend},
               {"mcp_calls", e.mcp_calls}};
  std::lock_guard<std::mutex> lock(mu_);
  if (Status st = WriteAll(fd_, line.dump() + "\n", path_); !st.ok()) return st;
  if (::fdatasync(fd_) != 0) {
    return Status::IoError("cannot sync " + path_ + ": " + std::strerror(errno));
  }
  return Status();
}

}  // namespace slurm_rca::agents
