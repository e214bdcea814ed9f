// The lock probes (futex, mmaplock) against pg-locks, the workload that
// contends a mutex between two threads (timing its own lock calls) or maps
// memory in one thread while another reads /proc/self/maps. Each probe runs
// with every attach type this kernel supports; exact comparisons use
// workload scope, since other tests may run on the machine at the same time.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/paths.h"
#include "harness/probe.h"
#include "metrics/results_json.h"
#include "probes/features.h"
#include "probes/futex_contention.h"
#include "probes/probe.h"
#include "probes/tracker.h"

namespace perfgate {
namespace {

using std::chrono::milliseconds;

// What pg-locks printed about itself: its JSON lines by key.
struct LocksOutput {
  double mutex_wait_ns = -1;  // locks.mutex_wait_time
  uint64_t mutex_address = 0;
  double maps_reads = -1;
};

LocksOutput ParseLocksOutput(const std::string& text) {
  LocksOutput out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (j.contains("mutex_address")) out.mutex_address = j["mutex_address"].get<uint64_t>();
    if (j.value("metric", "") == "locks.mutex_wait_time") out.mutex_wait_ns = j["value"].get<double>();
    if (j.value("metric", "") == "locks.maps_reads") out.maps_reads = j["value"].get<double>();
  }
  return out;
}

// Runs pg-locks with `args` as the held child, its stdout in `output`.
std::function<void()> ExecLocks(std::vector<std::string> args, FILE* output) {
  return [args = std::move(args), fd = fileno(output)] {
    std::vector<std::string> argv_strings = {PERFGATE_LOCKS_BIN};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : argv_strings) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (dup2(fd, STDOUT_FILENO) < 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  };
}

std::string ReadAll(FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
  return text;
}

// A futex wait of about 1 ms that nobody ends: a timed condition variable wait.
void TimedFutexWait() {
  static std::mutex mutex;
  static std::condition_variable never;
  std::unique_lock<std::mutex> lock(mutex);
  never.wait_for(lock, milliseconds(1));
}

void MapAndUnmap() {
  void* p = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) munmap(p, 1 << 16);
}

// ---- futex ------------------------------------------------------------------

class FutexProbe : public ProbeRun {
 protected:
  // pg-locks --mode mutex: each of two threads takes the mutex 60 times, on
  // its turn, and holds it 2 ms, so each waits most of the other's hold per
  // turn (about 230 ms in all).
  MetricSet MeasureContendedMutex(std::unique_ptr<Probe> probe, LocksOutput& printed) {
    FILE* output = std::tmpfile();
    EXPECT_NE(output, nullptr);
    if (output == nullptr) return {};
    MetricSet metrics =
        Measure(std::move(probe), ProbeScope::kWorkload,
                ExecLocks({"--mode", "mutex", "--iterations", "60", "--hold-us", "2000", "--gap-us", "200"}, output));
    std::string text = ReadAll(output);
    std::fclose(output);
    printed = ParseLocksOutput(text);
    EXPECT_GT(printed.mutex_wait_ns, 0) << text;
    EXPECT_NE(printed.mutex_address, 0u) << text;
    return metrics;
  }
};

TEST_P(FutexProbe, WaitTimeOfAContendedMutexMatchesTheWorkloadsOwnTiming) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  LocksOutput printed;
  MetricSet metrics = MeasureContendedMutex(CreateProbe("futex"), printed);
  ASSERT_GT(printed.mutex_wait_ns, 0);
  const double measured = printed.mutex_wait_ns;

  const Metric& time = metrics.at("lock.futex_wait_time");
  EXPECT_EQ(time.kind, MetricKind::kCounter);
  EXPECT_EQ(time.unit, "ns");
  std::printf("futex wait: measured by the workload %.1f ms, by the probe %.1f ms (%s)\n", measured / kMs,
              time.value / kMs, ToString(GetParam()).c_str());
  // The mutex's waits are the workload's only futex waits (it joins no
  // thread), so the probe's total is the workload's own measure.
  EXPECT_NEAR(time.value, measured, 0.2 * measured);
  // Each turn that had to wait is at least one wait.
  const Metric& waits = metrics.at("lock.futex_waits");
  EXPECT_EQ(waits.kind, MetricKind::kCounter);
  EXPECT_GE(waits.value, 20);
  const Metric& hist = metrics.at("lock.futex_wait");
  EXPECT_EQ(hist.kind, MetricKind::kHistogram);
  EXPECT_EQ(static_cast<double>(hist.hist.count()), waits.value);
  // Waits last most of a 2 ms hold, a bucket's width (3 %) aside.
  EXPECT_GE(hist.hist.Max(), 1 * kMs);
  EXPECT_EQ(report_.drops, 0u);
}

