#include "history/history_baseline.h"

#include <algorithm>
#include <functional>
#include <map>

#include "base/error.h"

namespace perfgate {
namespace {

// A rank test needs samples on both sides; one repetition is no distribution.
constexpr size_t kMinRepetitions = 2;

std::string ShortCommit(const std::string& commit) { return commit.substr(0, 12); }

// "commit 1a2b3c of 2026-11-24T02:00:00Z on host1 (6.1.0, AMD EPYC x 2)"
std::string RunText(const Environment& e) {
  return "commit " + ShortCommit(e.git_commit) + " of " + e.timestamp + " on " +
         (e.hostname.empty() ? std::string("an unnamed host") : e.hostname) + " (" + e.kernel + ", " + e.cpu_model +
         " x " + std::to_string(e.cpu_count) + ")";
}

std::string Joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

size_t GoodRepetitions(const ScenarioResult& s) {
  return static_cast<size_t>(std::count_if(s.repetitions.begin(), s.repetitions.end(),
                                           [](const Repetition& r) { return r.measured() && !r.metrics.empty(); }));
}

// A night that failed can still be a baseline when its only regressions are
// in alert groups someone (or an accept trailer) marked expected: the new
// level is the intended one.
bool Failed(const StoredScenarioRun& run, bool expected) {
  return run.verdict == Verdict::kError || (run.verdict == Verdict::kRegression && !expected);
}

// Why a stored run cannot be a baseline of the scenario; empty when it can.
std::string Unusable(const StoredScenarioRun& run, bool expected) {
  if (!run.kept_whole) return "stored before the history kept repetitions whole";
  if (Failed(run, expected)) return "its verdict was " + ToString(run.verdict);
  if (!run.scenario->error.empty()) return "the scenario failed";
  if (GoodRepetitions(*run.scenario) < kMinRepetitions) return "fewer than 2 good repetitions";
  return "";
}

struct ScenarioChoice {
  const StoredScenarioRun* run = nullptr;    // this host's fingerprint
  const StoredScenarioRun* other = nullptr;  // else the newest good run of another machine
  std::vector<std::string> skipped;          // runs of this fingerprint, newer than the one chosen
  std::vector<int64_t> expected;             // runs that regressed only where expected
};

// The kept results of the runs looked at, all the scenarios of a run read at
// once: the run chosen for one scenario is nearly always the one chosen for
// the next, and a round trip per scenario adds up on a server.
class KeptResults {
 public:
  KeptResults(const HistoryDb& db, const std::vector<std::string>& scenarios) : db_(db), scenarios_(scenarios) {}

  // As HistoryDb::LoadScenario.
  void Load(StoredScenarioRun& run, const std::string& scenario) {
    if (!run.has_scenario || run.scenario) return;
    auto loaded = runs_.find(run.run_id);
    if (loaded == runs_.end()) loaded = runs_.emplace(run.run_id, db_.LoadScenarios(run.run_id, scenarios_)).first;
    if (auto found = loaded->second.find(scenario); found != loaded->second.end()) run.scenario = found->second;
  }

