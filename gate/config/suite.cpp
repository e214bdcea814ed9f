#include "config/suite.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "base/did_you_mean.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "base/json_text.h"
#include "config/credentials.h"
#include "metrics/metric.h"

namespace perfgate {

using nlohmann::json;

namespace {

// Suite objects list their keys: an unknown one is an error with a "did you mean" hint.
using SuiteObject = JsonObjectReader;

std::string Index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::string Lookup(const std::string& name, const SuiteVariables& vars) {
  if (auto it = vars.overrides.find(name); it != vars.overrides.end()) {
    if (vars.expanded) vars.expanded->insert(name);
    return it->second;
  }
  if (name == "suite_dir") return vars.suite_dir;
  if (name == "perfgate_dir") return vars.perfgate_dir;
  const char* v = std::getenv(name.c_str());
  return v ? std::string(v) : std::string("\x01unset");
}

// The keys a workload of this declaration may name in the suite.
std::vector<std::string> AcceptedKeys(const WorkloadKeys& declared) {
  std::vector<std::string> keys = {"kind"};
  if (declared.argv) keys.push_back("argv");
  if (declared.args) keys.push_back("args");
  // Named by mistake for the other one: each has an error of its own below.
  if (!declared.argv && declared.args) keys.push_back("argv");
  if (declared.argv && !declared.args) keys.push_back("args");
  if (declared.env) keys.push_back("env");
  if (declared.cwd) keys.push_back("cwd");
  if (declared.shell) keys.push_back("shell");
  for (const auto& key : declared.keys) keys.push_back(key.name);
  return keys;
}

std::string ParseWorkloadKey(const SuiteObject& o, const WorkloadKey& key, const WorkloadKeyContext& context) {
  const SuiteVariables& vars = context.variables;
  switch (key.type) {
    case WorkloadKeyType::kString:
      return ExpandVariables(o.String(key.name), vars, o.file() + ": " + o.At(key.name));
    case WorkloadKeyType::kInteger:
      return std::to_string(o.Integer(key.name, 1, 1 << 20));
    case WorkloadKeyType::kBoolean:
      return o.Bool(key.name) ? "true" : "false";
    case WorkloadKeyType::kObject:
      return (key.read ? key.read(o, key.name, context) : o.Get(key.name)).dump();
  }
  return "";
}

WorkloadSpec ParseWorkload(const SuiteObject& parent, const std::string& key, const SuiteVocabulary& vocab,
                           const SuiteVariables& vars, const std::string& run_as) {
  // The kind decides which keys are known, so it is read before they are checked.
  const json& raw = parent.Get(key);
  std::vector<std::string> present;
  if (raw.is_object()) {
    for (const auto& [name, value] : raw.items()) present.push_back(name);
  }
  const SuiteObject unchecked(raw, parent.file(), parent.At(key), present);
  WorkloadSpec w;
  if (unchecked.Has("kind")) w.kind = unchecked.String("kind");
  if (std::find(vocab.workload_kinds.begin(), vocab.workload_kinds.end(), w.kind) == vocab.workload_kinds.end()) {
    unchecked.Fail(unchecked.At("kind"),
                   "unknown workload kind \"" + w.kind + "\"" + DidYouMeanHint(w.kind, vocab.workload_kinds));
  }
  auto found = vocab.workload_keys.find(w.kind);
  const WorkloadKeys declared = found == vocab.workload_keys.end() ? WorkloadKeys{} : found->second;
  const SuiteObject o(raw, parent.file(), parent.At(key), AcceptedKeys(declared));
  if (o.Has("argv")) {
    const json& argv = o.Array("argv");
    for (size_t i = 0; i < argv.size(); ++i) {
      std::string where = Index(o.At("argv"), i);
      if (!argv[i].is_string()) o.Fail(where, "expected a string");
      w.argv.push_back(ExpandVariables(argv[i].get<std::string>(), vars, parent.file() + ": " + where));
    }
  }
  if (declared.argv && w.argv.empty()) o.Fail(o.At("argv"), "a " + w.kind + " workload needs a non-empty argv");
  if (!declared.argv && o.Has("argv")) {
    o.Fail(o.At("argv"), "argv is the command line of a command workload; a " + w.kind +
                             " workload takes extra tool arguments in \"args\"");
  }
  // A kind that builds its own command line appends "args" to it; they reach
  // the adapter as WorkloadSpec::argv.
  if (o.Has("args")) {
    if (!declared.args) o.Fail(o.At("args"), "a " + w.kind + " workload takes its whole command line in \"argv\"");
    const json& args = o.Array("args");
    for (size_t i = 0; i < args.size(); ++i) {
      std::string where = Index(o.At("args"), i);
      if (!args[i].is_string()) o.Fail(where, "expected a string");
      w.argv.push_back(ExpandVariables(args[i].get<std::string>(), vars, parent.file() + ": " + where));
    }
  }
  if (o.Has("env")) {
    const json& env = o.Get("env");
    if (!env.is_object()) o.Fail(o.At("env"), "expected an object of strings");
    for (const auto& [name, value] : env.items()) {
      std::string where = o.At("env") + "." + name;
      if (!value.is_string()) o.Fail(where, "expected a string");
      w.env[name] = ExpandVariables(value.get<std::string>(), vars, parent.file() + ": " + where);
    }
  }
  if (o.Has("cwd")) w.cwd = ExpandVariables(o.String("cwd"), vars, parent.file() + ": " + o.At("cwd"));
  if (o.Has("shell")) w.shell = o.Bool("shell");
  for (const WorkloadKey& declared_key : declared.keys) {
    if (o.Has(declared_key.name)) {
      w.options[declared_key.name] = ParseWorkloadKey(o, declared_key, WorkloadKeyContext{vars, run_as});
    } else if (declared_key.required) {
      o.Get(declared_key.name);  // throws "missing required key", naming the workload's path
    } else if (!declared_key.default_value.empty()) {
      w.options[declared_key.name] = declared_key.default_value;
    }
  }
  return w;
}

json ParseProbeParameter(const SuiteObject& o, const std::string& key, const std::string& type,
                         const SuiteVariables& vars) {
  const json& v = o.Get(key);
  std::string where = o.file() + ": " + o.At(key);
  if (type == "string") return ExpandVariables(o.String(key), vars, where);
  if (type == "integer") return o.Integer(key, 0, 1 << 30);
  if (type == "boolean") return o.Bool(key);
  if (!v.is_array()) o.Fail(o.At(key), "expected an array of strings, got " + std::string(v.type_name()));
  json out = json::array();
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) o.Fail(Index(o.At(key), i), "expected a string, got " + std::string(v[i].type_name()));
    out.push_back(ExpandVariables(v[i].get<std::string>(), vars, o.file() + ": " + Index(o.At(key), i)));
  }
  return out;
}