TEST_P(FutexProbe, TheMutexIsTheMostContendedAddress) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  auto probe = CreateProbe("futex");
  auto* contention = dynamic_cast<FutexContentionSource*>(probe.get());
  ASSERT_NE(contention, nullptr);
  std::vector<ContendedFutex> top;
  LocksOutput printed;
  pid_t pid = 0;
  {
    WorkloadTracker tracker;
    tracker.Attach(Options(ProbeScope::kWorkload));
    probe->Attach(Options(ProbeScope::kWorkload), &tracker);
    FILE* output = std::tmpfile();
    ASSERT_NE(output, nullptr);
    HeldChild child(
        ExecLocks({"--mode", "mutex", "--iterations", "40", "--hold-us", "2000", "--gap-us", "200"}, output));
    pid = child.pid();
    tracker.Track(pid);
    probe->Reset();
    ASSERT_TRUE(child.RunToCompletion());
    MetricSet metrics;
    probe->Collect(0.2, metrics);
    printed = ParseLocksOutput(ReadAll(output));
    std::fclose(output);
    top = contention->TopContendedFutexes(3);
  }
  ASSERT_FALSE(top.empty());
  EXPECT_EQ(top[0].tgid, static_cast<uint32_t>(pid));
  EXPECT_EQ(top[0].uaddr, printed.mutex_address);
  EXPECT_NEAR(static_cast<double>(top[0].time_ns), printed.mutex_wait_ns, 0.2 * printed.mutex_wait_ns);
  EXPECT_GE(top[0].count, 10u);
  // No stacks unless asked for.
  EXPECT_LT(top[0].user_stack_id, 0);
  EXPECT_TRUE(top[0].user_ips.empty());
  for (size_t i = 1; i < top.size(); ++i) EXPECT_GE(top[i - 1].time_ns, top[i].time_ns);

  // A new repetition starts without the old addresses.
  probe->Reset();
  EXPECT_TRUE(contention->TopContendedFutexes(3).empty());
}

TEST_P(FutexProbe, StacksGiveTheWaitingUserStack) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  params_ = {{"stacks", true}};
  auto probe = CreateProbe("futex");
  auto* contention = dynamic_cast<FutexContentionSource*>(probe.get());
  ASSERT_NE(contention, nullptr);
  WorkloadTracker tracker;
  tracker.Attach(Options(ProbeScope::kWorkload));
  probe->Attach(Options(ProbeScope::kWorkload), &tracker);
  FILE* output = std::tmpfile();
  ASSERT_NE(output, nullptr);
  HeldChild child(ExecLocks({"--mode", "mutex", "--iterations", "20", "--hold-us", "1000", "--gap-us", "100"}, output));
  tracker.Track(child.pid());
  probe->Reset();
  ASSERT_TRUE(child.RunToCompletion());
  MetricSet metrics;
  probe->Collect(0.1, metrics);
  LocksOutput printed = ParseLocksOutput(ReadAll(output));
  std::fclose(output);
  std::vector<ContendedFutex> top = contention->TopContendedFutexes(3);
  ASSERT_FALSE(top.empty());
  EXPECT_EQ(top[0].uaddr, printed.mutex_address);
  EXPECT_GE(top[0].user_stack_id, 0);
  // At least the instruction after the syscall, in the C library.
  EXPECT_FALSE(top[0].user_ips.empty());
  EXPECT_EQ(probe->Report().drops, 0u);
}

TEST_P(FutexProbe, IgnoresUntrackedThreadsInWorkloadScope) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  Noise noise(TimedFutexWait);
  MetricSet metrics = Measure("futex", ProbeScope::kWorkload, [] { std::this_thread::sleep_for(milliseconds(50)); });
  EXPECT_GT(noise.rounds(), 10);
  EXPECT_EQ(metrics.at("lock.futex_waits").value, 0);
}

