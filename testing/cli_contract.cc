#include "testing/cli_contract.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "base/argv_line.h"
#include "base/strings.h"

extern char** environ;

namespace slurm_rca::testing {
namespace {

// Replaces every ${NAME} of s; an unknown name or an unclosed ${ is an error.
base::Result<std::string> Substitute(std::string_view s,
                                     const std::map<std::string, std::string>& vars) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "${") != 0) {
      out += s[i++];
      continue;
    }
    size_t end = s.find('}', i);
    if (end == std::string_view::npos) return base::Status::InvalidArgument("an unclosed ${");
    std::string name(s.substr(i + 2, end - i - 2));
    auto it = vars.find(name);
    if (it == vars.end()) {
      std::string known;
      for (const auto& [k, v] : vars) known += (known.empty() ? "" : ", ") + k;
      return base::Status::InvalidArgument("unknown variable ${" + name + "} (known: " + known +
                                           ")");
    }
    out += it->second;
    i = end + 1;
  }
  return out;
}

// A value as written: bare (trimmed), or one quoted word in the argv syntax when it starts with
// a quote (for leading or trailing blanks). The quote must close at the value's end, so that a
// bare value that merely starts with one ("rule":"x") is an error, not a different text.
base::Result<std::string> Value(std::string_view raw) {
  std::string_view v = base::Trim(raw, base::kBlanks);
  if (v.empty() || (v.front() != '"' && v.front() != '\'')) return std::string(v);
  size_t close = 1;
  while (close < v.size() && v[close] != v.front())
    close += v.front() == '"' && v[close] == '\\' ? 2 : 1;
  if (close + 1 != v.size()) {
    return base::Status::InvalidArgument(
        "a value that starts with a quote must be one quoted text; quote the whole value");
  }
  auto words = base::ParseArgvLine(v);
  if (!words.ok()) return words.status();
  return words->front();
}

// "empty", "one line" or "N lines".
std::optional<int> LineCount(std::string_view v) {
  if (v == "empty") return 0;
  if (v == "one line") return 1;
  if (v.size() > 6 && v.substr(v.size() - 6) == " lines") {
    int n = 0;
    for (char c : v.substr(0, v.size() - 6)) {
      if (c < '0' || c > '9' || n > 100000) return std::nullopt;
      n = n * 10 + (c - '0');
    }
    return n;
  }
  return std::nullopt;
}

// Output as a shell's $(...) keeps it: without its trailing newlines.
std::string_view Chomp(std::string_view s) {
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

int CountLines(std::string_view s) {
  s = Chomp(s);
  return s.empty() ? 0 : static_cast<int>(std::count(s.begin(), s.end(), '\n')) + 1;
}

std::string Excerpt(std::string_view s) {
  s = Chomp(s);
  std::string out(s.substr(0, 400));
  if (s.size() > 400) out += "...";
  return out.empty() ? "(empty)" : out;
}

}  // namespace

base::Result<std::vector<CliCase>> ParseCliCases(std::string_view text, std::string_view file,
                                                 const std::map<std::string, std::string>& vars) {
  std::vector<CliCase> cases;
  std::vector<bool> has_run, has_exit;
  int number = 0;
  auto error = [&](const std::string& reason) {
    return base::Status::InvalidArgument(std::string(file) + ":" + std::to_string(number) + ": " +
                                         reason);
  };
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = base::Trim(text.substr(0, end), " \t\r");
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return error("expected 'key: value'");
    std::string key(base::Trim(line.substr(0, colon), base::kBlanks));
    std::string_view raw = line.substr(colon + 1);
    if (key == "case") {
      std::string description(base::Trim(raw, base::kBlanks));
      if (description.empty()) return error("a case needs a description");
      cases.push_back(
          CliCase{.file = std::string(file), .line = number, .description = description});
      has_run.push_back(false);
      has_exit.push_back(false);
      continue;
    }
    if (cases.empty()) return error("'" + key + ":' before the first 'case:'");
    CliCase& c = cases.back();
    if (key == "run") {
      if (has_run.back()) return error("a second 'run:'");
      auto words = base::ParseArgvLine(raw);
      if (!words.ok()) return error(words.status().message());
      if (words->empty()) return error("'run:' needs an argv");
      for (const std::string& w : *words) {
        base::Result<std::string> s = Substitute(w, vars);
        if (!s.ok()) return error(s.status().message());
        c.argv.push_back(*s);
      }
      has_run.back() = true;
      continue;
    }
    base::Result<std::string> quoted = Value(raw);
    if (!quoted.ok()) return error(quoted.status().message());
    base::Result<std::string> value = Substitute(*quoted, vars);
    if (!value.ok()) return error(value.status().message());
    if (key == "exit") {
      if (value->empty() || value->size() > 3 ||
          value->find_first_not_of("0123456789") != std::string::npos) {
        return error("'exit:' takes a number, not '" + *value + "'");
      }
      c.exit_code = std::stoi(*value);
      has_exit.back() = true;
    } else if (key == "stdout" || key == "stderr") {
      std::optional<int> n = LineCount(*value);
      if (!n) return error("'" + key + ":' takes empty, one line or N lines, not '" + *value + "'");
      (key == "stdout" ? c.stdout_lines : c.stderr_lines) = n;
    } else if (key == "stdout contains" || key == "stderr contains") {
      if (value->empty()) return error("'" + key + ":' needs a text");
      (key == "stdout contains" ? c.stdout_contains : c.stderr_contains).push_back(*value);
    } else if (key == "stdout lines start with") {
      if (value->empty()) return error("'" + key + ":' needs a text");
      c.stdout_line_prefix = *value;
    } else if (key == "stdin") {
      c.stdin_text += *value + "\n";
    } else if (key == "absent") {
      if (value->empty() || value->front() != '/') return error("'absent:' takes an absolute path");
      c.absent.push_back(*value);
    } else if (key == "timeout") {
      char* end_ptr = nullptr;
      c.timeout_s = std::strtod(value->c_str(), &end_ptr);
      if (value->empty() || *end_ptr != '\0' || !(c.timeout_s > 0)) {
        return error("'timeout:' takes seconds, not '" + *value + "'");
      }
    } else {
      return error("unknown key '" + key + "'");
    }
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    number = cases[i].line;
    if (!has_run[i]) return error("the case '" + cases[i].description + "' has no 'run:'");
    if (!has_exit[i]) return error("the case '" + cases[i].description + "' has no 'exit:'");
  }
  return cases;
}

