// Suite files: JSON with comments. LoadSuite validates everything up front and
// reports the file and JSON path of the first error, with "did you mean" for
// unknown keys and names.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/did_you_mean.h"
#include "base/json_reader.h"
#include "metrics/results.h"

namespace perfgate {

struct WorkloadSpec {
  std::string kind = "command";  // adapter name
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string cwd;
  bool shell = false;  // argv[0] is a shell command line run by /bin/sh -c
  // The kind's own keys (e.g. fio "job", unixbench "dir") as text, declared
  // by its adapter in WorkloadKeys: integers in decimal, booleans "true" or
  // "false", declared defaults filled in by the suite parser.
  std::map<std::string, std::string> options;
};

enum class WorkloadKeyType {
  kString,   // ${variables} expanded
  kInteger,  // 1 to 2^20
  kBoolean,
  kObject,  // any JSON, checked by the key's reader, kept as compact JSON text
};

struct SuiteVariables;

// What a kObject key's reader may need besides the value.
struct WorkloadKeyContext {
  const SuiteVariables& variables;
  const std::string& run_as;  // the scenario's workload user; empty: perfgate's own
};

// Checks the value of `key` in the workload object `workload` (failing with
// its file and JSON path, InputError) and returns it normalized.
using WorkloadKeyReader = std::function<nlohmann::json(const JsonObjectReader& workload, const std::string& key,
                                                       const WorkloadKeyContext& context)>;

// One key of a workload kind, declared by its adapter (adapters/adapter.h).
struct WorkloadKey {
  std::string name;
  WorkloadKeyType type = WorkloadKeyType::kString;
  std::string default_value = {};  // as kept in WorkloadSpec::options; empty: none
  bool required = false;
  std::string help = {};
  WorkloadKeyReader read = {};  // kObject keys only
};

// What a workload kind takes in a suite besides "kind". The defaults describe
// a command line: the whole of it in "argv", "shell", "env" and "cwd".
struct WorkloadKeys {
  bool argv = true;   // its command line in "argv", required and not empty
  bool args = false;  // extra arguments in "args" for the command line the adapter builds (WorkloadSpec::argv)
  bool shell = true;  // "shell": argv run by /bin/sh -c
  bool env = true;    // "env": the workload's extra environment
  bool cwd = true;    // "cwd": its working directory
  std::vector<WorkloadKey> keys = {};