TEST_P(FutexProbe, SystemScopeSeesOtherThreads) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  Noise noise(TimedFutexWait);
  // Long enough for more than 10 of the noise thread's 1 ms waits while
  // CPU-bound neighbours delay each wake-up by several ms.
  MetricSet metrics = Measure("futex", ProbeScope::kSystem, [] { std::this_thread::sleep_for(milliseconds(200)); });
  EXPECT_GT(noise.rounds(), 10);
  // The noise thread's timed waits (ETIMEDOUT) are waits.
  EXPECT_GT(metrics.at("lock.futex_waits").value, 10);
  EXPECT_GT(metrics.at("lock.futex_wait_time").value, 10 * kMs);
}

// futex_wait (Linux 6.7) and futex_waitv (5.16), called directly: glibc's
// locks do not use them yet. Each waits 1 ms for a word nobody changes, on an
// absolute CLOCK_MONOTONIC deadline, and times out.
constexpr long kNrFutexWaitv = 449;
constexpr long kNrFutexWait = 455;
constexpr unsigned kFutex2U32Private = 0x02 | 128;  // FUTEX2_SIZE_U32 | FUTEX2_PRIVATE

struct Futex2Waiter {  // struct futex_waitv
  uint64_t val;
  uint64_t uaddr;
  uint32_t flags;
  uint32_t reserved;
};

timespec DeadlineIn(long ns) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_nsec += ns;
  ts.tv_sec += ts.tv_nsec / 1'000'000'000;
  ts.tv_nsec %= 1'000'000'000;
  return ts;
}

long Futex2Wait(uint32_t* word, uint32_t expected, long ns) {
  timespec deadline = DeadlineIn(ns);
  return syscall(kNrFutexWait, word, expected, 0xffffffffUL, kFutex2U32Private, &deadline, CLOCK_MONOTONIC);
}

long Futex2Waitv(uint32_t* word, uint32_t expected, long ns) {
  Futex2Waiter waiter{};
  waiter.val = expected;
  waiter.uaddr = reinterpret_cast<uintptr_t>(word);
  waiter.flags = kFutex2U32Private;
  timespec deadline = DeadlineIn(ns);
  return syscall(kNrFutexWaitv, &waiter, 1, 0, &deadline, CLOCK_MONOTONIC);
}

TEST_P(FutexProbe, TimesFutexWaitAndFutexWaitv) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  // A word that does not hold the expected value: EAGAIN at once where the
  // syscall exists, ENOSYS where it does not.
  uint32_t word = 1;
  const bool has_wait = Futex2Wait(&word, 0, 0) < 0 && errno != ENOSYS;
  const bool has_waitv = Futex2Waitv(&word, 0, 0) < 0 && errno != ENOSYS;
  if (!has_wait && !has_waitv) GTEST_SKIP() << "neither futex_wait nor futex_waitv on this kernel";
  constexpr int kWaits = 10;
  MetricSet metrics = Measure("futex", ProbeScope::kWorkload, [has_wait, has_waitv] {
    uint32_t word = 0;
    for (int i = 0; i < kWaits; ++i) {
      if (has_wait) Futex2Wait(&word, 0, 1'000'000);
      if (has_waitv) Futex2Waitv(&word, 0, 1'000'000);
      // Not waits: the word differs (EAGAIN).
      if (has_wait) Futex2Wait(&word, 1, 1'000'000);
      if (has_waitv) Futex2Waitv(&word, 1, 1'000'000);
    }
  });
  const int expected = kWaits * (static_cast<int>(has_wait) + static_cast<int>(has_waitv));
  EXPECT_EQ(metrics.at("lock.futex_waits").value, expected);
  EXPECT_GE(metrics.at("lock.futex_wait_time").value, expected * 1 * kMs);
  EXPECT_EQ(report_.drops, 0u);
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, FutexProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);

