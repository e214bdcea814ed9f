// perfgate bisect: from a good and a bad commit of a git repository to the
// first bad commit. Each commit is checked out in a worktree and built by the
// project's own build command (once: the builds are kept by commit), and
// judged by an interleaved A/B against the good endpoint through the gate's
// pipeline (pipeline/pipeline.h), whose adaptive repetitions and confirmation
// round decide when a step has seen enough. The endpoints are confirmed first:
// when the bad commit does not fail against the good one on this host there
// is nothing to bisect.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "bisect/git_repo.h"
#include "metrics/results.h"
#include "probes/probe.h"

namespace perfgate {

struct BisectOptions {
  std::string suite_file;
  std::string repo_dir = ".";
  std::string good, bad;              // revisions
  std::string build_cmd;              // run with bash -c in the commit's checkout
  std::string build_dir = ".";        // where the build puts its output, relative to the checkout
  std::string dir_var = "BUILD_DIR";  // the suite variable that names that directory
  // "SCENARIO/CHECK": the regression checks that moved, by check name or
  // metric; a metric without a check in the suite ("SCENARIO/METRIC" or
  // "SCENARIO/METRIC:STATISTIC") gets a regression check of
  // max_regression_pct (absent: the metric's default, DefaultMaxRegressionPct).
  // Empty: every regression check of the suite.
  std::vector<std::string> checks;
  std::optional<double> max_regression_pct;
  int max_steps = 16;  // builds and comparisons after the endpoints
  // Per side of one A/B round: caps the suite's adaptive maximum, and bounds
  // the rounds an ambiguous step adds (each doubles the repetitions).
  // Default: twice the suite's maximum.
  std::optional<int> max_repetitions;
  bool dry_run = false;
  // Every scenario that can runs under Valgrind, its instructions counted
  // (as the suite key `instrument`, which a suite may say itself).
  bool instrument = false;
  std::string out_dir = "bisect-out";
  std::string work_dir;  // checkouts and builds, by commit; empty: OUT/builds
  std::string user;      // who builds and runs the workloads; empty: nobody when root, else this user
  bool quiet = false;
  std::vector<AttachType> attach_types;
  const std::atomic<bool>* stop = nullptr;
};

// One check's numbers in one A/B.
struct BisectCheck {
  std::string scenario;
  std::string check;  // its name
  Verdict verdict = Verdict::kError;
  std::string unit;
  double good_median = 0;
  double candidate_median = 0;
  double change_pct = 0;
  std::optional<double> p_adjusted;
  int repetitions = 0;  // per side
  std::string message;
};

enum class StepVerdict { kGood, kBad, kSkipped };
std::string ToString(StepVerdict v);

struct BisectStep {
  int number = 0;    // 0: the endpoints' confirmation
  size_t index = 0;  // 1-based position in the range (1 = oldest after good)
  CommitInfo commit;
  StepVerdict verdict = StepVerdict::kSkipped;
  std::string reason;  // why: the checks that decided, or why the commit was skipped
  bool build_cached = false;
  int rounds = 0;         // A/B rounds: more than 1 when the first left the step ambiguous
  std::string build_log;  // path
  std::vector<BisectCheck> checks;
  std::vector<std::string> why;  // kernel metrics that moved with a bad commit (gate/explain/)
  std::string report_dir;        // this A/B's reports, relative to the out dir; empty when none ran
  double seconds = 0;
};

enum class BisectOutcome {
  kPlan,           // --dry-run
  kNotReproduced,  // the bad endpoint does not fail against the good one here
  kCulprit,        // exactly one first bad commit
  kSuspects,       // skipped commits (or --max-steps) leave several
};
std::string ToString(BisectOutcome o);

struct BisectResult {
  BisectOutcome outcome = BisectOutcome::kPlan;
  std::string summary;  // one line
  std::string repo;
  std::string suite_file;
  std::vector<std::string> checks;  // "scenario/check" as judged
  CommitInfo good, bad;
  std::vector<CommitInfo> range;  // good..bad, first parents, oldest first
  int expected_steps = 0;
  std::optional<BisectStep> confirmation;
  std::vector<BisectStep> steps;
  std::vector<CommitInfo> suspects;  // the culprit alone when found
  std::vector<std::string> why;      // the culprit's
  std::string culprit_report_dir;
};

// The plan: the range and the expected steps, after every input check a run
// makes (repository, commits, ancestry, suite, checks). InputError when bad.
BisectResult PlanBisect(const BisectOptions& options);
// The bisection. InputError for bad input (a build command that fails on both
// endpoints included), InfraError when an endpoint cannot be built or measured.
BisectResult RunBisect(const BisectOptions& options);

}  // namespace perfgate
