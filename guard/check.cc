#include "guard/check.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <set>

namespace slurm_rca::guard {
namespace {

constexpr std::array kAllGrammars = {
    Grammar::kName,       Grammar::kNameList,   Grammar::kFormat,    Grammar::kTime,
    Grammar::kSort,       Grammar::kDelimiter,  Grammar::kDataParser, Grammar::kGpuId,
    Grammar::kGpuDisplay, Grammar::kGpuFields,  Grammar::kGpuFormat, Grammar::kOperand,
    Grammar::kKeyValue};

// Compiled once; RE2 objects are safe to share between threads.
const RE2& Pattern(Grammar g) {
  static const auto* compiled = [] {
    auto* m = new std::array<std::unique_ptr<RE2>, 16>();
    for (Grammar gr : kAllGrammars) {
      (*m)[static_cast<int>(gr)] = std::make_unique<RE2>(std::string(GrammarPattern(gr)));
    }
    return m;
  }();
  return *(*compiled)[static_cast<int>(g)];
}

bool Matches(Grammar g, std::string_view value) {
  return RE2::FullMatch(re2::StringPiece(value.data(), value.size()), Pattern(g));
}

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

bool IsProperPrefixIgnoreCase(std::string_view prefix, std::string_view word) {
  return prefix.size() < word.size() && EqualsIgnoreCase(prefix, word.substr(0, prefix.size()));
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string Join(const std::vector<std::string_view>& v, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? std::string(sep) : "") + std::string(v[i]);
  return out;
}

std::string ByteName(unsigned char b) {
  static const std::array<const char*, 32> kNames = {
      "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS",  "TAB", "LF",
      "VT",  "FF",  "CR",  "SO",  "SI",  "DLE", "DC1", "DC2", "DC3", "DC4", "NAK",
      "SYN", "ETB", "CAN", "EM",  "SUB", "ESC", "FS",  "GS",  "RS",  "US"};
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", b);
  if (b < 32) return std::string(hex) + " (" + kNames[b] + ")";
  if (b == 0x7f) return std::string(hex) + " (DEL)";
  return hex;
}

// What a word (command, entity, subcommand) was checked against.
struct WordTable {
  std::vector<std::string_view> allowed;
  const std::vector<Refusal>* refused = nullptr;
  std::string what;  // "scontrol command", "entity of scontrol show"
};

// Finds the refusal naming `word` exactly, or nullptr.
const Refusal* FindRefusal(const std::vector<Refusal>* refusals, std::string_view word,
                           bool ignore_case) {
  if (refusals == nullptr) return nullptr;
  for (const Refusal& r : *refusals) {
    for (std::string_view s : r.spellings) {
      if (ignore_case ? EqualsIgnoreCase(s, word) : s == word) return &r;
    }
  }
  return nullptr;
}

// nullopt when `word` is exactly an allowed word.
std::optional<Denial> ClassifyWord(std::string_view word, int index, const WordTable& t) {
  for (std::string_view a : t.allowed) {
    if (a == word) return std::nullopt;
  }
  if (word.empty()) {
    return Denial{Rule::kUnknownWord, "an empty " + std::string(t.what) + " is not allowed", index};
  }
  if (const Refusal* r = FindRefusal(t.refused, word, false)) {
    return Denial{r->rule, Quoted(word) + " " + std::string(r->reason) + "; allowed: " +
                               Join(t.allowed, ", "),
                  index};
  }
  for (std::string_view a : t.allowed) {
    if (EqualsIgnoreCase(a, word)) {
      return Denial{Rule::kCaseVariant,
                    Quoted(word) + " is " + Quoted(a) +
                        " to Slurm, which ignores case; the guard takes only the lowercase "
                        "spelling: write " + Quoted(a),
                    index};
    }
  }
  if (const Refusal* r = FindRefusal(t.refused, word, true)) {
    std::string canonical;
    for (std::string_view s : r->spellings) {
      if (EqualsIgnoreCase(s, word)) canonical = std::string(s);
    }
    return Denial{Rule::kCaseVariant,
                  Quoted(word) + " is " + Quoted(canonical) + " to Slurm, which ignores case, and " +
                      Quoted(canonical) + " " + std::string(r->reason),
                  index};
  }
  std::vector<std::string_view> expands;
  bool reaches_refused = false;
  for (std::string_view a : t.allowed) {
    if (IsProperPrefixIgnoreCase(word, a)) expands.push_back(a);
  }
  if (t.refused != nullptr) {
    for (const Refusal& r : *t.refused) {
      for (std::string_view s : r.spellings) {
        if (IsProperPrefixIgnoreCase(word, s)) {
          expands.push_back(s);
          reaches_refused = true;
        }
      }
    }
  }
  if (!expands.empty()) {
    return Denial{Rule::kAbbreviatedWord,
                  Quoted(word) + " is an abbreviation Slurm expands (it could be " +
                      Join(expands, ", ") + ")" +
                      (reaches_refused ? ", which reaches refused commands" : "") +
                      "; write the full word: " + Join(t.allowed, ", "),
                  index};
  }
  return Denial{Rule::kUnknownWord,
                Quoted(word) + " is not a " + std::string(t.what) + " on the allowlist; allowed: " +
                    Join(t.allowed, ", "),
                index};
}

// The option table a part of the argv is lexed with.
struct OptionTable {
  const std::vector<OptionSpec>* options;
  const std::vector<Refusal>* refused;
  bool multi_letter_short;
  std::string_view program;
};

const OptionSpec* FindOption(const OptionTable& t, std::string_view spelling) {
  for (const OptionSpec& o : *t.options) {
    for (std::string_view s : o.spellings) {
      if (s == spelling) return &o;
    }
  }
  return nullptr;
}

// Every spelling the table knows, allowed or refused.
std::vector<std::string_view> KnownSpellings(const OptionTable& t) {
  std::vector<std::string_view> all;
  for (const OptionSpec& o : *t.options) all.insert(all.end(), o.spellings.begin(), o.spellings.end());
  if (t.refused) {
    for (const Refusal& r : *t.refused) all.insert(all.end(), r.spellings.begin(), r.spellings.end());
  }
  return all;
}

// Explains an option spelling that is not allowed: refused, abbreviated, case variant, unknown.
Denial ExplainOption(const OptionTable& t, std::string_view name, int index) {
  if (const Refusal* r = FindRefusal(t.refused, name, false)) {
    return Denial{r->rule, Quoted(name) + " " + std::string(r->reason), index};
  }
  std::vector<std::string_view> known = KnownSpellings(t);
  std::vector<std::string_view> expands;
  bool reaches_refused = false;
  for (std::string_view k : known) {
    if (k.size() > name.size() && StartsWith(k, name)) {
      expands.push_back(k);
      if (FindRefusal(t.refused, k, false)) reaches_refused = true;
    }
  }
  if (!expands.empty()) {
    return Denial{Rule::kAbbreviatedOption,
                  Quoted(name) + " is a prefix " + std::string(t.program) +
                      " would expand (to " + Join(expands, " or ") + ")" +
                      (reaches_refused ? ", which reaches a refused option" : "") +
                      "; write options in full",
                  index};
  }
  for (std::string_view k : known) {
    if (EqualsIgnoreCase(k, name)) {
      return Denial{Rule::kCaseVariant,
                    Quoted(name) + " differs from " + Quoted(k) +
                        " only in case; options are case-sensitive (sinfo has both -o and -O)",
                    index};
    }
  }
  return Denial{Rule::kUnknownOption,
                Quoted(name) + " is not an option of " + std::string(t.program) +
                    " on the allowlist; `slurm-guard policy` lists them",
                index};
}

class Checker {
 public:
  Checker(const GuardOptions& options, const std::vector<std::string>& argv,
          const ProgramPolicy& program)
      : options_(options), argv_(argv), program_(program) {}