  // The declaration of `name`, or nullptr.
  const WorkloadKey* Find(const std::string& name) const;
};

struct ProbeSpec {
  std::string name;
  std::string scope = "workload";  // "workload" | "system"
  // The probe's own keys, type-checked against the vocabulary; strings (and
  // strings in arrays) have ${variables} expanded.
  nlohmann::json params = nlohmann::json::object();
  // When it cannot attach (a hook this kernel lacks), the run goes on
  // without it and says why, instead of failing with exit 3.
  bool optional = false;
};

// When a scenario gets an extra "evidence" repetition with on-CPU and
// off-CPU stacks (suite key `evidence`, per scenario or for the suite).
enum class EvidenceMode { kOnFailure, kAlways, kNever };
// "on-failure", "always", "never".
std::string ToString(EvidenceMode mode);

struct ScenarioSpec {
  std::string name;
  WorkloadSpec workload;
  int warmup = 1;
  int repetitions_min = 5;
  int repetitions_max = 5;
  double timeout_s = 60;
  std::string run_as;  // the workload's user (empty: perfgate's own); probes stay root
  std::vector<ProbeSpec> probes;
  std::vector<CheckSpec> checks;
  EvidenceMode evidence = EvidenceMode::kOnFailure;
  // Measured by instruction counts under Valgrind (suite key `instrument`,
  // per scenario or for the suite; perfgate's --instrument sets it for every
  // scenario that can be): every command that runs the suite runs it so.
  bool instrument = false;
};

// A check taken out of the gate for a while (the suite's `quarantine` list):
// still measured and reported, never failing the run until `until` has passed.
struct QuarantineEntry {
  std::string scenario;
  std::string check;  // the check's name (its testcase name)
  std::string owner;
  std::string reason;
  std::string until;  // last day of the quarantine, YYYY-MM-DD
  std::string where;  // "suite.json: $.quarantine[0]", for messages
};

struct Suite {
  std::string name;
  std::string file;
  std::vector<ScenarioSpec> scenarios;
  std::vector<QuarantineEntry> quarantine = {};
  // The overrides (SuiteVariables::overrides) some ${name} of the suite expanded.
  std::set<std::string> overrides_expanded = {};
};

// What the suite may name; filled by the CLI from the probe catalog and the adapter table.
struct SuiteVocabulary {
  std::vector<std::string> probes;
  std::vector<std::string> workload_kinds;
  // Per probe: its parameter names and what each must be ("string",
  // "strings" = array of strings, "integer" >= 0, "boolean").
  std::map<std::string, std::map<std::string, std::string>> probe_parameters = {};
  // Per workload kind: the keys its adapter declares. A kind without an entry
  // takes a command line (WorkloadKeys' defaults).
  std::map<std::string, WorkloadKeys> workload_keys = {};
  // The kinds whose launch can run under Valgrind ("instrument": true).
  std::vector<std::string> instrumentable_kinds = {};
  bool Instrumentable(const std::string& kind) const;
};

// Variables usable in argv, env and cwd as ${name} or ${name:-default}:
// `overrides` first (perfgate ab's --baseline-set / --candidate-set, which may
// also give a side its own perfgate_dir), then the built-ins `suite_dir` and
// `perfgate_dir`, then the process environment.
struct SuiteVariables {
  std::string suite_dir;
  std::string perfgate_dir;
  std::map<std::string, std::string> overrides = {};
  // Where expansion notes each override it used (ParseSuite points it at the
  // suite's overrides_expanded); may be null.
  std::set<std::string>* expanded = nullptr;
};

// Also reads the quarantine file beside the suite (QuarantineFileOf) when
// there is one: its entries join the suite's own.
Suite LoadSuite(const std::string& file, const SuiteVocabulary& vocabulary, const SuiteVariables& variables);

// --instrument: every scenario whose kind can run under Valgrind counts
// instructions, whatever the suite says (as its suite-level key would).
void InstrumentEveryScenarioThatCan(Suite& suite, const SuiteVocabulary& vocabulary);

// The scenario of `suite` named `name`, or nullptr.
const ScenarioSpec* FindScenario(const Suite& suite, const std::string& name);
// The quarantine file beside a suite: perf/suite.json -> perf/suite.quarantine.json,
// {"quarantine": [...]} with the entries the suite's own list takes. Kept
// apart so that quarantining a check touches no suite; read, like the suite,
// from the merge base by the pull-request gate.
std::string QuarantineFileOf(const std::string& suite_file);
// Same, from text (tests, fuzzing); `file` names it in errors.
Suite ParseSuite(const std::string& text, const std::string& file, const SuiteVocabulary& vocabulary,
                 const SuiteVariables& variables);

// "SCENARIO/CHECK" resolved against the suite's scenarios and their check
// names (either may contain '/'); nullopt when no scenario has that check.
struct CheckTarget {
  std::string scenario;
  std::string check;
};
std::optional<CheckTarget> ResolveCheckTarget(const std::vector<ScenarioSpec>& scenarios, const std::string& target);
// A real calendar date written YYYY-MM-DD ("2026-02-30" is not).
bool IsCalendarDate(const std::string& text);

// Splits a command line into argv without a shell: words separated by
// blanks; '...' keeps everything literally, "..." and bare words take \ as
// an escape. InputError naming `where` for an unclosed quote or no words.
std::vector<std::string> SplitCommandLine(const std::string& line, const std::string& where);

// Expands ${name} and ${name:-default}; throws InputError naming `where` for an unset variable without default.
std::string ExpandVariables(const std::string& text, const SuiteVariables& variables, const std::string& where);

}  // namespace perfgate