std::vector<ProbeSpec> ParseProbes(const SuiteObject& scenario, const SuiteVocabulary& vocab,
                                   const SuiteVariables& vars) {
  std::vector<ProbeSpec> out;
  if (!scenario.Has("probes")) return out;
  const json& probes = scenario.Array("probes");
  std::set<std::string> seen;
  for (size_t i = 0; i < probes.size(); ++i) {
    std::string where = Index(scenario.At("probes"), i);
    ProbeSpec p;
    if (probes[i].is_string()) {
      p.name = probes[i].get<std::string>();
    } else if (probes[i].is_object() && probes[i].contains("name") && probes[i]["name"].is_string()) {
      p.name = probes[i]["name"].get<std::string>();
    } else {
      SuiteObject(probes[i], scenario.file(), where, {"name", "scope"}).String("name");  // throws, naming the path
    }
    if (std::find(vocab.probes.begin(), vocab.probes.end(), p.name) == vocab.probes.end()) {
      scenario.Fail(where, "unknown probe \"" + p.name + "\"" + DidYouMeanHint(p.name, vocab.probes));
    }
    if (probes[i].is_object()) {
      std::map<std::string, std::string> parameters;
      if (auto it = vocab.probe_parameters.find(p.name); it != vocab.probe_parameters.end()) parameters = it->second;
      std::vector<std::string> keys = {"name", "scope", "optional"};
      for (const auto& [key, type] : parameters) keys.push_back(key);
      SuiteObject o(probes[i], scenario.file(), where, keys);
      if (o.Has("scope")) p.scope = o.String("scope");
      p.optional = o.Has("optional") && o.Bool("optional");
      if (p.scope != "workload" && p.scope != "system") {
        o.Fail(o.At("scope"), "expected \"workload\" or \"system\", got \"" + p.scope + "\"");
      }
      for (const auto& [key, type] : parameters) {
        if (o.Has(key)) p.params[key] = ParseProbeParameter(o, key, type, vars);
      }
    }
    if (!seen.insert(p.name).second) scenario.Fail(where, "probe \"" + p.name + "\" listed twice");
    out.push_back(p);
  }
  return out;
}