  // Fills tokens_ or returns why not.
  std::optional<Denial> Run() {
    tokens_.push_back({Token::Kind::kProgram, argv_[0], ""});
    OptionTable table{&program_.options, &program_.refused_options, program_.multi_letter_short,
                      program_.name};
    size_t start = 1;
    const VerbSpec* verb = nullptr;
    if (program_.verb_position == VerbPosition::kFirst && argv_.size() > 1 &&
        !StartsWith(argv_[1], "-")) {
      WordTable words{VerbWords(), &program_.refused_words,
                      std::string(program_.name) + " subcommand"};
      if (auto d = ClassifyWord(argv_[1], 1, words)) return d;
      verb = FindVerb(argv_[1]);
      tokens_.push_back({Token::Kind::kPositional, argv_[1], ""});
      positionals_.push_back(1);
      table.options = &verb->options;
      table.refused = &program_.refused_options;
      start = 2;
    }
    if (auto d = Lex(table, start)) return d;
    if (auto d = CheckPositionals(verb)) return d;
    return CheckValues();
  }

  std::vector<Token> TakeTokens() { return std::move(tokens_); }
  const std::vector<const OptionSpec*>& specs() const { return specs_; }

 private:
  std::vector<std::string_view> VerbWords() const {
    std::vector<std::string_view> words;
    for (const VerbSpec& v : program_.verbs) words.push_back(v.word);
    return words;
  }

