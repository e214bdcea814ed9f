// The results model shared by compare, baseline and every reporter: one run
// of a suite = scenarios, each with repetitions (metric sets), probe facts and
// check verdicts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/cpu_holders.h"
#include "metrics/evidence.h"
#include "metrics/explanation.h"
#include "metrics/host_summary.h"
#include "metrics/metric.h"
#include "metrics/profile_growth.h"

namespace perfgate {

// The threshold of a regression check that names none: 5 % for times and
// everything else that moves with the host.
inline constexpr double kDefaultMaxRegressionPct = 5.0;
// ... and for instruction counts (IsInstructionCount). They repeat to parts
// per million under Valgrind and to a few hundredths of a percent on a PMU, and
// compare/deterministic.h decides them by an interval while each side
// spreads by at most 0.1 %: at that spread the interval of an A/A pair
// reaches +-0.3 %, so 0.5 % is the smallest round threshold such a pair still
// passes outright, and a 1 % change at that spread still fails outright.
// rustc-perf gates instruction counts at 0.1 to 1 %.
inline constexpr double kInstructionCountThresholdPct = 0.5;
// kInstructionCountThresholdPct for an instruction count, else kDefaultMaxRegressionPct.
double DefaultMaxRegressionPct(std::string_view metric);

// What a check asks; parsed from the suite, copied into results.
struct CheckSpec {
  enum class Type { kRegression, kBudget };
  Type type = Type::kRegression;
  std::string metric;     // "workload.wall_time"
  std::string statistic;  // "p99", "rate", "value"; empty = default of the metric's kind
  // Regression: the suite's, else DefaultMaxRegressionPct(metric) (the suite parser sets it).
  double max_regression_pct = kDefaultMaxRegressionPct;
  std::optional<double> max;  // budget
  std::optional<double> min;  // budget
  // Name of the testcase: "<metric>.<statistic>" unless the suite names it.
  std::string name;
};

// kAccepted and kQuarantined are set by triage (gate/triage/) over a measured
// verdict; neither fails a run.
enum class Verdict { kPass, kRegression, kImprovement, kInconclusive, kError, kAccepted, kQuarantined };
std::string ToString(Verdict v);
std::optional<Verdict> ParseVerdict(const std::string& text);
std::string ToString(CheckSpec::Type t);

struct CheckResult {
  CheckSpec spec;
  std::string statistic;  // resolved statistic
  std::string unit;
  Better better = Better::kLower;
  Verdict verdict = Verdict::kError;
  std::vector<double> baseline_values;   // one per repetition
  std::vector<double> candidate_values;  // one per repetition
  double baseline_median = 0;
  double candidate_median = 0;
  double change_pct = 0;  // candidate vs baseline, signed; positive = larger
  std::optional<double> change_ci_low_pct;
  std::optional<double> change_ci_high_pct;
  std::optional<double> p_value;     // raw p of the rank test
  std::optional<double> p_adjusted;  // after family-wise correction
  std::optional<double> min_detectable_pct;
  std::string message;  // one line: the numbers that decided the verdict
  // The interleaved pairs the verdict rests on (perfgate ab: the two sides'
  // repetitions of one round, compared within the round); 0 when the two
  // sides were compared as independent samples.
  int pairs = 0;
  // A regression measured again before it may fail the run
  // (compare/confirm.h): in fresh interleaved pairs of its scenario (ab), or
  // in fresh repetitions of it against the same stored numbers (run).
  struct Confirmation {
    bool confirmed = false;  // the fresh measurement agreed: still a regression
    int pairs = 0;           // fresh pairs (or repetitions) measured
    double seconds = 0;      // what measuring them took (the scenario's share)
    std::string first;       // the first round's message, which flagged the check
  };
  std::optional<Confirmation> confirmation;
  // What a person decided about this check (gate/triage/): a regression
  // accepted within a bound, or a quarantine; also an acceptance the change
  // exceeded and a quarantine that has expired, which leave the verdict alone.
  struct Triage {
    // "accepted", "exceeded" (an acceptance the change went beyond),
    // "quarantined", "expired" (a quarantine past its date: live again).
    std::string state;
    Verdict measured = Verdict::kPass;  // the verdict before triage
    std::optional<double> bound_pct;    // an acceptance's bound: the worse direction's change it allows
    std::string reason;
    std::string by;     // the accepting commit (or "--accept"), the quarantine's owner
    std::string until;  // a quarantine's last day, YYYY-MM-DD
    std::string note;   // one line for every report: who, why, and what the numbers said
  };
  std::optional<Triage> triage;
};

// Testcase name of a check: the suite's name for it, else "<metric>.<statistic>".
std::string CheckName(const CheckResult& check);

struct HookChoice {
  std::string hook;                   // "sched_switch"
  std::string attach_type;            // "raw_tp", "tracepoint", ...
  std::string target;                 // the kernel object attached to, e.g. "sched:sched_switch"
  std::vector<std::string> rejected;  // "tp_btf: <reason>"
};

// Metrics a probe emits on other hosts or with other parameters but not in
// this run, and why (the cpu probe's hardware counters on a host without a
// PMU): a check on one of them says so instead of only "not measured".
struct UnavailableMetrics {
  std::vector<std::string> metrics;
  std::string reason;   // why not here: "no hardware PMU (perf_event_open(...): ...)..."
  std::string instead;  // what to do: "run with --instrument ..."
};

struct ProbeReport {
  std::string name;
  std::string scope;  // "workload" | "system"
  std::vector<HookChoice> hooks;
  uint64_t run_count = 0;    // BPF program invocations (run-time stats)
  uint64_t run_time_ns = 0;  // BPF program run time (run-time stats)
  uint64_t drops = 0;
  // The workload's CPU time over the repetitions the run-time stats covered,
  // so run_time_ns / workload_cpu_ns is the probe's cost as a share of it.
  uint64_t workload_cpu_ns = 0;
  // Why an optional probe is not attached (the run went on without it);
  // empty when it is.
  std::string not_attached = {};
  std::vector<UnavailableMetrics> unavailable = {};
  // run_time_ns / workload_cpu_ns, or nullopt when either is unknown.
  std::optional<double> CpuShare() const {
    if (workload_cpu_ns == 0 || run_count == 0) return std::nullopt;
    return static_cast<double>(run_time_ns) / static_cast<double>(workload_cpu_ns);
  }
};

struct Environment {
  std::string kernel;
  std::string cpu_model;
  int cpu_count = 0;
  std::string perfgate_version;
  std::string git_commit;
  std::string hostname;
  std::string timestamp;  // ISO 8601 UTC
};

// What differs between the machine a baseline was recorded on and this one
// (kernel, CPU model, CPU count), one line each: "kernel: 6.1.0 (baseline) vs
// 6.18.0 (now)". Empty when they match.
std::vector<std::string> EnvironmentMismatches(const Environment& baseline, const Environment& now);

// A phase the workload reported of itself (`{"phase": ..., "begin_ns": ...,
// "end_ns": ...}` on stdout, CLOCK_MONOTONIC), for the trace.
struct WorkloadPhase {
  std::string name;
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
};

struct Repetition {
  int index = 0;
  bool warmup = false;
  int exit_status = 0;  // exit code, or 128+signal
  std::string failure;  // empty when the repetition succeeded
  // Why the host's load makes this repetition's numbers suspect
  // (run/host_load.h TaintOf); empty when it was clean. A tainted repetition
  // is retaken (ScenarioResult::retaken) while the scenario's budget allows.
  std::string tainted;
  // Parts of the workload's output the adapter could not use (a benchmark
  // that reported an error, a value that is not a number): said, not fatal.
  std::vector<std::string> warnings;
  MetricSet metrics;
  // The tasks of other processes that held the CPUs its threads waited for,
  // at most kTopCpuHolders, largest first (runqlat probe, workload scope).
  std::vector<CpuHolder> cpu_holders;
  std::vector<WorkloadPhase> phases;  // for the trace only; not in results.json

