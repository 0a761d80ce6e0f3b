// slurm-mcp's one-shot verbs: the tools run once in this process (tools, describe, overview,
// query), their results as tables for people or as JSON, and call, through the C++ MCP client.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "base/build_info.h"
#include "cli/slurm_mcp/commands.h"
#include "mcp/auth/client_credentials.h"
#include "mcp/protocol/client.h"

namespace slurm_rca::cli::slurm_mcp {
namespace {

using namespace slurm_rca::mcp;

// A ToolContext for the one-shot verbs: no progress, logs to stderr.
class CliContext : public ToolContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(const std::string& level, const Json& data) override {
    std::cerr << "slurm-mcp: [" << level << "] " << data.dump() << "\n";
  }
  bool Cancelled() const override { return false; }
};

std::string Cell(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Rows as an aligned table: the topic's columns in its order, or `first` and then the rest of
// the first row's keys (groups: the group_by columns, then count and the sums).
std::string Table(const Json& rows, const std::string& topic,
                  std::vector<std::string> first = {}) {
  if (!rows.is_array() || rows.empty()) return "(no rows)\n";
  std::vector<std::string> columns;
  if (const Topic* t = first.empty() ? FindTopic(topic) : nullptr) {
    for (const Column& c : t->columns) {
      if (rows[0].contains(c.name)) columns.push_back(c.name);
    }
  }
  if (columns.empty()) {
    columns = std::move(first);
    for (const auto& [key, value] : rows[0].items()) {
      if (std::find(columns.begin(), columns.end(), key) == columns.end()) columns.push_back(key);
    }
  }
  std::vector<size_t> width;
  for (const std::string& c : columns) width.push_back(c.size());
  for (const Json& row : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      width[i] = std::max(width[i], std::min<size_t>(Cell(row.value(columns[i], Json(""))).size(), 40));
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string c = cells[i].substr(0, 40);
      out += c + (i + 1 < cells.size() ? std::string(width[i] - c.size() + 2, ' ') : "");
    }
    return out + "\n";
  };
  std::string out = line(columns);
  for (const Json& row : rows) {
    std::vector<std::string> cells;
    for (const std::string& c : columns) cells.push_back(Cell(row.value(c, Json(""))));
    out += line(cells);
  }
  return out;
}

// A tool result for people: evidence label, then a table (or the text of text topics).
std::string Human(const ToolResult& result) {
  const ToolResult& r = result.Fields();
  if (r.is_error || !r.structured) return ResultText(r);
  const Json& s = *r.structured;
  // The header is the tool's own first line ("queue: at least 1046 rows", "nodes: 6 rows in 2
  // groups by state"): what it says of totals, lower bounds and groups is said once, there.
  const std::string text = ResultText(r);
  const std::string header = text.substr(0, text.find('\n')) + "\n";
  auto section = [&header](const Json& e) {
    std::string out = header;
    if (e.value("outcome", "") != "ok") return out + "NO EVIDENCE: " + e.value("cause", "") + "\n";
    if (e.contains("groups") && e["groups"].is_array()) {
      std::vector<std::string> first = e.value("group_by", std::vector<std::string>{});
      first.push_back("count");
      out += Table(e["groups"], "", std::move(first));
    } else if (e.contains("rows") && !e["rows"].empty()) {
      out += Table(e["rows"], e.value("topic", ""));
    } else if (e.contains("text")) {
      out += e["text"].get<std::string>();
    } else {
      out += "(no rows)\n";
    }
    if (e.value("truncated", false)) out += "[truncated: " + e.value("hint", "") + "]\n";
    return out;
  };
  // The overview's text is its summary, anomalies first (mcp/topics/overview.h).
  if (s.contains("anomalies")) return ResultText(r);
  if (s.contains("outcome")) return section(s);
  return ResultText(r);
}

int RunTool(const std::vector<Tool>& tools, const std::string& name, const Json& args, bool json) {
  for (const Tool& t : tools) {
    if (t.name != name) continue;
    CliContext context;
    const ToolResult result = t.run(args, context);
    const ToolResult& r = result.Fields();
    if (json) {
      Json out = {{"content", r.content}, {"isError", r.is_error}};
      if (r.structured) out["structuredContent"] = *r.structured;
      std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    } else {
      std::cout << Human(r);
    }
    return r.is_error ? 1 : 0;
  }
  return Usage("no tool " + name);
}

}  // namespace