CheckSpec ParseCheck(const json& j, const std::string& file, const std::string& where) {
  SuiteObject o(j, file, where, {"metric", "statistic", "type", "max_regression_pct", "max", "min", "name"});
  CheckSpec c;
  c.metric = o.String("metric");
  if (!IsMetricName(c.metric)) {
    o.Fail(o.At("metric"), "\"" + c.metric + "\" is not a metric name (<source>.<name>, e.g. workload.wall_time)");
  }
  if (o.Has("statistic")) {
    c.statistic = o.String("statistic");
    static const std::vector<std::string> kStats = {"value", "count", "rate",  "per_op", "p50",
                                                    "p90",   "p99",   "p99.9", "max",    "mean"};
    if (std::find(kStats.begin(), kStats.end(), c.statistic) == kStats.end()) {
      o.Fail(o.At("statistic"), "unknown statistic \"" + c.statistic + "\"" + DidYouMeanHint(c.statistic, kStats));
    }
  }
  std::string type = o.Has("type") ? o.String("type") : (o.Has("max") || o.Has("min") ? "budget" : "regression");
  if (type == "regression") {
    c.type = CheckSpec::Type::kRegression;
    if (o.Has("max") || o.Has("min")) o.Fail(where, "a regression check takes max_regression_pct, not max/min");
    c.max_regression_pct =
        o.Has("max_regression_pct") ? o.Number("max_regression_pct", 0, 10000) : DefaultMaxRegressionPct(c.metric);
  } else if (type == "budget") {
    c.type = CheckSpec::Type::kBudget;
    if (o.Has("max_regression_pct")) o.Fail(o.At("max_regression_pct"), "a budget check takes max and/or min");
    if (o.Has("max")) c.max = o.Number("max", -1e300, 1e300);
    if (o.Has("min")) c.min = o.Number("min", -1e300, 1e300);
    if (!c.max && !c.min) o.Fail(where, "a budget check needs \"max\" or \"min\"");
  } else {
    o.Fail(o.At("type"), "unknown check type \"" + type + "\"" + DidYouMeanHint(type, {"regression", "budget"}));
  }
  c.name = o.Has("name") ? o.String("name") : c.metric + (c.statistic.empty() ? "" : "." + c.statistic);
  return c;
}

void ParseRepetitions(const SuiteObject& o, ScenarioSpec& s) {
  if (!o.Has("repetitions")) return;
  const json& r = o.Get("repetitions");
  if (r.is_object()) {
    SuiteObject ro(r, o.file(), o.At("repetitions"), {"min", "max"});
    s.repetitions_min = ro.Integer("min", 2, 10000);
    s.repetitions_max = ro.Has("max") ? ro.Integer("max", 2, 10000) : s.repetitions_min;
    if (s.repetitions_max < s.repetitions_min) ro.Fail(ro.At("max"), "max is smaller than min");
  } else {
    s.repetitions_min = s.repetitions_max = o.Integer("repetitions", 2, 10000);
  }
}

