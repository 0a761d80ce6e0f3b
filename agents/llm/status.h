// Errors as values for the agent loop and the model back-ends: a Status (OK, or a code and a
// message) and Result<T> (a value, or the Status that says why there is none).
//
//   Result<Reply> r = backend.Complete(conversation, tools);
//   if (!r.ok()) return Fail(r.status().ToString());   // "http: 401 from https://…: …"
//   Use(r->text);
//
// Nothing in agents/llm throws out of its API; these types carry every failure.
#ifndef SLURM_RCA_AGENTS_LLM_STATUS_H_
#define SLURM_RCA_AGENTS_LLM_STATUS_H_

#include <optional>
#include <string>
#include <utility>

namespace slurm_rca::agents {

class Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,  // a bad configuration: URL, missing key variable, unreadable script
    kUnavailable,      // transport failure, timeout, 429/5xx after every retry
    kHttpError,        // a 4xx other than 429 (no retry)
    kMalformedReply,   // the model's reply is not the JSON the API promises
    kIoError,          // a file could not be read or written
    kDeadlineExceeded,  // the caller's deadline (the run's wall budget) cut the request or a retry
  };

  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status HttpError(std::string m) { return {Code::kHttpError, std::move(m)}; }
  static Status MalformedReply(std::string m) { return {Code::kMalformedReply, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {Code::kDeadlineExceeded, std::move(m)};
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK", or "<kind>: <message>", e.g. "malformed reply: choices[0] is missing".
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// A value, or the (non-OK) Status that says why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status::InvalidArgument("Result built from an OK status");
  }
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }
  const T& operator*() const& { return *value_; }
  T& operator*() & { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_STATUS_H_