  // A measured repetition that succeeded: the ones statistics use.
  bool measured() const { return !warmup && failure.empty(); }
};

// The Perfetto trace of a run (`perfgate run --trace`): one extra repetition
// of the scenario with the worst check, recorded after the measured ones.
struct TraceSummary {
  std::string file;       // relative to the out dir
  std::string reason;     // why this scenario: its worst check
  uint64_t produced = 0;  // records the probes wrote or tried to (kernel count)
  uint64_t received = 0;  // records read from the ring buffer
  uint64_t dropped = 0;   // records the ring buffer had no room for; produced = received + dropped
  uint64_t buffer_bytes = 0;
  double expected_rate = 0;  // records/s estimated from the measured repetitions, to size the buffer
};

// Adaptive repetitions (suite `repetitions: {min, max}`): the runner looked
// at the verdicts after each planned look from `min` on and stopped when no
// check could still turn out a regression; compare spends the error over the
// same looks (compare/sequential_plan.h).
struct AdaptiveRepetitions {
  int min = 0;
  int max = 0;
  bool paired = false;  // the baseline grew alongside (perfgate ab), not a stored one
  // A fixed count that the host's load made adaptive: min was the suite's
  // count, max kBusyHostRoundsFactor times it (run/schedule.h busy_rounds).
  bool busy_host = false;
};

// How far a busy host may extend a fixed scenario of perfgate ab: four
// times its pairs, so that pairs whose ratios vary about twice as much
// beside other work (beside a one-CPU burner: docs/instruction-counts.md)
// still resolve the threshold, first round and confirmation alike.
inline constexpr int kBusyHostRoundsFactor = 4;

// The host's speed while a scenario ran against when its stored baseline was
// recorded, told by the host canary's times (host.canary.*, run/canary.h):
// set by compare for a run against stored numbers (compare/host_speed.h).
struct HostSpeed {
  enum class Direction { kSteady, kSlower, kFaster };
  Direction direction = Direction::kSteady;
  std::string canary;  // the canary metric that decided: host.canary.cpu, .memory or .fault
  // Its time's change, now against then, in percent (+: the host is slower
  // now), with the interval compare uses for checks.
  double change_pct = 0;
  double low_pct = 0, high_pct = 0;
  // The share of the workload's time the canary's work stands for: 1 for
  // the loop and the stream; for the faults, the baseline's page faults at
  // its canary's cost per page over its wall time. The host's change on the
  // workload is the canary's times this share (compare/host_speed.h).
  double share = 1;
  double Effective(double pct) const { return share * pct; }
  double confidence = 0.9;
  int baseline_count = 0, candidate_count = 0;  // canaries on each side
};
std::string ToString(HostSpeed::Direction direction);
// "the host ran 48 % slower than when the baseline was recorded (canary:
// host.canary.cpu +48 %, 90 % CI +40 … +55 %)", "the host ran faster …",
// "the host's speed was steady …".
std::string DescribeHostSpeed(const HostSpeed& speed);

struct ScenarioResult {
  std::string name;
  std::string workload_kind;
  std::vector<Repetition> repetitions;  // measured ones only
  // Repetitions measured while the host was too busy, and measured again:
  // kept for the record (the report marks them), never in the statistics.
  std::vector<Repetition> retaken;
  std::optional<AdaptiveRepetitions> adaptive;  // absent: a fixed count
  std::optional<HostSpeed> host_speed;          // against a stored baseline with canaries
  // The baseline's repetitions this scenario was compared with, kept for the
  // reports (distributions side by side, kernel metrics that moved); never
  // stored in a baseline file.
  std::vector<Repetition> baseline_repetitions;
  std::vector<ProbeReport> probes;
  std::vector<CheckResult> checks;
  std::optional<TraceSummary> trace;  // the run's trace, when it is of this scenario
  // Stacks from the evidence repetitions (metrics/evidence.h): the candidate's,
  // and the baseline's when it was recorded with stacks or ran alongside.
  std::vector<Evidence> evidence;
  // What grew in the evidence's profiles, one per profile kind of the shown
  // side (metrics/profile_growth.h): derived by the explain stage each time
  // the reports are written, not stored in results.json.
  std::vector<ProfileGrowth> profile_growth;
  // Who held its CPUs and the canary's medians (metrics/host_summary.h):
  // derived by the explain stage like profile_growth, not stored.
  HostSummary host_summary;
  // Why it regressed (gate/explain/): set when a check failed.
  std::optional<Explanation> explanation;
  // When the two sides ran on different kernels (a kernel A/B): the
  // kernel-side metrics that clearly differ between them, either way
  // (explain/explain.h KernelDifferences); derived like profile_growth, not
  // stored.
  std::vector<KernelShift> kernel_differences;
  std::string error;  // infrastructure failure of the scenario; empty when it ran
  double duration_s = 0;
  std::string timestamp;
};

// The check of `scenario` whose CheckName is `name`; nullptr when none is.
const CheckResult* FindCheck(const ScenarioResult& scenario, const std::string& name);

struct RunResults {
  int schema_version = 1;
  std::string suite;  // suite name
  std::string suite_file;
  Environment environment;
  std::optional<Environment> baseline_environment;
  // What the checks were compared against, in words: "merge base 1a2b3c,
  // run interleaved with head 4d5e6f in this job on host1", "stored
  // baselines in baselines/, recorded on host2 (...) at ...". Empty when
  // nothing was compared (a baseline recording: budgets only).
  std::string baseline_source;
  std::vector<ScenarioResult> scenarios;
  bool partial = false;  // the run was interrupted; what is here was measured
  bool strict = false;   // inconclusive checks fail the run (--strict), in every report
  // "K/N": the run was shard K of N (--shard); `perfgate merge` joins them
  // and fails (exit 3) when one of the N is missing. Empty: the whole suite.
  std::string shard;
  // A merge of shards that ran on more than one host: each shard ("K/N", or
  // its file where it does not say) with the host it ran on, in the order
  // merged. Empty when they all ran on one (`environment`'s).
  std::vector<std::pair<std::string, std::string>> shard_hosts;
  // Accept trailers the run left out (the nightly's --skip-bad-trailers):
  // one line each, where it was and why it could not apply.
  std::vector<std::string> skipped_trailers;
  Verdict verdict = Verdict::kPass;
  int exit_code = 0;
};

// Adds the skipped trailers to the run's, each once (a merge of shards, or
// the triage of a run, may meet one twice).
void AddSkippedTrailers(RunResults& results, const std::vector<std::string>& skipped);

// Overall verdict of a run and its exit code (docs/ARCHITECTURE.md): error → 3,
// regression → 1, inconclusive → 1 only when strict.
int ExitCodeFor(const RunResults& results, bool strict);
// Whether the check compares against a baseline (so change_pct means something).
inline bool HasBaseline(const CheckResult& check) { return !check.baseline_values.empty(); }
Verdict OverallVerdict(const RunResults& results);

}  // namespace perfgate
