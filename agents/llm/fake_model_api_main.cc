// TEST DOUBLE. fake_model_api: FakeModelServer as a process, so that shell tests can point
// `rca-bench run --backend openai` at it; never a real model, only 127.0.0.1.
//
//   fake_model_api PORT_FILE [FIRST_429 [RETRY_AFTER_S]]
//
// Writes its port to PORT_FILE (whole, through a rename) and serves until SIGTERM or SIGINT. The
// first FIRST_429 requests (default 0) are answered 429 with Retry-After RETRY_AFTER_S (default
// 1); every other request in the OpenAI shape with a submit_diagnosis of db.mysql whose confidence
// is a digest of the conversation's first user message, so that each task gets its own answer
// however requests are interleaved; 100 prompt and 10 completion tokens.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "agents/llm/fake_model_server.h"

namespace {

using slurm_rca::agents::FakeModelServer;

FakeModelServer::Response Answer(const FakeModelServer::Request& req) {
  std::string ticket;
  if (req.json.is_object() && req.json.contains("messages") && req.json["messages"].is_array()) {
    for (const auto& m : req.json["messages"]) {
      if (m.is_object() && m.value("role", "") == "user" && m.contains("content") &&
          m["content"].is_string()) {
        ticket = m["content"].get<std::string>();
        break;
      }
    }
  }
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : ticket) h = (h ^ c) * 16777619u;
  double confidence = static_cast<double>(5 + h % 90) / 100.0;
  return {200, FakeModelServer::OpenAiReply(
                   "", {{"c1", "submit_diagnosis", {{"root_cause", "db.mysql"}, {"confidence", confidence}}}},
                   100, 10)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: fake_model_api PORT_FILE [FIRST_429 [RETRY_AFTER_S]]\n";
    return 2;
  }
  const std::string port_file = argv[1];
  const int first_429 = argc > 2 ? std::stoi(argv[2]) : 0;
  const std::string retry_after = argc > 3 ? argv[3] : "1";
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before the server's threads start
  FakeModelServer server;
  if (!server.ok()) {
    std::cerr << "fake_model_api: cannot listen on 127.0.0.1\n";
    return 1;
  }
  for (int i = 0; i < first_429; ++i) {
    server.Enqueue({429, R"({"error":"fake rate limit"})", {{"Retry-After", retry_after}}});
  }
  server.SetResponder(Answer);
  {
    std::ofstream out(port_file + ".tmp");
    out << server.port() << "\n";
  }
  if (std::rename((port_file + ".tmp").c_str(), port_file.c_str()) != 0) return 1;
  int sig = 0;
  sigwait(&stop, &sig);
  std::cerr << "fake_model_api: " << server.requests().size() << " requests\n";
  return 0;
}