  const VerbSpec* FindVerb(std::string_view word) const {
    for (const VerbSpec& v : program_.verbs) {
      if (v.word == word) return &v;
    }
    return nullptr;
  }

  std::optional<Denial> Record(const OptionSpec& spec, Token token, int index) {
    if (!seen_keys_.insert(spec.key).second) {
      return Denial{Rule::kDuplicateOption,
                    Quoted(token.spelling) + " repeats an option already given (" +
                        std::string(spec.key) + "); Slurm keeps the last one, so give it once",
                    index};
    }
    tokens_.push_back(std::move(token));
    specs_.push_back(&spec);
    option_indices_.push_back(index);
    return std::nullopt;
  }

  // Takes the next argv element as the value of the option at index i.
  std::optional<Denial> TakeSeparateValue(const OptionSpec& spec, size_t& i) {
    const std::string& name = argv_[i];
    if (i + 1 >= argv_.size() || argv_[i + 1].empty()) {
      return Denial{Rule::kMissingValue, Quoted(name) + " needs a value",
                    static_cast<int>(i)};
    }
    const std::string& value = argv_[i + 1];
    if (StartsWith(value, "-")) {
      return Denial{Rule::kDashValue,
                    "the value of " + Quoted(name) + " starts with '-' (" + Quoted(value) +
                        "); Slurm would take it as the value, the guard refuses the ambiguity",
                    static_cast<int>(i + 1)};
    }
    auto d = Record(spec, {Token::Kind::kOption, name, value}, static_cast<int>(i));
    ++i;
    return d;
  }

  std::optional<Denial> LexLong(const OptionTable& t, size_t& i) {
    const std::string& arg = argv_[i];
    int index = static_cast<int>(i);
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    const OptionSpec* spec = FindOption(t, name);
    if (spec == nullptr) return ExplainOption(t, name, index);
    bool attached = eq != std::string::npos;
    std::string value = attached ? arg.substr(eq + 1) : "";
    switch (spec->arity) {
      case Arity::kNone:
        if (attached) {
          return Denial{Rule::kUnexpectedValue, Quoted(name) + " takes no value", index};
        }
        return Record(*spec, {Token::Kind::kFlag, name, ""}, index);
      case Arity::kRequired:
        if (!attached) {
          return Denial{Rule::kDetachedValue,
                        "write " + Quoted(name + "=VALUE") +
                            ": a long option's value must be attached with '='",
                        index};
        }
        [[fallthrough]];
      case Arity::kOptionalAttached:
        if (!attached) return Record(*spec, {Token::Kind::kFlag, name, ""}, index);
        if (value.empty()) return Denial{Rule::kMissingValue, Quoted(name) + " needs a value", index};
        if (StartsWith(value, "-")) {
          return Denial{Rule::kDashValue,
                        "the value of " + Quoted(name) + " starts with '-' (" + Quoted(value) + ")",
                        index};
        }
        return Record(*spec, {Token::Kind::kAttached, name, value}, index);
    }
    return std::nullopt;
  }