CLI::App* AddTools(CLI::App& app, OneShotOptions& o) {
  CLI::App* tools = app.add_subcommand("tools", "List the tools and the size of tools/list");
  tools->add_flag("--json", o.json, "The tools/list result as JSON");
  tools->add_flag("--conformance-fixtures", o.conformance_fixtures,
                  "Include the conformance fixture tools");
  return tools;
}

CLI::App* AddOverview(CLI::App& app, OneShotOptions& o, BackendFlags& flags) {
  CLI::App* overview = app.add_subcommand("overview", "Nodes, queue and diagnostics, once");
  overview->add_flag("--json", o.json, "The tool result as JSON");
  flags.Add(overview);
  return overview;
}

CLI::App* AddQuery(CLI::App& app, OneShotOptions& o, BackendFlags& flags) {
  CLI::App* query = app.add_subcommand("query", "One topic, once");
  query->add_option("topic", o.topic, "Topic (slurm-mcp describe TOPIC)")->required();
  query->add_option("--filter", o.filters, "NAME=VALUE, repeatable");
  query->add_option("--group-by", o.group_by,
                    "One or two of the topic's columns, comma-separated (e.g. state,reason): "
                    "counts per group instead of rows");
  query->add_flag("--json", o.json, "The tool result as JSON");
  flags.Add(query);
  return query;
}

CLI::App* AddDescribe(CLI::App& app, OneShotOptions& o) {
  CLI::App* describe = app.add_subcommand("describe", "A topic's filters, columns and notes");
  describe->add_option("topic", o.topic, "Topic")->required();
  describe->add_flag("--json", o.json, "The tool result as JSON");
  return describe;
}

CLI::App* AddCall(CLI::App& app, CallOptions& o) {
  CLI::App* call = app.add_subcommand(
      "call", "Call a tool on a running slurm-mcp over HTTP, with the C++ MCP client");
  call->add_option("--http", o.http, "HOST:PORT of the server")->required();
  auto* token_file = call->add_option(
      "--token-file", o.auth.token_file,
      "Send 'Authorization: Bearer <file contents>' (read again after a 401: a token another "
      "process renews)");
  auto* issuer = call->add_option("--oauth-issuer", o.auth.issuer,
                                  "Get access tokens from this OAuth issuer with the client "
                                  "credentials grant (its token endpoint found from its "
                                  "metadata), renewed when they expire or are refused")
                     ->type_name("URL");
  issuer->excludes(token_file);
  call->add_option("--oauth-client-id", o.auth.client_id, "With --oauth-issuer: the client id");
  call->add_option("--oauth-client-secret-file", o.auth.client_secret_file,
                   "With --oauth-issuer: a file holding the client secret")
      ->type_name("FILE");
  call->add_option("--oauth-scope", o.auth.scope,
                   "With --oauth-issuer: the scopes asked for, space-separated (slurm-mcp's: "
                   "slurm:read, slurm:read:own, slurm:logs; default: the client's own)");
  call->add_option("--oauth-resource", o.auth.resource,
                   "With --oauth-issuer: the resource the token is for, the server's "
                   "--auth-audience (default: http(s)://HOST:PORT/mcp of --http)")
      ->type_name("URI");
  call->add_flag("--https", o.https,
                 "Speak TLS (the server's --tls-cert), checking its certificate against the "
                 "system's CAs and its name against HOST");
  call->add_option("--tls-ca", o.tls_ca,
                   "Speak TLS, checking the server's certificate against the CAs in this PEM "
                   "file instead of the system's")
      ->check(CLI::ExistingFile);
  call->add_option("tool", o.tool, "Tool name")->required();
  call->add_option("--args", o.args, "Tool arguments as a JSON object")->capture_default_str();
  call->add_flag("--json", o.json, "The tool result as JSON");
  call->add_option("--era", o.era,
                   "MCP era: auto (2026-07-28 when the server speaks it, else the 2025 "
                   "handshake), modern or legacy")
      ->check(CLI::IsMember({"auto", "modern", "legacy"}))
      ->capture_default_str();
  return call;
}