EvidenceMode ParseEvidence(const SuiteObject& o) {
  const std::string value = o.String("evidence");
  for (EvidenceMode mode : {EvidenceMode::kOnFailure, EvidenceMode::kAlways, EvidenceMode::kNever}) {
    if (ToString(mode) == value) return mode;
  }
  o.Fail(o.At("evidence"), "expected \"always\", \"on-failure\" or \"never\", got \"" + value + "\"" +
                               DidYouMeanHint(value, {"always", "on-failure", "never"}));
}

// Suite-wide defaults of the scenarios' keys.
struct ScenarioDefaults {
  EvidenceMode evidence = EvidenceMode::kOnFailure;
  bool instrument = false;
};

// The scenario's `instrument`, or the suite's for a kind that can be
// instrumented; a scenario asking for it with a kind that cannot is an error.
bool ParseInstrument(const SuiteObject& o, const ScenarioSpec& s, const SuiteVocabulary& vocab, bool suite_default) {
  if (!o.Has("instrument")) return suite_default && vocab.Instrumentable(s.workload.kind);
  const bool instrument = o.Bool("instrument");
  if (instrument && !vocab.Instrumentable(s.workload.kind)) {
    std::string kinds;
    for (const auto& kind : vocab.instrumentable_kinds) kinds += (kinds.empty() ? "" : " and ") + kind;
    o.Fail(o.At("instrument"), "a " + s.workload.kind + " workload cannot run under Valgrind (only " + kinds +
                                   " workloads: programs perfgate starts and waits for)");
  }
  return instrument;
}

ScenarioSpec ParseScenario(const json& j, const std::string& file, const std::string& where,
                           const SuiteVocabulary& vocab, const SuiteVariables& vars, const ScenarioDefaults& defaults) {
  SuiteObject o(j, file, where,
                {"name", "workload", "warmup", "repetitions", "timeout_s", "run_as", "probes", "checks", "evidence",
                 "instrument"});
  ScenarioSpec s;
  s.evidence = o.Has("evidence") ? ParseEvidence(o) : defaults.evidence;
  s.name = o.String("name");
  static const std::regex kScenarioName("^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$");
  if (!std::regex_match(s.name, kScenarioName) || s.name.find("..") != std::string::npos) {
    o.Fail(o.At("name"),
           "scenario name " + json(s.name).dump(-1, ' ', false, json::error_handler_t::replace) +
               " is not allowed: scenario names use letters, digits, '_', '-', '.' (at most 128, no \"..\")");
  }
  // The user first: a workload key may check what that user can read.
  if (o.Has("run_as")) {
    s.run_as = ExpandVariables(o.String("run_as"), vars, file + ": " + o.At("run_as"));
    ResolveUser(s.run_as, file + ": " + o.At("run_as"));  // throws naming the path when there is none
  }
  s.probes = ParseProbes(o, vocab, vars);
  s.workload = ParseWorkload(o, "workload", vocab, vars, s.run_as);
  s.instrument = ParseInstrument(o, s, vocab, defaults.instrument);
  if (o.Has("warmup")) s.warmup = o.Integer("warmup", 0, 1000);
  ParseRepetitions(o, s);
  if (o.Has("timeout_s")) s.timeout_s = o.Number("timeout_s", 0.001, 86400);
  if (o.Has("checks")) {
    const json& checks = o.Array("checks");
    std::set<std::string> names;
    for (size_t i = 0; i < checks.size(); ++i) {
      std::string cw = Index(o.At("checks"), i);
      s.checks.push_back(ParseCheck(checks[i], file, cw));
      if (!names.insert(s.checks.back().name).second) {
        o.Fail(cw, "duplicate check name \"" + s.checks.back().name + "\" (give one a \"name\")");
      }
    }
  }
  return s;
}

}  // namespace

