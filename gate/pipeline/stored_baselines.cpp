#include "pipeline/stored_baselines.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "base/log.h"
#include "baseline/store.h"
#include "history/history_baseline.h"
#include "pipeline/dir_lock.h"
#include "run/environment.h"

namespace perfgate {

namespace {

// Baselines recorded on another kernel, CPU model or CPU count: said before
// anything runs, or with --require-same-env an error.
void CheckBaselineEnvironments(const Suite& suite, const std::map<std::string, Baseline>& baselines,
                               const GateOptions& o, const Environment& now) {
  for (const auto& [scenario, baseline] : baselines) {
    const std::string what = MachineDifference(baseline.environment, now);
    if (what.empty()) continue;
    const std::string file = BaselinePath(o.baseline_dir, suite.name, scenario);
    if (o.require_same_env) throw InputError(file + ": recorded on a different machine: " + what);
    log::Warning("%s: recorded on a different machine: %s; %s\n", file.c_str(), what.c_str(),
                 o.allow_other_host ? "compared anyway (--allow-other-host)"
                                    : "its regression checks are inconclusive (--allow-other-host compares anyway)");
  }
}

}  // namespace

std::string RecordedOn(const Environment& e) {
  std::string text = (e.hostname.empty() ? std::string("an unnamed host") : e.hostname) + " (" + e.kernel + ", " +
                     e.cpu_model + " x " + std::to_string(e.cpu_count) + ")";
  if (!e.timestamp.empty()) text += " at " + e.timestamp;
  if (!e.git_commit.empty()) text += ", commit " + e.git_commit;
  return text;
}

std::string StoredSource(const std::string& what, const Environment& recorded, const Environment& now) {
  const bool here = EnvironmentMismatches(recorded, now).empty();
  return what + ", recorded on " + RecordedOn(recorded) +
         (here ? "" : " — another machine than this one: its numbers are not this host's");
}

std::string MachineDifference(const Environment& recorded, const Environment& now) {
  std::string what;
  for (const auto& m : EnvironmentMismatches(recorded, now)) what += (what.empty() ? "" : "; ") + m;
  return what;
}

StoredBaselines StoredBaselines::From(std::map<std::string, Baseline> baselines, const std::string& dir,
                                      const Environment& now, bool allow_other_host) {
  StoredBaselines out;
  if (!baselines.empty()) out.environment = baselines.begin()->second.environment;
  for (auto& [name, b] : baselines) {
    const std::string difference = MachineDifference(b.environment, now);
    if (!difference.empty() && !allow_other_host) out.foreign.emplace(name, difference);
    out.scenarios.emplace(name, std::move(b.scenario));
  }
  out.source = out.environment ? StoredSource("stored baselines in " + dir, *out.environment, now)
                               : "no stored baseline in " + dir;
  return out;
}

StoredBaselines LoadSuiteBaselines(const Suite& suite, const GateOptions& o) {
  std::map<std::string, Baseline> out;
  {
    // Not while another perfgate replaces them: all of its baselines or none.
    DirectoryLock lock(o.baseline_dir, DirectoryLock::Mode::kReadBaselines, "--baseline-dir");
    for (const auto& s : suite.scenarios) {
      if (!o.scenarios.empty() && std::find(o.scenarios.begin(), o.scenarios.end(), s.name) == o.scenarios.end())
        continue;
      if (auto b = LoadBaseline(BaselinePath(o.baseline_dir, suite.name, s.name))) out.emplace(s.name, std::move(*b));
    }
  }
  const Environment now = CaptureEnvironment();
  CheckBaselineEnvironments(suite, out, o, now);
  return StoredBaselines::From(std::move(out), o.baseline_dir, now, o.allow_other_host);
}

StoredBaselines LoadHistoryBaselines(const Suite& suite, const GateOptions& o) {
  const HistoryDb db = HistoryDb::OpenForReading(o.history_db);
  HistoryBaselineQuery query{suite.name, {}, o.history_branch, CaptureEnvironment()};
  for (const auto& s : suite.scenarios) {
    if (o.scenarios.empty() || std::find(o.scenarios.begin(), o.scenarios.end(), s.name) != o.scenarios.end())
      query.scenarios.push_back(s.name);
  }
  HistoryBaselines history = ChooseHistoryBaselines(db, db.Name(), query);
  if (o.require_same_env && !history.foreign.empty()) {
    const auto& [scenario, difference] = *history.foreign.begin();
    throw InputError(db.Name() + ": no passing run of " + suite.name + "/" + scenario +
                     " recorded on a host like this one; the newest is of a different machine: " + difference);
  }
  for (const std::string& warning : history.warnings) log::Warning("%s\n", warning.c_str());
  for (const auto& [scenario, difference] : history.foreign) {
    std::fprintf(stderr,
                 "perfgate: warning: %s: no passing run of %s/%s on a host like this one; the newest is of "
                 "a different machine: %s; %s\n",
                 db.Name().c_str(), suite.name.c_str(), scenario.c_str(), difference.c_str(),
                 o.allow_other_host ? "compared anyway (--allow-other-host)"
                                    : "its regression checks are inconclusive (--allow-other-host compares anyway)");
  }
  StoredBaselines out;
  // The reports flag a baseline of another machine by its environment: one
  // of another machine, when a scenario has one, else the first.
  if (!history.foreign.empty()) {
    out.environment = history.environments.at(history.foreign.begin()->first);
  } else if (!history.environments.empty()) {
    out.environment = history.environments.begin()->second;
  }
  out.scenarios = std::move(history.scenarios);
  if (!o.allow_other_host) out.foreign = std::move(history.foreign);
  out.source = std::move(history.source);
  return out;
}

}  // namespace perfgate
