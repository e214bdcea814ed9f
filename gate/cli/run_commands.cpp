// run, baseline record, compare, report: suite → runner → compare → reports.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>

#include "adapters/adapter.h"
#include "baseline/store.h"
#include "cli/commands.h"
#include "cli/dir_lock.h"
#include "cli/shard.h"
#include "compare/adaptive.h"
#include "compare/compare.h"
#include "config/credentials.h"
#include "config/suite.h"
#include "metrics/error.h"
#include "metrics/merge.h"
#include "metrics/results_json.h"
#include "probes/probe.h"
#include "report/reporter.h"
#include "report/format.h"
#include "run/environment.h"
#include "run/evidence_run.h"
#include "run/interleaved.h"
#include "run/overhead.h"
#include "run/runner.h"

namespace perfgate {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_stop{false};

void OnStopSignal(int) { g_stop.store(true); }

// SIGINT/SIGTERM end the current repetition (workload killed), keep what was
// measured and exit 3; no SA_RESTART so blocking waits notice at once.
void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

std::string SelfDir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}


Suite LoadSuiteFile(const std::string& file, std::map<std::string, std::string> overrides = {}) {
  return LoadSuite(file, CliVocabulary(), {.suite_dir = "", .perfgate_dir = SelfDir(), .overrides = std::move(overrides)});
}

// --baseline-set NAME=VALUE ... as a variable map.
std::map<std::string, std::string> ParseAssignments(const std::vector<std::string>& items, const std::string& option) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == 0 || eq == std::string::npos) throw InputError(option + ": expected NAME=VALUE, got \"" + item + "\"");
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

// --baseline-cmd / --candidate-cmd: the command line replaces the argv of
// every selected scenario, which must be of a kind that takes its command
// line in argv (a command workload).
void ReplaceCommand(Suite& suite, const std::string& command, const std::string& option,
                    const std::vector<std::string>& selected) {
  if (command.empty()) return;
  const std::vector<std::string> argv = SplitCommandLine(command, option);
  for (ScenarioSpec& s : suite.scenarios) {
    if (!selected.empty() && std::find(selected.begin(), selected.end(), s.name) == selected.end()) continue;
    const WorkloadAdapter* adapter = FindAdapter(s.workload.kind);
    if (!adapter || !adapter->keys().argv) {
      throw InputError(option + ": scenario \"" + s.name + "\" runs a " + s.workload.kind +
                       " workload; the option replaces the argv of command workloads (use " +
                       option.substr(0, option.rfind('-')) + "-set NAME=VALUE with ${NAME} in the suite)");
    }
    s.workload.argv = argv;
    s.workload.shell = false;
  }
}

// The suite with only this runner's shard of the scenarios (all without --shard).
Suite LoadRunSuite(const RunCommandOptions& o, std::map<std::string, std::string> overrides = {}) {
  Suite suite = LoadSuiteFile(o.suite_file, std::move(overrides));
  if (!o.run_as.empty()) {
    ResolveUser(o.run_as, "--run-as");
    for (ScenarioSpec& s : suite.scenarios) s.run_as = o.run_as;
  }
  if (!o.shard.empty()) SelectShard(suite, o.scenarios, ParseShard(o.shard));
  return suite;
}

std::vector<AttachType> ParseAttachTypes(const std::vector<std::string>& names) {
  std::vector<AttachType> out;
  for (const auto& n : names) {
    bool found = false;
    for (AttachType t : {AttachType::kFentry, AttachType::kTpBtf, AttachType::kRawTp, AttachType::kTracepoint,
                         AttachType::kKprobe, AttachType::kUprobe, AttachType::kPerfEvent}) {
      if (ToString(t) == n) {
        out.push_back(t);
        found = true;
      }
    }
    if (!found) throw InputError("--attach-types: unknown attach type \"" + n + "\"");
  }
  return out;
}

