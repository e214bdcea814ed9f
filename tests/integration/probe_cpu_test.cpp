// The cpu probe: perf_event counters in counting mode on the workload's
// process tree, launched the way the runner launches a workload (HeldProcess:
// held before exec, tracked, released). Without a PMU (this project's
// machines) the software counters run the code the hardware ones share;
// counts are checked against what the workload is known to do and against
// the kernel's own accounting of the process (wait4's rusage), and the
// metrics against results.json, doctor and `perfgate probes`.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/files.h"
#include "harness/paths.h"
#include "harness/probe.h"
#include "metrics/results_json.h"
#include "probes/cpu.h"
#include "probes/features.h"
#include "probes/probe.h"
#include "probes/tracker.h"
#include "run/process.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;

double CpuSeconds(const ::rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Open perf events of this process: none may outlive a repetition.
size_t OpenPerfEvents() {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (fs::read_symlink(entry.path(), ec).string() == "anon_inode:[perf_event]") ++n;
  }
  return n;
}

nlohmann::json Software() { return {{"counters", "software"}}; }

struct CountedRun {
  MetricSet metrics;
  ProcessOutcome outcome;
  ProbeReport report;
};

// The cpu probe attached as the runner attaches it: on `tracker`'s workload
// (nullptr in system scope).
std::unique_ptr<Probe> AttachedCpuProbe(WorkloadTracker* tracker, const nlohmann::json& params = Software(),
                                        ProbeScope scope = ProbeScope::kWorkload) {
  auto probe = CreateProbe("cpu");
  ProbeOptions options;
  options.scope = scope;
  options.params = params;
  probe->Attach(options, tracker);
  return probe;
}

// One repetition as the runner does it: the cpu probe (and the tracker)
// attached, `argv` forked and held, tracked, the probe reset, the workload
// released and waited for, the probe collected.
CountedRun RunCounted(const std::vector<std::string>& argv, const nlohmann::json& params = Software(),
                      ProbeScope scope = ProbeScope::kWorkload) {
  WorkloadTracker tracker;
  tracker.Attach({});
  auto probe = AttachedCpuProbe(scope == ProbeScope::kWorkload ? &tracker : nullptr, params, scope);
  CountedRun run;
  HeldProcess process(argv, {}, "");
  tracker.Clear();
  tracker.Track(process.pid());
  probe->Reset();
  process.Release();
  run.outcome = process.Wait(120, nullptr);
  EXPECT_TRUE(run.outcome.succeeded()) << argv[0] << ": " << run.outcome.stderr_tail;
  probe->Collect(run.outcome.wall_s, run.metrics);
  run.report = probe->Report();
  return run;
}

std::vector<std::string> Smoke(std::vector<std::string> args) {
  args.insert(args.begin(), PERFGATE_SMOKE_BIN);
  return args;
}

double Count(const CountedRun& run, const std::string& metric) {
  auto it = run.metrics.find(metric);
  EXPECT_NE(it, run.metrics.end()) << metric;
  return it == run.metrics.end() ? -1 : it->second.value;
}

TEST(CpuProbe, ReportsTheCountersItUsesAndWhyNotTheHardwareOnes) {
  PERFGATE_REQUIRE_ROOT();
  const CpuCounterChoice pmu = AutoCpuCounters();
  CountedRun run = RunCounted(Smoke({"--iterations", "10"}), nlohmann::json::object());
  const CpuCounterSet set = pmu.set;
  ASSERT_EQ(run.report.hooks.size(), CpuCounters(set).size());
  for (size_t i = 0; i < run.report.hooks.size(); ++i) {
    const HookChoice& hook = run.report.hooks[i];
    EXPECT_EQ(hook.hook, CpuCounters(set)[i].event);
    EXPECT_EQ(hook.attach_type, "perf_event");
    EXPECT_EQ(hook.target, ToString(set) + ":" + CpuCounters(set)[i].event);
    if (set == CpuCounterSet::kHardware) {
      EXPECT_TRUE(hook.rejected.empty());
    } else {
      ASSERT_EQ(hook.rejected.size(), 1u);
      EXPECT_EQ(hook.rejected[0], "hardware: " + pmu.why_not_hardware);
    }
    EXPECT_TRUE(run.metrics.count(CpuCounters(set)[i].metric)) << CpuCounters(set)[i].metric;
  }
  EXPECT_EQ(run.report.run_count, 0u);  // no BPF program
  EXPECT_EQ(run.metrics.at(kCpuRunningFraction).value, 1.0);
}