 private:
  const HistoryDb& db_;
  const std::vector<std::string>& scenarios_;
  std::map<int64_t, std::map<std::string, ScenarioResult>> runs_;
};

// Reads the results of only the runs it looks at, newest first: in a year of
// nightly runs the one chosen is nearly always among the newest few.
// `load` fills run.scenario, as HistoryDb::LoadScenario does.
ScenarioChoice Choose(const HistoryDb& db, const std::function<void(StoredScenarioRun&)>& load,
                      std::vector<StoredScenarioRun>& runs, const Environment& now,
                      const std::vector<AlertGroup>& alerts) {
  ScenarioChoice choice;
  for (StoredScenarioRun& run : runs) {
    if (run.kept_whole && !run.has_scenario) continue;  // the run did not run this scenario
    const bool here = EnvironmentMismatches(run.environment, now).empty();
    if (!here && choice.other != nullptr) continue;
    const bool expected = db.OnlyExpectedRegressions(run, alerts);
    if (expected) choice.expected.push_back(run.run_id);
    if (run.kept_whole && !Failed(run, expected)) load(run);
    if (run.kept_whole && !run.scenario && !Failed(run, expected)) continue;  // deleted meanwhile
    const std::string why = Unusable(run, expected);
    if (!why.empty()) {
      if (here)
        choice.skipped.push_back("commit " + ShortCommit(run.environment.git_commit) + " of " +
                                 run.environment.timestamp + " (" + why + ")");
      continue;
    }
    if (here) {
      choice.run = &run;
      return choice;
    }
    if (choice.other == nullptr) choice.other = &run;
  }
  return choice;
}

}  // namespace

HistoryBaselines ChooseHistoryBaselines(const HistoryDb& db, const std::string& db_name,
                                        const HistoryBaselineQuery& query) {
  // The newest few runs first, read once for all the scenarios: in a year of
  // nightly runs the one chosen is nearly always among them. Only when none
  // of them serves a scenario are all of its runs read.
  constexpr size_t kNewest = 16;
  std::map<std::string, std::vector<StoredScenarioRun>> newest =
      db.RunHeadersByScenario(query.suite, query.scenarios, query.branch, kNewest);
  const bool no_runs =
      std::all_of(newest.begin(), newest.end(), [](const auto& scenario) { return scenario.second.empty(); });
  if (!query.branch.empty() && no_runs) {  // a run of the suite on the branch would say that it exists
    const std::vector<std::string> branches = db.Branches();
    if (std::find(branches.begin(), branches.end(), query.branch) == branches.end()) {
      throw InputError(db_name + ": no run of branch \"" + query.branch + "\" in the history (branches: " +
                       (branches.empty() ? std::string("none") : Joined(branches, ", ")) + ")");
    }
  }
  HistoryBaselines out;
  const std::vector<AlertGroup> alerts = db.Alerts(query.suite);
  KeptResults kept(db, query.scenarios);
  // The runs used, each with the scenarios it serves, in the order first used.
  std::vector<std::pair<std::string, std::vector<std::string>>> used;
  std::vector<std::string> missing, skipped;
  for (const std::string& name : query.scenarios) {
    std::vector<StoredScenarioRun>& runs = newest[name];
    ScenarioChoice choice = Choose(
        db, [&](StoredScenarioRun& run) { kept.Load(run, name); }, runs, query.now, alerts);
    if (choice.run == nullptr && runs.size() == kNewest) {
      // Older runs one scenario at a time: a scenario that has failed for
      // months would otherwise read every scenario of every run.
      runs = db.ScenarioRunHeaders(query.suite, name, query.branch);
      choice = Choose(
          db, [&](StoredScenarioRun& run) { db.LoadScenario(run, name); }, runs, query.now, alerts);
    }
    for (const std::string& s : choice.skipped) skipped.push_back(name + ": " + s);
    const StoredScenarioRun* run = choice.run ? choice.run : choice.other;
    if (run == nullptr) {
      missing.push_back(name);
      out.warnings.push_back(db_name + ": no passing run of " + query.suite + "/" + name +
                             (query.branch.empty() ? "" : " on branch " + query.branch) +
                             " to compare with; its regression checks are inconclusive");
      continue;
    }
    std::string text = RunText(run->environment);
    if (std::find(choice.expected.begin(), choice.expected.end(), run->run_id) != choice.expected.end())
      text += ", whose only regressions were expected (alerts marked expected)";
    if (run == choice.other) {
      std::string difference = Joined(EnvironmentMismatches(run->environment, query.now), "; ");
      text += " — another machine than this one: its numbers are not this host's (" + difference + ")";
      out.foreign.emplace(name, std::move(difference));
    }
    auto it = std::find_if(used.begin(), used.end(), [&](const auto& u) { return u.first == text; });
    if (it == used.end()) {
      used.push_back({text, {name}});
    } else {
      it->second.push_back(name);
    }
    out.scenarios.emplace(name, *run->scenario);
    out.environments.emplace(name, run->environment);
  }

  std::string source = "the history in " + db_name + (query.branch.empty() ? "" : " (branch " + query.branch + ")");
  std::vector<std::string> parts;
  for (const auto& [text, scenarios] : used) parts.push_back(text + " for " + Joined(scenarios, ", "));
  if (!missing.empty())
    parts.push_back("no passing run of " + query.suite + " for " + Joined(missing, ", ") + " (inconclusive)");
  if (!skipped.empty()) parts.push_back("newer runs skipped: " + Joined(skipped, ", "));
  out.source = source + ": " + Joined(parts, "; ");
  return out;
}

}  // namespace perfgate