// Hooked at the futex syscalls' own tracepoints, the probe runs no program
// for any other syscall; at raw_syscalls (forced here) it runs two for each.
TEST(FutexProbeHooks, OtherSyscallsRunNoProgramAtTheFutexTracepoints) {
  PERFGATE_REQUIRE_ROOT();
  BpfStatsEnabler stats;
  if (!stats.enabled()) GTEST_SKIP() << stats.reason();
  PERFGATE_REQUIRE_ENVIRONMENT(TracepointExists("syscalls", "sys_enter_futex").supported,
                               "no syscalls:sys_enter_futex tracepoint");
  constexpr uint64_t kCalls = 100'000;
  auto runs_for_getppid_calls = [](const ProbeOptions& options, std::vector<HookChoice>& hooks) {
    auto probe = CreateProbe("futex");
    probe->Attach(options, nullptr);
    hooks = probe->Report().hooks;
    const uint64_t before = probe->Report().run_count;
    for (uint64_t i = 0; i < kCalls; ++i) syscall(SYS_getppid);
    return probe->Report().run_count - before;
  };
  ProbeOptions options;
  options.scope = ProbeScope::kSystem;
  std::vector<HookChoice> hooks;
  // Other processes' futex calls run it meanwhile, a few hundred at most.
  EXPECT_LT(runs_for_getppid_calls(options, hooks), kCalls / 10);
  ASSERT_GE(hooks.size(), 2u);
  for (const auto& hook : hooks) {
    EXPECT_EQ(hook.attach_type, "tracepoint") << hook.hook;
    EXPECT_EQ(hook.target.rfind("syscalls:sys_", 0), 0u) << hook.target;
  }
  options.allowed_attach_types = {AttachType::kRawTp};
  EXPECT_GE(runs_for_getppid_calls(options, hooks), 2 * kCalls);
  ASSERT_EQ(hooks.size(), 2u);
  EXPECT_EQ(hooks[0].target, "sys_enter");
}

// ---- mmaplock ---------------------------------------------------------------

class MmapLockProbe : public ProbeRun {};

TEST_P(MmapLockProbe, MapsReaderAgainstMmapRecordsWaits) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  FILE* output = std::tmpfile();
  ASSERT_NE(output, nullptr);
  MetricSet metrics =
      Measure("mmaplock", ProbeScope::kWorkload, ExecLocks({"--mode", "mmap", "--iterations", "1000"}, output));
  LocksOutput printed = ParseLocksOutput(ReadAll(output));
  std::fclose(output);
  EXPECT_GE(printed.maps_reads, 1);
  const Metric& waits = metrics.at("lock.mmap_lock_waits");
  EXPECT_EQ(waits.kind, MetricKind::kCounter);
  const Metric& hist = metrics.at("lock.mmap_lock_wait");
  EXPECT_EQ(hist.kind, MetricKind::kHistogram);
  EXPECT_EQ(hist.unit, "ns");
  const Metric& time = metrics.at("lock.mmap_lock_wait_time");
  std::printf("mmap lock: %.0f acquisitions, %.3f ms in all, p50 %.0f ns, max %.0f ns, %.0f maps reads (%s)\n",
              waits.value, time.value / kMs, hist.hist.Quantile(0.5), hist.hist.Max(), printed.maps_reads,
              ToString(GetParam()).c_str());
  // Every mmap and munmap takes the lock for writing: 1000 of each at least.
  EXPECT_GE(waits.value, 2000);
  EXPECT_GT(hist.hist.count(), 0u);
  EXPECT_EQ(static_cast<double>(hist.hist.count()), waits.value);
  EXPECT_GT(time.value, 0);
  EXPECT_EQ(report_.drops, 0u);
}

TEST_P(MmapLockProbe, IgnoresUntrackedThreadsInWorkloadScope) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  Noise noise(MapAndUnmap);
  MetricSet metrics = Measure("mmaplock", ProbeScope::kWorkload, [] { std::this_thread::sleep_for(milliseconds(50)); });
  EXPECT_GT(noise.rounds(), 100);
  // The child's own few (its exit unmaps its memory).
  EXPECT_LT(metrics.at("lock.mmap_lock_waits").value, 50);
}

TEST_P(MmapLockProbe, SystemScopeSeesOtherThreads) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  Noise noise(MapAndUnmap);
  MetricSet metrics = Measure("mmaplock", ProbeScope::kSystem, [] { std::this_thread::sleep_for(milliseconds(50)); });
  EXPECT_GT(noise.rounds(), 100);
  // Two per round of the noise thread (mmap, munmap) while the child slept.
  EXPECT_GT(metrics.at("lock.mmap_lock_waits").value, 100);
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, MmapLockProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);

// ---- both: lifetime, run-time stats, CLI -------------------------------------

class LockProbeLifetime : public ::testing::TestWithParam<std::string> {};

TEST_P(LockProbeLifetime, DetachUnloadsEveryProgram) {
  PERFGATE_REQUIRE_ROOT();
  const std::string prefix = GetParam() + "_";
  std::set<uint32_t> before = ProgramIdsNamed(prefix);
  {
    WorkloadTracker tracker;
    tracker.Attach({});
    auto probe = CreateProbe(GetParam());
    ASSERT_NE(probe, nullptr);
    probe->Attach({}, &tracker);
    // futex: an enter and an exit hook for each futex syscall this kernel has.
    EXPECT_GE(probe->Report().hooks.size(), 2u);
    EXPECT_FALSE(NewProgramIdsNow(before, prefix).empty());
    probe->Detach();
    probe->Detach();              // twice is fine
    probe->Attach({}, &tracker);  // the destructor must clean this one up
  }
  EXPECT_EQ(NewProgramIds(before, prefix), std::set<uint32_t>{});
}