int ListTools(const OneShotOptions& o) {
  const bool json = o.json;
  std::vector<Tool> tools = BuildTools({.conformance_fixtures = o.conformance_fixtures});
  Json list = Json::array();
  for (const Tool& t : tools) list.push_back(t.Describe());
  Json result = {{"tools", list}};
  if (json) {
    std::cout << result.dump() << "\n";
    return 0;
  }
  for (const Tool& t : tools) std::cout << t.name << " - " << t.title << "\n";
  std::cout << "tools/list result: " << tools.size() << " tools, " << result.dump().size()
            << " bytes of JSON\n";
  return 0;
}

int Describe(const OneShotOptions& o) {
  return RunTool(BuildTools(SurfaceOptions{}), kDescribeTool, {{"topic", o.topic}}, o.json);
}

int Overview(const BackendFlags& flags, const OneShotOptions& o) {
  SurfaceOptions surface;
  surface.caps.max_rows = flags.max_rows;
  base::Result<ToolBackend> opened = OpenToolBackend(flags, surface);
  if (!opened.ok()) return Usage(opened.status().message());
  FitReadTimeout(flags, *opened->backend);
  return RunTool(BuildTools(surface), kOverviewTool, Json::object(), o.json);
}

int Query(const BackendFlags& flags, const OneShotOptions& o) {
  SurfaceOptions surface;
  surface.caps.max_rows = flags.max_rows;
  base::Result<ToolBackend> opened = OpenToolBackend(flags, surface);
  if (!opened.ok()) return Usage(opened.status().message());
  Json f = Json::object();
  for (const std::string& kv : o.filters) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return Usage("--filter takes NAME=VALUE, got '" + kv + "'");
    f[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  Json args = {{"topic", o.topic}};
  if (!f.empty()) args["filters"] = f;
  if (!o.group_by.empty()) args["group_by"] = o.group_by;
  FitReadTimeout(flags, *opened->backend);
  return RunTool(BuildTools(surface), kQueryTool, args, o.json);
}

int Call(const CallOptions& o) {
  base::Result<ListenAddress> address = ParseListenAddress(o.http);
  if (!address.ok()) return Usage("--http " + address.status().message());
  Json args = Json::parse(o.args, nullptr, false);
  if (args.is_discarded() || !args.is_object()) return Usage("--args must be a JSON object");
  const bool tls = o.https || !o.tls_ca.empty();
  const std::string url = std::string(tls ? "https" : "http") + "://" + UrlHost(address->host) +
                          ":" + std::to_string(address->port) + "/mcp";
  base::Result<mcp::auth::TokenFunction> made = mcp::auth::MakeTokenSource(o.auth, url);
  if (!made.ok()) return Usage(made.status().message());
  const TokenSource source = *made;
  auto transport = source ? std::make_unique<HttpClientTransport>(address->host, address->port, "/mcp", source)
                         : std::make_unique<HttpClientTransport>(address->host, address->port, "/mcp");
  if (tls) transport->UseTls(o.tls_ca);
  Client client(std::move(transport));
  const EraMode era = o.era == "modern"   ? EraMode::kModern
                      : o.era == "legacy" ? EraMode::kLegacy
                                          : EraMode::kAuto;
  auto connected = client.Connect("slurm-mcp call", base::Version(), era);
  if (!connected.ok()) {
    std::cerr << "slurm-mcp: cannot connect: " << connected.status().ToString() << "\n";
    return 1;
  }
  auto result = client.CallTool(o.tool, args);
  if (!result.ok()) {
    std::cerr << "slurm-mcp: " << result.status().ToString() << "\n";
    return 1;
  }
  if (o.json) {
    Json out = {{"content", result->content}, {"isError", result->is_error}};
    if (result->structured) out["structuredContent"] = *result->structured;
    std::cout << out.dump() << "\n";
  } else {
    std::cout << result->Text() << "\n";
  }
  return result->is_error ? 1 : 0;
}

}  // namespace slurm_rca::cli::slurm_mcp
