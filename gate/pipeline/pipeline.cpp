#include "pipeline/pipeline.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include "adapters/adapter.h"
#include "adapters/tool_output.h"
#include "base/error.h"
#include "base/log.h"
#include "baseline/store.h"
#include "compare/adaptive.h"
#include "compare/compare.h"
#include "compare/confirm.h"
#include "config/credentials.h"
#include "config/shard.h"
#include "explain/explain.h"
#include "history/history_baseline.h"
#include "metrics/merge.h"
#include "metrics/results_json.h"
#include "pipeline/confirmation.h"
#include "pipeline/dir_lock.h"
#include "pipeline/gate_steps.h"
#include "pipeline/stored_baselines.h"
#include "pipeline/trace_step.h"
#include "report/reporter.h"
#include "run/environment.h"
#include "run/evidence_run.h"
#include "run/instrumented.h"
#include "run/interleaved.h"
#include "run/runner.h"
#include "run/schedule.h"
#include "triage/triage.h"

namespace perfgate {

namespace fs = std::filesystem;

namespace {

// The triage of `suite`'s checks: its quarantine and the acceptances
// resolved against all of its scenarios.
template <typename Options>
TriagePolicy TriagePolicyOf(const Suite& suite, const Options& o) {
  TriagePolicy policy{.acceptances = o.acceptances,
                      .skipped_trailers = o.skipped_trailers,
                      .quarantine = suite.quarantine,
                      .today = TriageToday(o.today)};
  ResolveAcceptances(policy.acceptances, suite, o.skip_bad_trailers ? &policy.skipped_trailers : nullptr);
  return policy;
}

// --baseline-set / --candidate-set NAME that the suite never expands as
// ${NAME} would leave both sides alike: an A/A run reported as an A/B (a PR
// gate whose suite forgot ${BUILD_DIR} would pass every change). Only the
// strings the suite expands count (argv, env, cwd, run_as, probe and workload
// parameters), not a name in a comment or a description.
void RequireExpandedVariables(const Suite& baseline, const Suite& candidate, const AbVariants& variants) {
  for (const auto& [option, set, suite] : {std::tuple{"--baseline-set", &variants.baseline_set, &baseline},
                                           std::tuple{"--candidate-set", &variants.candidate_set, &candidate}}) {
    for (const auto& [name, value] : *set) {
      if (suite->overrides_expanded.count(name) != 0) continue;
      throw InputError(suite->file + ": " + option + " " + name + "=" + value + ": the suite expands no ${" + name +
                       "}, so the two sides would run the same");
    }
  }
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

// The runner's options, built once per flow.
RunOptions RunOptionsOf(const GateOptions& o) {
  return RunOptions{.scenarios = o.scenarios,
                    .repetitions = o.repetitions,
                    .allowed_attach_types = o.attach_types,
                    .stop = o.stop,
                    .on_scenario_done = {},
                    .more_repetitions = {},
                    .quiet = o.quiet};
}

// ... for a flow that measures a suite: it writes the partial results.json
// after each scenario, so an interrupted run keeps what it measured.
RunOptions MeasureOptions(const GateOptions& o) {
  RunOptions ro = RunOptionsOf(o);
  const std::string out_dir = o.out_dir;
  ro.on_scenario_done = [out_dir](const RunResults& so_far) {
    RunResults partial = so_far;
    partial.partial = true;
    fs::create_directories(out_dir);
    WriteFileAtomic((fs::path(out_dir) / "results.json").string(), ResultsText(partial));
  };
  return ro;
}

// The regression checks of the whole suite, every shard's: a shard (--shard
// K/N) decides its own as members of that one family, the checks it did not
// run counted with p = 1 (CompareOptions::family_size_at_least). Holm's
// bound then holds over the shards' verdicts together, as over one run's:
// the first true null hypothesis any shard rejects is below alpha over the
// number of true ones in all shards.
size_t WholeSuiteFamily(const GateOptions& o, const Suite& shard_suite,
                        const std::map<std::string, std::string>& overrides) {
  if (o.shard.empty()) return RegressionChecks(shard_suite, o.scenarios);
  GateOptions whole = o;
  whole.shard.clear();
  return RegressionChecks(LoadGateSuite(whole, overrides), o.scenarios);
}

// `baselines`: what adaptive scenarios are compared with at each look; none
// (baseline record) runs them to their maximum.
RunResults Measure(const Suite& suite, const GateOptions& o, const RunOptions& ro, const StoredBaselines* baselines) {
  RunOptions options = ro;
  const Environment environment = CaptureEnvironment();
  CompareOptions co;
  co.fdr = o.fdr;
  const size_t family_size = RegressionChecks(suite, o.scenarios);
  if (baselines != nullptr) {
    options.more_repetitions = [&](const ScenarioResult& so_far) {
      // Another machine's baseline decides nothing: as if there were none.
      auto it =
          baselines->foreign.count(so_far.name) ? baselines->scenarios.end() : baselines->scenarios.find(so_far.name);
      return NeedsMoreRepetitions(so_far, it == baselines->scenarios.end() ? nullptr : &it->second, environment, co,
                                  family_size);
    };
  }
  RunResults results = RunSuite(suite, options);
  if (Stopped(o)) results.partial = true;
  return results;
}

// ... naming the suite as the reports should.
void WriteExplainedReports(RunResults& results, const GateOptions& o) {
  if (!o.suite_path_in_reports.empty()) results.suite_file = o.suite_path_in_reports;
  if (!o.shard.empty()) {
    const Shard shard = ParseShard(o.shard);
    results.shard = std::to_string(shard.index) + "/" + std::to_string(shard.count);
  }
  WriteExplainedReports(results, o.out_dir);
}

GateOutcome Outcome(RunResults results) {
  GateOutcome outcome;
  outcome.exit_code = results.exit_code;
  outcome.results = std::move(results);
  return outcome;
}

}  // namespace

size_t RegressionChecks(const Suite& suite, const std::vector<std::string>& selected) {
  size_t n = 0;
  for (const auto& s : suite.scenarios) {
    if (!selected.empty() && std::find(selected.begin(), selected.end(), s.name) == selected.end()) continue;
    for (const auto& c : s.checks) n += c.type == CheckSpec::Type::kRegression;
  }
  return n;
}

void Evaluate(RunResults& results, const std::map<std::string, ScenarioResult>& baselines,
              std::optional<Environment> baseline_env, const std::string& source, bool strict,
              const CompareOptions& co) {
  EvaluateChecks(results, baselines, co);
  for (ScenarioResult& s : results.scenarios) {
    if (auto b = baselines.find(s.name); b != baselines.end()) s.baseline_repetitions = b->second.repetitions;
  }
  results.baseline_environment = std::move(baseline_env);
  results.baseline_source = source;
  results.strict = strict;
  results.verdict = OverallVerdict(results);
  results.exit_code = ExitCodeFor(results, strict);
}

// The evidence repetitions, once the verdicts are known: of every scenario
// whose check failed (`evidence: on-failure`) or of every scenario
// (`always`). With `baseline_suite` (an interleaved run), the baseline
// variant gets one too; else a stored baseline's evidence is its side. A
// repetition that fails is said and leaves the scenario without evidence; the
// verdict stands.
void CaptureEvidence(const Suite& suite, const GateOptions& o, const RunOptions& ro, RunResults& results,
                     const std::map<std::string, ScenarioResult>& stored, const Suite* baseline_suite = nullptr,
                     const RunResults* baseline_results = nullptr) {
  if (results.partial) return;
  for (ScenarioResult& scenario : results.scenarios) {
    const ScenarioSpec* spec = FindScenario(suite, scenario.name);
    if (spec == nullptr || Stopped(o)) continue;
    const std::optional<std::string> reason = EvidenceReason(spec->evidence, scenario);
    if (!reason) continue;
    if (!o.quiet) log::Progress("%s: evidence repetition (%s)\n", scenario.name.c_str(), reason->c_str());
    try {
      // Sampled stacks of the workload itself, not of Valgrind's translation
      // of it: the evidence repetitions of an instrumented scenario run it bare.
      ScenarioSpec candidate_spec = *spec, baseline_spec;
      candidate_spec.instrument = false;
      // An interleaved run's sides take their evidence repetitions in turns.
      std::vector<EvidenceSide> sides = {
          {&candidate_spec, "candidate", MedianWallTime(scenario.repetitions), MedianCpuTime(scenario.repetitions)}};
      if (baseline_suite != nullptr && baseline_results != nullptr) {
        const ScenarioSpec* b_spec = FindScenario(*baseline_suite, scenario.name);
        const ScenarioResult* b_result = nullptr;
        for (const auto& b : baseline_results->scenarios) {
          if (b.name == scenario.name) b_result = &b;
        }
        if (b_spec != nullptr && b_result != nullptr) {
          baseline_spec = *b_spec;
          baseline_spec.instrument = false;
          sides.push_back({&baseline_spec, "baseline", MedianWallTime(b_result->repetitions),
                           MedianCpuTime(b_result->repetitions)});
        }
      }
      for (Evidence& e :
           EvidenceRepetitions(sides, ro, *reason, EvidenceTargetSamples(scenario), EvidenceChange(scenario)))
        scenario.evidence.push_back(std::move(e));
    } catch (const Error& e) {
      if (e.code() == ExitCode::kBadInput) throw;
      log::Warning("scenario \"%s\": no evidence: %s\n", scenario.name.c_str(), e.what());
    }
  }
  AddBaselineEvidence(results, stored);
  // Instrumented scenarios: the exact per-function counts beside the samples.
  for (ScenarioResult& scenario : results.scenarios) {
    const ScenarioSpec* spec = FindScenario(suite, scenario.name);
    if (spec == nullptr || !spec->instrument) continue;
    if (const std::optional<std::string> reason = EvidenceReason(spec->evidence, scenario))
      AddCountedEvidence(scenario, *reason);
  }
}

std::string ResultsText(const RunResults& results) {
  return ToJson(results).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Suite LoadGateSuite(const GateOptions& o, std::map<std::string, std::string> overrides, TriagePolicy* policy) {
  Suite suite = LoadSuiteFile(o.suite_file, std::move(overrides), o.suite_dir);
  if (policy) *policy = TriagePolicyOf(suite, o);
  if (!o.run_as.empty()) {
    ResolveUser(o.run_as, "--run-as");
    for (ScenarioSpec& s : suite.scenarios) s.run_as = o.run_as;
  }
  if (!o.shard.empty()) SelectShard(suite, o.scenarios, ParseShard(o.shard));
  // --instrument: every scenario that can be, whatever the suite says.
  if (o.instrument) InstrumentEveryScenarioThatCan(suite, GateVocabulary());
  if (o.evidence) {
    for (ScenarioSpec& s : suite.scenarios) s.evidence = *o.evidence;
  }
  AddInstructionChecks(suite);
  return suite;
}

void TriageVerdicts(RunResults& results, const TriagePolicy& policy) {
  ApplyTriage(results, policy.acceptances, policy.quarantine, policy.today);
  AddSkippedTrailers(results, policy.skipped_trailers);
  results.verdict = OverallVerdict(results);
  results.exit_code = ExitCodeFor(results, results.strict);
}

Suite LoadSuiteFile(const std::string& file, std::map<std::string, std::string> overrides,
                    const std::string& suite_dir) {
  return LoadSuite(file, GateVocabulary(),
                   {.suite_dir = suite_dir, .perfgate_dir = PerfgateDir(), .overrides = std::move(overrides)});
}

void WriteExplainedReports(RunResults& results, const std::string& out_dir) {
  ExplainFailures(results, GateMetricVocabulary());
  WriteReports(results, out_dir);
}

std::vector<std::pair<std::string, size_t>> StoreBaselines(const Suite& suite, const RunResults& results,
                                                           const std::string& baseline_dir, bool say_skipped) {
  std::vector<std::pair<std::string, Baseline>> files;
  for (const auto& s : results.scenarios) {
    if (!s.error.empty()) {
      if (say_skipped) log::Error("%s (baseline not written)\n", s.error.c_str());
      continue;
    }
    files.push_back({BaselinePath(baseline_dir, suite.name, s.name), {suite.name, results.environment, s}});
  }
  std::vector<std::pair<std::string, size_t>> stored;
  if (files.empty()) return stored;
  DirectoryLock lock(baseline_dir, DirectoryLock::Mode::kWriteBaselines, "--baseline-dir");
  try {
    SaveBaselines(files);
  } catch (const Error& e) {
    throw Error(e.code(), std::string(e.what()) + " (no baseline was changed)");
  }
  for (const auto& [file, b] : files) stored.emplace_back(file, b.scenario.repetitions.size());
  return stored;
}

MetricVocabulary GateMetricVocabulary() {
  MetricVocabulary v(RepetitionMetricDeclarations());
  v.Add(AdapterMetricDeclarations());
  v.Add(ProbeMetricDeclarations());
  v.Add(InstructionMetricDeclarations());
  return v;
}

SuiteVocabulary GateVocabulary() {
  SuiteVocabulary v;
  for (const auto& p : ProbeCatalog()) {
    v.probes.push_back(p.name);
    for (const auto& param : p.parameters) v.probe_parameters[p.name][param.name] = ToString(param.type);
  }
  v.workload_kinds = AdapterKinds();
  v.workload_keys = AdapterKeys();
  for (const std::string& kind : v.workload_kinds) {
    if (CanInstrument(kind)) v.instrumentable_kinds.push_back(kind);
  }
  return v;
}

GateOutcome GateAgainstStoredBaselines(const GateOptions& o, bool update_baseline) {
  TriagePolicy policy;
  const Suite suite = LoadGateSuite(o, {}, &policy);
  DirectoryLock out_lock(o.out_dir, DirectoryLock::Mode::kReportsOut, "--out");
  const StoredBaselines stored = o.history_db.empty() ? LoadSuiteBaselines(suite, o) : LoadHistoryBaselines(suite, o);
  const RunOptions ro = MeasureOptions(o);
  RunResults results = Measure(suite, o, ro, &stored);
  CompareOptions co;
  co.fdr = o.fdr;
  co.foreign_baselines = stored.foreign;
  if (o.confirm) co.screen_alpha = kScreenAlpha;
  Evaluate(results, stored.scenarios, stored.environment, stored.source, o.strict, co);
  if (o.confirm && !Stopped(o)) ConfirmRegressions(nullptr, suite, ro, co, results, stored.scenarios);
  TriageVerdicts(results, policy);
  CaptureEvidence(suite, o, ro, results, stored.scenarios);
  if (o.trace && !results.partial) TraceWorstScenario(suite, ro, o.trace_min_us, o.out_dir, results);
  WriteExplainedReports(results, o);
  GateOutcome outcome = Outcome(std::move(results));
  if (update_baseline && !outcome.results.partial)
    outcome.stored_baselines = StoreBaselines(suite, outcome.results, o.baseline_dir, false);
  return outcome;
}

GateOutcome RecordBaselines(const GateOptions& o) {
  const Suite suite = LoadGateSuite(o);
  // Names that cannot be baseline files are refused before anything runs.
  for (const auto& s : suite.scenarios) BaselinePath(o.baseline_dir, suite.name, s.name);
  DirectoryLock out_lock(o.out_dir, DirectoryLock::Mode::kReportsOut, "--out");
  const RunOptions ro = MeasureOptions(o);
  RunResults results = Measure(suite, o, ro, nullptr);
  // Budgets still apply to a recorded baseline; regressions have nothing to compare with.
  CompareOptions co;
  co.fdr = o.fdr;
  Evaluate(results, {}, std::nullopt, "", o.strict, co);
  CaptureEvidence(suite, o, ro, results, {});  // `evidence: always` stores it with the baseline
  WriteExplainedReports(results, o);
  GateOutcome outcome = Outcome(std::move(results));
  if (outcome.results.partial) {
    log::Notice("interrupted; no baseline written\n");
    outcome.exit_code = static_cast<int>(ExitCode::kInfra);
    return outcome;
  }
  outcome.stored_baselines = StoreBaselines(suite, outcome.results, o.baseline_dir, true);
  const bool failed = std::any_of(outcome.results.scenarios.begin(), outcome.results.scenarios.end(),
                                  [](const ScenarioResult& s) { return !s.error.empty(); });
  outcome.exit_code = static_cast<int>(failed || outcome.stored_baselines.empty() ? ExitCode::kInfra : ExitCode::kPass);
  return outcome;
}

GateOutcome GateInterleaved(const GateOptions& o, const AbVariants& variants) {
  TriagePolicy policy;
  Suite baseline = LoadGateSuite(o, variants.baseline_set);
  Suite candidate = LoadGateSuite(o, variants.candidate_set, &policy);
  RequireExpandedVariables(baseline, candidate, variants);
  ReplaceCommand(baseline, variants.baseline_cmd, "--baseline-cmd", o.scenarios);
  ReplaceCommand(candidate, variants.candidate_cmd, "--candidate-cmd", o.scenarios);
  DirectoryLock out_lock(o.out_dir, DirectoryLock::Mode::kReportsOut, "--out");

  const RunOptions ro = MeasureOptions(o);
  CompareOptions co;
  co.fdr = o.fdr;
  co.interleaved = true;
  if (o.confirm) co.screen_alpha = kScreenAlpha;
  const size_t family_size = WholeSuiteFamily(o, candidate, variants.candidate_set);
  co.family_size_at_least = family_size;
  const Environment environment = CaptureEnvironment();
  InterleavedRun run = RunInterleaved(baseline, candidate, ro, [&](const ScenarioResult& c, const ScenarioResult& b) {
    return NeedsMoreRepetitions(c, &b, environment, co, family_size);
  });
  if (Stopped(o)) run.candidate.partial = run.baseline.partial = true;

  std::map<std::string, ScenarioResult> sides;
  for (const ScenarioResult& s : run.baseline.scenarios) {
    if (s.error.empty()) sides.emplace(s.name, s);
  }
  const std::string host = run.baseline.environment.hostname.empty() ? "this host" : run.baseline.environment.hostname;
  Evaluate(run.candidate, sides, run.baseline.environment,
           variants.baseline_label + ", run interleaved with " + variants.candidate_label + " in this job on " + host,
           o.strict, co);
  if (o.confirm && !Stopped(o)) ConfirmRegressions(&baseline, candidate, ro, co, run.candidate);
  TriageVerdicts(run.candidate, policy);
  CaptureEvidence(candidate, o, ro, run.candidate, sides, &baseline, &run.baseline);
  if (o.trace && !run.candidate.partial)
    TraceWorstScenario(candidate, ro, o.trace_min_us, o.out_dir, run.candidate, &baseline);
  WriteExplainedReports(run.candidate, o);
  // The baseline side as a results file of its own, for `perfgate compare`.
  WriteFileAtomic((fs::path(o.out_dir) / "baseline-results.json").string(), ResultsText(run.baseline));
  GateOutcome outcome = Outcome(std::move(run.candidate));
  outcome.baseline = std::move(run.baseline);
  return outcome;
}

GateOutcome CompareResultFiles(const std::string& baseline_file, const std::string& results_file,
                               const std::string& out_dir, bool strict, bool allow_other_host) {
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
  CompareOptions co;
  const std::string difference = MachineDifference(*env, candidate.environment);
  if (!difference.empty() && !allow_other_host) {
    for (const auto& [name, scenario] : baselines) co.foreign_baselines.emplace(name, difference);
  }
  Evaluate(candidate, baselines, env, StoredSource(baseline_file, *env, candidate.environment), strict, co);
  // Stored results may carry evidence already: the baseline's is its side.
  AddBaselineEvidence(candidate, baselines);
  WriteExplainedReports(candidate, out_dir);
  return Outcome(std::move(candidate));
}

GateOutcome RerenderResults(const std::string& results_file, const std::string& out_dir, bool strict) {
  RunResults results = ReadResultsFile(results_file);
  DirectoryLock out_lock(out_dir, DirectoryLock::Mode::kReportsOut, "--out");
  results.strict = strict;
  results.verdict = OverallVerdict(results);
  results.exit_code = ExitCodeFor(results, strict);
  WriteExplainedReports(results, out_dir);
  return Outcome(std::move(results));
}

GateOutcome MergeResultFiles(const MergeOptions& o) {
  if (o.suite_file.empty() && !o.acceptances.empty())
    throw InputError("merge: --accept and --accept-trailers need --suite (the suite the checks are resolved in)");
  std::optional<TriagePolicy> policy;
  if (!o.suite_file.empty()) policy = TriagePolicyOf(LoadSuiteFile(o.suite_file), o);
  std::vector<ShardResults> shards;
  for (const auto& file : o.results_files) shards.push_back({file, ReadResultsFile(file)});
  RunResults merged = MergeShards(shards, o.strict, o.shards);
  std::string out_dir = fs::path(o.output_file).parent_path().string();
  if (out_dir.empty()) out_dir = ".";
  DirectoryLock out_lock(out_dir, DirectoryLock::Mode::kReportsOut, "-o");
  if (!o.baseline_dir.empty()) {
    // One family of tests across all shards, as if the suite had run on one runner.
    std::map<std::string, Baseline> baselines;
    {
      DirectoryLock baseline_lock(o.baseline_dir, DirectoryLock::Mode::kReadBaselines, "--baseline-dir");
      for (const auto& s : merged.scenarios) {
        auto b = LoadBaseline(BaselinePath(o.baseline_dir, merged.suite, s.name));
        if (b) baselines.emplace(s.name, std::move(*b));
      }
    }
    const StoredBaselines stored =
        StoredBaselines::From(std::move(baselines), o.baseline_dir, merged.environment, o.allow_other_host);
    CompareOptions co;
    co.fdr = o.fdr;
    co.foreign_baselines = stored.foreign;
    Evaluate(merged, stored.scenarios, stored.environment, stored.source, o.strict, co);
    AddBaselineEvidence(merged, stored.scenarios);
  }
  if (policy) TriageVerdicts(merged, *policy);
  WriteExplainedReports(merged, out_dir);
  // WriteReports wrote results.json; another name gets its own copy.
  if (fs::path(o.output_file).filename() != "results.json") WriteFileAtomic(o.output_file, ResultsText(merged));
  return Outcome(std::move(merged));
}

std::vector<OverheadResult> MeasureSuiteOverhead(const GateOptions& o, const OverheadOptions& overhead) {
  // The probes' cost on the workload itself, not on Valgrind's translation of it.
  Suite suite = LoadSuiteFile(o.suite_file);
  for (ScenarioSpec& s : suite.scenarios) s.instrument = false;
  return MeasureOverhead(suite, RunOptionsOf(o), overhead);
}

}  // namespace perfgate