const WorkloadKey* WorkloadKeys::Find(const std::string& name) const {
  for (const auto& key : keys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

std::string ToString(EvidenceMode mode) {
  switch (mode) {
    case EvidenceMode::kOnFailure:
      return "on-failure";
    case EvidenceMode::kAlways:
      return "always";
    case EvidenceMode::kNever:
      return "never";
  }
  return "on-failure";
}

std::vector<std::string> SplitCommandLine(const std::string& line, const std::string& where) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word += c;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (quote == '"') {
      if (c == '"')
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) throw InputError(where + ": unclosed " + std::string(1, quote) + " in \"" + line + "\"");
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) throw InputError(where + ": empty command");
  return words;
}

std::string ExpandVariables(const std::string& text, const SuiteVariables& vars, const std::string& where) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "${") != 0) {
      out += text[i++];
      continue;
    }
    size_t end = text.find('}', i);
    if (end == std::string::npos) throw InputError(where + ": unterminated \"${\" in \"" + text + "\"");
    std::string body = text.substr(i + 2, end - i - 2);
    std::optional<std::string> fallback;
    if (auto sep = body.find(":-"); sep != std::string::npos) {
      fallback = body.substr(sep + 2);
      body = body.substr(0, sep);
    }
    std::string value = Lookup(body, vars);
    if (value == "\x01unset" || (value.empty() && fallback)) {
      if (!fallback) throw InputError(where + ": variable \"" + body + "\" is not set");
      value = *fallback;
    }
    out += value;
    i = end + 1;
  }
  return out;
}

std::optional<CheckTarget> ResolveCheckTarget(const std::vector<ScenarioSpec>& scenarios, const std::string& target) {
  for (const ScenarioSpec& s : scenarios) {
    if (target.size() <= s.name.size() + 1 || target.compare(0, s.name.size(), s.name) != 0 ||
        target[s.name.size()] != '/') {
      continue;
    }
    const std::string check = target.substr(s.name.size() + 1);
    for (const CheckSpec& c : s.checks) {
      if (c.name == check) return CheckTarget{s.name, check};
    }
  }
  return std::nullopt;
}

