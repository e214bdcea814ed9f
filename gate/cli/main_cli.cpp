// Command-line parsing: every option is declared here, once, with its help.
#include <bpf/libbpf.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <tuple>

#include "base/did_you_mean.h"
#include "base/error.h"
#include "base/log.h"
#include "base/quantity.h"
#include "base/version.h"
#include "cli/commands.h"
#include "history/history_db.h"
#include "metrics/results.h"
#include "run/process.h"

namespace perfgate {

namespace {

constexpr const char* kAllowOtherHostHelp =
    "Judge regression checks against a baseline recorded on another kernel, CPU model or CPU count (by default "
    "they are inconclusive: another machine's numbers are not this one's)";

// Options of every command that measures a suite.
void AddMeasureOptions(CLI::App* cmd, RunCommandOptions& o) {
  cmd->add_option("suite", o.gate.suite_file, "Suite file (JSON, comments allowed)")->required();
  cmd->add_option("--scenario", o.gate.scenarios, "Run only this scenario (repeatable)");
  cmd->add_option("--out", o.gate.out_dir, "Directory for results.json, junit.xml, summary.md and report/")
      ->capture_default_str();
  cmd->add_option(
         "--reps", o.gate.repetitions,
         "Measured repetitions per scenario (overrides the suite; in ab, a busy host may extend a fixed count up "
         "to " +
             std::to_string(kBusyHostRoundsFactor) + " times)")
      ->check(CLI::Range(2, 100000));
  cmd->add_flag("--strict", o.gate.strict, "Inconclusive checks fail the run (exit 1)");
  cmd->add_flag("--fdr", o.gate.fdr,
                "Control the false discovery rate (Benjamini-Hochberg) instead of family-wise error (Holm)");
  cmd->add_flag("--quiet", o.gate.quiet, "Do not print per-repetition progress");
  cmd->add_flag(
      "--instrument", o.gate.instrument,
      "Run command and gbench workloads under Valgrind (Cachegrind; Callgrind for gbench) to count the instructions "
      "they execute (instr.total, instr.<function>), and check instr.total at 0.5 %; a suite says it of its "
      "scenarios itself with \"instrument\": true");
  cmd->add_option("--attach-types", o.attach_types,
                  "Allow only these attach types (fentry, tp_btf, raw_tp, tracepoint, kprobe, uprobe, perf_event)")
      ->delimiter(',');
  cmd->add_option("--run-as", o.gate.run_as, "Run every workload as this user (probes stay root; overrides run_as)");
  cmd->add_option("--shard", o.gate.shard, "Run only shard K of N (K/N): scenarios go round-robin in suite order");
  cmd->add_option("--suite-path", o.gate.suite_path_in_reports,
                  "The suite's path as reports name it (JUnit file=), e.g. relative to the repository root when the "
                  "suite is read from a checkout elsewhere");
  cmd->add_option("--target", o.target,
                  "Run the suite on this Linux device, ssh://USER@HOST[:PORT]: perfgate there measures under its "
                  "probes (this binary, sent, on a device of this architecture; else its installed perfgate of this "
                  "version), the suite's directory and baselines are sent along, and the reports and baselines are "
                  "written here. Keys only through ssh's configuration or agent; a lost connection exits 3");
  cmd->add_option("--ssh-config", o.gate.ssh_config, "With --target: ssh's configuration file (ssh -F FILE)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--evidence", o.evidence,
                  "Every scenario's evidence repetitions, whatever the suite says: always, on-failure or never")
      ->check(CLI::IsMember({"always", "on-failure", "never"}));
}

// ... and of those that compare with stored baselines.
void AddRunOptions(CLI::App* cmd, RunCommandOptions& o) {
  AddMeasureOptions(cmd, o);
  cmd->add_option("--baseline-dir", o.gate.baseline_dir, "Directory of stored baselines")->capture_default_str();
  cmd->add_flag("--require-same-env", o.gate.require_same_env,
                "A baseline recorded on another kernel, CPU model or CPU count is an error (exit 2)");
  cmd->add_flag("--allow-other-host", o.gate.allow_other_host, kAllowOtherHostHelp);
}

// Options of the commands that judge a head: what people decided about its checks.
void AddTriageOptions(CLI::App* cmd, std::vector<std::string>& accepts, std::vector<std::string>& accept_files,
                      std::string& today) {
  cmd->add_option(
      "--accept", accepts,
      "Accept a regression within a bound: 'SCENARIO/CHECK <= +N%: reason' (repeatable; the commit "
      "trailer Perfgate-Accept says the same). A change whose interval reaches beyond the bound still fails");
  cmd->add_option("--accept-trailers", accept_files,
                  "File of accept trailers, one per line: 'COMMIT SCENARIO/CHECK <= +N%: reason' (the pull-request "
                  "gate writes it from the commits between merge base and head, the nightly from those merged "
                  "since the last night)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--today", today,
                  "The date quarantines are judged on, YYYY-MM-DD (default: PERFGATE_TODAY, else today in UTC)");
}
void AddTriageOptions(CLI::App* cmd, RunCommandOptions& o) {
  AddTriageOptions(cmd, o.accepts, o.accept_files, o.gate.today);
}

// The nightly's leniency towards the trailers of main's history (never the pull-request gate's).
void AddSkipBadTrailersFlag(CLI::App* cmd, bool& skip) {
  cmd->add_flag("--skip-bad-trailers", skip,
                "A trailer of --accept-trailers that is malformed or names no check of the suite is left out, one "
                "line each on the console and in summary.md, instead of exit 2 (the nightly: the pull-request "
                "gate already judged it, and one bad commit message must not fail every later night)");
}

// --trace and --trace-min-us of the commands that measure and judge (run, ab).
void AddTraceOptions(CLI::App* cmd, GateOptions& gate, const std::string& what) {
  cmd->add_flag("--trace", gate.trace, what);
  cmd->add_option("--trace-min-us", gate.trace_min_us,
                  "Shortest syscall or off-CPU wait shown as a slice in the trace, in microseconds")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
}

// "perfgate 0.1.0 (commit 1a2b3c4d5e6f, libbpf v1.1)": what a bug report needs.
std::string VersionText() {
  std::string commit = PerfgateGitCommit();
  return std::string("perfgate ") + PerfgateVersion() + " (commit " + (commit.empty() ? "unknown" : commit) +
         ", libbpf " + libbpf_version_string() + ")";
}

// The command word of `argv` that names no command where one is required
// ("perfgate rn", "perfgate baseline recrod"), with the nearest command, as
// one line; "" when every command word is known. CLI11 alone would say only
// that a subcommand is required.
std::string UnknownCommand(CLI::App& app, int argc, char** argv) {
  CLI::App* level = &app;
  std::string path = "perfgate";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-' || level->get_require_subcommand_min() == 0) return "";
    std::vector<std::string> names;
    CLI::App* next = nullptr;
    for (CLI::App* sub : level->get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
      if (sub->check_name(word)) next = sub;
    }
    if (!next) {
      return "unknown command \"" + word + "\" for " + path + DidYouMeanHint(word, names) + " (see " + path +
             " --help)";
    }
    level = next;
    path += " " + word;
  }
  return "";
}

}  // namespace