  std::optional<Denial> LexShort(const OptionTable& t, size_t& i) {
    const std::string& arg = argv_[i];
    int index = static_cast<int>(i);
    if (t.multi_letter_short || arg.size() == 2) {
      const OptionSpec* spec = FindOption(t, arg);
      if (spec == nullptr) return ExplainOption(t, arg, index);
      if (spec->arity == Arity::kRequired) return TakeSeparateValue(*spec, i);
      return Record(*spec, {Token::Kind::kFlag, arg, ""}, index);
    }
    // "-ar", "-j1008", "-o%all", "-o=%N": getopt reads these as several options, or an option
    // with an attached value.
    std::string first = arg.substr(0, 2);
    std::vector<std::string_view> known = KnownSpellings(t);
    if (std::find(known.begin(), known.end(), first) != known.end()) {
      std::string letters;
      std::vector<std::string> refused;
      for (size_t k = 1; k < arg.size(); ++k) {
        std::string one = std::string("-") + arg[k];
        letters += (k > 1 ? " " : "") + one;
        if (FindRefusal(t.refused, one, false)) refused.push_back(one);
      }
      const OptionSpec* spec = FindOption(t, first);
      std::string reason =
          spec && spec->arity == Arity::kRequired
              ? Quoted(arg) + " attaches a value to " + Quoted(first) +
                    "; write the option and its value as two arguments"
              : Quoted(arg) + " is " + letters + " to getopt; give each option on its own";
      if (!refused.empty()) reason += " (it includes refused " + refused.front() + ")";
      return Denial{Rule::kClusteredShort, reason, index};
    }
    return ExplainOption(t, arg, index);
  }

  std::optional<Denial> Lex(const OptionTable& t, size_t start) {
    for (size_t i = start; i < argv_.size(); ++i) {
      const std::string& arg = argv_[i];
      int index = static_cast<int>(i);
      if (arg == "--") {
        return Denial{Rule::kEndOfOptions,
                      "'--' ends option parsing, so what follows would be read as command words; "
                      "leave it out",
                      index};
      }
      std::optional<Denial> d;
      if (StartsWith(arg, "--")) {
        d = LexLong(t, i);
      } else if (arg.size() >= 2 && arg[0] == '-') {
        d = LexShort(t, i);
      } else {
        tokens_.push_back({Token::Kind::kPositional, arg, ""});
        positionals_.push_back(index);
      }
      if (d) return d;
    }
    return std::nullopt;
  }

