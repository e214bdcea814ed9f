// run, baseline record, ab, compare, report, merge, overhead: each maps its
// options onto the pipeline (pipeline/pipeline.h) and turns the outcome into
// a summary line and an exit code.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "adapters/tool_output.h"
#include "base/error.h"
#include "base/log.h"
#include "base/quantity.h"
#include "bisect/bisect_report.h"
#include "cli/commands.h"
#include "metrics/results_json.h"
#include "pipeline/kernel_ab.h"
#include "pipeline/on_target.h"
#include "pipeline/pipeline.h"
#include "probes/probe.h"
#include "report/outcome.h"

namespace perfgate {

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

// The options of a command that measures, for the pipeline; the stop flag is
// this process's signal handlers'.
GateOptions GateOptionsOf(const RunCommandOptions& o) {
  GateOptions g = o.gate;
  g.attach_types = ParseAttachTypes(o.attach_types);
  g.target = ParseTarget(o.target);
  if (!g.ssh_config.empty() && !g.target.remote()) throw InputError("--ssh-config: only with --target ssh://...");
  if (!o.evidence.empty()) {
    for (EvidenceMode mode : {EvidenceMode::kOnFailure, EvidenceMode::kAlways, EvidenceMode::kNever}) {
      if (ToString(mode) == o.evidence) g.evidence = mode;
    }
  }
  g.stop = &g_stop;
  return g;
}

// The counts are the reports' own (report/outcome.h): a scenario that could
// not run is one error besides its checks' on the console, in JUnit and in
// summary.md alike.
void PrintSummary(const RunResults& r, const std::string& out_dir) {
  // perfgate on a device (--target, pipeline/on_target.h): the host that
  // drives it prints the summary, with its own paths.
  if (std::getenv("PERFGATE_ON_DEVICE") != nullptr) return;
  const OutcomeCounts counts = CountOutcomes(r);
  for (const auto& s : r.scenarios) {
    if (!s.error.empty()) log::Error("%s\n", OneLine(s.error).c_str());
    for (const auto& c : s.checks) {
      if (c.verdict == Verdict::kRegression || c.verdict == Verdict::kError || c.verdict == Verdict::kInconclusive) {
        log::Notice("%s: %s/%s: %s\n", ToString(c.verdict).c_str(), OneLine(s.name).c_str(),
                    OneLine(c.spec.name).c_str(), OneLine(c.message).c_str());
      }
      // Who let a check pass, or whose acceptance it went beyond, on the console too.
      if (c.triage) {
        log::Notice("%s: %s/%s: %s\n", c.triage->state.c_str(), OneLine(s.name).c_str(), OneLine(c.spec.name).c_str(),
                    OneLine(c.triage->note).c_str());
      }
    }
  }
  for (const std::string& skipped : r.skipped_trailers) {
    log::Notice("skipped accept trailer: %s\n", OneLine(skipped).c_str());
  }
  std::string triaged;
  if (counts.accepted > 0) triaged += ", " + std::to_string(counts.accepted) + " accepted";
  if (counts.quarantined > 0) triaged += ", " + std::to_string(counts.quarantined) + " quarantined";
  std::printf("perfgate: compared against %s\n",
              r.baseline_source.empty() ? "no baseline (budgets only)" : OneLine(r.baseline_source).c_str());
  std::printf("perfgate: %s%s — %d passed, %d regressed, %d improved, %d inconclusive, %d errors%s; reports in %s\n",
              ToString(r.verdict).c_str(), r.partial ? " (partial run)" : "", counts.passed,
              counts.regressed + counts.over_budget, counts.improved, counts.inconclusive, counts.errors,
              triaged.c_str(), out_dir.c_str());
}

}  // namespace

int RunCommand(const RunCommandOptions& o) {
  InstallStopHandlers();
  const GateOptions gate = GateOptionsOf(o);
  const GateOutcome outcome = gate.target.remote() ? GateOnTarget(gate, TargetFlow::kRun, nullptr, o.update_baseline)
                                                   : GateAgainstStoredBaselines(gate, o.update_baseline);
  PrintSummary(outcome.results, o.gate.out_dir);
  return outcome.exit_code;
}

int BaselineRecordCommand(const RunCommandOptions& o) {
  InstallStopHandlers();
  const GateOptions gate = GateOptionsOf(o);
  const GateOutcome outcome =
      gate.target.remote() ? GateOnTarget(gate, TargetFlow::kRecord, nullptr, false) : RecordBaselines(gate);
  for (const auto& [file, repetitions] : outcome.stored_baselines)
    std::printf("perfgate: baseline %s (%zu repetitions)\n", file.c_str(), repetitions);
  return outcome.exit_code;
}

