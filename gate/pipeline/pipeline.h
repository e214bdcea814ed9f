// The gate's pipeline: load a suite, measure it (its scenarios one after the
// other, or a baseline and a candidate variant interleaved), evaluate the
// checks, capture evidence, trace, write the reports, store baselines. Each
// flow returns the results and their verdict; the commands (gate/cli/) map
// their options onto it and turn the outcome into an exit code, and a loop (a
// confirmation round, a bisection) reads the verdict, not a process's exit code.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/suite.h"
#include "metrics/metric_declaration.h"
#include "metrics/results.h"
#include "probes/probe.h"
#include "run/overhead.h"
#include "target/target.h"
#include "triage/acceptance.h"

namespace perfgate {

// What a suite may name: the probe catalog (with each probe's parameters)
// and the workload adapter table.
SuiteVocabulary GateVocabulary();
// Every metric declaration: the runner's, the adapters' and the probes'.
MetricVocabulary GateMetricVocabulary();

// How a suite is measured and judged; the flags of run, baseline record and ab.
struct GateOptions {
  std::string suite_file;
  // The suite's path as reports name it (JUnit file=): its path in the
  // project's repository, where the file read is a checkout elsewhere (the
  // pull-request gate's worktree). Empty: the path it was read from.
  std::string suite_path_in_reports;
  // What ${suite_dir} names; empty: the suite file's directory (bisect runs a
  // derived copy of the suite from its output directory, for the original's).
  std::string suite_dir;
  std::vector<std::string> scenarios;  // empty: all
  std::string baseline_dir = "baselines";
  std::string out_dir = "perfgate-out";
  std::optional<int> repetitions;  // overrides the suite
  bool strict = false;             // inconclusive checks fail
  bool fdr = false;                // false discovery rate instead of family-wise error
  bool quiet = false;
  // Command and gbench workloads under Valgrind's instruction counting, each
  // such scenario with a check on instr.total (run/instrumented.h).
  bool instrument = false;
  bool require_same_env = false;         // a baseline from another kernel/CPU is an error
  bool allow_other_host = false;         // ... or, opted in, decides regression checks anyway
  std::vector<AttachType> attach_types;  // restrict the loader (testing, debugging)
  std::string shard;                     // "K/N": this runner's share of the scenarios
  std::string run_as;                    // every scenario's workload runs as this user
  // OUT/trace.perfetto-trace of the scenario with the worst check, with
  // syscalls and off-CPU waits of at least trace_min_us as slices.
  bool trace = false;
  double trace_min_us = 1000;
  // A regression the first round flags is measured again before it fails
  // the run (compare/confirm.h): in fresh pairs of its scenario (ab), or in
  // fresh repetitions of it after a pause (against stored numbers).
  bool confirm = true;
  // perfgate run --baseline-from-history: each scenario's baseline is the
  // newest passing run in this history database recorded on a host with this
  // one's fingerprint (history/history_baseline.h), not baseline_dir's file.
  std::string history_db;
  std::string history_branch;  // ... of this branch only; empty: every branch
  // Regressions accepted within a bound (triage/acceptance.h): --accept and
  // the pull-request gate's trailers; resolved against the suite before anything runs.
  std::vector<Acceptance> acceptances;
  // The nightly's --skip-bad-trailers: a trailer from a file that is
  // malformed or names no check of the suite is left out with a note (in
  // skipped_trailers, the reading's; resolving adds its own) instead of exit 2.
  bool skip_bad_trailers = false;
  std::vector<std::string> skipped_trailers;
  // The date quarantines are judged on (YYYY-MM-DD); empty: PERFGATE_TODAY or the clock.
  std::string today;
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT/SIGTERM: keep what was measured
  // --target ssh://USER@HOST[:PORT]: the suite runs on that device
  // (pipeline/on_target.h); empty: on this host.
  Target target;
  std::string ssh_config;  // --ssh-config FILE: ssh -F FILE
  // --evidence: every scenario's evidence mode, whatever the suite says.
  std::optional<EvidenceMode> evidence;
};

// What differs between the two variants of an interleaved A/B run.
struct AbVariants {
  std::string baseline_cmd, candidate_cmd;                         // replace the argv of command workloads
  std::map<std::string, std::string> baseline_set, candidate_set;  // ${NAME} in the suite
  // What each side is, for the reports' "compared against": "merge base 1a2b3c".
  std::string baseline_label = "the baseline variant";
  std::string candidate_label = "the candidate variant";
};

struct GateOutcome {
  RunResults results;                  // checks evaluated, evidence, trace; verdict and exit code
  std::optional<RunResults> baseline;  // an interleaved run's baseline side, as measured
  // Baseline files written, with their repetitions.
  std::vector<std::pair<std::string, size_t>> stored_baselines;
  int exit_code = 0;  // results.exit_code, except where the flow says otherwise
};

// perfgate run: against the baselines stored in options.baseline_dir; with
// `update_baseline`, a complete run then replaces them.
GateOutcome GateAgainstStoredBaselines(const GateOptions& options, bool update_baseline);
// perfgate baseline record: measure and store every scenario that ran
// without error (all or none). Exit code 3 when a scenario failed or nothing
// was stored; budgets are evaluated but do not fail it.
GateOutcome RecordBaselines(const GateOptions& options);
// perfgate ab: both variants interleaved in one job, then compared; the
// baseline side is written as OUT/baseline-results.json too.
GateOutcome GateInterleaved(const GateOptions& options, const AbVariants& variants);
// perfgate compare: stored results against a baseline file (one scenario's
// baseline or a whole results file).
// A baseline recorded on another machine than the results decides no
// regression check unless `allow_other_host`.
GateOutcome CompareResultFiles(const std::string& baseline_file, const std::string& results_file,
                               const std::string& out_dir, bool strict, bool allow_other_host);
// perfgate report: the verdict of stored results again, and their reports.
GateOutcome RerenderResults(const std::string& results_file, const std::string& out_dir, bool strict);

struct MergeOptions {
  std::vector<std::string> results_files;
  std::string output_file;
  std::string baseline_dir;  // when set, re-evaluate every check against it as one run
  int shards = 0;            // the split's N (--shards): every file one of its shards; 0: as the files say
  bool strict = false;
  bool fdr = false;
  bool allow_other_host = false;  // baselines of another machine than the results' decide checks too
  // With a suite file: its quarantine and these acceptances decide the
  // merged checks again (a re-evaluation against baseline_dir drops the
  // shards' own), as in GateOptions.
  std::string suite_file;
  std::vector<Acceptance> acceptances;
  bool skip_bad_trailers = false;
  std::vector<std::string> skipped_trailers;
  std::string today;
};
// perfgate merge: shards of one suite into one results file, reports next to it.
GateOutcome MergeResultFiles(const MergeOptions& options);

// perfgate overhead: each selected scenario bare and under its probes, interleaved.
std::vector<OverheadResult> MeasureSuiteOverhead(const GateOptions& options, const OverheadOptions& overhead);

}  // namespace perfgate
