// Status and Result<T>: how a call that can fail says why, as a value. One kind for every module:
// the agents' model back-ends (InvalidArgument ... DeadlineExceeded), the live lab's harness
// (Error: a step that failed, with what it saw) and the MCP client (RpcError: a JSON-RPC error
// object, its code and data kept as the payload).
//
//   base::Result<std::string> r = ReadSomething();
//   if (!r.ok()) return r.status();                     // "io error: /x: No such file ..."
//   use(*r);
//
//   base::Status s = base::Status::RpcError(-32602, "unknown tool", R"({"tool":"x"})");
//   s.rpc_code();   // -32602; s.payload() is the error's data as JSON text
#ifndef SLURM_RCA_BASE_STATUS_H_
#define SLURM_RCA_BASE_STATUS_H_

#include <optional>
#include <string>
#include <utility>

namespace slurm_rca::base {

class Status {
 public:
  enum class Code {
    kOk,
    kFailed,            // a step failed; the message says what was seen (the live lab)
    kInvalidArgument,   // a bad configuration: URL, missing key variable, unreadable script
    kUnavailable,       // transport failure, timeout, 429/5xx after every retry
    kHttpError,         // a 4xx other than 429 (no retry)
    kMalformedReply,    // the peer's reply is not what its protocol promises
    kIoError,           // a file could not be read or written
    kDeadlineExceeded,  // the caller's deadline cut the request or a retry
    kRpcError,          // a JSON-RPC error (or a transport failure named by a JSON-RPC code)
  };

  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Error(std::string m) { return {Code::kFailed, std::move(m)}; }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status HttpError(std::string m) { return {Code::kHttpError, std::move(m)}; }
  static Status MalformedReply(std::string m) { return {Code::kMalformedReply, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {Code::kDeadlineExceeded, std::move(m)};
  }
  // data: the error object's "data" as JSON text ("" when it had none).
  static Status RpcError(int rpc_code, std::string m, std::string data = "") {
    Status s(Code::kRpcError, std::move(m));
    s.rpc_code_ = rpc_code;
    s.payload_ = std::move(data);
    return s;
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  int rpc_code() const { return rpc_code_; }               // kRpcError: the JSON-RPC code; else 0
  const std::string& payload() const { return payload_; }  // kRpcError: its data as JSON text
  // "OK", "<kind>: <message>" (e.g. "malformed reply: choices[0] is missing"), a failed step's
  // message as it is, or "error <rpc code>: <message>".
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  int rpc_code_ = 0;
  std::string payload_;
};

// A value, or the (non-OK) Status that says why there is none. Built from an OK status it holds
// an error that says so, never an empty value that reads like one.
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

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_STATUS_H_