// What the report's overhead accounting reads: events and ns per event.
TEST_P(LockProbeLifetime, ReportsRunTimeStatsWhenEnabled) {
  PERFGATE_REQUIRE_ROOT();
  BpfStatsEnabler stats;
  if (!stats.enabled()) GTEST_SKIP() << stats.reason();
  auto probe = AttachedInSystemScope(GetParam());
  {
    Noise futex(TimedFutexWait);
    Noise maps(MapAndUnmap);
    std::this_thread::sleep_for(milliseconds(50));
  }
  ProbeReport report = probe->Report();
  EXPECT_EQ(report.scope, "system");
  EXPECT_GT(report.run_count, 0u);
  EXPECT_GT(report.run_time_ns, 0u);
  std::printf("%s: %llu program runs, %.0f ns per run\n", GetParam().c_str(),
              static_cast<unsigned long long>(report.run_count),
              static_cast<double>(report.run_time_ns) / static_cast<double>(report.run_count));
}

INSTANTIATE_TEST_SUITE_P(Catalog, LockProbeLifetime, ::testing::Values("futex", "mmaplock"));

TEST(LockProbesCommand, ListsBothProbesWithTheirHooks) {
  PERFGATE_REQUIRE_ROOT();
  testing::CliRun run = testing::RunCli({"probes"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  size_t futex = run.output.find("  futex — ");
  ASSERT_NE(futex, std::string::npos) << run.output;
  EXPECT_NE(run.output.find("parameter stacks (boolean)", futex), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("hook sys_enter", futex), std::string::npos) << run.output;
  size_t mmaplock = run.output.find("  mmaplock — ");
  ASSERT_NE(mmaplock, std::string::npos) << run.output;
  EXPECT_NE(run.output.find("hook mmap_lock_start_locking", mmaplock), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("hook mmap_lock_acquire_returned", mmaplock), std::string::npos) << run.output;
}

// The shipped example suite, shortened: both scenarios run, their probes'
// metrics are in every repetition and the probes' cost is reported.
TEST(LockProbesCli, ShippedSuiteRunsWithBothProbes) {
  PERFGATE_REQUIRE_ROOT();
  testing::ScratchDir dir;
  testing::CliRun run = testing::RunCli({"run", std::string(PERFGATE_SOURCE_DIR) + "/workloads/locks/locks.json",
                                         "--reps", "2", "--baseline-dir", dir / "b", "--out", dir / "o", "--quiet"},
                                        {"LOCKS_ITERATIONS=20", "LOCKS_MMAP_ITERATIONS=300"});
  // No baseline: the budgets decide, and they are absolute times that a
  // host busy enough can exceed (exit 1); nothing may fail to run (exit 3).
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.output;
  RunResults results = ReadResultsFile(dir / "o/results.json");
  ASSERT_EQ(results.scenarios.size(), 2u);
  for (const auto& scenario : results.scenarios) {
    ASSERT_EQ(scenario.repetitions.size(), 2u) << scenario.name;
    const char* metric = scenario.name == "contended-mutex" ? "lock.futex_wait_time" : "lock.mmap_lock_waits";
    for (const auto& rep : scenario.repetitions) EXPECT_GT(rep.metrics.at(metric).value, 0) << scenario.name;
    // The probe's cost, from the run-time stats of the warm-up repetition.
    const std::string name = scenario.name == "contended-mutex" ? "futex" : "mmaplock";
    auto it = std::find_if(scenario.probes.begin(), scenario.probes.end(),
                           [&](const ProbeReport& report) { return report.name == name; });
    ASSERT_NE(it, scenario.probes.end()) << scenario.name;
    const ProbeReport& probe = *it;
    EXPECT_GT(probe.run_count, 0u) << probe.name;
    EXPECT_GT(probe.run_time_ns, 0u) << probe.name;
    EXPECT_TRUE(probe.CpuShare().has_value()) << probe.name;
    std::printf("%s: %llu runs, %.0f ns per run, %.2f %% of the workload's CPU time\n", probe.name.c_str(),
                static_cast<unsigned long long>(probe.run_count),
                static_cast<double>(probe.run_time_ns) / static_cast<double>(std::max<uint64_t>(probe.run_count, 1)),
                100 * probe.CpuShare().value_or(0));
  }
}

// Holds of 8 ms make each thread wait about 7.9 ms per operation, 15.8 ms
// in all: over the 5 ms budget however idle the host.
TEST(LockProbesCli, LongerMutexHoldsFailTheFutexWaitBudget) {
  PERFGATE_REQUIRE_ROOT();
  testing::ScratchDir dir;
  testing::CliRun run =
      testing::RunCli({"run", std::string(PERFGATE_SOURCE_DIR) + "/workloads/locks/locks.json", "--scenario",
                       "contended-mutex", "--reps", "2", "--baseline-dir", dir / "b", "--out", dir / "o"},
                      {"LOCKS_ITERATIONS=10", "LOCKS_HOLD_US=8000"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("futex-wait-per-op-budget"), std::string::npos) << run.output;
}

// Parameters are checked against the catalog: mmaplock takes none, futex's
// `stacks` is a boolean. The one-line error names the probe by its place in
// the suite.
TEST(LockProbesCli, AnUnknownParameterExitsTwoNamingProbeAndParameter) {
  testing::ScratchDir dir;
  std::string suite = dir / "suite.json";
  testing::WriteFile(suite, R"({"name": "t", "scenarios": [{"name": "s", "workload": {"kind": "command",
      "argv": ["true"]}, "repetitions": 2, "probes": [{"name": "mmaplock", "stacks": true}], "checks": []}]})");
  testing::CliRun run = testing::RunCli({"run", suite, "--out", dir / "o", "--quiet"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("$.scenarios[0].probes[0].stacks: unknown key \"stacks\""), std::string::npos)
      << run.output;
}