// Baselines for the scenarios that will run, loaded before anything runs so a
// corrupt file fails fast (exit 2) instead of after minutes of measuring.
std::map<std::string, Baseline> LoadSuiteBaselines(const Suite& suite, const RunCommandOptions& o) {
  std::map<std::string, Baseline> out;
  // Not while another perfgate replaces them: all of its baselines or none.
  DirectoryLock lock(o.baseline_dir, DirectoryLock::Mode::kReadBaselines, "--baseline-dir");
  for (const auto& s : suite.scenarios) {
    if (!o.scenarios.empty() && std::find(o.scenarios.begin(), o.scenarios.end(), s.name) == o.scenarios.end()) continue;
    if (auto b = LoadBaseline(BaselinePath(o.baseline_dir, suite.name, s.name))) out.emplace(s.name, std::move(*b));
  }
  return out;
}

void Finish(RunResults& results, const std::map<std::string, ScenarioResult>& baselines,
            std::optional<Environment> baseline_env, bool strict, bool fdr) {
  CompareOptions co;
  co.fdr = fdr;
  EvaluateChecks(results, baselines, co);
  for (ScenarioResult& s : results.scenarios) {
    if (auto b = baselines.find(s.name); b != baselines.end()) s.baseline_repetitions = b->second.repetitions;
  }
  AddBaselineEvidence(results, baselines);
  results.baseline_environment = std::move(baseline_env);
  results.verdict = OverallVerdict(results);
  results.exit_code = ExitCodeFor(results, strict);
}

// The evidence repetitions, once the verdicts are known: of every scenario
// whose check failed (`evidence: on-failure`) or of every scenario
// (`always`). With `baseline_suite` (perfgate ab), the baseline variant gets
// one too. A repetition that fails is said and leaves the scenario without
// evidence; the verdict stands.
void CaptureEvidence(const Suite& suite, const RunCommandOptions& o, RunResults& results,
                     const Suite* baseline_suite = nullptr, const RunResults* baseline_results = nullptr) {
  if (results.partial) return;
  RunOptions ro;
  ro.allowed_attach_types = ParseAttachTypes(o.attach_types);
  ro.stop = &g_stop;
  ro.quiet = o.quiet;
  auto spec_of = [](const Suite& in, const std::string& name) -> const ScenarioSpec* {
    for (const auto& s : in.scenarios) {
      if (s.name == name) return &s;
    }
    return nullptr;
  };
  for (ScenarioResult& scenario : results.scenarios) {
    const ScenarioSpec* spec = spec_of(suite, scenario.name);
    if (spec == nullptr || g_stop.load()) continue;
    const std::optional<std::string> reason = EvidenceReason(spec->evidence, scenario);
    if (!reason) continue;
    if (!o.quiet)
      std::fprintf(stderr, "perfgate: %s: evidence repetition (%s)\n", scenario.name.c_str(), reason->c_str());
    try {
      scenario.evidence.push_back(
          EvidenceRepetition(*spec, ro, "candidate", *reason, MedianWallTime(scenario.repetitions)));
      if (baseline_suite != nullptr && baseline_results != nullptr) {
        const ScenarioSpec* b_spec = spec_of(*baseline_suite, scenario.name);
        const ScenarioResult* b_result = nullptr;
        for (const auto& b : baseline_results->scenarios) {
          if (b.name == scenario.name) b_result = &b;
        }
        if (b_spec != nullptr && b_result != nullptr) {
          if (!o.quiet) std::fprintf(stderr, "perfgate: %s: baseline evidence repetition\n", scenario.name.c_str());
          scenario.evidence.push_back(
              EvidenceRepetition(*b_spec, ro, "baseline", *reason, MedianWallTime(b_result->repetitions)));
        }
      }
    } catch (const Error& e) {
      if (e.code() == ExitCode::kBadInput) throw;
      std::fprintf(stderr, "perfgate: warning: scenario \"%s\": no evidence: %s\n", scenario.name.c_str(), e.what());
    }
  }
}

