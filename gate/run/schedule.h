// The one repetition driver of every run mode. A schedule says which arms (a
// scenario's variants: the scenario itself, a baseline and a candidate, bare
// and probed) run, in what order, under which probes, and when to stop;
// RunSchedule runs it and returns one result per arm. The sequential run, the
// interleaved A/B run, the overhead measurement and the evidence and traced
// repetitions are schedules, not loops of their own.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "config/suite.h"
#include "metrics/results.h"
#include "probes/trace_buffer.h"
#include "run/runner.h"

namespace perfgate {

class ScenarioProbes;

struct ScheduleArm {
  // The labels' prefix: "" (a plain run), "baseline", "candidate", "bare",
  // "probed", "evidence", "traced".
  std::string name;
  const ScenarioSpec* spec = nullptr;
  std::vector<ProbeSpec> probes;  // empty: the bare workload
  // The probes are loaded and attached before every repetition like a probed
  // arm's, then taken off their hooks (ScenarioProbes::Unhook()): the bare
  // side of `perfgate overhead`, which so pays for loading them as the probed
  // side does and for none of their events. Without a probe that can be
  // unhooked, the arm runs bare with nothing loaded. Only with
  // ProbeLifetime::kRepetition.
  bool unhooked = false;
};

// How long one set of probes stays attached.
enum class ProbeLifetime {
  // Attached once for all of the scenario's repetitions: the last arm's probes
  // measure every arm (one set of probes, so both sides pay the same).
  kScenario,
  // Attached for each repetition with that arm's own probes: idle probes of
  // one arm never tax another (the bare side of the overhead measurement).
  kRepetition,
};

// When BPF run-time statistics are on. They cost two clock reads per program
// run, so the repetitions whose numbers the verdicts rest on run without them.
enum class ProbeCostWindow {
  kWarmUps,  // during the warm-ups; without warm-ups, throughout
  kAlways,
  kNever,
};

struct Schedule {
  std::vector<ScheduleArm> arms;
  int warmup = 0;  // rounds before the measured ones, every arm
  int rounds = 1;  // measured rounds at most
  // Between 1 and `rounds`: an adaptive scenario, which `more` may stop from
  // this round on (recorded in each result's `adaptive`); 0: not adaptive.
  int min_rounds = 0;
  // The arms' order alternates from round to round (AB, BA, AB, ...), so a
  // linear drift of the machine cancels within every two rounds.
  bool alternate = true;
  ProbeLifetime lifetime = ProbeLifetime::kScenario;
  ProbeCostWindow probe_cost = ProbeCostWindow::kWarmUps;
  const TraceBuffer* trace = nullptr;  // the probes' trace records go here
  // A progress line per repetition and each new workload warning, unless the
  // run is quiet. Off for one-off repetitions that say what they do themselves.
  bool progress = true;
  // Repetitions named "<arm> repetition N"; without numbers "<arm> repetition"
  // (a one-off repetition).
  bool numbered = true;
  // Measured rounds in which some arm's repetition was tainted (the host too
  // busy: run/host_load.h TaintOf) are measured again, every arm, at most
  // this many times per scenario; the tainted repetitions go to each result's
  // `retaken`. A round is measured at most three times; once that or the
  // budget is spent, a tainted round counts, its repetitions marked. 0:
  // never retaken (one-off repetitions).
  int max_retakes = 0;
  // The host canary runs around every repetition (run/canary.h), and with
  // max_retakes and a single arm (a run against stored numbers) a
  // repetition it finds in a slow spell is tainted like one a busy host
  // disturbed. Off for repetitions no verdict rests on.
  bool canary = true;

  // More than `rounds`: a fixed scenario measured while the host was busy
  // becomes adaptive {rounds, busy_rounds} after its `rounds` (each result's
  // `adaptive`, marked busy_host), so that `more` can buy back with fair
  // pairs the power the load took; 0: a fixed count stays fixed. A round is
  // busy when some arm's repetition was tainted, kept or retaken.
  int busy_rounds = 0;

  // Called after each measured round from `min_rounds` on with every arm's
  // result so far (in `arms` order); false stops the scenario. Unset: an
  // adaptive scenario runs all `rounds`.
  std::function<bool(const std::vector<ScenarioResult>&)> more;
  // With the probes attached: before each repetition, and after each one that
  // succeeded (`arm`: its index in `arms`; warm-ups too).
  std::function<void(ScenarioProbes&)> before_repetition;
  std::function<void(size_t arm, const Repetition&, ScenarioProbes&)> after_repetition;
};

// Runs `schedule` into `results`, one per arm (in `arms` order): the measured
// repetitions, the probes' reports (on the arm whose probes ran) and the
// adaptive record. A failed repetition throws InfraError naming the scenario
// and the repetition, and the stop flag InfraError("interrupted"); `results`
// then keep what was measured before.
void RunSchedule(const Schedule& schedule, const RunOptions& options, std::vector<ScenarioResult>& results);

// The retake budget of a scenario of `rounds` measured rounds: half of them,
// at least 2.
int RetakeBudget(int rounds);

// ---- what every mode does around its schedules ------------------------------

double MonotonicSeconds();
// A scenario's result before anything ran: name, kind, timestamp, its checks' specs.
ScenarioResult NewScenarioResult(const ScenarioSpec& spec);
// The scenarios of `suite` that `names` selects (all when empty), in suite
// order; InputError naming the suite file for a name it does not have.
std::vector<const ScenarioSpec*> SelectedScenarios(const Suite& suite, const std::vector<std::string>& names);
// The argv the scenario's adapter launches; InputError for an unknown kind.
std::vector<std::string> LaunchArgv(const ScenarioSpec& spec);
// The text of ScenarioResult::error for an infrastructure error thrown while
// running the scenario (bad input is not one: it ends the run with exit 2).
std::string ScenarioErrorText(const ScenarioSpec& spec, const Error& e);

}  // namespace perfgate