CliOutcome RunCli(const CliCase& c) {
  CliOutcome o;
  const auto start = std::chrono::steady_clock::now();
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    o.error = std::string("pipe: ") + std::strerror(errno);
    return o;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group (killed whole at the timeout), and SIGPIPE back to its default: the
  // runner ignores it, and an ignored signal would stay ignored across exec.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv;
  for (const std::string& a : c.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    o.error = c.argv[0] + ": " + std::strerror(rc);
    return o;
  }
  o.started = true;
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  size_t written = 0;
  int stdin_fd = in[1];
  if (c.stdin_text.empty()) {
    close(stdin_fd);
    stdin_fd = -1;
  }
  int open_outputs = 2;
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(c.timeout_s));
  // Write stdin and read both outputs until both are closed or the deadline passes.
  while (open_outputs > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      o.timed_out = true;
      break;
    }
    pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {stdin_fd, POLLOUT, 0}};
    if (poll(fds, stdin_fd >= 0 ? 3 : 2, static_cast<int>(left.count())) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = read(fds[k].fd, buf, sizeof buf);
      if (n > 0) {
        (k == 0 ? o.out : o.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[k].fd);
        (k == 0 ? out[0] : err[0]) = -1;
        --open_outputs;
      }
    }
    if (stdin_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(stdin_fd, c.stdin_text.data() + written, c.stdin_text.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = c.stdin_text.size();  // EPIPE
      if (written >= c.stdin_text.size()) {
        close(stdin_fd);
        stdin_fd = -1;
      }
    }
  }
  if (o.timed_out) kill(-pid, SIGKILL);
  for (int fd : {stdin_fd, out[0], err[0]}) {
    if (fd >= 0) close(fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

std::vector<std::string> CheckCli(const CliCase& c, const CliOutcome& o) {
  std::vector<std::string> f;
  if (!o.started) return {"could not run: " + o.error};
  if (o.timed_out) {
    f.push_back("still running after " + std::to_string(c.timeout_s) + " s (killed)");
    return f;
  }
  if (o.exit_code != c.exit_code) {
    f.push_back("exit " + std::to_string(o.exit_code) + ", want " + std::to_string(c.exit_code));
  }
  auto lines = [&](const char* name, const std::optional<int>& want, const std::string& text) {
    if (want && CountLines(text) != *want) {
      f.push_back(std::string(name) + ": " + std::to_string(CountLines(text)) + " line(s), want " +
                  std::to_string(*want));
    }
  };
  lines("stdout", c.stdout_lines, o.out);
  lines("stderr", c.stderr_lines, o.err);
  for (const std::string& s : c.stdout_contains) {
    if (Chomp(o.out).find(s) == std::string_view::npos) f.push_back("stdout lacks '" + s + "'");
  }
  for (const std::string& s : c.stderr_contains) {
    if (Chomp(o.err).find(s) == std::string_view::npos) f.push_back("stderr lacks '" + s + "'");
  }
  if (!c.stdout_line_prefix.empty()) {
    for (std::string_view line : base::SplitFields(Chomp(o.out), '\n')) {
      if (line.substr(0, c.stdout_line_prefix.size()) != c.stdout_line_prefix) {
        f.push_back("a stdout line does not start with '" + c.stdout_line_prefix +
                    "': " + std::string(line.substr(0, 200)));
        break;
      }
    }
  }
  for (const std::string& p : c.absent) {
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) f.push_back(p + " exists after the run");
  }
  if (!f.empty()) {
    f.push_back("stdout: " + Excerpt(o.out));
    f.push_back("stderr: " + Excerpt(o.err));
  }
  return f;
}

}  // namespace slurm_rca::testing
