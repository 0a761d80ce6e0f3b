// Fake tools for the tests of the server, the stdio transport and the client (header only; not
// part of the slurm-mcp tool set).
//
//   Server server(testing_tools::Options());
//
// Tools: echo (structured output), fail (an error result that wrongly sets structured content,
// which the server must drop), throws, progress (reports 1, 2, 2, 1.5, 3 of 3), log (logs at
// debug, info, warning, error), slow (runs until cancelled or `seconds`, default 10, sending
// progress every 20 ms when asked; with deaf, for `seconds` whatever cancellation).
#ifndef SLURM_RCA_MCP_PROTOCOL_TEST_TOOLS_H_
#define SLURM_RCA_MCP_PROTOCOL_TEST_TOOLS_H_

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "mcp/protocol/server.h"

namespace slurm_rca::mcp::testing_tools {

inline std::atomic<int> slow_running{0};  // slow calls now running

// Waits (up to 5 s) until a slow call is running.
inline bool WaitForSlowStart() {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (slow_running.load() == 0) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

inline Json ReadOnly() {
  return {{"readOnlyHint", true},
          {"destructiveHint", false},
          {"idempotentHint", true},
          {"openWorldHint", false}};
}

inline Json Text(const std::string& text) {
  return Json::array({Json{{"type", "text"}, {"text", text}}});
}

inline std::vector<Tool> Tools() {
  std::vector<Tool> tools;
  Tool echo;
  echo.name = "echo";
  echo.title = "Echo";
  echo.description = "Returns its text argument.";
  echo.input_schema = Json::parse(R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"text": {"$ref": "#/$defs/text"}},
    "$defs": {"text": {"type": "string"}},
    "additionalProperties": false})");
  echo.output_schema = Json::parse(
      R"({"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"]})");
  echo.annotations = ReadOnly();
  echo.run = [](const Json& args, ToolContext&) {
    std::string text = args.contains("text") && args["text"].is_string()
                           ? args["text"].get<std::string>()
                           : std::string();
    ToolResult r;
    r.content = Text(text);
    r.structured = Json{{"echo", text}};
    return r;
  };
  tools.push_back(echo);

  Tool fail;
  fail.name = "fail";
  fail.description = "Always fails.";
  fail.input_schema = {{"type", "object"}, {"additionalProperties", false}};
  fail.annotations = ReadOnly();
  fail.run = [](const Json&, ToolContext&) {
    ToolResult r;
    r.content = Text("the fake tool failed");
    r.structured = Json{{"oops", true}};  // wrong on purpose: the server must drop it
    r.is_error = true;
    return r;
  };
  tools.push_back(fail);

  Tool throws;
  throws.name = "throws";
  throws.description = "Throws an exception.";
  throws.input_schema = {{"type", "object"}};
  throws.annotations = ReadOnly();
  throws.run = [](const Json&, ToolContext&) -> ToolResult { throw std::runtime_error("boom"); };
  tools.push_back(throws);

  Tool progress;
  progress.name = "progress";
  progress.description = "Reports progress.";
  progress.input_schema = {{"type", "object"}};
  progress.annotations = ReadOnly();
  progress.run = [](const Json&, ToolContext& context) {
    context.Progress(1, 3, "step 1");
    context.Progress(2, 3, "step 2");
    context.Progress(2, 3, "again");   // not increasing: dropped
    context.Progress(1.5, 3, "back");  // dropped
    context.Progress(3, 3, "done");
    ToolResult r;
    r.content = Text("progressed");
    return r;
  };
  tools.push_back(progress);

  Tool log;
  log.name = "log";
  log.description = "Logs at four levels.";
  log.input_schema = {{"type", "object"}};
  log.annotations = ReadOnly();
  log.run = [](const Json&, ToolContext& context) {
    for (const char* level : {"debug", "info", "warning", "error"}) {
      context.Log(level, Json{{"what", level}});
    }
    ToolResult r;
    r.content = Text("logged");
    return r;
  };
  tools.push_back(log);

  Tool slow;
  slow.name = "slow";
  slow.description = "Runs until cancelled.";
  slow.input_schema = {
      {"type", "object"},
      {"properties", {{"seconds", {{"type", "number"}}}, {"deaf", {{"type", "boolean"}}}}}};
  slow.annotations = ReadOnly();
  slow.run = [](const Json& args, ToolContext& context) {
    ++slow_running;
    double seconds = args.contains("seconds") && args["seconds"].is_number()
                         ? args["seconds"].get<double>()
                         : 10.0;
    auto start = std::chrono::steady_clock::now();
    auto end = start + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
    // deaf: ignores cancellation, as a read stuck in the kernel would, for `seconds`.
    const bool deaf = args.value("deaf", false);
    int step = 0;
    while ((deaf || !context.Cancelled()) && std::chrono::steady_clock::now() < end) {
      context.Progress(++step, std::nullopt, "working");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ToolResult r;
    r.content = Text(context.Cancelled() ? "cancelled" : "finished");
    --slow_running;
    return r;
  };
  tools.push_back(slow);
  return tools;
}

inline ServerOptions Options() {
  ServerOptions options;
  options.name = "slurm-mcp-test";
  options.title = "Test server";
  options.version = "9.9.9";
  options.instructions = "Use the fake tools.";
  options.tools = Tools();
  return options;
}

}  // namespace slurm_rca::mcp::testing_tools

#endif  // SLURM_RCA_MCP_PROTOCOL_TEST_TOOLS_H_
