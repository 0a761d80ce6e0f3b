#include "base/status.h"

namespace slurm_rca::base {

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kFailed: return message_;
    case Code::kInvalidArgument: return "invalid argument: " + message_;
    case Code::kUnavailable: return "unavailable: " + message_;
    case Code::kHttpError: return "http error: " + message_;
    case Code::kMalformedReply: return "malformed reply: " + message_;
    case Code::kIoError: return "io error: " + message_;
    case Code::kDeadlineExceeded: return "deadline exceeded: " + message_;
    case Code::kRpcError: return "error " + std::to_string(rpc_code_) + ": " + message_;
  }
  return message_;
}

}  // namespace slurm_rca::base