TEST(LockProbesCli, AStacksParameterThatIsNotABooleanExitsTwo) {
  testing::ScratchDir dir;
  std::string suite = dir / "suite.json";
  testing::WriteFile(suite, R"({"name": "t", "scenarios": [{"name": "s", "workload": {"kind": "command",
      "argv": ["true"]}, "repetitions": 2, "probes": [{"name": "futex", "stacks": "yes"}], "checks": []}]})");
  testing::CliRun run = testing::RunCli({"run", suite, "--out", dir / "o", "--quiet"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("$.scenarios[0].probes[0].stacks: expected true or false"), std::string::npos)
      << run.output;
}

// With evidence on, the futex probe's contended words come with the user
// stacks that waited on them: a "futex" profile next to on-CPU and off-CPU.
TEST(LockProbesCli, EvidenceFoldsTheStacksThatWaitedOnTheContendedWord) {
  PERFGATE_REQUIRE_ROOT();
  testing::ScratchDir dir;
  testing::WriteFile(dir / "suite.json", R"({"name": "locks-evidence", "evidence": "always", "scenarios": [{
    "name": "mutex",
    "workload": {"kind": "command", "argv": ["${perfgate_dir}/pg-locks", "--mode", "mutex", "--iterations", "30",
                                              "--hold-us", "1000", "--gap-us", "100"]},
    "warmup": 0, "repetitions": 2, "probes": [{"name": "futex"}],
    "checks": [{"metric": "workload.wall_time", "type": "budget", "max": 1000}]}]})");
  testing::CliRun run = testing::RunCli({"run", dir / "suite.json", "--baseline-dir", dir / "b", "--out", dir / "o"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  RunResults results = ReadResultsFile(dir / "o/results.json");
  ASSERT_EQ(results.scenarios[0].evidence.size(), 1u) << run.output;
  const Evidence& evidence = results.scenarios[0].evidence[0];
  const FoldedProfile* futex = FindProfile(evidence, "futex");
  ASSERT_NE(futex, nullptr) << run.output;
  EXPECT_EQ(futex->unit, "ns");
  EXPECT_GT(futex->total, 10'000'000u) << "30 waits of about 1 ms each";
  EXPECT_FALSE(futex->stacks.empty());
  bool word_named = false;
  for (const std::string& note : evidence.notes) word_named |= note.rfind("futex word 0x", 0) == 0;
  EXPECT_TRUE(word_named) << run.output;
  EXPECT_NE(testing::ReadFile(dir / "o/report/index.html").find("<h4>Futex waits (user lock wait time)</h4>"), std::string::npos);
}

}  // namespace
}  // namespace perfgate