void PrintSummary(const RunResults& r, const std::string& out_dir) {
  int counts[5] = {0, 0, 0, 0, 0};
  for (const auto& s : r.scenarios) {
    for (const auto& c : s.checks) counts[static_cast<int>(c.verdict)]++;
    if (!s.error.empty()) std::fprintf(stderr, "perfgate: error: %s\n", OneLine(s.error).c_str());
    for (const auto& c : s.checks) {
      if (c.verdict == Verdict::kRegression || c.verdict == Verdict::kError || c.verdict == Verdict::kInconclusive) {
        std::fprintf(stderr, "perfgate: %s: %s/%s: %s\n", ToString(c.verdict).c_str(), OneLine(s.name).c_str(),
                     OneLine(c.spec.name).c_str(), OneLine(c.message).c_str());
      }
    }
  }
  std::printf("perfgate: %s%s — %d passed, %d regressed, %d improved, %d inconclusive, %d errors; reports in %s\n",
              ToString(r.verdict).c_str(), r.partial ? " (partial run)" : "", counts[0], counts[1], counts[2],
              counts[3], counts[4], out_dir.c_str());
}

size_t RegressionChecks(const Suite& suite, const std::vector<std::string>& selected) {
  size_t n = 0;
  for (const auto& s : suite.scenarios) {
    if (!selected.empty() && std::find(selected.begin(), selected.end(), s.name) == selected.end()) continue;
    for (const auto& c : s.checks) n += c.type == CheckSpec::Type::kRegression;
  }
  return n;
}

// `baselines`: what adaptive scenarios are compared with at each look; none
// (baseline record) runs them to their maximum.
// What every measuring command passes to the runner; writes the partial
// results.json after each scenario.
RunOptions MeasureOptions(const RunCommandOptions& o) {
  InstallStopHandlers();
  RunOptions ro;
  ro.scenarios = o.scenarios;
  ro.repetitions = o.repetitions;
  ro.allowed_attach_types = ParseAttachTypes(o.attach_types);
  ro.stop = &g_stop;
  ro.quiet = o.quiet;
  // Keep what was measured so far if perfgate is stopped: a partial results.json.
  ro.on_scenario_done = [&](const RunResults& so_far) {
    RunResults partial = so_far;
    partial.partial = true;
    fs::create_directories(o.out_dir);
    WriteFileAtomic((fs::path(o.out_dir) / "results.json").string(), ToJson(partial).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  };
  return ro;
}

RunResults MeasureSuite(const Suite& suite, const RunCommandOptions& o,
                        const std::map<std::string, ScenarioResult>* baselines = nullptr) {
  RunOptions ro = MeasureOptions(o);
  const Environment environment = CaptureEnvironment();
  CompareOptions co;
  co.fdr = o.fdr;
  const size_t family_size = RegressionChecks(suite, o.scenarios);
  if (baselines != nullptr) {
    ro.more_repetitions = [&](const ScenarioResult& so_far) {
      auto it = baselines->find(so_far.name);
      return NeedsMoreRepetitions(so_far, it == baselines->end() ? nullptr : &it->second, environment, co, family_size);
    };
  }
  RunResults results = RunSuite(suite, ro);
  if (g_stop.load()) results.partial = true;
  return results;
}

std::map<std::string, ScenarioResult> Scenarios(const std::map<std::string, Baseline>& baselines) {
  std::map<std::string, ScenarioResult> out;
  for (const auto& [name, b] : baselines) out.emplace(name, b.scenario);
  return out;
}

std::optional<Environment> FirstEnvironment(const std::map<std::string, Baseline>& baselines) {
  if (baselines.empty()) return std::nullopt;
  return baselines.begin()->second.environment;
}

// Stores the baselines of the scenarios that ran without error, all or none,
// while no other perfgate reads or writes the baseline directory.
void StoreBaselines(const std::string& baseline_dir, const std::vector<std::pair<std::string, Baseline>>& files) {
  if (files.empty()) return;
  DirectoryLock lock(baseline_dir, DirectoryLock::Mode::kWriteBaselines, "--baseline-dir");
  try {
    SaveBaselines(files);
  } catch (const Error& e) {
    throw Error(e.code(), std::string(e.what()) + " (no baseline was changed)");
  }
}

}  // namespace