TEST(CpuProbe, HardwareCountersWithoutAPmuAreAnInfraErrorNamingTheProbe) {
  PERFGATE_REQUIRE_ROOT();
  const CpuCounterChoice pmu = AutoCpuCounters();
  if (pmu.set == CpuCounterSet::kHardware) {
    // The hardware set, where there is one: a loop's instructions are counted.
    CountedRun run = RunCounted(Smoke({"--iterations", "50"}), {{"counters", "hardware"}});
    EXPECT_GT(Count(run, "cpu.instructions"), 50 * 16);
    EXPECT_GT(Count(run, "cpu.cycles"), 0);
    return;
  }
  WorkloadTracker tracker;
  tracker.Attach({});
  auto probe = CreateProbe("cpu");
  ProbeOptions options;
  options.params = {{"counters", "hardware"}};
  try {
    probe->Attach(options, &tracker);
    FAIL() << "attached hardware counters without a PMU";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    EXPECT_NE(std::string(e.what()).find("probe cpu"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(pmu.why_not_hardware), std::string::npos) << e.what();
  }
}

TEST(CpuProbe, AnUnknownCounterSetIsBadInput) {
  auto probe = CreateProbe("cpu");
  ProbeOptions options;
  options.scope = ProbeScope::kSystem;
  options.params = {{"counters", "firmware\n"}};
  try {
    probe->Attach(options, nullptr);
    FAIL() << "accepted counters \"firmware\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    const std::string what = e.what();
    EXPECT_NE(what.find("probe cpu: parameter \"counters\""), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;  // one line, the value escaped
  }
}

TEST(CpuProbe, OnlyThePerfEventAttachTypeServesIt) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("cpu");
  ProbeOptions options;
  options.scope = ProbeScope::kSystem;
  options.allowed_attach_types = {AttachType::kTracepoint};
  try {
    probe->Attach(options, nullptr);
    FAIL() << "attached with perf_event ruled out";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    EXPECT_NE(std::string(e.what()).find("probe cpu"), std::string::npos) << e.what();
  }
  options.allowed_attach_types = {AttachType::kPerfEvent};
  options.params = Software();
  probe->Attach(options, nullptr);
  EXPECT_EQ(probe->Report().hooks.size(), CpuCounters(CpuCounterSet::kSoftware).size());
}

// Each iteration of pg-smoke --sleep-every 1 sleeps once: a context switch,
// nearly always. A sleep whose timer fires before the task reaches the
// scheduler (an interrupt between arming the timer and switching) returns
// without one: a CI run counted 299 switches for 300 sleeps.
TEST(CpuProbe, ContextSwitchesAreAtLeastTheWorkloadsSleepsAndAtMostTheKernelsCount) {
  PERFGATE_REQUIRE_ROOT();
  constexpr int kSleeps = 300;
  CountedRun run = RunCounted(Smoke({"--iterations", std::to_string(kSleeps), "--sleep-every", "1", "--sleep-us", "100",
                                     "--syscalls", "0", "--map-kib", "4"}));
  const double switches = Count(run, "cpu.context_switches");
  EXPECT_GE(switches, 0.97 * kSleeps);
  // wait4's count also has the switches before exec (the held child's wait).
  const auto& u = run.outcome.usage;
  EXPECT_LE(switches, static_cast<double>(u.ru_nvcsw + u.ru_nivcsw));
  EXPECT_EQ(run.metrics.at("cpu.context_switches").kind, MetricKind::kCounter);
}

// 64 fresh pages per iteration, each faulted in once.
TEST(CpuProbe, PageFaultsAreAtLeastThePagesTheWorkloadTouches) {
  PERFGATE_REQUIRE_ROOT();
  constexpr int kIterations = 100;
  CountedRun run = RunCounted(Smoke(
      {"--iterations", std::to_string(kIterations), "--map-kib", "256", "--sleep-every", "0", "--syscalls", "0"}));
  const double faults = Count(run, "cpu.page_faults");
  EXPECT_GE(faults, kIterations * 64);
  const auto& u = run.outcome.usage;
  EXPECT_LE(faults, static_cast<double>(u.ru_minflt + u.ru_majflt));
}

// task-clock is the workload's CPU time from its exec: what wait4 reports,
// less the held child's few instructions before it.
TEST(CpuProbe, TaskClockIsTheCpuTimeTheKernelAccountsToTheWorkload) {
  PERFGATE_REQUIRE_ROOT();
  constexpr int kIterations = 3000;
  CountedRun run = RunCounted(Smoke({"--iterations", std::to_string(kIterations), "--sleep-every", "0"}));
  const double task_clock_ms = Count(run, "cpu.task_clock") / kMs;
  const double rusage_ms = CpuSeconds(run.outcome.usage) * 1e3;
  ASSERT_GT(rusage_ms, 20) << "the workload is too short to compare";
  EXPECT_NEAR(task_clock_ms, rusage_ms, 0.03 * rusage_ms + 2) << "task-clock " << task_clock_ms << " ms";
  // Per operation, as a check reads it.
  Metric clock = run.metrics.at("cpu.task_clock");
  clock.ops = kIterations;
  EXPECT_NEAR(*StatisticValue(clock, "per_op"), rusage_ms * kMs / kIterations,
              (0.03 * rusage_ms + 2) * kMs / kIterations);
}

// The events are inherited: processes the workload forks and the threads it
// starts are counted, and their counts reach the workload's events when they exit.
TEST(CpuProbe, CountsEveryProcessAndThreadTheWorkloadCreates) {
  PERFGATE_REQUIRE_ROOT();
  constexpr int kSleeps = 100;
  const std::string smoke = std::string(PERFGATE_SMOKE_BIN) + " --iterations " + std::to_string(kSleeps) +
                            " --sleep-every 1 --sleep-us 100 --syscalls 0 --map-kib 256";
  CountedRun processes = RunCounted({"/bin/sh", "-c", smoke + " & " + smoke + " & " + smoke + "; wait"});
  EXPECT_GE(Count(processes, "cpu.context_switches"), 3 * kSleeps);
  EXPECT_GE(Count(processes, "cpu.page_faults"), 3 * kSleeps * 64);

  // Two threads, each sleeping twice per iteration; the main thread only waits.
  constexpr int kTurns = 50;
  CountedRun threads = RunCounted({PERFGATE_LOCKS_BIN, "--mode", "mutex", "--iterations", std::to_string(kTurns),
                                   "--hold-us", "50", "--gap-us", "50"});
  EXPECT_GE(Count(threads, "cpu.context_switches"), 2 * 2 * kTurns);
  const auto& u = threads.outcome.usage;
  EXPECT_LE(Count(threads, "cpu.context_switches"), static_cast<double>(u.ru_nvcsw + u.ru_nivcsw));
}

// Counting starts at the workload's exec: what the held child does before
// (perfgate's launch code) is not the workload's.
TEST(CpuProbe, CountingStartsAtTheWorkloadsExec) {
  PERFGATE_REQUIRE_ROOT();
  WorkloadTracker tracker;
  tracker.Attach({});
  auto probe = AttachedCpuProbe(&tracker);
  constexpr int kPagesBeforeExec = 1024;
  HeldChild exec_after_work([] {
    TouchAndUnmap(kPagesBeforeExec * 4096);
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    _exit(127);
  });
  tracker.Track(exec_after_work.pid());
  probe->Reset();
  ASSERT_TRUE(exec_after_work.RunToCompletion());
  MetricSet metrics;
  probe->Collect(1.0, metrics);
  EXPECT_GT(metrics.at("cpu.page_faults").value, 0);  // true's own
  EXPECT_LT(metrics.at("cpu.page_faults").value, kPagesBeforeExec);
  EXPECT_GT(metrics.at("cpu.task_clock").value, 0);

  // A process that never execs never counted: an error, not zeros that
  // would read as an improvement.
  HeldChild no_exec([] { TouchAndUnmap(kPagesBeforeExec * 4096); });
  tracker.Clear();
  tracker.Track(no_exec.pid());
  probe->Reset();
  ASSERT_TRUE(no_exec.RunToCompletion());
  try {
    probe->Collect(1.0, metrics);
    FAIL() << "counted a workload that never executed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    EXPECT_NE(std::string(e.what()).find("probe cpu: the workload's counters never ran"), std::string::npos)
        << e.what();
  }
}

TEST(CpuProbe, WorkloadScopeIgnoresOtherProcessesAndSystemScopeCountsThem) {
  PERFGATE_REQUIRE_ROOT();
  // A neighbour of ours that keeps faulting pages in while the workload sleeps.
  Noise noise([] { TouchAndUnmap(1 << 20); });
  const auto sleeper =
      Smoke({"--iterations", "20", "--sleep-every", "1", "--sleep-us", "20000", "--syscalls", "0", "--map-kib", "4"});
  CountedRun workload = RunCounted(sleeper);
  EXPECT_LT(Count(workload, "cpu.page_faults"), 1000);
  CountedRun system = RunCounted(sleeper, Software(), ProbeScope::kSystem);
  EXPECT_GT(Count(system, "cpu.page_faults"), 10 * 256);
  // Every CPU's clock: at least the neighbour's busy time.
  EXPECT_GT(Count(system, "cpu.task_clock"), 0.2 * system.outcome.wall_s * 1e9);
  EXPECT_GT(noise.rounds(), 10);
}

TEST(CpuProbe, LeavesNoEventOpenAfterARepetitionOrDetach) {
  PERFGATE_REQUIRE_ROOT();
  const size_t before = OpenPerfEvents();
  WorkloadTracker tracker;
  tracker.Attach({});
  auto probe = AttachedCpuProbe(&tracker);
  for (int rep = 0; rep < 3; ++rep) {
    HeldProcess process(Smoke({"--iterations", "5"}), {}, "");
    tracker.Clear();
    tracker.Track(process.pid());
    probe->Reset();
    EXPECT_EQ(OpenPerfEvents(), before + CpuCounters(CpuCounterSet::kSoftware).size());
    process.Release();
    ProcessOutcome outcome = process.Wait(60, nullptr);
    MetricSet metrics;
    probe->Collect(outcome.wall_s, metrics);
    EXPECT_EQ(OpenPerfEvents(), before);
    EXPECT_GT(metrics.at("cpu.task_clock").value, 0);
  }
  // A repetition that never reached Collect (a crashed workload): Detach closes its events.
  HeldProcess process(Smoke({"--iterations", "5"}), {}, "");
  tracker.Clear();
  tracker.Track(process.pid());
  probe->Reset();
  probe->Detach();
  EXPECT_EQ(OpenPerfEvents(), before);
  process.Release();
  process.Wait(60, nullptr);
}

// ---- the CLI ----------------------------------------------------------------

TEST(CpuProbeCli, MetricsPerRepetitionAndPerOperationInResultsJson) {
  PERFGATE_REQUIRE_ROOT();
  testing::ScratchDir dir;
  constexpr int kIterations = 1500;
  const nlohmann::json suite = {
      {"name", "cpu"},
      {"scenarios",
       {{{"name", "smoke"},
         {"workload",
          {{"kind", "command"},
           {"argv", {PERFGATE_SMOKE_BIN, "--iterations", std::to_string(kIterations), "--sleep-every", "100"}}}},
         {"warmup", 0},
         {"repetitions", 3},
         {"timeout_s", 60},
         {"run_as", "nobody"},
         {"probes", {{{"name", "cpu"}, {"scope", "workload"}}}},
         {"checks",
          {{{"metric", "cpu.task_clock"}, {"statistic", "per_op"}, {"type", "budget"}, {"max", 1e9}},
           {{"metric", "cpu.page_faults"}, {"statistic", "per_op"}, {"type", "budget"}, {"min", 64}}}}}}}};
  testing::WriteFile(dir / "suite.json", suite.dump(2));
  testing::CliRun run =
      testing::RunCli({"run", dir / "suite.json", "--baseline-dir", dir / "b", "--out", dir / "o", "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  RunResults results = ReadResultsFile(dir / "o/results.json");
  ASSERT_EQ(results.scenarios.size(), 1u);
  const ScenarioResult& scenario = results.scenarios[0];
  ASSERT_EQ(scenario.repetitions.size(), 3u);
  const bool hardware = AutoCpuCounters().set == CpuCounterSet::kHardware;
  for (const Repetition& rep : scenario.repetitions) {
    for (const CpuCounter& c : CpuCounters(hardware ? CpuCounterSet::kHardware : CpuCounterSet::kSoftware)) {
      ASSERT_TRUE(rep.metrics.count(c.metric)) << c.metric;
      const Metric& m = rep.metrics.at(c.metric);
      EXPECT_EQ(m.kind, MetricKind::kCounter) << c.metric;
      EXPECT_EQ(m.ops, kIterations) << c.metric;  // per operation, from the workload's {"ops": N}
    }
    EXPECT_EQ(rep.metrics.at(kCpuRunningFraction).value, 1.0);
    if (hardware) continue;
    // rusage also counts the child's time between fork and exec, which the
    // counter (enabled on exec) does not: perfgate's own code in the child
    // and exec's teardown of the copied address space. Under the sanitizers,
    // whose shadow mappings the child copies, that came to 8.3 ms of a
    // 0.2 s repetition once; a few milliseconds otherwise.
    const double cpu_s = rep.metrics.at("workload.cpu_time").value;
    EXPECT_NEAR(*StatisticValue(rep.metrics.at("cpu.task_clock"), "per_op"), cpu_s * 1e9 / kIterations,
                (0.03 * cpu_s + 0.012) * 1e9 / kIterations);
    EXPECT_GE(rep.metrics.at("cpu.page_faults").value, kIterations * 64);
  }
  auto probe = std::find_if(scenario.probes.begin(), scenario.probes.end(),
                            [](const ProbeReport& r) { return r.name == "cpu"; });
  ASSERT_NE(probe, scenario.probes.end());
  ASSERT_FALSE(probe->hooks.empty());
  EXPECT_EQ(probe->hooks[0].attach_type, "perf_event");
  EXPECT_EQ(probe->hooks[0].target, hardware ? "hardware:instructions" : "software:task-clock");
}

// The real path on this host, whichever it is, never skipped: where a PMU
// exists, checks on the instruction counts get the tight default threshold
// and their counts; where none does, they end in error (exit 3) and every
// report names the missing PMU, the probe's reason and what to do instead.
TEST(CpuProbeCli, ChecksOnInstructionCountsAreCountedWithAPmuAndSayWhyNotWithout) {
  PERFGATE_REQUIRE_ROOT();
  testing::ScratchDir dir;
  constexpr int kIterations = 500;
  const nlohmann::json suite = {
      {"name", "pmu"},
      {"scenarios",
       {{{"name", "smoke"},
         {"workload",
          {{"kind", "command"},
           {"argv", {PERFGATE_SMOKE_BIN, "--iterations", std::to_string(kIterations), "--sleep-every", "0"}}}},
         {"warmup", 0},
         {"repetitions", 3},
         {"timeout_s", 60},
         {"probes", {{{"name", "cpu"}}}},
         {"checks",
          {{{"metric", "cpu.instructions.user"}, {"statistic", "per_op"}},
           {{"metric", "cpu.instructions"}, {"type", "budget"}, {"max", 1e15}}}}}}}};
  testing::WriteFile(dir / "suite.json", suite.dump(2));
  testing::CliRun run = testing::RunCli({"run", dir / "suite.json", "--baseline-dir", dir / "b", "--out", dir / "o"});
  const RunResults results = ReadResultsFile(dir / "o/results.json");
  ASSERT_EQ(results.scenarios.size(), 1u);
  const ScenarioResult& scenario = results.scenarios[0];
  ASSERT_EQ(scenario.checks.size(), 2u);
  const CheckResult& regression = scenario.checks[0];
  EXPECT_EQ(regression.spec.max_regression_pct, kInstructionCountThresholdPct);
  const CpuCounterChoice choice = AutoCpuCounters();
  if (choice.set == CpuCounterSet::kHardware) {
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(regression.verdict, Verdict::kInconclusive) << regression.message;  // no baseline yet
    EXPECT_EQ(scenario.checks[1].verdict, Verdict::kPass) << scenario.checks[1].message;
    for (const Repetition& rep : scenario.repetitions) {
      // pg-smoke's loop alone executes more than 16 instructions an iteration.
      EXPECT_GT(rep.metrics.at("cpu.instructions.user").value, 16 * kIterations);
      EXPECT_GT(rep.metrics.at("cpu.instructions.kernel").value, 0);
      EXPECT_GE(rep.metrics.at("cpu.instructions").value, rep.metrics.at("cpu.instructions.user").value);
    }
    return;
  }
  ASSERT_FALSE(choice.why_not_hardware.empty());
  EXPECT_EQ(run.exit_code, 3) << run.output;
  for (const CheckResult& check : scenario.checks) {
    EXPECT_EQ(check.verdict, Verdict::kError) << check.message;
    EXPECT_NE(check.message.find("probe cpu: " + choice.why_not_hardware + ", so it counts software events"),
              std::string::npos)
        << check.message;
    EXPECT_NE(check.message.find("--instrument"), std::string::npos) << check.message;
  }
  for (const Repetition& rep : scenario.repetitions) {
    EXPECT_GT(rep.metrics.at("cpu.task_clock").value, 0);
    EXPECT_FALSE(rep.metrics.count("cpu.instructions"));
  }
  // Every report says it, not only results.json.
  const std::string pmu = choice.why_not_hardware.substr(0, choice.why_not_hardware.find(" ("));
  EXPECT_NE(run.output.find("error: smoke/cpu.instructions.user.per_op: metric cpu.instructions.user not measured "
                            "in scenario smoke: probe cpu: " +
                            choice.why_not_hardware),
            std::string::npos)
      << run.output;
  for (const char* file : {"summary.md", "junit.xml", "report/index.html"}) {
    const std::string text = testing::ReadFile(fs::path(dir / "o") / file);
    EXPECT_NE(text.find(pmu), std::string::npos) << file << " does not say \"" << pmu << "\"";
    EXPECT_NE(text.find("--instrument"), std::string::npos) << file;
  }
}

TEST(CpuProbeCli, DoctorAndProbesSayWhichCountersAreUsed) {
  PERFGATE_REQUIRE_ROOT();
  const CpuCounterChoice choice = AutoCpuCounters();
  testing::CliRun doctor = testing::RunCli({"doctor"});
  if (choice.set == CpuCounterSet::kHardware) {
    EXPECT_NE(doctor.output.find("ok       hardware counters      PMU found: the cpu probe counts hardware "
                                 "instructions, cycles, branch-misses, cache-misses"),
              std::string::npos)
        << doctor.output;
  } else {
    EXPECT_NE(doctor.output.find("missing  hardware counters      " + choice.why_not_hardware +
                                 "; the cpu probe counts software task-clock, context-switches, page-faults, "
                                 "cpu-migrations instead"),
              std::string::npos)
        << doctor.output;
  }
  testing::CliRun probes = testing::RunCli({"probes"});
  EXPECT_EQ(probes.exit_code, 0) << probes.output;
  const size_t cpu = probes.output.find("  cpu — ");
  ASSERT_NE(cpu, std::string::npos) << probes.output;
  EXPECT_NE(probes.output.find("parameter counters (string)", cpu), std::string::npos) << probes.output;
  const std::string first = choice.set == CpuCounterSet::kHardware ? "instructions" : "task-clock";
  const std::string hook = "    hook " + first;
  const size_t line = probes.output.find(hook, cpu);
  ASSERT_NE(line, std::string::npos) << probes.output;
  const std::string text = probes.output.substr(line, probes.output.find('\n', line) - line);
  EXPECT_NE(text.find("perf_event"), std::string::npos) << text;
  EXPECT_NE(text.find(ToString(choice.set) + ":" + first), std::string::npos) << text;
  if (choice.set == CpuCounterSet::kSoftware) {
    EXPECT_NE(text.find("(not: hardware: " + choice.why_not_hardware + ")"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace perfgate
