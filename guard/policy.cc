#include "guard/policy.h"

#include <algorithm>
#include <string>

namespace slurm_rca::guard {
namespace {

OptionSpec Flag(std::string_view key, std::vector<std::string_view> spellings) {
  return {key, std::move(spellings), Arity::kNone, Grammar::kNone};
}
OptionSpec Value(std::string_view key, std::vector<std::string_view> spellings, Grammar g) {
  return {key, std::move(spellings), Arity::kRequired, g};
}
OptionSpec Optional(std::string_view key, std::vector<std::string_view> spellings, Grammar g) {
  return {key, std::move(spellings), Arity::kOptionalAttached, g};
}

// --json and --yaml share a key: asking for both is a duplicate.
const OptionSpec kJson = Optional("structured-output", {"--json"}, Grammar::kDataParser);
const OptionSpec kYaml = Optional("structured-output", {"--yaml"}, Grammar::kDataParser);
const OptionSpec kClusters = Value("clusters", {"-M", "--clusters"}, Grammar::kCluster);
const OptionSpec kHelp = Flag("help", {"--help"});
const OptionSpec kUsage = Flag("usage", {"--usage"});
const OptionSpec kVersion = Flag("version", {"-V", "--version"});
const OptionSpec kVerbose = Flag("verbose", {"-v", "--verbose"});

constexpr std::string_view kIterate =
    "repeats forever (--iterate); read once and call again to see change over time";

std::vector<ProgramPolicy> BuildPrograms() {
  std::vector<ProgramPolicy> p;

  p.push_back(ProgramPolicy{
      .name = "sinfo",
      .summary = "node and partition state, drains and their reasons",
      .options =
          {Flag("all", {"-a", "--all"}), Flag("dead", {"-d", "--dead"}),
           Flag("exact", {"-e", "--exact"}), Flag("future", {"-F", "--future"}),
           Flag("hide", {"--hide"}), Flag("long", {"-l", "--long"}),
           Flag("node", {"-N", "--Node"}), Flag("noheader", {"-h", "--noheader"}),
           Flag("list-reasons", {"-R", "--list-reasons"}),
           Flag("responding", {"-r", "--responding"}), Flag("summarize", {"-s", "--summarize"}),
           Flag("reservation", {"-T", "--reservation"}), Flag("local", {"--local"}),
           Flag("federation", {"--federation"}), Flag("noconvert", {"--noconvert"}), kVerbose,
           kVersion, kHelp, kUsage, kClusters, Value("format", {"-o", "--format"}, Grammar::kFormat),
           Value("Format", {"-O", "--Format"}, Grammar::kFormat),
           Value("nodes", {"-n", "--nodes"}, Grammar::kNameList),
           Value("partition", {"-p", "--partition"}, Grammar::kNameList),
           Value("sort", {"-S", "--sort"}, Grammar::kSort),
           Value("states", {"-t", "--states"}, Grammar::kNameList), kJson, kYaml},
      .refused_options = {{{"-i", "--iterate"}, Rule::kEndlessMode, kIterate}},
      .examples = {{{"sinfo"}, {}},
                   {{"sinfo", "-N", "--noheader", "-o", "%N|%P|%T|%C|%G|%E"}, {}},
                   {{"sinfo", "-p", "gpu", "-t", "drain,down"}, {}},
                   {{"sinfo", "-i", "5"}, Rule::kEndlessMode},
                   {{"sinfo", "-Nl"}, Rule::kClusteredShort},
                   {{"sinfo", "--summ"}, Rule::kAbbreviatedOption},
                   {{"sinfo", "extra"}, Rule::kExtraOperand}},
  });

  p.push_back(ProgramPolicy{
      .name = "squeue",
      .summary = "the job queue: pending and running jobs with state and reason",
      .options =
          {Flag("all", {"-a", "--all"}), Flag("array", {"-r", "--array"}),
           Flag("noheader", {"-h", "--noheader"}), Flag("long", {"-l", "--long"}),
           Flag("me", {"--me"}), Flag("priority", {"-P", "--priority"}),
           Flag("start", {"--start"}), Flag("local", {"--local"}),
           Flag("federation", {"--federation"}), Flag("sibling", {"--sibling"}),
           Flag("hide", {"--hide"}), Flag("noconvert", {"--noconvert"}), kVerbose, kVersion,
           kHelp, kUsage, kClusters, Value("accounts", {"-A", "--accounts"}, Grammar::kNameList),
           Value("format", {"-o", "--format"}, Grammar::kFormat),
           Value("Format", {"-O", "--Format"}, Grammar::kFormat),
           Value("name", {"-n", "--name"}, Grammar::kNameList),
           Value("nodelist", {"-w", "--nodelist"}, Grammar::kNameList),
           Value("partitions", {"-p", "--partitions"}, Grammar::kNameList),
           Value("qos", {"-q", "--qos"}, Grammar::kNameList),
           Value("reservation", {"-R", "--reservation"}, Grammar::kName),
           Value("sort", {"-S", "--sort"}, Grammar::kSort),
           Value("states", {"-t", "--states"}, Grammar::kNameList),
           Value("user", {"-u", "--user"}, Grammar::kNameList),
           Optional("jobs", {"--jobs"}, Grammar::kNameList),
           Optional("steps", {"--steps"}, Grammar::kNameList), kJson, kYaml},
      .refused_options = {{{"-i", "--iterate"}, Rule::kEndlessMode, kIterate}},
      .examples = {{{"squeue"}, {}},
                   {{"squeue", "--noheader", "-o", "%i|%P|%u|%T|%M|%D|%R"}, {}},
                   {{"squeue", "--jobs=1008", "--steps"}, {}},
                   {{"squeue", "-u", "-t"}, Rule::kDashValue},
                   {{"squeue", "-u"}, Rule::kMissingValue},
                   {{"squeue", "--form=%i"}, Rule::kAbbreviatedOption},
                   {{"squeue", "-j1008"}, Rule::kUnknownOption}},
  });

  p.push_back(ProgramPolicy{
      .name = "sacct",
      .summary = "job accounting history, read from slurmdbd",
      .options =
          {Flag("allusers", {"-a", "--allusers"}), Flag("allocations", {"-X", "--allocations"}),
           Flag("brief", {"-b", "--brief"}), Flag("completion", {"-c", "--completion"}),
           Flag("duplicates", {"-D", "--duplicates"}), Flag("helpformat", {"-e", "--helpformat"}),
           Flag("long", {"-l", "--long"}), Flag("noheader", {"-n", "--noheader"}),
           Flag("parsable", {"-p", "--parsable"}), Flag("parsable2", {"-P", "--parsable2"}),
           Flag("truncate", {"-T", "--truncate"}), Flag("array", {"--array"}),
           Flag("local", {"--local"}), Flag("federation", {"--federation"}),
           Flag("noconvert", {"--noconvert"}), kVerbose, kVersion, kHelp, kUsage, kClusters,
           Value("accounts", {"-A", "--accounts"}, Grammar::kNameList),
           Value("endtime", {"-E", "--endtime"}, Grammar::kTime),
           Value("starttime", {"-S", "--starttime"}, Grammar::kTime),
           Value("format", {"-o", "--format"}, Grammar::kFormat),
           Value("jobs", {"-j", "--jobs"}, Grammar::kNameList),
           Value("nodelist", {"-N", "--nodelist"}, Grammar::kNameList),
           Value("partition", {"-r", "--partition"}, Grammar::kNameList),
           Value("state", {"-s", "--state"}, Grammar::kNameList),
           Value("user", {"-u", "--user"}, Grammar::kNameList),
           Value("qos", {"-q", "--qos"}, Grammar::kNameList),
           Value("name", {"--name"}, Grammar::kNameList),
           Value("delimiter", {"--delimiter"}, Grammar::kDelimiter), kJson, kYaml},
      .refused_options =
          {{{"-f", "--file"},
            Rule::kFileOption,
            "reads any regular file on this host as a job completion log"},
           {{"-B", "--batch-script"},
            Rule::kSecretOption,
            "prints job batch scripts, which often hold credentials; read job state instead"},
           {{"--env-vars"},
            Rule::kSecretOption,
            "prints job environments, which often hold credentials; read job state instead"},
           {{"-L", "--allclusters"},
            Rule::kScopeOption,
            "reaches every cluster in slurmdbd; name a configured cluster with -M instead"}},
      .examples = {{{"sacct", "-a", "-X", "--parsable2", "--noheader",
                     "--format=JobID,Account,User,State,Elapsed"},
                    {}},
                   {{"sacct", "-S", "now-1hour", "-E", "now", "-o", "jobid,state,exitcode"}, {}},
                   {{"sacct", "-f", "/etc/passwd"}, Rule::kFileOption},
                   {{"sacct", "--fil=/etc/passwd"}, Rule::kAbbreviatedOption},
                   {{"sacct", "-B", "-j", "1"}, Rule::kSecretOption},
                   {{"sacct", "--starttime", "now"}, Rule::kDetachedValue}},
  });

  p.push_back(ProgramPolicy{
      .name = "sdiag",
      .summary = "scheduler diagnostics: cycles, backfill, RPC and agent queues",
      .options = {Flag("all", {"-a", "--all"}), Flag("sort-by-id", {"-i", "--sort-by-id"}),
                  Flag("sort-by-time", {"-t", "--sort-by-time"}),
                  Flag("sort-by-time2", {"-T", "--sort-by-time2"}), kVersion, kHelp, kUsage,
                  kClusters, kJson, kYaml},
      .refused_options = {{{"-r", "--reset"},
                           Rule::kMutatingOption,
                           "resets the scheduler and RPC counters, destroying the evidence; "
                           "run sdiag without it to read them"}},
      .examples = {{{"sdiag"}, {}},
                   {{"sdiag", "--all", "--json"}, {}},
                   {{"sdiag", "-r"}, Rule::kMutatingOption},
                   {{"sdiag", "--res"}, Rule::kAbbreviatedOption},
                   {{"sdiag", "-ar"}, Rule::kClusteredShort}},
  });

  p.push_back(ProgramPolicy{
      .name = "sprio",
      .summary = "priority factors of pending jobs",
      .options = {Flag("long", {"-l", "--long"}), Flag("noheader", {"-h", "--noheader"}),
                  Flag("norm", {"-n", "--norm"}), Flag("weights", {"-w", "--weights"}),
                  Flag("local", {"--local"}), Flag("federation", {"--federation"}),
                  Flag("sibling", {"--sibling"}), kVerbose, kVersion, kHelp, kUsage, kClusters,
                  Value("format", {"-o", "--format"}, Grammar::kFormat),
                  Value("partition", {"-p", "--partition"}, Grammar::kNameList),
                  Value("sort", {"-S", "--sort"}, Grammar::kSort),
                  Value("user", {"-u", "--user"}, Grammar::kNameList),
                  Optional("jobs", {"--jobs"}, Grammar::kNameList)},
      .examples = {{{"sprio", "--noheader", "-o", "%i|%r|%u|%Y|%A|%F|%J|%P|%Q"}, {}},
                   {{"sprio", "--jobs=1,2", "-w"}, {}},
                   {{"sprio", "-j", "5"}, Rule::kUnknownOption}},
  });

  p.push_back(ProgramPolicy{
      .name = "sshare",
      .summary = "fairshare tree: shares, usage and fairshare factor",
      .options = {Flag("all", {"-a", "--all"}), Flag("long", {"-l", "--long"}),
                  Flag("noheader", {"-n", "--noheader"}), Flag("parsable", {"-p", "--parsable"}),
                  Flag("parsable2", {"-P", "--parsable2"}),
                  Flag("partition", {"-m", "--partition"}), Flag("Users", {"-U", "--Users"}),
                  kVerbose, kVersion, kHelp, kUsage, kClusters,
                  Value("accounts", {"-A", "--accounts"}, Grammar::kNameList),
                  Value("format", {"-o", "--format"}, Grammar::kFormat),
                  Value("users", {"-u", "--users"}, Grammar::kNameList), kJson, kYaml},
      .examples = {{{"sshare", "--noheader", "--parsable2", "-a",
                     "--format=Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare"},
                    {}},
                   {{"sshare", "-u", "alice bob"}, Rule::kBadValue}},
  });

  p.push_back(ProgramPolicy{
      .name = "scontrol",
      .summary = "controller view of jobs, nodes, partitions, reservations and configuration",
      .options = {Flag("all", {"-a", "--all"}), Flag("details", {"-d", "--details"}),
                  Flag("future", {"-F", "--future"}), Flag("oneliner", {"-o", "--oneliner"}),
                  Flag("quiet", {"-Q", "--quiet"}), Flag("hide", {"--hide"}),
                  Flag("local", {"--local"}), Flag("federation", {"--federation"}),
                  Flag("sibling", {"--sibling"}), kVerbose, kVersion, kHelp, kUsage, kClusters,
                  kJson, kYaml},
      .refused_options = {{{"-u", "--uid"},
                           Rule::kScopeOption,
                           "sends the request as another user id; read as yourself"}},
      .verb_position = VerbPosition::kPermuted,
      .verbs =
          {VerbSpec{
               .word = "show",
               .needs_entity = true,
               .entities = {{.name = "assoc_mgr",
                             .key_values = true,
                             .keys = {"users", "accounts", "qos", "flags"}},
                            {.name = "burstbuffer"},
                            {.name = "config"},
                            {.name = "daemons"},
                            {.name = "federation"},
                            {.name = "frontend", .max_ids = 1},
                            {.name = "hostnames", .max_ids = 1},
                            {.name = "job", .max_ids = 1},
                            {.name = "licenses", .max_ids = 1},
                            {.name = "node", .max_ids = 1},
                            {.name = "partition", .max_ids = 1},
                            {.name = "reservation", .max_ids = 1},
                            {.name = "slurmd"},
                            {.name = "step", .max_ids = 1},
                            {.name = "topology", .max_ids = 1}},
               .refused_entities =
                   {{{"hostlist", "hostlistsorted"},
                     Rule::kFileWord,
                     "reads a file when given a path (and stdin for '-'); use show hostnames"},
                    {{"bbstat", "dwstat"},
                     Rule::kUnknownWord,
                     "passes its arguments to an external burst-buffer tool"},
                    {{"aliases", "resources", "topoconf", "cache", "jobid", "partitionname",
                      "reservationname"},
                     Rule::kUnknownWord,
                     "is not on the allowlist"}}},
           VerbSpec{.word = "ping"}, VerbSpec{.word = "version"}},
      .refused_words =
          {{{"update", "create", "delete", "reconfigure", "shutdown", "takeover", "abort",
             "setdebug", "setdebugflags", "schedloglevel", "fsdampeningfactor",
             "fairsharedampeningfactor", "reboot", "reboot_nodes", "cancel_reboot", "requeue",
             "requeuehold", "hold", "holdu", "uhold", "release", "suspend", "resume", "top",
             "notify", "power"},
            Rule::kMutatingWord,
            "changes controller, job or node state"},
           {{"token"}, Rule::kMutatingWord, "mints an authentication token (JWT)"},
           {{"write", "hash_file"},
            Rule::kFileWord,
            "reads or writes files on this host (write batch_script|config, hash_file)"},
           {{"wait_job"}, Rule::kEndlessMode, "blocks until a job finishes"},
           {{"completing", "errnumstr", "getaddrs", "gethost", "listpids", "listjobs",
             "liststeps", "pidinfo", "callerid", "hash", "help", "exit", "quit", "details",
             "oneliner", "quiet", "verbose", "cluster", "all", "errnostr", "getent", "hide"},
            Rule::kUnknownWord,
            "is not on the allowlist"}},
      .examples = {{{"scontrol", "show", "config"}, {}},
                   {{"scontrol", "-o", "show", "job", "1234"}, {}},
                   {{"scontrol", "show", "node", "c[1-4]", "-d"}, {}},
                   {{"scontrol", "ping"}, {}},
                   {{"scontrol"}, Rule::kInteractiveMode},
                   {{"scontrol", "u", "JobId=123", "TimeLimit=0"}, Rule::kAbbreviatedWord},
                   {{"scontrol", "UPDATE", "NodeName=c1"}, Rule::kCaseVariant},
                   {{"scontrol", "update", "NodeName=c1", "State=DRAIN"}, Rule::kMutatingWord},
                   {{"scontrol", "write", "config"}, Rule::kFileWord},
                   {{"scontrol", "show", "hostlist", "/etc/passwd"}, Rule::kFileWord},
                   {{"scontrol", "show", "config", "extra"}, Rule::kExtraOperand},
                   {{"scontrol", "show"}, Rule::kMissingOperand}},
  });

  p.push_back(ProgramPolicy{
      .name = "sacctmgr",
      .summary = "accounting database: associations, limits, QOS, events (always --readonly)",
      .options = {Flag("associations", {"-s", "--associations"}),
                  Flag("noheader", {"-n", "--noheader"}), Flag("parsable", {"-p", "--parsable"}),
                  Flag("parsable2", {"-P", "--parsable2"}), Flag("quiet", {"-Q", "--quiet"}),
                  Flag("readonly", {"-r", "--readonly"}), kVerbose, kVersion, kHelp, kUsage,
                  kJson, kYaml},
      .refused_options = {{{"-i", "--immediate"},
                           Rule::kMutatingOption,
                           "commits changes without asking"}},
      .verb_position = VerbPosition::kPermuted,
      .verbs = [] {
        const std::vector<std::string_view> bare = {
            "where",          "withassoc",     "withcoord",    "withdeleted",
            "withsubaccounts", "withrawqoslevel", "onlydefaults", "tree",
            "wolimits",       "wopinfo",       "woplimits",    "all_clusters"};
        std::vector<EntitySpec> entities;
        for (std::string_view e :
             // "assoc" is the one short name listed: sacctmgr's documented spelling, and it can
             // expand to nothing but associations.
             {"account", "accounts", "assoc", "association", "associations", "cluster", "clusters",
              "configuration", "event", "events", "federation", "problem", "problems", "qos",
              // Not "resources": sacctmgr matches "Resource" as a prefix, so the plural is an
              // error on 22.05, 25.11 and 26.05 alike (guard/release_tables_test.cc).
              "reservation", "reservations", "resource", "stats", "transaction",
              "transactions", "tres", "user", "users", "wckey", "wckeys"}) {
          entities.push_back({.name = e, .max_ids = 1, .key_values = true, .bare_keywords = bare});
        }
        std::vector<Refusal> refused = {
            {{"runawayjobs", "orphanjobs", "lostjobs"},
             Rule::kMutatingWord,
             "offers to fix runaway jobs, which rewrites accounting records"},
            {{"job", "coordinator", "resources", "acct", "resv", "txn", "instances"},
             Rule::kUnknownWord,
             "is not on the allowlist"}};
        return std::vector<VerbSpec>{
            {.word = "show", .needs_entity = true, .entities = entities,
             .refused_entities = refused},
            {.word = "list", .needs_entity = true, .entities = entities,
             .refused_entities = refused},
            {.word = "ping"},
            {.word = "version"}};
      }(),
      .refused_words =
          {{{"add", "create", "modify", "update", "delete", "remove", "archive", "load", "clear",
             "rollup", "reconfigure", "shutdown"},
            Rule::kMutatingWord,
            "changes the accounting database or slurmdbd"},
           {{"set"}, Rule::kMutatingWord, "a set clause modifies the records it matches"},
           {{"dump"}, Rule::kFileWord, "writes a file on this host"},
           {{"help", "exit", "quit", "quiet", "verbose", "oneliner", "readonly", "immediate",
             "parsable", "parsable2", "noheader", "associations"},
            Rule::kUnknownWord,
            "is not on the allowlist"}},
      .inject = {"--readonly"},
      .examples = {{{"sacctmgr", "show", "associations"}, {}},
                   {{"sacctmgr", "-P", "-n", "list", "qos"}, {}},
                   {{"sacctmgr", "list", "associations", "where", "users=alice",
                     "format=account,grpjobs"},
                    {}},
                   {{"sacctmgr"}, Rule::kInteractiveMode},
                   {{"sacctmgr", "m", "user", "alice", "set", "maxjobs=0"},
                    Rule::kAbbreviatedWord},
                   {{"sacctmgr", "-i", "delete", "user", "bob"}, Rule::kMutatingOption},
                   {{"sacctmgr", "dump", "c", "file=x"}, Rule::kFileWord},
                   {{"sacctmgr", "show", "qos", "set", "GrpJobs=0"}, Rule::kMutatingWord},
                   {{"sacctmgr", "show", "runawayjobs"}, Rule::kMutatingWord}},
  });

  const std::string_view kDevice = "changes GPU device settings";
  p.push_back(ProgramPolicy{
      .name = "nvidia-smi",
      .summary = "GPU telemetry: queries only",
      .multi_letter_short = true,
      .options =
          {Flag("list-gpus", {"-L", "--list-gpus"}),
           Flag("list-excluded-gpus", {"-B", "--list-excluded-gpus"}),
           Flag("query", {"-q", "--query"}), Flag("xml-format", {"-x", "--xml-format"}),
           Flag("unit", {"-u", "--unit"}), Flag("help", {"-h", "--help"}),
           Flag("version", {"--version"}), Flag("help-query-gpu", {"--help-query-gpu"}),
           Value("display", {"-d", "--display"}, Grammar::kGpuDisplay),
           Value("id", {"-i", "--id"}, Grammar::kGpuId),
           Value("query-gpu", {"--query-gpu"}, Grammar::kGpuFields),
           Value("query-compute-apps", {"--query-compute-apps"}, Grammar::kGpuFields),
           Value("query-accounted-apps", {"--query-accounted-apps"}, Grammar::kGpuFields),
           Value("query-retired-pages", {"--query-retired-pages"}, Grammar::kGpuFields),
           Value("query-remapped-rows", {"--query-remapped-rows"}, Grammar::kGpuFields),
           Value("query-supported-clocks", {"--query-supported-clocks"}, Grammar::kGpuFields),
           Value("format", {"--format"}, Grammar::kGpuFormat)},
      .refused_options =
          {{{"-pm", "--persistence-mode", "-e", "--ecc-config", "-p", "--reset-ecc-errors", "-c",
             "--compute-mode", "--gom", "-r", "--gpu-reset", "-vm", "--virt-mode", "-lgc",
             "--lock-gpu-clocks", "-m", "--mode", "-rgc", "--reset-gpu-clocks", "-lmc",
             "--lock-memory-clocks", "-rmc", "--reset-memory-clocks", "-lmcd",
             "--lock-memory-clocks-deferred", "-rmcd", "--reset-memory-clocks-deferred", "-ac",
             "--applications-clocks", "-rac", "--reset-applications-clocks", "-cc",
             "--cuda-clocks", "-pl", "--power-limit", "-sc", "--scope", "-am",
             "--accounting-mode", "-caa", "--clear-accounted-apps", "--auto-boost-default",
             "--auto-boost-permission", "-mig", "--multi-instance-gpu", "-gtt",
             "--gpu-target-temp", "-t", "--toggle-led"},
            Rule::kMutatingOption,
            kDevice},
           {{"-f", "--filename", "--debug"}, Rule::kFileOption, "writes a file on this host"},
           {{"-l", "--loop", "-lms", "--loop-ms"},
            Rule::kEndlessMode,
            "repeats until interrupted; query once and call again"}},
      .verb_position = VerbPosition::kFirst,
      .verb_optional = true,
      .verbs = {VerbSpec{.word = "topo", .options = {Flag("matrix", {"-m", "--matrix"})}}},
      .refused_words =
          {{{"mig", "drain", "clocks", "compute-policy", "boost-slider", "conf-compute", "vgpu",
             "power-hint"},
            Rule::kMutatingWord,
            kDevice},
           {{"daemon", "dmon", "pmon", "gpm"},
            Rule::kEndlessMode,
            "streams until interrupted; query once and call again"},
           {{"replay"}, Rule::kFileWord, "reads a recorded file"},
           {{"nvlink", "c2c"}, Rule::kUnknownWord, "is not on the allowlist"}},
      .examples = {{{"nvidia-smi"}, {}},
                   {{"nvidia-smi", "--query-gpu=name,temperature.gpu", "--format=csv,noheader"},
                    {}},
                   {{"nvidia-smi", "-q", "-d", "ECC,MEMORY"}, {}},
                   {{"nvidia-smi", "topo", "-m"}, {}},
                   {{"nvidia-smi", "-r"}, Rule::kMutatingOption},
                   {{"nvidia-smi", "-pm", "1"}, Rule::kMutatingOption},
                   {{"nvidia-smi", "-f", "out.txt"}, Rule::kFileOption},
                   {{"nvidia-smi", "dmon"}, Rule::kEndlessMode},
                   {{"nvidia-smi", "-m"}, Rule::kMutatingOption}},
  });
  return p;
}

}  // namespace

std::string_view GrammarName(Grammar g) {
  switch (g) {
    case Grammar::kNone: return "none";
    case Grammar::kName: return "name";
    case Grammar::kNameList: return "name-list";
    case Grammar::kFormat: return "format";
    case Grammar::kTime: return "time";
    case Grammar::kSort: return "sort";
    case Grammar::kDelimiter: return "delimiter";
    case Grammar::kDataParser: return "data-parser";
    case Grammar::kCluster: return "cluster";
    case Grammar::kGpuId: return "gpu-id";
    case Grammar::kGpuDisplay: return "gpu-display";
    case Grammar::kGpuFields: return "gpu-fields";
    case Grammar::kGpuFormat: return "gpu-format";
    case Grammar::kOperand: return "operand";
    case Grammar::kKeyValue: return "key=value";
  }
  return "?";
}

std::string_view GrammarPattern(Grammar g) {
  switch (g) {
    case Grammar::kNone: return "";
    case Grammar::kCluster: return "";
    case Grammar::kName: return R"([A-Za-z0-9][A-Za-z0-9_.:@+-]{0,127})";
    case Grammar::kNameList: return R"([A-Za-z0-9][A-Za-z0-9_.,:@+\[\]-]{0,255})";
    case Grammar::kFormat: return R"([A-Za-z0-9%][A-Za-z0-9%|,.:_ #+-]{0,383})";
    case Grammar::kTime: return R"([A-Za-z0-9][A-Za-z0-9:.+-]{0,63})";
    case Grammar::kSort: return R"([A-Za-z0-9+%.,#][A-Za-z0-9+%.,#_-]{0,63})";
    case Grammar::kDelimiter: return R"([|,;:#]{1,4})";
    case Grammar::kDataParser: return R"(v[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})";
    case Grammar::kGpuId: return R"([A-Za-z0-9][A-Za-z0-9:.,-]{0,127})";
    case Grammar::kGpuDisplay: return R"([A-Z_]+(,[A-Z_]+)*)";
    case Grammar::kGpuFields: return R"([a-z0-9_.]+(,[a-z0-9_.]+)*)";
    case Grammar::kGpuFormat: return R"(csv(,(noheader|nounits)){0,2})";
    case Grammar::kOperand: return R"([A-Za-z0-9][A-Za-z0-9_.,:+\[\]-]{0,127})";
    case Grammar::kKeyValue:
      return R"([A-Za-z][A-Za-z0-9_]{0,31}=[A-Za-z0-9][A-Za-z0-9_.,:@+%\[\]-]{0,255})";
  }
  return "";
}

const std::vector<ProgramPolicy>& Programs() {
  static const std::vector<ProgramPolicy> programs = BuildPrograms();
  return programs;
}

const ProgramPolicy* FindProgram(std::string_view name) {
  for (const ProgramPolicy& p : Programs()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const std::vector<std::string>& AllowedProgramNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const ProgramPolicy& p : Programs()) n.emplace_back(p.name);
    return n;
  }();
  return names;
}

const std::vector<Refusal>& RefusedPrograms() {
  static const std::vector<Refusal> refused = {
      {{"scancel"}, Rule::kUnknownBinary, "cancels or signals jobs"},
      {{"sbatch", "srun", "salloc"}, Rule::kUnknownBinary, "submits or starts jobs"},
      {{"scrontab"}, Rule::kUnknownBinary, "edits a user's crontab of jobs"},
      {{"strigger"}, Rule::kUnknownBinary, "creates and deletes event triggers"},
      {{"sbcast"}, Rule::kUnknownBinary, "copies files to compute nodes"},
      {{"sattach"}, Rule::kUnknownBinary, "attaches to a running job's standard streams"},
      {{"slurmctld", "slurmd", "slurmdbd", "slurmstepd", "munged"},
       Rule::kUnknownBinary,
       "is a daemon, not a read"},
  };
  return refused;
}

}  // namespace slurm_rca::guard