bool IsCalendarDate(const std::string& text) {
  static const std::regex kDate(R"(\d{4}-\d{2}-\d{2})");
  if (text.size() != 10 || !std::regex_match(text, kDate)) return false;
  const int year = std::stoi(text.substr(0, 4)), month = std::stoi(text.substr(5, 2)),
            day = std::stoi(text.substr(8, 2));
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

namespace {

// The suite's `quarantine` list: each entry names a check of the suite, its
// owner, why, and the last day it is quarantined.
std::vector<QuarantineEntry> ParseQuarantine(const SuiteObject& o, const std::vector<ScenarioSpec>& scenarios) {
  std::vector<QuarantineEntry> entries;
  const json& list = o.Array("quarantine");
  for (size_t i = 0; i < list.size(); ++i) {
    SuiteObject q(list[i], o.file(), o.At("quarantine", i), {"check", "owner", "reason", "until"});
    QuarantineEntry e;
    e.where = o.file() + ": " + o.At("quarantine", i);
    const std::string target = q.String("check");
    std::optional<CheckTarget> resolved = ResolveCheckTarget(scenarios, target);
    if (!resolved) {
      q.Fail(q.At("check"),
             "\"" + target + "\" is no check of this suite (write SCENARIO/CHECK, the check's name as in the reports)");
    }
    e.scenario = resolved->scenario;
    e.check = resolved->check;
    e.owner = q.String("owner");
    if (e.owner.find_first_not_of(" \t") == std::string::npos) q.Fail(q.At("owner"), "a quarantine needs an owner");
    e.reason = q.String("reason");
    if (e.reason.find_first_not_of(" \t") == std::string::npos) q.Fail(q.At("reason"), "a quarantine needs a reason");
    e.until = q.String("until");
    if (!IsCalendarDate(e.until)) q.Fail(q.At("until"), "\"" + e.until + "\" is not a date (YYYY-MM-DD)");
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace

Suite ParseSuite(const std::string& text, const std::string& file, const SuiteVocabulary& vocab,
                 const SuiteVariables& vars) {
  json j = ParseJsonText(text, file);
  SuiteObject o(j, file, "$", {"name", "scenarios", "description", "evidence", "instrument", "quarantine"});
  ScenarioDefaults defaults;
  if (o.Has("evidence")) defaults.evidence = ParseEvidence(o);
  if (o.Has("instrument")) defaults.instrument = o.Bool("instrument");
  Suite suite;
  suite.file = file;
  suite.name = o.String("name");
  SuiteVariables noting = vars;
  noting.expanded = &suite.overrides_expanded;
  static const std::regex kSuiteName("^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$");
  if (!std::regex_match(suite.name, kSuiteName) || suite.name.find("..") != std::string::npos) {
    o.Fail(o.At("name"),
           "suite name " + json(suite.name).dump(-1, ' ', false, json::error_handler_t::replace) +
               " is not allowed: suite names use letters, digits, '_', '-', '.' (at most 128, no \"..\")");
  }
  const json& scenarios = o.Array("scenarios");
  if (scenarios.empty()) o.Fail(o.At("scenarios"), "a suite needs at least one scenario");
  std::set<std::string> names;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    std::string where = Index(o.At("scenarios"), i);
    suite.scenarios.push_back(ParseScenario(scenarios[i], file, where, vocab, noting, defaults));
    if (!names.insert(suite.scenarios.back().name).second) {
      o.Fail(where + ".name", "duplicate scenario name \"" + suite.scenarios.back().name + "\"");
    }
  }
  if (o.Has("quarantine")) suite.quarantine = ParseQuarantine(o, suite.scenarios);
  return suite;
}

std::string QuarantineFileOf(const std::string& suite_file) {
  const std::string suffix = ".json";
  const bool json_name = suite_file.size() > suffix.size() &&
                         suite_file.compare(suite_file.size() - suffix.size(), suffix.size(), suffix) == 0;
  return (json_name ? suite_file.substr(0, suite_file.size() - suffix.size()) : suite_file) + ".quarantine.json";
}

Suite LoadSuite(const std::string& file, const SuiteVocabulary& vocab, const SuiteVariables& vars) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file + ": cannot open suite file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  SuiteVariables with_dir = vars;
  if (with_dir.suite_dir.empty()) {
    with_dir.suite_dir = std::filesystem::absolute(file).parent_path().string();
  }
  Suite suite = ParseSuite(buffer.str(), file, vocab, with_dir);
  const std::string beside = QuarantineFileOf(file);
  std::error_code ec;
  if (!std::filesystem::exists(beside, ec)) return suite;
  std::ifstream quarantine(beside, std::ios::binary);
  if (!quarantine || !std::filesystem::is_regular_file(beside, ec))
    throw InputError(beside + ": cannot open quarantine file");
  std::stringstream text;
  text << quarantine.rdbuf();
  json j = ParseJsonText(text.str(), beside);
  SuiteObject o(j, beside, "$", {"quarantine"});
  if (!o.Has("quarantine")) o.Fail("$", "a quarantine file holds {\"quarantine\": [...]}");
  for (QuarantineEntry& e : ParseQuarantine(o, suite.scenarios)) suite.quarantine.push_back(std::move(e));
  return suite;
}

bool SuiteVocabulary::Instrumentable(const std::string& kind) const {
  return std::find(instrumentable_kinds.begin(), instrumentable_kinds.end(), kind) != instrumentable_kinds.end();
}

const ScenarioSpec* FindScenario(const Suite& suite, const std::string& name) {
  for (const ScenarioSpec& s : suite.scenarios) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

void InstrumentEveryScenarioThatCan(Suite& suite, const SuiteVocabulary& vocabulary) {
  for (ScenarioSpec& s : suite.scenarios) s.instrument = s.instrument || vocabulary.Instrumentable(s.workload.kind);
}

}  // namespace perfgate
