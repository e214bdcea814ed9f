#include "run/schedule.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>

#include "adapters/adapter.h"
#include "base/log.h"
#include "metrics/metric.h"
#include "run/environment.h"
#include "run/host_load.h"
#include "run/repetition.h"

namespace perfgate {

namespace {

const WorkloadAdapter& AdapterFor(const ScenarioSpec& spec) {
  const WorkloadAdapter* adapter = FindAdapter(spec.workload.kind);
  if (!adapter) throw InputError("unknown workload kind \"" + spec.workload.kind + "\"");
  return *adapter;
}

// An arm as the driver runs it.
struct Arm {
  const ScheduleArm& plan;
  const WorkloadAdapter& adapter;
  std::vector<std::string> argv;
  ScenarioResult& result;
  std::set<std::string> warned = {};  // workload warnings said once per arm
};

std::string Label(const Schedule& schedule, const Arm& arm, int round) {
  const std::string prefix = arm.plan.name.empty() ? "" : arm.plan.name + " ";
  if (round < 0) return prefix + "warm-up " + std::to_string(round + schedule.warmup + 1);
  if (!schedule.numbered) return prefix + "repetition";
  return prefix + "repetition " + std::to_string(round + 1);
}

bool MeasuresProbeCost(const Schedule& schedule, const Arm& arm, int round) {
  if (schedule.lifetime == ProbeLifetime::kRepetition && (arm.plan.probes.empty() || arm.plan.unhooked)) return false;
  switch (schedule.probe_cost) {
    case ProbeCostWindow::kWarmUps:
      return round < 0 || schedule.warmup == 0;
    case ProbeCostWindow::kAlways:
      return true;
    case ProbeCostWindow::kNever:
      return false;
  }
  return false;
}

constexpr int kMaxRetakesOfARound = 2;

// One repetition of `arm` under `probes`: honours the stop flag, says each new
// workload warning once and the progress line unless quiet; a failed
// workload throws InfraError naming the scenario and the repetition.
Repetition RunArmRepetition(const Schedule& schedule, Arm& arm, int round, ScenarioProbes& probes,
                            const RunOptions& options, HostCanary* canary) {
  const ScenarioSpec& spec = *arm.plan.spec;
  const std::string label = Label(schedule, arm, round);
  if (options.stop && options.stop->load()) throw InfraError("interrupted");
  probes.MeasureProbeCost(MeasuresProbeCost(schedule, arm, round));
  if (schedule.before_repetition) schedule.before_repetition(probes);
  Repetition rep = RunRepetition(spec, arm.adapter, arm.argv, probes, options, canary);
  probes.CountWorkloadCpu(rep);
  if (!rep.failure.empty()) throw InfraError("scenario \"" + spec.name + "\": " + label + ": workload " + rep.failure);
  if (schedule.progress) {
    // Said once per arm, even with --quiet: a metric may be missing.
    for (const auto& warning : rep.warnings) {
      if (arm.warned.insert(warning).second)
        log::Warning("%s: %s: %s\n", spec.name.c_str(), label.c_str(), warning.c_str());
    }
    if (!options.quiet) {
      auto wall = rep.metrics.find(kWorkloadWallTime);
      log::Progress("%s: %s: %.3f s\n", spec.name.c_str(), label.c_str(),
                    wall == rep.metrics.end() ? 0.0 : wall->second.value);
    }
  }
  return rep;
}

// Some arm's repetition was measured on a busy host: tainted, kept or retaken.
bool MeasuredBusy(const std::vector<ScenarioResult>& results) {
  for (const ScenarioResult& r : results) {
    if (!r.retaken.empty()) return true;
    for (const Repetition& rep : r.repetitions) {
      if (!rep.tainted.empty()) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> LaunchArgv(const ScenarioSpec& spec) { return AdapterFor(spec).LaunchArgv(spec.workload); }

void RunSchedule(const Schedule& schedule, const RunOptions& options, std::vector<ScenarioResult>& results) {
  results.clear();
  for (const ScheduleArm& plan : schedule.arms) results.push_back(NewScenarioResult(*plan.spec));
  if (schedule.arms.empty()) return;
  int rounds = schedule.rounds, min_rounds = schedule.min_rounds;
  bool adaptive = min_rounds > 0 && min_rounds < rounds;
  if (adaptive) {
    for (ScenarioResult& r : results) r.adaptive = AdaptiveRepetitions{min_rounds, rounds, results.size() > 1};
  }
  std::vector<Arm> arms;
  arms.reserve(schedule.arms.size());
  for (size_t a = 0; a < schedule.arms.size(); ++a) {
    const ScheduleArm& plan = schedule.arms[a];
    const WorkloadAdapter& adapter = AdapterFor(*plan.spec);
    arms.push_back({plan, adapter, adapter.LaunchArgv(plan.spec->workload), results[a]});
  }
  // kScenario: the last arm's probes, attached once for every arm.
  std::unique_ptr<ScenarioProbes> shared;
  if (schedule.lifetime == ProbeLifetime::kScenario) {
    const Arm& last = arms.back();
    shared = std::make_unique<ScenarioProbes>(*last.plan.spec, last.plan.probes, last.argv, options, schedule.trace);
  }
  std::vector<size_t> order(arms.size());
  const int cpu_count = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  int retakes = 0, round_retakes = 0;
  HostCanary canary;
  for (int round = -schedule.warmup; round < rounds; ++round) {
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (schedule.alternate && round % 2 != 0) std::reverse(order.begin(), order.end());
    std::vector<Repetition> measured(arms.size());
    std::string taint;
    for (size_t a : order) {
      Arm& arm = arms[a];
      std::unique_ptr<ScenarioProbes> own;
      if (!shared) {
        own = std::make_unique<ScenarioProbes>(*arm.plan.spec, arm.plan.probes, arm.argv, options, schedule.trace);
        if (arm.plan.unhooked && !own->Unhook()) {
          own.reset();  // what was unhooked goes first
          own = std::make_unique<ScenarioProbes>(*arm.plan.spec, std::vector<ProbeSpec>{}, arm.argv, options);
        }
      }
      ScenarioProbes& probes = shared ? *shared : *own;
      Repetition rep = RunArmRepetition(schedule, arm, round, probes, options, schedule.canary ? &canary : nullptr);
      const std::string spell = schedule.canary ? canary.SpellOf(CanaryOf(rep.metrics)) : "";
      if (schedule.after_repetition) schedule.after_repetition(a, rep, probes);
      // The reports of a repetition that measured the probes' cost.
      if (own && MeasuresProbeCost(schedule, arm, round)) arm.result.probes = own->Reports();
      if (round < 0) continue;
      rep.index = round;
      if (schedule.max_retakes > 0) rep.tainted = TaintOf(rep.metrics, cpu_count);
      // Arms run in pairs compare within each round, where a spell that hit
      // one side is one large ratio among the pairs' (compare.h).
      if (schedule.max_retakes > 0 && rep.tainted.empty() && arms.size() == 1) rep.tainted = spell;
      if (!rep.tainted.empty() && taint.empty()) taint = Label(schedule, arm, round) + ": " + rep.tainted;
      measured[a] = std::move(rep);
    }
    if (round < 0) continue;
    // Arms that all saw the same load make a fair pair: kept, not retaken
    // (run/host_load.h SawTheSameLoad).
    bool fair_pair = false;
    if (!taint.empty() && arms.size() > 1) {
      std::vector<const MetricSet*> loads;
      for (const Repetition& rep : measured) loads.push_back(&rep.metrics);
      fair_pair = SawTheSameLoad(loads);
    }
    if (fair_pair) {
      for (Repetition& rep : measured) {
        if (!rep.tainted.empty()) rep.tainted += "; kept: a fair pair, every arm of the round saw the same load";
      }
    } else if (!taint.empty() && retakes < schedule.max_retakes && round_retakes < kMaxRetakesOfARound) {
      // A round tainted three times running: the host stays busy, and waiting
      // for a quiet moment would spend the budget on nothing.
      ++retakes;
      ++round_retakes;
      if (!options.quiet)
        log::Progress("%s: measuring round %d again (retake %d of at most %d): %s\n",
                      arms.back().plan.spec->name.c_str(), round + 1, retakes, schedule.max_retakes, taint.c_str());
      for (size_t a = 0; a < arms.size(); ++a) {
        if (measured[a].tainted.empty()) measured[a].tainted = "retaken with its round: " + taint;
        arms[a].result.retaken.push_back(std::move(measured[a]));
      }
      --round;
      continue;
    }
    round_retakes = 0;
    for (size_t a = 0; a < arms.size(); ++a) {
      if (!measured[a].tainted.empty() && !fair_pair) measured[a].tainted += "; kept: the retake budget is spent";
      arms[a].result.repetitions.push_back(std::move(measured[a]));
    }
    if (!adaptive && round + 1 == rounds && schedule.busy_rounds > rounds && schedule.more && MeasuredBusy(results)) {
      adaptive = true;
      min_rounds = rounds;
      rounds = schedule.busy_rounds;
      for (ScenarioResult& r : results) r.adaptive = AdaptiveRepetitions{min_rounds, rounds, results.size() > 1, true};
      if (!options.quiet)
        log::Progress(
            "%s: the host was busy during its %d rounds: measuring up to %d while a check can still "
            "become a regression\n",
            arms.back().plan.spec->name.c_str(), min_rounds, rounds);
    }
    if (round >= 0 && adaptive && schedule.more && round + 1 >= min_rounds && round + 1 < rounds &&
        !schedule.more(results)) {
      if (!options.quiet)
        log::Progress("%s: stopped after %d of at most %d repetitions: no check can still regress\n",
                      arms.back().plan.spec->name.c_str(), round + 1, rounds);
      break;
    }
  }
  if (shared) arms.back().result.probes = shared->Reports();
}

int RetakeBudget(int rounds) { return std::max(2, rounds / 2); }

double MonotonicSeconds() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

ScenarioResult NewScenarioResult(const ScenarioSpec& spec) {
  ScenarioResult result;
  result.name = spec.name;
  result.workload_kind = spec.workload.kind;
  result.timestamp = UtcTimestamp();
  for (const auto& c : spec.checks) {
    CheckResult check;
    check.spec = c;
    result.checks.push_back(std::move(check));
  }
  return result;
}

std::vector<const ScenarioSpec*> SelectedScenarios(const Suite& suite, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (std::none_of(suite.scenarios.begin(), suite.scenarios.end(), [&](const auto& s) { return s.name == name; }))
      throw InputError(suite.file + ": no scenario named \"" + name + "\"");
  }
  std::vector<const ScenarioSpec*> out;
  for (const ScenarioSpec& spec : suite.scenarios) {
    if (names.empty() || std::find(names.begin(), names.end(), spec.name) != names.end()) out.push_back(&spec);
  }
  return out;
}

std::string ScenarioErrorText(const ScenarioSpec& spec, const Error& e) {
  // Probe and adapter errors name what failed; the scenario is said here once.
  const std::string what = e.what();
  return what.rfind("scenario \"", 0) == 0 ? what : "scenario \"" + spec.name + "\": " + what;
}

}  // namespace perfgate