SuiteVocabulary CliVocabulary() {
  SuiteVocabulary v;
  for (const auto& p : ProbeCatalog()) {
    v.probes.push_back(p.name);
    for (const auto& param : p.parameters) v.probe_parameters[p.name][param.name] = ToString(param.type);
  }
  v.workload_kinds = AdapterKinds();
  v.workload_keys = AdapterKeys();
  return v;
}

// Baselines recorded on another kernel, CPU model or CPU count: a warning, or
// with --require-same-env an error before anything runs.
void CheckBaselineEnvironments(const Suite& suite, const std::map<std::string, Baseline>& baselines,
                               const RunCommandOptions& o) {
  const Environment now = CaptureEnvironment();
  for (const auto& [scenario, baseline] : baselines) {
    std::vector<std::string> mismatches = EnvironmentMismatches(baseline.environment, now);
    if (mismatches.empty()) continue;
    std::string what;
    for (const auto& m : mismatches) what += (what.empty() ? "" : "; ") + m;
    const std::string file = BaselinePath(o.baseline_dir, suite.name, scenario);
    if (o.require_same_env) throw InputError(file + ": recorded on a different machine: " + what);
    std::fprintf(stderr, "perfgate: warning: %s: recorded on a different machine: %s\n", file.c_str(), what.c_str());
  }
}

int RunCommand(const RunCommandOptions& o) {
  Suite suite = LoadRunSuite(o);
  DirectoryLock out_lock(o.out_dir, DirectoryLock::Mode::kReportsOut, "--out");
  auto baselines = LoadSuiteBaselines(suite, o);
  CheckBaselineEnvironments(suite, baselines, o);
  const std::map<std::string, ScenarioResult> recorded = Scenarios(baselines);
  RunResults results = MeasureSuite(suite, o, &recorded);
  Finish(results, recorded, FirstEnvironment(baselines), o.strict, o.fdr);
  CaptureEvidence(suite, o, results);
  AddBaselineEvidence(results, recorded);
  if (o.trace && !results.partial) TraceWorstScenario(suite, o, ParseAttachTypes(o.attach_types), &g_stop, results);
  WriteReports(results, o.out_dir);
  PrintSummary(results, o.out_dir);
  if (o.update_baseline && !results.partial) {
    std::vector<std::pair<std::string, Baseline>> files;
    for (const auto& s : results.scenarios) {
      if (!s.error.empty()) continue;
      files.push_back({BaselinePath(o.baseline_dir, suite.name, s.name), {suite.name, results.environment, s}});
    }
    StoreBaselines(o.baseline_dir, files);
  }
  return results.exit_code;
}

int BaselineRecordCommand(const RunCommandOptions& o) {
  Suite suite = LoadRunSuite(o);
  // Names that cannot be baseline files are refused before anything runs.
  for (const auto& s : suite.scenarios) BaselinePath(o.baseline_dir, suite.name, s.name);
  DirectoryLock out_lock(o.out_dir, DirectoryLock::Mode::kReportsOut, "--out");
  RunResults results = MeasureSuite(suite, o);
  // Budgets still apply to a recorded baseline; regressions have nothing to compare with.
  Finish(results, {}, std::nullopt, o.strict, o.fdr);
  CaptureEvidence(suite, o, results);  // `evidence: always` stores it with the baseline
  WriteReports(results, o.out_dir);
  if (results.partial) {
    std::fprintf(stderr, "perfgate: interrupted; no baseline written\n");
    return 3;
  }
  std::vector<std::pair<std::string, Baseline>> files;
  for (const auto& s : results.scenarios) {
    if (!s.error.empty()) {
      std::fprintf(stderr, "perfgate: error: %s (baseline not written)\n", s.error.c_str());
      continue;
    }
    files.push_back({BaselinePath(o.baseline_dir, suite.name, s.name), {suite.name, results.environment, s}});
  }
  StoreBaselines(o.baseline_dir, files);
  for (const auto& [file, b] : files) {
    std::printf("perfgate: baseline %s (%zu repetitions)\n", file.c_str(), b.scenario.repetitions.size());
  }
  const size_t stored = files.size();
  for (const auto& s : results.scenarios) {
    if (!s.error.empty()) return 3;
  }
  return stored > 0 ? 0 : 3;
}

