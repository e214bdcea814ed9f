// A workload adapter = how to launch one kind of workload + how to read its
// output into metrics (like LKP's run/parse pairs). One adapter per kind,
// registered in one table (registry.cpp).
//
// Adding a kind: write gate/adapters/<kind>.cpp with a WorkloadAdapter that
// declares its suite keys in keys(), reads them through Options(), builds the
// command line in LaunchArgv and parses the output in ParseOutput; define its
// factory `std::unique_ptr<WorkloadAdapter> Make<Name>Adapter()` there; add
// its <Name> to the list in registry.cpp. The suite parser learns the keys
// from the declaration; a header is needed only when tests call its parser.
#pragma once

#include <sys/resource.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/readiness.h"
#include "config/suite.h"
#include "metrics/metric.h"
#include "metrics/metric_declaration.h"
#include "metrics/results.h"

namespace perfgate {

struct WorkloadOutput {
  MetricSet metrics;
  std::optional<double> ops;  // operations the workload reported (for per-op budgets)
  // What the parser left out and why (a benchmark that reported an error, a
  // NaN value): not fatal, but a check on it will find its metric missing.
  std::vector<std::string> warnings;
  std::vector<WorkloadPhase> phases;  // the workload's own phase markers, for the trace
};

// A workload's own keys (WorkloadSpec::options) read through its kind's
// declaration: a key the scenario leaves out has its declared default.
// Specs made in code do not pass the suite parser, so the constructor checks
// them too: InputError for a key the kind does not declare, or for "shell"
// on a kind that does not take it.
class WorkloadOptions {
 public:
  WorkloadOptions(const WorkloadKeys& declared, const WorkloadSpec& spec);
  // The value, else the declared default; nullopt when there is neither.
  std::optional<std::string> Find(const std::string& key) const;
  // The value; InputError naming the kind when it is missing or empty.
  std::string Required(const std::string& key) const;
  // An integer key's value; InputError when the text is not a number.
  std::optional<int> Integer(const std::string& key) const;
  // A boolean key's value (false when neither set nor defaulted).
  bool Flag(const std::string& key) const;
  // An object key's value (null when neither set nor defaulted); InputError when it is not JSON.
  nlohmann::json Object(const std::string& key) const;

 private:
  const WorkloadKey& Declared(const std::string& key) const;
  const WorkloadKeys& declared_;
  const WorkloadSpec& spec_;
};

// A workload's start in a memory cgroup of its own (run/memory_pressure.h).
struct MemoryLimit {
  long limit_mb = 0;
  bool antagonist = false;  // a background allocator filling the cgroup first
};

class WorkloadAdapter {
 public:
  virtual ~WorkloadAdapter() = default;
  virtual std::string kind() const = 0;
  // The keys a scenario of this kind takes, with their types, defaults and
  // help; the suite parser checks scenarios against it. The default is a
  // command line: argv, shell, env and cwd.
  virtual const WorkloadKeys& keys() const;
  // The argv to exec. Throws InputError when the spec is unusable, InfraError
  // when something the workload needs is missing on this machine.
  virtual std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const = 0;
  // Arguments appended to LaunchArgv's when the workload runs under
  // --instrument, so that the work it does repeats exactly (a fixed amount
  // of it where it would otherwise run for a time). The default: none.
  virtual std::vector<std::string> InstrumentedArgs(const WorkloadSpec& /*spec*/) const { return {}; }
  // Functions (Valgrind patterns) during which an instrumented run stops
  // counting: the workload's own report of what it measured, whose
  // instructions follow the measured values (formatting 1.23 ms and 1.31 ms
  // differs by a few hundred instructions). The default: none, and
  // everything the workload executes counts.
  virtual std::vector<std::string> InstrumentedPauses(const WorkloadSpec& /*spec*/) const { return {}; }
  // Runs before every launch of the workload (warm-ups included), before the
  // probes are reset for it, so its own work is not measured: e.g. making a
  // start cold. Throws like LaunchArgv. The default does nothing.
  virtual void PrepareLaunch(const WorkloadSpec& /*spec*/) const {}
  // Parses what the workload printed. Throws InfraError naming the workload
  // and the position when the output is malformed.
  virtual WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const = 0;
  // When a launch of this kind is over before the app exits: the marker of
  // its readiness, after which a still running app is stopped. nullptr (the
  // default): the workload runs to its end. Throws like LaunchArgv.
  virtual std::unique_ptr<ReadinessMarker> Readiness(const WorkloadSpec& /*spec*/) const { return nullptr; }
  // The metrics of a start that became ready `ready_s` after exec; `usage`
  // is the process tree's, until it ended. Only called with a marker.
  virtual void AddStartMetrics(double /*ready_s*/, const ::rusage& /*usage*/, const WorkloadSpec& /*spec*/,
                               MetricSet& /*out*/) const {}
  // The memory cgroup each launch starts in (kinds declaring memory_limit.h's
  // keys); nullopt (the default): the workload runs where perfgate runs.
  virtual std::optional<MemoryLimit> MemoryLimitOf(const WorkloadSpec& /*spec*/) const { return std::nullopt; }
  // The metrics ParseOutput and AddStartMetrics emit, declared once
  // (metrics/metric_declaration.h). The default (a command): none, the
  // workload names its own numbers, which are its outcome.
  virtual std::vector<MetricDeclaration> metrics() const { return {}; }

 protected:
  WorkloadOptions Options(const WorkloadSpec& spec) const { return WorkloadOptions(keys(), spec); }
};

// The adapter of a kind; nullptr when unknown.
const WorkloadAdapter* FindAdapter(const std::string& kind);
std::vector<std::string> AdapterKinds();
// Every kind's declared keys, for SuiteVocabulary::workload_keys.
std::map<std::string, WorkloadKeys> AdapterKeys();
// Every adapter's metric declarations, each name once.
std::vector<MetricDeclaration> AdapterMetricDeclarations();

}  // namespace perfgate
