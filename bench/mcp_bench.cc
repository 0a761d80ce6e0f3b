// mcp_bench: slurm-mcp beside a reference server written with the official TypeScript SDK
// (bench/mcp_reference), both measured in one run by load generators that cost less than the
// servers: wrk over HTTP (keep-alive, a session per connection), a client that parses no JSON
// over stdio, and the C++ mcp::Client over stdio as a second row.
//
//   build/bin/mcp_bench [--seconds 5] [--reps 3] [--rows c8,fleet] [--json FILE]
//                       [--slurm-mcp PATH] [--http-arg ARG]... [--no-reference] [--oauth] [--tls]
//
// The rows, what each figure means and what bounds it: bench/mcp_rows.h and bench/README.md.
// Both servers replay a bundle written at start into a temporary directory: the last snapshot
// of --bundle (fixtures/demo) with its squeue read replaced by 200 generated jobs, so that
// slurm_query nodes is the recorded 6-row answer and slurm_query queue a 200-row one.
// Exit 2 on a bad flag, without wrk, or when the open-file limit cannot be raised for the fleet;
// exit 1 when slurm-mcp could not be measured. Without node or the SDK the reference is
// "not measured" and slurm-mcp's rows are printed.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cjose/cjose.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <ctime>
#include <fstream>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "bench/mcp_harness.h"
#include "bench/mcp_report.h"
#include "bench/mcp_rows.h"
#include "bench/queue_bundle.h"
#include "mcp/backend/bundle_pack.h"

namespace {

namespace fs = std::filesystem;
namespace mcp = slurm_rca::mcp;
namespace bench = slurm_rca::bench;

// --oauth: a throwaway ES256 key (cjose), its JWK Set in DIR/jwks.json and a JWT access token
// signed by it in DIR/token, for slurm-mcp --auth-jwks-file (no issuer is ever contacted).
// The server's extra arguments, or "" and why not.
std::vector<std::string> WriteOAuthFiles(const std::string& dir, std::string* why) {
  const std::string issuer = "https://issuer.invalid", audience = "http://127.0.0.1/mcp";
  cjose_err err{};
  cjose_jwk_t* key = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
  if (!key || !cjose_jwk_set_kid(key, "bench", 5, &err)) {
    *why = "cannot make a key";
    return {};
  }
  char* pub = cjose_jwk_to_json(key, false, &err);
  std::ofstream(dir + "/jwks.json") << "{\"keys\":[" << pub << "]}\n";
  cjose_get_dealloc()(pub);
  const std::string claims = slurm_rca::mcp::Json{{"iss", issuer},
                                                  {"aud", audience},
                                                  {"sub", "mcp-bench"},
                                                  {"scope", "slurm:read"},
                                                  {"iat", std::time(nullptr)},
                                                  {"exp", std::time(nullptr) + 86400}}
                                 .dump();
  cjose_header_t* h = cjose_header_new(&err);
  cjose_header_set(h, CJOSE_HDR_ALG, CJOSE_HDR_ALG_ES256, &err);
  cjose_header_set(h, CJOSE_HDR_KID, "bench", &err);
  cjose_jws_t* jws = cjose_jws_sign(key, h, reinterpret_cast<const uint8_t*>(claims.data()),
                                    claims.size(), &err);
  const char* compact = nullptr;
  if (!jws || !cjose_jws_export(jws, &compact, &err)) {
    *why = "cannot sign a token";
  } else {
    std::ofstream(dir + "/token") << compact << "\n";
  }
  cjose_jws_release(jws);
  cjose_header_release(h);
  cjose_jwk_release(key);
  if (!why->empty()) return {};
  return {"--auth-issuer", issuer, "--auth-audience", audience, "--auth-jwks-file",
          dir + "/jwks.json"};
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "mcp_bench: %s\n", message.c_str());
  return 2;
}

// The TypeScript reference's command prefix, or why it cannot run.
struct Reference {
  std::string node, script, sdk_prefix;
  std::string not_measured;
};