int PerfgateMain(int argc, char** argv) {
  PrepareProcessForWorkloads();
  CLI::App app{"perfgate: a performance-regression gate for CI, on eBPF", "perfgate"};
  app.require_subcommand(1);
  app.set_version_flag("--version", VersionText());

  RunCommandOptions run_opts;
  auto* run = app.add_subcommand("run", "Run a suite under its probes, compare with baselines, write reports");
  AddRunOptions(run, run_opts);
  AddTriageOptions(run, run_opts);
  AddSkipBadTrailersFlag(run, run_opts.gate.skip_bad_trailers);
  auto* update = run->add_flag("--update-baseline", run_opts.update_baseline, "Store this run as the new baseline");
  auto* from_history =
      run->add_option("--baseline-from-history", run_opts.gate.history_db,
                      "Compare with the newest passing runs in this history (a file or a postgresql:// URL) recorded "
                      "on a host with this one's kernel, CPU model and CPU count, instead of --baseline-dir")
          ->excludes(update);
  run->add_option("--branch", run_opts.gate.history_branch,
                  "With --baseline-from-history: only runs of this branch (default: every branch)")
      ->needs(from_history);
  bool run_no_confirm = false;
  run->add_flag("--no-confirm", run_no_confirm,
                "Fail on the first measurement: no fresh repetitions confirm a flagged regression (decided at 1 % at "
                "once)");
  AddTraceOptions(run, run_opts.gate,
                  "Write OUT/trace.perfetto-trace: one extra traced repetition of the scenario with the worst check");

  AbCommandOptions ab_opts;
  auto* ab = app.add_subcommand(
      "ab", "Run a baseline and a candidate variant of a suite interleaved in one job (ABBA), then compare them");
  AddMeasureOptions(ab, ab_opts.run);
  ab->add_option("--baseline-cmd", ab_opts.baseline_cmd, "Command line of the baseline side (command workloads)");
  ab->add_option("--candidate-cmd", ab_opts.candidate_cmd, "Command line of the candidate side (command workloads)");
  ab->add_option("--baseline-set", ab_opts.baseline_set,
                 "NAME=VALUE for ${NAME} in the suite, baseline side (repeatable)");
  ab->add_option("--candidate-set", ab_opts.candidate_set,
                 "NAME=VALUE for ${NAME} in the suite, candidate side (repeatable)");
  ab->add_option("--baseline-label", ab_opts.baseline_label,
                 "What the baseline side is, for the reports (e.g. \"merge base 1a2b3c\")");
  ab->add_option("--candidate-label", ab_opts.candidate_label,
                 "What the candidate side is, for the reports (e.g. \"head 4d5e6f\")");
  AddTriageOptions(ab, ab_opts.run);
  AddSkipBadTrailersFlag(ab, ab_opts.run.gate.skip_bad_trailers);
  AddTraceOptions(ab, ab_opts.run.gate,
                  "Write OUT/trace.perfetto-trace: one extra traced repetition of each side of the scenario with the "
                  "worst check, the baseline's first, both in the one file (each process named after its side)");
  KernelAbOptions& kernels = ab_opts.kernels;
  auto* baseline_kernel = ab->add_option(
      "--baseline-kernel", kernels.baseline.kernel,
      "Compare kernels: boot this one (a Debian kernel package's name, a kernel .deb or a kernel image) in a virtual "
      "machine for the baseline side, in turn with --candidate-kernel (ABBA by boot), and run the suite in each boot");
  auto* candidate_kernel = ab->add_option("--candidate-kernel", kernels.candidate.kernel,
                                          "The candidate side's kernel (see --baseline-kernel)");
  baseline_kernel->needs(candidate_kernel);
  candidate_kernel->needs(baseline_kernel);
  for (auto [side, name, needs] : {std::tuple{&kernels.baseline, "baseline", baseline_kernel},
                                   std::tuple{&kernels.candidate, "candidate", candidate_kernel}}) {
    const std::string which = name;
    ab->add_option(
          "--" + which + "-module", side->module_files,
          "A kernel module the " + which + " kernel loads before the suite, \"FILE.ko [PARAM=VALUE]...\" (repeatable)")
        ->needs(needs);
    ab->add_option("--" + which + "-cmdline", side->cmdline, "More kernel command line for the " + which + " kernel")
        ->needs(needs);
    ab->add_option("--" + which + "-modules-dir", side->modules_dir,
                   "With a kernel image: its modules directory (lib/modules/VERSION)")
        ->needs(needs);
  }
  ab->add_option("--boots", kernels.boots,
                 "With kernels: boots of each side (the repetitions are the suite's, in each)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100))
      ->needs(baseline_kernel);
  ab->add_option("--vm-cpus", kernels.vm.cpus, "With kernels: the virtual machine's CPUs")
      ->capture_default_str()
      ->check(CLI::Range(1, 64))
      ->needs(baseline_kernel);
  ab->add_option("--vm-memory", kernels.vm.memory_mb, "With kernels: the virtual machine's memory in MiB")
      ->capture_default_str()
      ->check(CLI::Range(256, 1048576))
      ->needs(baseline_kernel);
  ab->add_option("--vm-accel", kernels.vm.accel,
                 "With kernels: kvm (this host's CPU), tcg (QEMU's emulation: anywhere; times are the emulator's) or "
                 "auto (KVM where a guest boots under it, else TCG)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "tcg", "kvm"}))
      ->needs(baseline_kernel);
  ab->add_option("--vm-timeout", kernels.vm.timeout_s, "With kernels: seconds a boot may take at most")
      ->capture_default_str()
      ->check(CLI::Range(10, 86400))
      ->needs(baseline_kernel);
  ab->add_option("--vm-arch", kernels.vm.arch,
                 "With kernels: the guest's architecture, x86_64 or arm64 (default: this host's; another runs under "
                 "TCG and needs --vm-perfgate)")
      ->check(CLI::IsMember({"x86_64", "arm64"}))
      ->needs(baseline_kernel);
  ab->add_option("--vm-perfgate", kernels.guest_perfgate,
                 "With kernels: the perfgate the guest runs, built for --vm-arch, its workload programs beside it "
                 "(default: this one)")
      ->needs(baseline_kernel);
  ab->add_option("--vm-disk", kernels.vm.disk_mb,
                 "With kernels: give each boot an empty ext4 disk of this many MiB at /var/tmp (a block device's I/O "
                 "for the suite: fio's scratch directory, the biolat probe)")
      ->check(CLI::Range(16, 1048576))
      ->needs(baseline_kernel);
  ab->add_option("--vm-file", kernels.vm.files,
                 "With kernels: a file or directory of this host the guest needs at the same path (repeatable; "
                 "perfgate, the suite's directory and the programs its command workloads name are always there)")
      ->needs(baseline_kernel);
  bool no_confirm = false;
  ab->add_flag(
      "--no-confirm", no_confirm,
      "Fail on the first round of pairs: no fresh pairs confirm a flagged regression (decided at 1 % at once)");

  BisectCommandOptions bisect_opts;
  BisectOptions& bo = bisect_opts.bisect;
  auto* bisect = app.add_subcommand(
      "bisect", "Find the first bad commit between a good and a bad one: build each step, A/B it against good");
  bisect->add_option("suite", bo.suite_file, "Suite file (JSON, comments allowed)")->required();
  bisect->add_option("--repo", bo.repo_dir, "The project's git repository")->capture_default_str();
  bisect->add_option("--good", bo.good, "A commit without the regression")->required();
  bisect->add_option("--bad", bo.bad, "A later commit with it (good must be its ancestor)")->required();
  bisect->add_option("--build", bo.build_cmd, "Build command, run with bash in each commit's checkout")->required();
  bisect->add_option("--build-dir", bo.build_dir, "Where the build puts its output, relative to the checkout")
      ->capture_default_str();
  bisect->add_option("--dir-var", bo.dir_var, "The suite variable that names the build directory")
      ->capture_default_str();
  bisect->add_option("--check", bo.checks,
                     "SCENARIO/CHECK (a check name or metric) that moved, repeatable; SCENARIO/METRIC[:STATISTIC] "
                     "without a check in the suite gets one (default: every regression check)");
  bisect
      ->add_option(
          "--max-regression-pct", bo.max_regression_pct,
          "Threshold of the checks --check adds (default: " + FormatValue("%g", kInstructionCountThresholdPct) +
              " for instruction counts, else " + FormatValue("%g", kDefaultMaxRegressionPct) + ")")
      ->check(CLI::Range(0.1, 1000.0));
  bisect->add_option("--max-steps", bo.max_steps, "Builds and A/Bs after the endpoints' confirmation, at most")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  bisect
      ->add_option("--max-repetitions", bo.max_repetitions,
                   "Repetitions per side of one A/B round, at most; an ambiguous step is measured again with twice "
                   "the repetitions up to this (default: twice the suite's maximum)")
      ->check(CLI::Range(2, 100000));
  bisect->add_flag("--instrument", bo.instrument,
                   "Count instructions under Valgrind in every scenario that can (as the suite key \"instrument\"): "
                   "bisect a change of instr.total");
  bisect->add_flag("--dry-run", bo.dry_run, "Print the plan (commits, expected steps) and exit");
  bisect->add_option("--out", bo.out_dir, "Directory for bisect.json, bisect.md, bisect.html and each step's reports")
      ->capture_default_str();
  bisect->add_option("--work", bo.work_dir, "Checkouts and builds by commit, reused across runs (default: OUT/builds)");
  bisect->add_option("--user", bo.user, "Build and run the workloads as this user (default as root: nobody)");
  bisect->add_flag("--quiet", bo.quiet, "Do not print per-repetition progress");
  bisect->add_option("--attach-types", bisect_opts.attach_types, "Allow only these attach types")->delimiter(',');

  RunCommandOptions record_opts;
  auto* baseline = app.add_subcommand("baseline", "Manage stored baselines");
  baseline->require_subcommand(1);
  auto* record = baseline->add_subcommand("record", "Run a suite and store the result as its baseline");
  AddRunOptions(record, record_opts);

  std::string compare_base, compare_results, compare_out = "perfgate-out";
  bool compare_strict = false;
  auto* compare = app.add_subcommand("compare", "Compare a results file with a baseline (or another results file)");
  compare->add_option("baseline", compare_base, "Baseline file or results.json")->required()->check(CLI::ExistingFile);
  compare->add_option("results", compare_results, "Candidate results.json")->required()->check(CLI::ExistingFile);
  compare->add_option("--out", compare_out, "Output directory")->capture_default_str();
  compare->add_flag("--strict", compare_strict, "Inconclusive checks fail");
  bool compare_other_host = false;
  compare->add_flag("--allow-other-host", compare_other_host, kAllowOtherHostHelp);

  std::string report_results, report_out = "perfgate-out";
  bool report_strict = false;
  auto* report = app.add_subcommand("report", "Re-render the reports of a results.json");
  report->add_option("results", report_results, "results.json")->required()->check(CLI::ExistingFile);
  report->add_option("--out", report_out, "Output directory")->capture_default_str();
  report->add_flag("--strict", report_strict, "Inconclusive checks fail");

  MergeOptions merge_opts;
  auto* merge =
      app.add_subcommand("merge", "Merge the results of a suite's shards into one results file and its reports");
  merge->add_option("results", merge_opts.results_files, "results.json of each shard")
      ->required()
      ->check(CLI::ExistingFile);
  merge->add_option("-o,--output", merge_opts.output_file, "Merged results file; the reports go next to it")
      ->required();
  merge->add_option("--baseline-dir", merge_opts.baseline_dir,
                    "Re-evaluate every check against these baselines, as one run (one family of tests)");
  merge
      ->add_option("--shards", merge_opts.shards,
                   "How many shards the suite was split into (--shard K/N): each file must be one of them, and one "
                   "missing fails the merge (exit 3); without it, as many as the files' own \"shard\" says")
      ->check(CLI::Range(1, 10000));
  merge->add_flag("--strict", merge_opts.strict, "Inconclusive checks fail");
  merge->add_flag("--fdr", merge_opts.fdr, "With --baseline-dir: Benjamini-Hochberg instead of Holm");
  merge->add_flag("--allow-other-host", merge_opts.allow_other_host, kAllowOtherHostHelp);
  merge
      ->add_option("--suite", merge_opts.suite_file,
                   "The suite the shards ran: its quarantine and the acceptances decide the merged checks again "
                   "(re-evaluating with --baseline-dir drops the shards' own)")
      ->check(CLI::ExistingFile);
  std::vector<std::string> merge_accepts, merge_accept_files;
  AddTriageOptions(merge, merge_accepts, merge_accept_files, merge_opts.today);
  AddSkipBadTrailersFlag(merge, merge_opts.skip_bad_trailers);

  HistoryAddOptions history_opts;
  auto* history = app.add_subcommand("history", "Keep the results of runs over commits");
  history->require_subcommand(1);
  auto* history_add = history->add_subcommand("add", "Store every metric statistic of a run in the history database");
  history_add
      ->add_option("results", history_opts.results_files,
                   "results.json of the run; several (archived runs, say): one --commit each, in the same order")
      ->required()
      ->check(CLI::ExistingFile);
  history_add
      ->add_option("--db", history_opts.db_file,
                   "History database: an SQLite file, created when missing, or a postgresql:// URL (default: "
                   "$PERFGATE_HISTORY)")
      ->envname(kHistoryEnvironmentVariable)
      ->required();
  // One value per --commit: `--commit SHA RESULTS.json` must not take the file for a commit.
  history_add->add_option("--commit", history_opts.commits, "Commit the run measured (one per results file)")
      ->required()
      ->allow_extra_args(false);
  history_add->add_option("--branch", history_opts.branch, "Branch of that commit")->required();
  history_add->add_option("--reference", history_opts.references,
                          "The commit a paired run measured against, interleaved (the nightly of ci/nightly.sh: the "
                          "previous night's); its checks' changes are against it (one per results file)");

  HistoryLastCommitOptions last_opts;
  auto* history_last = history->add_subcommand(
      "last-commit",
      "Print the commit of the newest stored run (nothing when there is none): what a nightly has "
      "measured so far");
  history_last
      ->add_option("--db", last_opts.db_file,
                   "History database: an SQLite file or a postgresql:// URL (default: $PERFGATE_HISTORY)")
      ->envname(kHistoryEnvironmentVariable)
      ->required();
  history_last->add_option("--branch", last_opts.branch, "Only runs of this branch (default: all)");
  history_last->add_option("--suite", last_opts.suite, "Only runs of this suite (default: all)");

  HistoryCopyOptions copy_opts;
  auto* history_copy = history->add_subcommand(
      "copy", "Copy every run of one history into another (between SQLite and PostgreSQL, either way)");
  history_copy->add_option("source", copy_opts.source, "History to read: a file or a postgresql:// URL")->required();
  history_copy
      ->add_option("destination", copy_opts.destination,
                   "History to add to: a file, created when missing, or a postgresql:// URL")
      ->required();

  TrendOptions trend_opts;
  auto* trend = app.add_subcommand("trend", "Write a static dashboard of the history, with change points");
  trend
      ->add_option("--db", trend_opts.db_file,
                   "History database: an SQLite file or a postgresql:// URL (default: $PERFGATE_HISTORY)")
      ->envname(kHistoryEnvironmentVariable)
      ->required();
  trend->add_option("--suite", trend_opts.suite, "Only this suite (default: all)");
  trend->add_option("--out", trend_opts.out_dir, "Directory for index.html and its stylesheets")->required();
  trend->add_option("--branch", trend_opts.branch, "Only runs of this branch (default: all)");
  trend->add_option("--statistic", trend_opts.statistics,
                    "Statistics to chart (repeatable; default: value, rate, per_op, p50, p99)");
  trend->add_option("--p-value", trend_opts.max_p_value, "A change point needs Welch's p below this")
      ->capture_default_str()
      ->check(CLI::Range(1e-12, 0.5));
  trend->add_option("--min-segment", trend_opts.min_segment, "Runs on each side of a change point, at least")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  trend->add_option("--change-points", trend_opts.change_points_file,
                    "Also write the change points as JSON (series, change, the commits before and after)");

  ExportOptions export_opts;
  bool export_openmetrics = false;
  auto* export_cmd = app.add_subcommand("export", "Export a run's metrics for Prometheus");
  export_cmd->add_flag("--openmetrics", export_openmetrics, "OpenMetrics text format (the only format)")->required();
  export_cmd->add_option("results", export_opts.results_file, "results.json")->required()->check(CLI::ExistingFile);
  export_cmd->add_option("--push", export_opts.push_url,
                         "Pushgateway base URL (http://host:port): one PUT per scenario, to "
                         "/metrics/job/perfgate/suite/<suite>/scenario/<scenario>/host/<host>");

  OverheadCommandOptions overhead_opts;
  auto* overhead = app.add_subcommand(
      "overhead", "Measure what the probes cost: each scenario without and with its probes, interleaved");
  overhead->add_option("suite", overhead_opts.suite_file, "Suite file (JSON, comments allowed)")->required();
  overhead->add_option("--scenario", overhead_opts.scenarios, "Measure only this scenario (repeatable)");
  overhead->add_option("--pairs", overhead_opts.pairs, "Repetitions per side (bare and probed)")
      ->capture_default_str()
      ->check(CLI::Range(3, 10000));
  overhead->add_option("--metric", overhead_opts.metric, "Scalar metric to compare")->capture_default_str();
  overhead->add_option("--json", overhead_opts.json_file, "Also write the measurements to this JSON file");
  overhead->add_flag("--quiet", overhead_opts.quiet, "Do not print per-repetition progress");
  overhead->add_option("--attach-types", overhead_opts.attach_types, "Allow only these attach types")->delimiter(',');

  std::string quarantine_suite, quarantine_today;
  auto* quarantine =
      app.add_subcommand("quarantine", "Checks taken out of the gate until a date (the suite's quarantine list)");
  quarantine->require_subcommand(1);
  auto* quarantine_list =
      quarantine->add_subcommand("list", "List each quarantined check with its owner, reason and expiry date");
  quarantine_list->add_option("suite", quarantine_suite, "Suite file (JSON, comments allowed)")->required();
  quarantine_list->add_option("--today", quarantine_today,
                              "The date expiry is judged on, YYYY-MM-DD (default: PERFGATE_TODAY, else today in UTC)");

  AlertsOptions alerts_opts;
  auto* alerts = app.add_subcommand(
      "alerts", "The nightly alerts: change points grouped per commit range, with a state, an owner and a bug link");
  alerts->require_subcommand(1);
  const std::string alerts_db_help =
      "History database: an SQLite file or a postgresql:// URL (default: $PERFGATE_HISTORY)";
  auto* alerts_list = alerts->add_subcommand("list", "List the alert groups, oldest first, one a line");
  auto* alerts_show =
      alerts->add_subcommand("show", "Show one alert group as Markdown (an issue body a job can post) or JSON");
  auto* alerts_set = alerts->add_subcommand(
      "set", "Change an alert group's state, owner or bug link; every change is kept with who made it and when");
  for (CLI::App* cmd : {alerts_list, alerts_show, alerts_set}) {
    cmd->add_option("--db", alerts_opts.db_file, alerts_db_help)->envname(kHistoryEnvironmentVariable)->required();
  }
  alerts_list->add_option("--suite", alerts_opts.suite, "Only this suite (default: all)");
  alerts_list->add_option("--state", alerts_opts.states,
                          "Only groups in this state (repeatable): new, acknowledged, expected, invalid, fixed");
  alerts_list->add_flag("--json", alerts_opts.json, "A JSON array of the groups with their series");
  alerts_show->add_option("id", alerts_opts.id, "Alert id (alerts list shows it)")->required();
  alerts_show->add_flag("--json", alerts_opts.json, "JSON with every state change instead of Markdown");
  alerts_set->add_option("id", alerts_opts.id, "Alert id (alerts list shows it)")->required();
  alerts_set->add_option("--state", alerts_opts.state, "new, acknowledged, expected, invalid or fixed")
      ->each([&](const std::string&) { alerts_opts.state_given = true; });
  alerts_set->add_option("--owner", alerts_opts.owner, "Who owns it ('' to clear)")->each([&](const std::string&) {
    alerts_opts.owner_given = true;
  });
  alerts_set->add_option("--bug", alerts_opts.bug, "Bug or issue link, http(s)://… ('' to clear)")
      ->each([&](const std::string&) { alerts_opts.bug_given = true; });
  alerts_set->add_option("--by", alerts_opts.by, "Who makes the change (default: the login name)");
  alerts_set->add_option("--note", alerts_opts.note, "Why, kept with the change");

  auto* probes = app.add_subcommand("probes", "List the probe catalog and the attach type chosen on this kernel");

  bool metrics_markdown = false;
  auto* metrics = app.add_subcommand(
      "metrics", "List every metric perfgate declares: kind, unit, better direction, role and how the why prices it");
  metrics->add_flag("--markdown", metrics_markdown, "A Markdown table (the reference page's)");

  bool doctor_fix = false;
  auto* doctor = app.add_subcommand("doctor", "Check BTF, tracefs, privileges, cgroups and attach types");
  doctor->add_flag("--fix", doctor_fix, "Fix what can be fixed (mount tracefs)");

  // After the subcommands, which would otherwise inherit it; the reference
  // page (docs/generate-reference.sh) and the man page read it from here.
  app.footer(
      "Exit codes:\n"
      "  0  pass: no check failed (improvements included; inconclusive checks too, unless --strict)\n"
      "  1  a check failed: a regression or a budget exceeded\n"
      "  2  bad input: usage, suite, baseline or results file (the message names the file and the JSON path)\n"
      "  3  infrastructure: a probe could not attach, a workload crashed or timed out, not enough privilege, "
      "interrupted");

  if (const std::string unknown = UnknownCommand(app, argc, argv); !unknown.empty()) {
    log::Error("%s\n", unknown.c_str());
    return static_cast<int>(ExitCode::kBadInput);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    log::Notice("%s (see perfgate --help)\n", OneLine(e.what()).c_str());
    return static_cast<int>(ExitCode::kBadInput);
  }

  log::SetQuiet(run_opts.gate.quiet || record_opts.gate.quiet || ab_opts.run.gate.quiet || bo.quiet ||
                overhead_opts.quiet);
  try {
    if (*run) {
      run_opts.gate.confirm = !run_no_confirm;
      ParseAcceptOptions(run_opts);
      return RunCommand(run_opts);
    }
    if (*record) return BaselineRecordCommand(record_opts);
    if (*compare) return CompareCommand(compare_base, compare_results, compare_out, compare_strict, compare_other_host);
    if (*report) return ReportCommand(report_results, report_out, report_strict);
    if (*merge) {
      merge_opts.acceptances = ParseAcceptances(merge_accepts, merge_accept_files,
                                                merge_opts.skip_bad_trailers ? &merge_opts.skipped_trailers : nullptr);
      return MergeCommand(merge_opts);
    }
    if (*history_add) return HistoryAddCommand(history_opts);
    if (*history_copy) return HistoryCopyCommand(copy_opts);
    if (*history_last) return HistoryLastCommitCommand(last_opts);
    if (*trend) return TrendCommand(trend_opts);
    if (*export_cmd) return ExportCommand(export_opts);
    if (*overhead) return OverheadCommand(overhead_opts);
    if (*bisect) return BisectCommand(bisect_opts);
    if (*ab) {
      ab_opts.run.gate.confirm = !no_confirm;
      ParseAcceptOptions(ab_opts.run);
      return AbCommand(ab_opts);
    }
    if (*quarantine_list) return QuarantineListCommand(quarantine_suite, quarantine_today);
    if (*alerts_list) return AlertsListCommand(alerts_opts);
    if (*alerts_show) return AlertsShowCommand(alerts_opts);
    if (*alerts_set) return AlertsSetCommand(alerts_opts);
    if (*probes) return ProbesCommand();
    if (*metrics) return MetricsCommand(metrics_markdown);
    if (*doctor) return DoctorCommand(doctor_fix);
  } catch (const Error& e) {
    log::Error("%s\n", OneLine(e.what()).c_str());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    log::Notice("internal error: %s\n", OneLine(e.what()).c_str());
    return static_cast<int>(ExitCode::kInfra);
  }
  return static_cast<int>(ExitCode::kBadInput);
}

}  // namespace perfgate