  std::optional<Denial> CheckOperands(const EntitySpec& e, size_t first) {
    int ids = 0;
    for (size_t p = first; p < positionals_.size(); ++p) {
      int index = positionals_[p];
      const std::string& op = argv_[index];
      if (EqualsIgnoreCase(op, "set")) {
        return Denial{Rule::kMutatingWord,
                      Quoted(op) + " starts a set clause, which modifies the records it matches",
                      index};
      }
      bool bare = std::find(e.bare_keywords.begin(), e.bare_keywords.end(), op) !=
                  e.bare_keywords.end();
      if (bare) continue;
      for (std::string_view k : e.bare_keywords) {
        if (EqualsIgnoreCase(k, op)) {
          return Denial{Rule::kCaseVariant, "write " + Quoted(k) + " in lowercase", index};
        }
      }
      size_t eq = op.find('=');
      if (eq != std::string::npos && e.key_values) {
        std::string key = op.substr(0, eq);
        if (EqualsIgnoreCase(key, "file")) {
          return Denial{Rule::kFileWord, Quoted(op) + " names a file on this host", index};
        }
        if (!e.keys.empty() && std::find(e.keys.begin(), e.keys.end(), key) == e.keys.end()) {
          return Denial{Rule::kBadOperand,
                        Quoted(key) + " is not a filter of " + std::string(e.name) +
                            "; filters: " + Join(e.keys, ", "),
                        index};
        }
        if (!Matches(Grammar::kKeyValue, op)) {
          return Denial{Rule::kBadOperand,
                        Quoted(op) + " does not match key=value (" +
                            std::string(GrammarPattern(Grammar::kKeyValue)) + ")",
                        index};
        }
        continue;
      }
      if (ids >= e.max_ids) {
        return Denial{Rule::kExtraOperand,
                      Quoted(op) + " is one argument too many for " + std::string(e.name) +
                          (e.max_ids ? " (it takes one id)" : " (it takes no id)"),
                      index};
      }
      if (!Matches(Grammar::kOperand, op)) {
        return Denial{Rule::kBadOperand,
                      Quoted(op) + " is not a plain id or hostlist (" +
                          std::string(GrammarPattern(Grammar::kOperand)) + ")",
                      index};
      }
      ++ids;
    }
    return std::nullopt;
  }

  std::optional<Denial> CheckPositionals(const VerbSpec* verb) {
    switch (program_.verb_position) {
      case VerbPosition::kNone:
        if (!positionals_.empty()) {
          int index = positionals_.front();
          return Denial{Rule::kExtraOperand,
                        Quoted(argv_[index]) + ": " + std::string(program_.name) +
                            " takes no positional arguments; filters are options such as -p",
                        index};
        }
        return std::nullopt;
      case VerbPosition::kFirst:
        if (verb == nullptr) {
          if (!positionals_.empty()) {
            int index = positionals_.front();
            return Denial{Rule::kExtraOperand,
                          Quoted(argv_[index]) + " is not an option value or subcommand here",
                          index};
          }
          return std::nullopt;
        }
        if (positionals_.size() > 1) {
          int index = positionals_[1];
          return Denial{Rule::kExtraOperand,
                        Quoted(argv_[index]) + ": " + std::string(verb->word) +
                            " takes no operands",
                        index};
        }
        return std::nullopt;
      case VerbPosition::kPermuted:
        break;
    }
    if (positionals_.empty()) {
      return Denial{Rule::kInteractiveMode,
                    std::string(program_.name) +
                        " with no command reads commands from stdin; name one: " +
                        Join(VerbWords(), ", "),
                    -1};
    }
    int vi = positionals_.front();
    WordTable words{VerbWords(), &program_.refused_words,
                    std::string(program_.name) + " command"};
    if (auto d = ClassifyWord(argv_[vi], vi, words)) return d;
    const VerbSpec& v = *FindVerb(argv_[vi]);
    if (!v.needs_entity) {
      if (positionals_.size() > 1) {
        int index = positionals_[1];
        return Denial{Rule::kExtraOperand,
                      Quoted(argv_[index]) + ": " + std::string(v.word) + " takes no operands",
                      index};
      }
      return std::nullopt;
    }
    std::vector<std::string_view> names;
    for (const EntitySpec& e : v.entities) names.push_back(e.name);
    if (positionals_.size() < 2) {
      return Denial{Rule::kMissingOperand,
                    std::string(v.word) + " needs an entity: " + Join(names, ", "), -1};
    }
    int ei = positionals_[1];
    WordTable entities{names, &v.refused_entities,
                       "entity of " + std::string(program_.name) + " " + std::string(v.word)};
    if (auto d = ClassifyWord(argv_[ei], ei, entities)) return d;
    for (const EntitySpec& e : v.entities) {
      if (e.name == argv_[ei]) return CheckOperands(e, 2);
    }
    return std::nullopt;
  }