int AbCommand(const AbCommandOptions& o) {
  const RunCommandOptions& r = o.run;
  if (o.baseline_cmd.empty() && o.candidate_cmd.empty() && o.baseline_set.empty() && o.candidate_set.empty())
    throw InputError("ab: say what differs: --baseline-cmd/--candidate-cmd or --baseline-set/--candidate-set");
  Suite baseline = LoadRunSuite(r, ParseAssignments(o.baseline_set, "--baseline-set"));
  Suite candidate = LoadRunSuite(r, ParseAssignments(o.candidate_set, "--candidate-set"));
  ReplaceCommand(baseline, o.baseline_cmd, "--baseline-cmd", r.scenarios);
  ReplaceCommand(candidate, o.candidate_cmd, "--candidate-cmd", r.scenarios);
  DirectoryLock out_lock(r.out_dir, DirectoryLock::Mode::kReportsOut, "--out");

  RunOptions ro = MeasureOptions(r);
  CompareOptions co;
  co.fdr = r.fdr;
  const size_t family_size = RegressionChecks(candidate, r.scenarios);
  const Environment environment = CaptureEnvironment();
  InterleavedRun run = RunInterleaved(baseline, candidate, ro, [&](const ScenarioResult& c, const ScenarioResult& b) {
    return NeedsMoreRepetitions(c, &b, environment, co, family_size);
  });
  if (g_stop.load()) run.candidate.partial = run.baseline.partial = true;

  std::map<std::string, ScenarioResult> sides;
  for (const ScenarioResult& s : run.baseline.scenarios) {
    if (s.error.empty()) sides.emplace(s.name, s);
  }
  Finish(run.candidate, sides, run.baseline.environment, r.strict, r.fdr);
  CaptureEvidence(candidate, r, run.candidate, &baseline, &run.baseline);
  WriteReports(run.candidate, r.out_dir);
  // The baseline side as a results file of its own, for `perfgate compare`.
  WriteFileAtomic((fs::path(r.out_dir) / "baseline-results.json").string(), ToJson(run.baseline).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  PrintSummary(run.candidate, r.out_dir);
  return run.candidate.exit_code;
}

int CompareCommand(const std::string& baseline_file, const std::string& results_file, const std::string& out_dir,
                   bool strict) {
  RunResults candidate = ReadResultsFile(results_file);
  DirectoryLock out_lock(out_dir, DirectoryLock::Mode::kReportsOut, "--out");
  nlohmann::json bj = ReadJsonFile(baseline_file);
  std::map<std::string, ScenarioResult> baselines;
  std::optional<Environment> env;
  if (bj.is_object() && bj.contains("scenario")) {
    Baseline b = BaselineFromJson(bj, baseline_file);
    env = b.environment;
    baselines.emplace(b.scenario.name, std::move(b.scenario));
  } else {
    RunResults base = ResultsFromJson(bj, baseline_file);
    env = base.environment;
    for (auto& s : base.scenarios) baselines.emplace(s.name, std::move(s));
  }
  Finish(candidate, baselines, env, strict, false);
  WriteReports(candidate, out_dir);
  PrintSummary(candidate, out_dir);
  return candidate.exit_code;
}

int ReportCommand(const std::string& results_file, const std::string& out_dir, bool strict) {
  RunResults results = ReadResultsFile(results_file);
  DirectoryLock out_lock(out_dir, DirectoryLock::Mode::kReportsOut, "--out");
  results.verdict = OverallVerdict(results);
  results.exit_code = ExitCodeFor(results, strict);
  WriteReports(results, out_dir);
  PrintSummary(results, out_dir);
  return results.exit_code;
}

int MergeCommand(const MergeCommandOptions& o) {
  std::vector<ShardResults> shards;
  for (const auto& file : o.results_files) shards.push_back({file, ReadResultsFile(file)});
  RunResults merged = MergeShards(shards, o.strict);
  std::string out_dir = fs::path(o.output_file).parent_path().string();
  if (out_dir.empty()) out_dir = ".";
  DirectoryLock out_lock(out_dir, DirectoryLock::Mode::kReportsOut, "-o");
  if (!o.baseline_dir.empty()) {
    // One family of tests across all shards, as if the suite had run on one runner.
    DirectoryLock baseline_lock(o.baseline_dir, DirectoryLock::Mode::kReadBaselines, "--baseline-dir");
    std::map<std::string, Baseline> baselines;
    for (const auto& s : merged.scenarios) {
      auto b = LoadBaseline(BaselinePath(o.baseline_dir, merged.suite, s.name));
      if (b) baselines.emplace(s.name, std::move(*b));
    }
    Finish(merged, Scenarios(baselines), FirstEnvironment(baselines), o.strict, o.fdr);
  }
  WriteReports(merged, out_dir);
  // WriteReports wrote results.json; another name gets its own copy.
  if (fs::path(o.output_file).filename() != "results.json") {
    WriteFileAtomic(o.output_file, ToJson(merged).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
  PrintSummary(merged, out_dir);
  return merged.exit_code;
}

int OverheadCommand(const OverheadCommandOptions& o) {
  Suite suite = LoadSuiteFile(o.suite_file);
  InstallStopHandlers();
  RunOptions ro;
  ro.scenarios = o.scenarios;
  ro.allowed_attach_types = ParseAttachTypes(o.attach_types);
  ro.stop = &g_stop;
  ro.quiet = o.quiet;
  OverheadOptions options;
  options.pairs = o.pairs;
  options.metric = o.metric;
  std::vector<OverheadResult> results = MeasureOverhead(suite, ro, options);

  nlohmann::json out = nlohmann::json::array();
  bool failed = false;
  std::printf("%-28s %12s %12s %9s %19s\n", "scenario", "bare", "probed", "slowdown", "95 % interval");
  for (const OverheadResult& r : results) {
    nlohmann::json j = {{"scenario", r.scenario}, {"metric", o.metric}};
    if (!r.error.empty()) {
      failed = true;
      std::printf("%-28s error: %s\n", r.scenario.c_str(), r.error.c_str());
      j["error"] = r.error;
      out.push_back(j);
      continue;
    }
    std::string interval = r.slowdown_low && r.slowdown_high
                               ? "[" + FormatNumber(*r.slowdown_low) + "x, " + FormatNumber(*r.slowdown_high) + "x]"
                               : "";
    std::printf("%-28s %12s %12s %8sx %19s\n", r.scenario.c_str(), FormatNumber(r.bare_median).c_str(),
                FormatNumber(r.probed_median).c_str(), FormatNumber(r.slowdown).c_str(), interval.c_str());
    j.update({{"bare", r.bare},
              {"probed", r.probed},
              {"bare_median", r.bare_median},
              {"probed_median", r.probed_median},
              {"slowdown", r.slowdown}});
    if (r.slowdown_low) j["slowdown_low"] = *r.slowdown_low;
    if (r.slowdown_high) j["slowdown_high"] = *r.slowdown_high;
    nlohmann::json probes = nlohmann::json::array();
    for (const ProbeReport& p : r.probes) {
      std::optional<double> share = p.CpuShare();
      std::string per_event =
          p.run_count > 0 ? FormatNumber(static_cast<double>(p.run_time_ns) / static_cast<double>(p.run_count)) : "-";
      std::printf("    %-12s %10llu events %8s ns/event %9s of workload CPU\n", p.name.c_str(),
                  static_cast<unsigned long long>(p.run_count), per_event.c_str(),
                  share ? (FormatNumber(100 * *share) + " %").c_str() : "-");
      probes.push_back({{"name", p.name}, {"events", p.run_count}, {"run_time_ns", p.run_time_ns},
                        {"workload_cpu_ns", p.workload_cpu_ns}});
    }
    j["probes"] = probes;
    out.push_back(j);
  }
  if (!o.json_file.empty()) WriteFileAtomic(o.json_file, out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return static_cast<int>(failed || g_stop.load() ? ExitCode::kInfra : ExitCode::kPass);
}

}  // namespace perfgate