int AbCommand(const AbCommandOptions& o) {
  if (!o.kernels.baseline.kernel.empty()) {
    if (!o.baseline_cmd.empty() || !o.candidate_cmd.empty() || !o.baseline_set.empty() || !o.candidate_set.empty())
      throw InputError(
          "ab: --baseline-kernel/--candidate-kernel compare kernels under one suite; vary the suite "
          "(--baseline-cmd, --baseline-set, ...) in a run of its own");
    InstallStopHandlers();
    KernelAbOptions kernels = o.kernels;
    kernels.vm.boot_script = PerfgateDir() + "/pg-boot-vm";
    const GateOutcome outcome = GateKernels(GateOptionsOf(o.run), kernels);
    PrintSummary(outcome.results, o.run.gate.out_dir);
    return outcome.exit_code;
  }
  if (o.baseline_cmd.empty() && o.candidate_cmd.empty() && o.baseline_set.empty() && o.candidate_set.empty())
    throw InputError("ab: say what differs: --baseline-cmd/--candidate-cmd or --baseline-set/--candidate-set");
  AbVariants variants;
  variants.baseline_cmd = o.baseline_cmd;
  variants.candidate_cmd = o.candidate_cmd;
  variants.baseline_set = ParseAssignments(o.baseline_set, "--baseline-set");
  variants.candidate_set = ParseAssignments(o.candidate_set, "--candidate-set");
  if (!o.baseline_label.empty()) variants.baseline_label = o.baseline_label;
  if (!o.candidate_label.empty()) variants.candidate_label = o.candidate_label;
  InstallStopHandlers();
  const GateOptions gate = GateOptionsOf(o.run);
  const GateOutcome outcome =
      gate.target.remote() ? GateOnTarget(gate, TargetFlow::kAb, &variants, false) : GateInterleaved(gate, variants);
  PrintSummary(outcome.results, o.run.gate.out_dir);
  return outcome.exit_code;
}

int CompareCommand(const std::string& baseline_file, const std::string& results_file, const std::string& out_dir,
                   bool strict, bool allow_other_host) {
  const GateOutcome outcome = CompareResultFiles(baseline_file, results_file, out_dir, strict, allow_other_host);
  PrintSummary(outcome.results, out_dir);
  return outcome.exit_code;
}

int ReportCommand(const std::string& results_file, const std::string& out_dir, bool strict) {
  const GateOutcome outcome = RerenderResults(results_file, out_dir, strict);
  PrintSummary(outcome.results, out_dir);
  return outcome.exit_code;
}

int MergeCommand(const MergeOptions& o) {
  const GateOutcome outcome = MergeResultFiles(o);
  std::string out_dir = std::filesystem::path(o.output_file).parent_path().string();
  PrintSummary(outcome.results, out_dir.empty() ? "." : out_dir);
  return outcome.exit_code;
}

int OverheadCommand(const OverheadCommandOptions& o) {
  GateOptions gate;
  gate.suite_file = o.suite_file;
  gate.scenarios = o.scenarios;
  gate.quiet = o.quiet;
  gate.attach_types = ParseAttachTypes(o.attach_types);
  gate.stop = &g_stop;
  OverheadOptions options;
  options.pairs = o.pairs;
  options.metric = o.metric;
  InstallStopHandlers();
  std::vector<OverheadResult> results = MeasureSuiteOverhead(gate, options);

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
    j["pairs"] = r.pairs;
    nlohmann::json probes = nlohmann::json::array();
    for (const ProbeReport& p : r.probes) {
      std::optional<double> share = p.CpuShare();
      std::string per_event =
          p.run_count > 0 ? FormatNumber(static_cast<double>(p.run_time_ns) / static_cast<double>(p.run_count)) : "-";
      std::printf("    %-12s %10llu events %8s ns/event %9s of workload CPU\n", p.name.c_str(),
                  static_cast<unsigned long long>(p.run_count), per_event.c_str(),
                  share ? (FormatNumber(100 * *share) + " %").c_str() : "-");
      probes.push_back({{"name", p.name},
                        {"events", p.run_count},
                        {"run_time_ns", p.run_time_ns},
                        {"workload_cpu_ns", p.workload_cpu_ns}});
    }
    j["probes"] = probes;
    out.push_back(j);
  }
  if (!o.json_file.empty())
    WriteFileAtomic(o.json_file, out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return static_cast<int>(failed || g_stop.load() ? ExitCode::kInfra : ExitCode::kPass);
}

int BisectCommand(const BisectCommandOptions& o) {
  BisectOptions options = o.bisect;
  options.attach_types = ParseAttachTypes(o.attach_types);
  options.stop = &g_stop;
  if (options.dry_run) {
    const BisectResult plan = PlanBisect(options);
    std::printf("perfgate: bisect plan: %s\n", OneLine(plan.summary).c_str());
    for (size_t i = 0; i < plan.range.size(); ++i)
      std::printf("  %3zu %s %s\n", i + 1, plan.range[i].sha.substr(0, 12).c_str(),
                  OneLine(plan.range[i].subject).c_str());
    std::printf("perfgate: checks: ");
    for (size_t i = 0; i < plan.checks.size(); ++i) std::printf("%s%s", i ? ", " : "", OneLine(plan.checks[i]).c_str());
    std::printf("\n");
    return static_cast<int>(ExitCode::kPass);
  }
  InstallStopHandlers();
  const BisectResult result = RunBisect(options);
  WriteBisectReports(result, options.out_dir);
  for (const std::string& why : result.why) std::printf("perfgate: why: %s\n", OneLine(why).c_str());
  std::printf("perfgate: %s\n", OneLine(result.summary).c_str());
  std::printf("perfgate: reports in %s/bisect.html, bisect.md, bisect.json\n", options.out_dir.c_str());
  return static_cast<int>(ExitCode::kPass);
}

}  // namespace perfgate
