// The perfgate subcommands. Each returns the process exit code (0 pass, 1 a
// check failed, 2 bad input, 3 infrastructure); errors arrive as
// perfgate::Error and main() prints them as one line.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "bisect/bisect.h"
#include "config/suite.h"
#include "metrics/metric.h"
#include "metrics/results.h"
#include "pipeline/kernel_ab.h"
#include "pipeline/pipeline.h"
#include "probes/probe.h"

namespace perfgate {

// The options of run, baseline record and ab: the pipeline's own, with the
// attach types as typed (parsed when the command runs).
struct RunCommandOptions {
  GateOptions gate;
  std::vector<std::string> attach_types;  // restrict the loader (testing, debugging)
  std::string target;                     // --target ssh://USER@HOST[:PORT], parsed when the command runs
  bool update_baseline = false;
  // --accept texts and --accept-trailers files, parsed into gate.acceptances when the command runs.
  std::vector<std::string> accepts;
  std::vector<std::string> accept_files;
  std::string evidence;  // --evidence MODE, parsed when the command runs
};

// --accept texts and --accept-trailers files as acceptances (InputError for a
// malformed one; with `skipped`, a bad trailer's message goes there instead).
std::vector<Acceptance> ParseAcceptances(const std::vector<std::string>& texts, const std::vector<std::string>& files,
                                         std::vector<std::string>* skipped);
// --accept and --accept-trailers into the gate's acceptances.
void ParseAcceptOptions(RunCommandOptions& options);

// perfgate ab: the suite's baseline and candidate variants, interleaved.
struct AbCommandOptions {
  RunCommandOptions run;
  std::string baseline_cmd, candidate_cmd;               // replace argv of command workloads
  std::vector<std::string> baseline_set, candidate_set;  // NAME=VALUE for ${NAME} in the suite
  std::string baseline_label, candidate_label;           // what each side is, for the reports
  // --baseline-kernel / --candidate-kernel: the sides are kernels, booted in turn (pipeline/kernel_ab.h).
  KernelAbOptions kernels;
};

struct OverheadCommandOptions {
  std::string suite_file;
  std::vector<std::string> scenarios;
  int pairs = 10;
  std::string metric = kWorkloadWallTime;
  std::string json_file;  // also write the numbers here when set
  bool quiet = false;
  std::vector<std::string> attach_types;
};

// perfgate bisect: the options of the stage, with the attach types as typed.
struct BisectCommandOptions {
  BisectOptions bisect;
  std::vector<std::string> attach_types;
};

int RunCommand(const RunCommandOptions& options);
// Slowdown of each scenario under its probes vs without any (interleaved).
int OverheadCommand(const OverheadCommandOptions& options);
// Baseline and candidate of a suite run interleaved in one job, then compared.
int AbCommand(const AbCommandOptions& options);
int BaselineRecordCommand(const RunCommandOptions& options);
// Good and bad commits to the first bad one, an interleaved A/B per step;
// --dry-run prints the plan.
int BisectCommand(const BisectCommandOptions& options);
int CompareCommand(const std::string& baseline_file, const std::string& results_file, const std::string& out_dir,
                   bool strict, bool allow_other_host);
int ReportCommand(const std::string& results_file, const std::string& out_dir, bool strict);
// Shards of one suite into one results file, with the reports next to it.
int MergeCommand(const MergeOptions& options);
struct HistoryAddOptions {
  std::vector<std::string> results_files;
  std::string db_file;
  std::vector<std::string> commits;  // one per results file, in order
  std::string branch;
  std::vector<std::string> references;  // none, or one per results file: what a paired night ran against
};
struct HistoryLastCommitOptions {
  std::string db_file;
  std::string suite;   // empty: every suite
  std::string branch;  // empty: every branch
};
struct HistoryCopyOptions {
  std::string source;
  std::string destination;
};
struct TrendOptions {
  std::string db_file;
  std::string suite;  // empty: every suite
  std::string out_dir;
  std::string branch;                   // empty: every branch
  std::vector<std::string> statistics;  // empty: DefaultTrendStatistics()
  double max_p_value = 1e-4;            // stats::ChangePointOptions
  size_t min_segment = 5;
  std::string change_points_file;  // also write the change points here as JSON (what the nightly bisects)
};
struct ExportOptions {
  std::string results_file;
  std::string push_url;  // empty: print OpenMetrics to stdout
};
// Stores every statistic of a run in the history database.
int HistoryAddCommand(const HistoryAddOptions& options);
// Every run of one history into another, either backend; runs already there are kept once.
int HistoryCopyCommand(const HistoryCopyOptions& options);
// The commit of the newest stored run, on one line (nothing when there is none).
int HistoryLastCommitCommand(const HistoryLastCommitOptions& options);
// Static dashboard of the history with change points.
int TrendCommand(const TrendOptions& options);
// OpenMetrics to stdout, or the Prometheus text format to a Pushgateway.
int ExportCommand(const ExportOptions& options);
// `perfgate quarantine list SUITE`: each quarantined check with its owner, reason and expiry.
int QuarantineListCommand(const std::string& suite_file, const std::string& today);
// perfgate alerts list|show|set: the nightly alert groups of the history.
struct AlertsOptions {
  std::string db_file;
  std::string suite;                // list: only this suite
  std::vector<std::string> states;  // list: only these states
  std::string id;                   // show, set: as typed (parsed by the command)
  bool json = false;                // list, show
  std::string state, owner, bug, by, note;  // set; owner and bug "" when not given
  bool state_given = false, owner_given = false, bug_given = false;
};
int AlertsListCommand(const AlertsOptions& options);
int AlertsShowCommand(const AlertsOptions& options);
int AlertsSetCommand(const AlertsOptions& options);
int ProbesCommand();
// `perfgate metrics`: every declared metric (the runner's, the adapters', the probes').
int MetricsCommand(bool markdown);
int DoctorCommand(bool fix);

// Parses argv and dispatches; the whole of main().
int PerfgateMain(int argc, char** argv);

}  // namespace perfgate