Reference FindReference(std::string node, bool disabled) {
  Reference r;
  const char* cache = std::getenv("SLURM_RCA_NPM_CACHE");
  const char* home = std::getenv("HOME");
  r.sdk_prefix = (cache && *cache ? std::string(cache)
                                  : std::string(home ? home : "") + "/.cache/slurm-rca/npm-peers") +
                 "/sdk";
  r.script = std::string(SLURM_RCA_SOURCE_DIR) + "/bench/mcp_reference/server.mjs";
  r.node = node.empty() ? bench::FindOnPath("node") : node;
  const fs::path sdk = fs::path(r.sdk_prefix) / "node_modules";
  if (disabled) {
    r.not_measured = "--no-reference";
  } else if (r.node.empty()) {
    r.not_measured = "node is not on PATH (apt-get install nodejs npm, or --reference-node PATH)";
  } else if (!fs::is_regular_file(sdk / "@modelcontextprotocol" / "sdk" / "package.json") ||
             !fs::is_directory(sdk / "zod")) {
    r.not_measured =
        "the SDK is not installed in " + r.sdk_prefix + " (run tests/mcp_peers/setup.sh)";
  } else if (!fs::is_regular_file(r.script)) {
    r.not_measured = r.script + " is missing";
  }
  return r;
}