  std::optional<Denial> CheckValues() {
    size_t k = 0;
    for (const Token& t : tokens_) {
      if (t.kind != Token::Kind::kOption && t.kind != Token::Kind::kAttached) {
        if (t.kind == Token::Kind::kFlag) ++k;
        continue;
      }
      const OptionSpec& spec = *specs_[k];
      int index = option_indices_[k];
      ++k;
      if (spec.grammar == Grammar::kCluster) {
        if (auto d = CheckClusters(t, index)) return d;
        continue;
      }
      if (!Matches(spec.grammar, t.value)) {
        return Denial{Rule::kBadValue,
                      Quoted(t.value) + " is not a valid " + std::string(GrammarName(spec.grammar)) +
                          " for " + Quoted(t.spelling) + " (" +
                          std::string(GrammarPattern(spec.grammar)) + ")",
                      index};
      }
    }
    return std::nullopt;
  }

  std::optional<Denial> CheckClusters(const Token& t, int index) {
    std::string_view rest = t.value;
    while (true) {
      size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      bool configured = std::find(options_.clusters.begin(), options_.clusters.end(), name) !=
                        options_.clusters.end();
      if (!configured) {
        std::string known;
        for (const std::string& c : options_.clusters) known += (known.empty() ? "" : ", ") + c;
        std::string why = name == "all" ? " ('all' reaches every cluster slurmdbd knows)" : "";
        return Denial{Rule::kUnknownCluster,
                      Quoted(name) + " is not a configured cluster" + why + "; " +
                          (known.empty() ? std::string("no cluster names are configured")
                                         : "configured: " + known),
                      index};
      }
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    return std::nullopt;
  }

  const GuardOptions& options_;
  const std::vector<std::string>& argv_;
  const ProgramPolicy& program_;
  std::vector<Token> tokens_;
  std::vector<const OptionSpec*> specs_;  // one per option token, in order
  std::vector<int> option_indices_;       // argv index of each option token
  std::vector<int> positionals_;          // argv indices of positionals
  std::set<std::string_view> seen_keys_;
};

std::optional<Denial> CheckBytes(const std::vector<std::string>& argv) {
  if (argv.empty()) return Denial{Rule::kEmptyArgv, "the argv is empty; name a program", -1};
  if (argv.size() > kMaxArgs) {
    return Denial{Rule::kTooManyArgs,
                  std::to_string(argv.size()) + " arguments; at most " +
                      std::to_string(kMaxArgs) + " are accepted",
                  -1};
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    int index = static_cast<int>(i);
    if (argv[i].size() > kMaxArgBytes) {
      return Denial{Rule::kArgTooLong,
                    "argument " + std::to_string(i) + " has " + std::to_string(argv[i].size()) +
                        " bytes; at most " + std::to_string(kMaxArgBytes) + " are accepted",
                    index};
    }
    for (unsigned char b : argv[i]) {
      if (b < 0x20 || b == 0x7f) {
        return Denial{Rule::kControlByte,
                      "argument " + std::to_string(i) + " contains control byte " + ByteName(b) +
                          "; execve would cut at NUL and a log would split at CR/LF",
                      index};
      }
      if (b >= 0x80) {
        return Denial{Rule::kNonAscii,
                      "argument " + std::to_string(i) + " contains non-ASCII byte " +
                          ByteName(b) + " (a lookalike dash or letter?); use plain ASCII",
                      index};
      }
    }
  }
  return std::nullopt;
}

std::optional<Denial> CheckProgram(const std::string& name) {
  std::string allowed;
  for (const std::string& n : AllowedProgramNames()) allowed += (allowed.empty() ? "" : ", ") + n;
  if (name.find('/') != std::string::npos) {
    return Denial{Rule::kBinaryPath,
                  Quoted(name) + " is a path; name the program alone and it is resolved in "
                                 "trusted directories (allowed: " + allowed + ")",
                  0};
  }
  if (FindProgram(name) != nullptr) return std::nullopt;
  for (const Refusal& r : RefusedPrograms()) {
    for (std::string_view s : r.spellings) {
      if (s == name) {
        return Denial{r.rule, Quoted(name) + " " + std::string(r.reason) +
                                  "; it is not a read (allowed: " + allowed + ")",
                      0};
      }
    }
  }
  return Denial{Rule::kUnknownBinary,
                Quoted(name) + " is not on the read-only allowlist (allowed: " + allowed + ")", 0};
}

}  // namespace

bool MatchesGrammar(Grammar g, std::string_view value) { return Matches(g, value); }

std::string Denial::ToString() const {
  return "DENIED " + std::string(RuleId(rule)) + ": " + reason;
}

Guard::Guard(GuardOptions options) : options_(std::move(options)) {}

Verdict Guard::Check(const std::vector<std::string>& argv) const {
  if (auto d = CheckBytes(argv)) return Verdict(std::move(*d));
  if (auto d = CheckProgram(argv[0])) return Verdict(std::move(*d));
  const ProgramPolicy& program = *FindProgram(argv[0]);
  Checker checker(options_, argv, program);
  if (auto d = checker.Run()) return Verdict(std::move(*d));
  std::vector<Token> tokens = checker.TakeTokens();
  if (options_.own_user) {
    if (auto d = CheckOwnJobs(*options_.own_user, program, tokens)) return Verdict(std::move(*d));
  }

  std::vector<std::string> exec_argv = argv;
  for (std::string_view inject : program.inject) {
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& o : program.options) {
      if (std::find(o.spellings.begin(), o.spellings.end(), inject) != o.spellings.end()) spec = &o;
    }
    bool present = false;
    for (const Token& t : tokens) {
      if (spec && std::find(spec->spellings.begin(), spec->spellings.end(), t.spelling) !=
                      spec->spellings.end() &&
          t.kind != Token::Kind::kPositional) {
        present = true;
      }
    }
    if (!present) exec_argv.insert(exec_argv.begin() + 1, std::string(inject));
  }
  return Verdict(Approved(argv, std::move(exec_argv), std::move(tokens)));
}

std::vector<std::string> Render(const std::vector<Token>& tokens) {
  std::vector<std::string> argv;
  for (const Token& t : tokens) {
    switch (t.kind) {
      case Token::Kind::kProgram:
      case Token::Kind::kFlag:
      case Token::Kind::kPositional:
        argv.push_back(t.spelling);
        break;
      case Token::Kind::kOption:
        argv.push_back(t.spelling);
        argv.push_back(t.value);
        break;
      case Token::Kind::kAttached:
        argv.push_back(t.spelling + "=" + t.value);
        break;
    }
  }
  return argv;
}

std::vector<std::string> SelfTest(const Guard& guard) {
  std::vector<std::string> failures;
  for (const ProgramPolicy& p : Programs()) {
    for (const Example& ex : p.examples) {
      std::vector<std::string> argv(ex.argv.begin(), ex.argv.end());
      Verdict v = guard.Check(argv);
      std::string shown;
      for (const std::string& a : argv) shown += (shown.empty() ? "" : " ") + a;
      if (!ex.rule && !v.ok()) {
        failures.push_back("should allow: " + shown + " (got " + v.denial().ToString() + ")");
      } else if (ex.rule && v.ok()) {
        failures.push_back("should deny " + std::string(RuleId(*ex.rule)) + ": " + shown +
                           " (got ALLOWED)");
      } else if (ex.rule && v.denial().rule != *ex.rule) {
        failures.push_back("should deny " + std::string(RuleId(*ex.rule)) + ": " + shown +
                           " (got " + v.denial().ToString() + ")");
      }
    }
  }
  return failures;
}

}  // namespace slurm_rca::guard
