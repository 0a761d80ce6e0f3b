// libFuzzer target for the HTTP request path of slurm-mcp: the input's first byte picks the
// endpoint's options (bit 0: sessions off, bit 1: a bearer token "fuzz-token" is required), the
// rest is what a client sends on one connection. HttpTransport::AnswerBytes runs the HTTP core's
// request parsing (Boost.Beast, mcp/protocol/http_core.h), our Host/Origin/token screen, routing
// and the POST handler on the demo server
// (demo_server.h) without a socket. Aborts on:
//   - output that is not a sequence of HTTP/1.1 responses, or a 5xx (an exception in a handler);
//   - a JSON response body that is not a JSON-RPC message object ("jsonrpc": "2.0");
//   - a 200 JSON body that answers no request (neither result nor error);
//   - a 2026-07-28 transport error (-32020 header mismatch, -32022 unsupported version) on a
//     status other than 400;
//   - a session left behind by a request that was not an initialize answered with 200.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/fuzz/demo_server.h"
#include "mcp/protocol/http_transport.h"
#include "mcp/protocol/jsonrpc.h"

namespace {

using slurm_rca::mcp::Json;

[[noreturn]] void Fail(const char* what, std::string_view output) {
  std::fprintf(stderr, "HTTP INVARIANT: %s\n--- output ---\n%.*s\n", what,
               static_cast<int>(std::min<std::size_t>(output.size(), 4000)), output.data());
  std::abort();
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Checks the responses in `out` one by one; stops at a streamed (chunked) body, whose length the
// headers do not give. `head_sent`: a HEAD request may be among them, and its response carries
// Content-Length but no body.
void CheckResponses(std::string_view out, bool head_sent) {
  const std::string_view all = out;
  while (!out.empty()) {
    if (out.substr(0, 9) != "HTTP/1.1 " || out.size() < 12) Fail("not an HTTP/1.1 response", all);
    const std::string_view code = out.substr(9, 3);
    if (code.find_first_not_of("0123456789") != std::string_view::npos) Fail("bad status", all);
    if (code[0] == '5') Fail("server error", all);
    const std::size_t head_end = out.find("\r\n\r\n");
    if (head_end == std::string_view::npos) Fail("headers not terminated", all);
    const std::string head = Lower(out.substr(0, head_end));
    out.remove_prefix(head_end + 4);
    if (head.find("\r\ntransfer-encoding: chunked") != std::string::npos) return;
    if (head_sent && (out.empty() || out.substr(0, 9) == "HTTP/1.1 ")) continue;
    std::size_t length = 0;
    const std::size_t cl = head.find("\r\ncontent-length: ");
    if (cl != std::string::npos) length = std::strtoul(head.c_str() + cl + 18, nullptr, 10);
    if (length > out.size()) Fail("body shorter than Content-Length", all);
    const std::string_view body = out.substr(0, length);
    out.remove_prefix(length);
    if (head.find("\r\ncontent-type: application/json") == std::string::npos || body.empty()) {
      continue;
    }
    Json j = Json::parse(body, nullptr, false);
    if (!j.is_object() || j.value("jsonrpc", "") != "2.0") Fail("body is no JSON-RPC object", all);
    if (code == "200" && !j.contains("result") && !j.contains("error")) {
      Fail("200 without result or error", all);
    }
    const Json error_code = j.contains("error") && j["error"].is_object() ? j["error"].value("code", Json())
                                                                          : Json();
    if ((error_code == -32020 || error_code == -32022) && code != "400") {
      Fail("a -32020 or -32022 not on HTTP 400", all);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  slurm_rca::mcp::HttpOptions options;
  options.sessions = (data[0] & 1) == 0;
  if (data[0] & 2) options.token = "fuzz-token";
  options.max_body_bytes = 4096;
  slurm_rca::mcp::HttpTransport http(slurm_rca::server::fuzz::DemoServer(), options);
  const std::string_view requests(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string out = http.AnswerBytes(requests);
  CheckResponses(out, requests.find("HEAD") != std::string_view::npos);
  // A session exists only once an initialize was answered with one.
  if (http.session_count() > 0 && out.find("Mcp-Session-Id: ") == std::string::npos) {
    Fail("a session without an Mcp-Session-Id header", out);
  }
  return 0;
}