// Held connections live in this process, the server and wrk inherit the limit.
std::string RaiseOpenFiles(rlim_t needed) {
  rlimit l = {};
  getrlimit(RLIMIT_NOFILE, &l);
  if (l.rlim_cur >= needed) return "";
  if (l.rlim_max != RLIM_INFINITY && l.rlim_max < needed) {
    return "the open-file limit is " + std::to_string(l.rlim_max) + " (hard) and the rows need " +
           std::to_string(needed) + ": raise it (ulimit -Hn) or lower --fleet/--slowloris";
  }
  l.rlim_cur = needed;
  if (setrlimit(RLIMIT_NOFILE, &l) != 0) return "setrlimit(RLIMIT_NOFILE) failed";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "mcp_bench: slurm-mcp beside the TypeScript SDK reference (bench/mcp_reference) in one "
      "run; wrk over HTTP, a JSON-free client and mcp::Client over stdio"};
  bench::RunOptions o;
  std::string bundle = std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/demo";
  std::string slurm_mcp, reference_node, json_path, row_list;
  std::vector<std::string> http_args;
  bool no_reference = false, oauth = false, tls = false;
  int slowloris = 256, fleet = 1000;
  app.add_option("--seconds", o.seconds, "Seconds per repetition of a row (whole seconds)")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  app.add_option("--reps", o.reps, "Repetitions of each row; the table gives their median")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup_seconds, "Seconds of unrecorded load per server first")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  app.add_option("--rows", row_list,
                 "Comma-separated rows to run (default: all of stdio, stdio-sdk, c1, c8, c64, "
                 "queue, slowloris, fleet)");
  app.add_option("--queue-jobs", o.queue_jobs, "Rows of the queue answer (at most max_rows, 200)")
      ->check(CLI::Range(1, 200))
      ->capture_default_str();
  app.add_option("--slowloris", slowloris, "Half-open connections held in the slowloris row")
      ->check(CLI::Range(1, 20000))
      ->capture_default_str();
  app.add_option("--fleet", fleet, "Idle keep-alive connections held in the fleet row")
      ->check(CLI::Range(1, 20000))
      ->capture_default_str();
  app.add_option("--bundle", bundle, "Evidence bundle whose last snapshot both servers replay")
      ->capture_default_str();
  app.add_option("--slurm-mcp", slurm_mcp, "The slurm-mcp binary (default: beside mcp_bench)");
  app.add_option("--http-arg", http_args,
                 "An argument added to `slurm-mcp serve --http` (repeatable), e.g. --no-sessions");
  app.add_option("--wrk", o.wrk, "The wrk binary (default: wrk on PATH)");
  app.add_option("--json", json_path, "Also write every repetition to this file as JSON");
  auto* node_opt = app.add_option("--reference-node", reference_node,
                                  "node for the TypeScript reference (default: node on PATH)");
  app.add_flag("--no-reference", no_reference, "Measure slurm-mcp only")->excludes(node_opt);
  app.add_flag("--tls", tls,
               "Also measure slurm-mcp serving https (--tls-cert with the test certificate of "
               "mcp/testdata/tls; server mcp+tls; its wrk rows only: held connections are plain "
               "TCP), and print the cost per call");
  app.add_flag("--oauth", oauth,
               "Also measure slurm-mcp with --auth-issuer, an ES256 JWT access token on every "
               "request (server mcp+oauth; its HTTP rows only), and print the cost per call");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return UsageError(std::string(e.what()) + " (see mcp_bench --help)");
  }

  const std::vector<bench::RowSpec> all_rows = bench::Rows(o.queue_jobs, slowloris, fleet);
  std::vector<bench::RowSpec> rows;
  if (row_list.empty()) {
    rows = all_rows;
  } else {
    std::stringstream names(row_list);
    for (std::string name; std::getline(names, name, ',');) {
      auto it = std::find_if(all_rows.begin(), all_rows.end(),
                             [&](const bench::RowSpec& r) { return r.name == name; });
      if (it == all_rows.end()) return UsageError("--rows: no row named '" + name + "'");
      rows.push_back(*it);
    }
  }
  const mcp::BundleLocation where = mcp::LocateBundle(bundle);
  if (where.kind == mcp::BundleLocation::Kind::kNone) {
    return UsageError("--bundle " + bundle + ": no evidence bundle there (directory or pack)");
  }
  bundle = where.path;
  if (slurm_mcp.empty()) {
    std::error_code ec;
    slurm_mcp = (fs::read_symlink("/proc/self/exe", ec).parent_path() / "slurm-mcp").string();
  }
  if (access(slurm_mcp.c_str(), X_OK) != 0) {
    return UsageError("slurm-mcp not found at " + slurm_mcp + "; build it or pass --slurm-mcp");
  }
  if (o.wrk.empty()) o.wrk = bench::FindOnPath("wrk");
  if (o.wrk.empty() || access(o.wrk.c_str(), X_OK) != 0) {
    return UsageError(
        "wrk is not installed (apt-get install wrk, or --wrk PATH): it is the HTTP "
        "load generator");
  }
  o.script = std::string(SLURM_RCA_SOURCE_DIR) + "/bench/mcp_session.lua";
  if (!fs::is_regular_file(o.script)) return UsageError(o.script + " is missing");
  if (!reference_node.empty() && access(reference_node.c_str(), X_OK) != 0) {
    return UsageError("--reference-node " + reference_node + ": not an executable");
  }
  if (std::string e = RaiseOpenFiles(static_cast<rlim_t>(fleet + slowloris + 512)); !e.empty()) {
    return UsageError(e);
  }
  const Reference ref = FindReference(reference_node, no_reference);

  bench::InstallChildCleanup();
  char dir_template[] = "/tmp/mcp_bench.XXXXXX";
  if (!mkdtemp(dir_template)) return UsageError("mkdtemp failed");
  const std::string served = dir_template;
  if (slurm_rca::base::Status s = bench::WriteQueueBundle(bundle, served, o.queue_jobs); !s.ok()) {
    fs::remove_all(served);
    return UsageError("cannot write the bundle: " + s.ToString());
  }

  utsname u = {};
  uname(&u);
  const std::string load_start = bench::LoadAverage();
  std::printf("mcp_bench: slurm-mcp beside the TypeScript SDK reference, one machine, one run\n");
  std::printf("machine:   %d CPUs (nproc), %s, %s %s, load average %s at the start\n",
              bench::Nproc(), bench::CpuModel().c_str(), u.sysname, u.release, load_start.c_str());
  std::printf(
      "workload:  tools/call slurm_query {\"topic\":\"nodes\"} (queue: {\"topic\":"
      "\"queue\"}) on %s: the last snapshot of %s, squeue replaced by %d generated jobs\n",
      served.c_str(), bundle.c_str(), o.queue_jobs);
  std::printf(
      "reps:      %d x %.0f s per row and server, servers taking turns; %.0f s of "
      "unrecorded load per server first\n",
      o.reps, o.seconds, o.warmup_seconds);
  std::printf("load:      %s with %s (a session per connection, every answer checked)\n",
              o.wrk.c_str(), o.script.c_str());
  std::printf("C++:       %s serve --replay\n", slurm_mcp.c_str());
  if (ref.not_measured.empty()) {
    std::printf("reference: %s %s (SDK from %s)\n\n", ref.node.c_str(), ref.script.c_str(),
                ref.sdk_prefix.c_str());
  } else {
    std::printf("reference: not measured: %s\n\n", ref.not_measured.c_str());
  }
  std::fflush(stdout);

  std::vector<bench::ServerUnderTest> servers;
  servers.push_back({"slurm-mcp",
                     {slurm_mcp, "serve", "--stdio", "--replay", served},
                     {slurm_mcp, "serve", "--http", "127.0.0.1:0", "--replay", served}});
  servers.back().http_argv.insert(servers.back().http_argv.end(), http_args.begin(),
                                  http_args.end());
  std::vector<std::string> oauth_args;
  if (oauth) {
    std::string why;
    oauth_args = WriteOAuthFiles(served, &why);
    if (oauth_args.empty()) {
      fs::remove_all(served);
      return UsageError("--oauth: " + why);
    }
  }
  if (ref.not_measured.empty()) {
    servers.push_back(
        {"reference",
         {ref.node, ref.script, "--stdio", "--bundle", served, "--sdk-prefix", ref.sdk_prefix},
         {ref.node, ref.script, "--http", "127.0.0.1:0", "--bundle", served, "--sdk-prefix",
          ref.sdk_prefix}});
  }
  if (oauth) {
    // Last, so that figures[1] stays the reference the targets compare with.
    servers.push_back({"mcp+oauth", {}, servers.front().http_argv, served + "/token"});
    servers.back().http_argv.insert(servers.back().http_argv.end(), oauth_args.begin(),
                                    oauth_args.end());
  }
  if (tls) {
    const std::string dir = std::string(SLURM_RCA_SOURCE_DIR) + "/mcp/testdata/tls/";
    servers.push_back({"mcp+tls", {}, servers.front().http_argv, "", /*tls=*/true});
    for (const char* arg : {"--tls-cert", "server.pem", "--tls-key", "server.key"}) {
      servers.back().http_argv.push_back(arg[0] == '-' ? std::string(arg) : dir + arg);
    }
  }
  const std::vector<bench::ServerFigures> figures = bench::RunSideBySide(o, servers, rows);
  fs::remove_all(served);

  for (const bench::ServerFigures& f : figures) {
    std::printf("%-10s %s; %s\n", f.name.c_str(), f.info.c_str(),
                f.stopped.empty() ? "not started" : ("HTTP server " + f.stopped).c_str());
  }
  if (figures.size() >= 2 && ref.not_measured.empty()) {
    for (const auto& [topic, answer] : figures[0].answers) {
      auto other = figures[1].answers.find(topic);
      if (other == figures[1].answers.end()) continue;
      // `snapshot` names the read a cursor continues (issue #35); the reference has no cursors.
      slurm_rca::mcp::Json ours = answer;
      const bool has_snapshot = ours.is_object() && ours.erase("snapshot") > 0;
      std::printf("same answer: slurm_query %s, structuredContent %s\n", topic.c_str(),
                  other->second == ours
                      ? (has_snapshot ? "identical on both servers but for slurm-mcp's snapshot "
                                        "(the read its cursors continue)"
                                      : "identical on both servers")
                      : "DIFFERS");
      if (other->second != ours && answer.is_object()) {
        for (const auto& [key, value] : answer.items()) {
          const std::string theirs =
              other->second.contains(key) ? other->second[key].dump() : "(absent)";
          if (theirs == value.dump()) continue;
          std::printf("  first difference, key %s: slurm-mcp %.160s; reference %.160s\n",
                      key.c_str(), value.dump().c_str(), theirs.c_str());
          break;
        }
      }
    }
  }
  bench::PrintTable(figures, rows, bench::Nproc());
  bench::PrintTargets(figures[0], ref.not_measured.empty() ? &figures[1] : nullptr, rows);
  for (size_t i = 1; i < figures.size(); ++i) {
    if (figures[i].name == "mcp+oauth") {
      bench::PrintCostAgainst(figures[0], figures[i], rows, "an access token checked on every request");
    }
    if (figures[i].name == "mcp+tls") {
      bench::PrintCostAgainst(figures[0], figures[i], rows, "TLS on every connection (keep-alive: one handshake per connection)");
    }
  }
  if (!ref.not_measured.empty()) {
    std::printf("reference not measured: %s\n", ref.not_measured.c_str());
  }
  std::printf("load average at the end: %s\n", bench::LoadAverage().c_str());
  if (!json_path.empty()) {
    slurm_rca::mcp::Json header = {{"load_average_start", load_start},
                                   {"load_average_end", bench::LoadAverage()},
                                   {"nproc", bench::Nproc()},
                                   {"seconds", o.seconds},
                                   {"reps", o.reps},
                                   {"queue_jobs", o.queue_jobs},
                                   {"slowloris", slowloris},
                                   {"fleet", fleet}};
    if (slurm_rca::base::Status s = bench::WriteJson(json_path, header, figures); !s.ok()) {
      std::fprintf(stderr, "mcp_bench: %s\n", s.ToString().c_str());
    }
  }
  return figures[0].error.empty() ? 0 : 1;
}
