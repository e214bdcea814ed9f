// The BPF probes against real workloads: a child process that waits on a pipe
// until the probe is attached and reset, then makes syscalls, sleeps or
// allocates. Each probe runs with every attach type this kernel supports.
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "base/error.h"
#include "harness/environment.h"
#include "harness/probe.h"
#include "probes/features.h"
#include "probes/probe.h"
#include "probes/syscalls.h"
#include "probes/tracker.h"

namespace perfgate {
namespace {

class SyscallsProbe : public ProbeRun {};

TEST_P(SyscallsProbe, CountsEveryGetppidOfTrackedChild) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("syscalls", ProbeScope::kWorkload, [] { CallGetppid(kGetppidCalls); });
  const Metric& count = metrics.at("syscalls.count");
  EXPECT_GE(count.value, kGetppidCalls);
  // The child's own few other syscalls, and nothing of the untracked rest.
  EXPECT_LT(count.value, kGetppidCalls + 200);
  EXPECT_GT(count.duration_s, 0);
  EXPECT_EQ(count.unit, "count");
  // Latency is sampled, about 1 in 16 by default.
  uint64_t sampled = metrics.at("syscalls.latency").hist.count();
  EXPECT_GE(sampled, static_cast<uint64_t>(kGetppidCalls / 32));
  EXPECT_LE(sampled, static_cast<uint64_t>(kGetppidCalls / 8));
}

// getppid's time: its exact calls at the mean of its sampled calls, which
// take between a hundred nanoseconds (a bare syscall with the probe's
// sys_enter and sys_exit) and a millisecond (preempted at worst) each.
TEST_P(SyscallsProbe, EstimatesTheTimeOfEachTopSyscall) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("syscalls", ProbeScope::kWorkload, [] { CallGetppid(kGetppidCalls); });
  ASSERT_EQ(metrics.count("syscalls.time.getppid"), 1u);
  const Metric& time = metrics.at("syscalls.time.getppid");
  EXPECT_EQ(time.kind, MetricKind::kCounter);
  EXPECT_EQ(time.unit, "ns");
  const double calls = metrics.at("syscalls.count.getppid").value;
  EXPECT_GE(calls, kGetppidCalls);
  const double per_call_ns = time.value / calls;
  RecordProperty("getppid_ns", std::to_string(per_call_ns));
  EXPECT_GT(per_call_ns, 100) << time.value << " ns for " << calls << " calls";
  EXPECT_LT(per_call_ns, 1e6) << time.value << " ns for " << calls << " calls";
}

TEST_P(SyscallsProbe, SampleEveryOneTimesEverySyscall) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure(MakeSyscallsProbe(SyscallsProbeOptions{.latency_sample_every = 1}), ProbeScope::kWorkload,
                              [] { CallGetppid(kGetppidCalls); });
  auto count = static_cast<uint64_t>(metrics.at("syscalls.count").value);
  uint64_t sampled = metrics.at("syscalls.latency").hist.count();
  EXPECT_GE(sampled, static_cast<uint64_t>(kGetppidCalls));
  EXPECT_LE(sampled, count);
  // Counted at sys_enter, timed at sys_exit: only exit_group never returns.
  EXPECT_LE(count - sampled, 2u);
}

// Without latency the probe hooks sys_enter only, and the count stays exact.
TEST_P(SyscallsProbe, WithoutLatencyHooksSysEnterOnlyAndCountsEveryCall) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  params_ = {{"latency", false}};
  MetricSet metrics = Measure("syscalls", ProbeScope::kWorkload, [] { CallGetppid(kGetppidCalls); });
  const Metric& count = metrics.at("syscalls.count");
  EXPECT_GE(count.value, kGetppidCalls);
  EXPECT_LT(count.value, kGetppidCalls + 200);
  EXPECT_GE(metrics.at("syscalls.count.getppid").value, kGetppidCalls);
  EXPECT_EQ(metrics.count("syscalls.latency"), 0u);
  EXPECT_EQ(metrics.count("syscalls.time.getppid"), 0u);
  ASSERT_EQ(report_.hooks.size(), 1u);
  EXPECT_EQ(report_.hooks[0].hook, "sys_enter");
}

TEST(SyscallsProbeOptions, RejectsASampleRateThatIsNotAPowerOfTwo) {
  EXPECT_THROW(MakeSyscallsProbe(SyscallsProbeOptions{.latency_sample_every = 0}), Error);
  EXPECT_THROW(MakeSyscallsProbe(SyscallsProbeOptions{.latency_sample_every = 12}), Error);
  EXPECT_NE(MakeSyscallsProbe(SyscallsProbeOptions{.latency_sample_every = 64}), nullptr);
}

// A child that makes kGetppidCalls getppid calls per byte read from a pipe
// and exits at EOF, so it can live across repetitions.
class SteppedChild {
 public:
  SteppedChild() {
    if (pipe(go_) != 0 || pipe(done_) != 0) throw std::runtime_error("pipe: " + std::string(strerror(errno)));
    pid_ = fork();
    if (pid_ == 0) {
      close(go_[1]);
      close(done_[0]);
      char byte = 0;
      while (read(go_[0], &byte, 1) == 1) {
        CallGetppid(kGetppidCalls);
        if (write(done_[1], &byte, 1) != 1) _exit(1);
      }
      _exit(0);
    }
    close(go_[0]);
    close(done_[1]);
  }
  ~SteppedChild() {
    close(go_[1]);
    close(done_[0]);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  void Step() {
    char byte = 1;
    ASSERT_EQ(write(go_[1], &byte, 1), 1);
    ASSERT_EQ(read(done_[0], &byte, 1), 1);
  }

 private:
  int go_[2] = {-1, -1};
  int done_[2] = {-1, -1};
  pid_t pid_ = -1;
};

// The probe caches "tracked" per thread; a thread tracked in one repetition
// and no longer after the tracker's Clear() must stop being counted.
TEST_P(SyscallsProbe, ForgetsAThreadUntrackedBetweenRepetitions) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  auto probe = CreateProbe("syscalls");
  WorkloadTracker tracker;
  tracker.Attach(Options(ProbeScope::kWorkload));
  probe->Attach(Options(ProbeScope::kWorkload), &tracker);
  SteppedChild child;

  tracker.Track(child.pid());
  probe->Reset();
  child.Step();
  MetricSet first;
  probe->Collect(1, first);
  EXPECT_GE(first.at("syscalls.count").value, kGetppidCalls);

  tracker.Clear();
  tracker.Track(getpid());  // some other workload: this idle test process
  probe->Reset();
  child.Step();
  MetricSet second;
  probe->Collect(1, second);
  EXPECT_LT(second.at("syscalls.count").value, kGetppidCalls / 2);

  // Tracked again: counted again.
  tracker.Clear();
  tracker.Track(child.pid());
  probe->Reset();
  child.Step();
  MetricSet third;
  probe->Collect(1, third);
  EXPECT_GE(third.at("syscalls.count").value, kGetppidCalls);
}

TEST_P(SyscallsProbe, FollowsAGrandchildForkedByTheWorkload) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("syscalls", ProbeScope::kWorkload, [] {
    pid_t grandchild = fork();
    if (grandchild == 0) {
      CallGetppid(kGetppidCalls);
      _exit(0);
    }
    waitpid(grandchild, nullptr, 0);
  });
  EXPECT_GE(metrics.at("syscalls.count").value, kGetppidCalls);
}

TEST_P(SyscallsProbe, IgnoresUntrackedProcessesInWorkloadScope) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  // The tracked child idles while an untracked thread of this process makes syscalls.
  std::atomic<bool> stop{false};
  std::atomic<long> untracked_calls{0};
  std::thread noise([&] {
    while (!stop.load()) {
      CallGetppid(1000);
      untracked_calls += 1000;
    }
  });
  MetricSet metrics = Measure("syscalls", ProbeScope::kWorkload, [] { usleep(100 * 1000); });
  stop = true;
  noise.join();
  EXPECT_GT(untracked_calls.load(), 10000);
  EXPECT_LT(metrics.at("syscalls.count").value, 200);
}

TEST_P(SyscallsProbe, SystemScopeCountsUntrackedProcesses) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("syscalls", ProbeScope::kSystem, [] { CallGetppid(kGetppidCalls); });
  EXPECT_GE(metrics.at("syscalls.count").value, kGetppidCalls);
}

TEST_P(SyscallsProbe, DetachLeavesNoProgramLoaded) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  std::set<uint32_t> before = LoadedProgramIds();
  Measure("syscalls", ProbeScope::kWorkload, [] { CallGetppid(1000); });
  EXPECT_EQ(NewProgramIds(before), std::set<uint32_t>{});
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, SyscallsProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);
INSTANTIATE_TEST_SUITE_P(FunctionAttachTypes, SyscallsProbe, ::testing::ValuesIn(TestedFunctionAttachTypes()),
                         AttachTypeName);

class RunqlatProbe : public ProbeRun {};

void SleepRepeatedly() {
  for (int i = 0; i < 50; ++i) std::this_thread::sleep_for(std::chrono::microseconds(500));
}

TEST_P(RunqlatProbe, RecordsRunQueueWaitOfTrackedChildAfterSleeps) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("runqlat", ProbeScope::kWorkload, SleepRepeatedly);
  const Metric& latency = metrics.at("sched.runq_latency");
  // Every wakeup from a sleep is one sample; some may be lost to map churn.
  EXPECT_GE(latency.hist.count(), 25u);
  EXPECT_LT(latency.hist.count(), 1000u);
  EXPECT_EQ(latency.unit, "ns");
  EXPECT_GT(latency.hist.Quantile(0.5), 0);
}

TEST_P(RunqlatProbe, SystemScopeSeesOtherThreads) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("runqlat", ProbeScope::kSystem, SleepRepeatedly);
  EXPECT_GE(metrics.at("sched.runq_latency").hist.count(), 25u);
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, RunqlatProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);

class KmemProbe : public ProbeRun {};

constexpr size_t kTouchedBytes = 64u << 20;

TEST_P(KmemProbe, CountsPagesOfFreshMemoryTouchedByTrackedChild) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("kmem", ProbeScope::kWorkload, [] { TouchAndUnmap(kTouchedBytes); });
  const Metric& pages = metrics.at("mm.page_alloc");
  // 64 MiB is 16384 pages of 4 KiB, however they are grouped into orders.
  EXPECT_GE(pages.value, 16384 * 0.9);
  EXPECT_EQ(pages.unit, "pages");
  EXPECT_GT(metrics.at("mm.kmalloc").value, 0);
}

TEST_P(KmemProbe, SystemScopeCountsAllocationsToo) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("kmem", ProbeScope::kSystem, [] { TouchAndUnmap(kTouchedBytes); });
  EXPECT_GE(metrics.at("mm.page_alloc").value, 16384 * 0.9);
  EXPECT_GT(metrics.at("mm.kmalloc").value, 0);
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, KmemProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);

class ProbeLifetime : public ::testing::TestWithParam<std::string> {};

TEST_P(ProbeLifetime, DetachUnloadsEveryProgram) {
  PERFGATE_REQUIRE_ROOT();
  std::set<uint32_t> before = LoadedProgramIds();
  {
    WorkloadTracker tracker;
    tracker.Attach({});
    auto probe = CreateProbe(GetParam());
    ASSERT_NE(probe, nullptr);
    probe->Attach({}, &tracker);
    EXPECT_GT(probe->Report().hooks.size(), 0u);
    probe->Detach();
    probe->Detach();              // twice is fine
    probe->Attach({}, &tracker);  // the destructor must clean this one up
  }
  EXPECT_EQ(NewProgramIds(before), std::set<uint32_t>{});
}

TEST_P(ProbeLifetime, ReportsRunTimeStatsWhenEnabled) {
  PERFGATE_REQUIRE_ROOT();
  BpfStatsEnabler stats;
  if (!stats.enabled()) GTEST_SKIP() << stats.reason();
  auto probe = AttachedInSystemScope(GetParam());
  CallGetppid(1000);
  TouchAndUnmap(kTouchedBytes);
  // A process that forks and exits, for the probes that run only then.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ProbeReport report = probe->Report();
  EXPECT_EQ(report.scope, "system");
  // The kernel counts runs only while its statistics are on.
  EXPECT_GT(report.run_count, 0u);
  // The run time is the programs' own: the kernel's less what its clock
  // reads cost per run (ReadRunStats). For programs as short as kmem's
  // counters that can come out at 0 (arm64 6.1 under emulation, where the
  // clock's cost per run is itself noisy), so only a bound that a value
  // wrapped below zero or read as garbage breaks: a second a run (the lock
  // probes' runs take 0.15 ms under emulation).
  EXPECT_LT(static_cast<double>(report.run_time_ns) / static_cast<double>(report.run_count), 1e9)
      << report.run_time_ns << " ns over " << report.run_count << " runs";
}

INSTANTIATE_TEST_SUITE_P(Catalog, ProbeLifetime,
                         ::testing::Values("runqlat", "syscalls", "kmem", "offcpu", "sched", "pagefault", "profile"));

TEST(ProbeAttach, DisallowedAttachTypesAreReportedAsRejected) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("syscalls");
  ProbeOptions options;
  options.scope = ProbeScope::kSystem;
  options.allowed_attach_types = {AttachType::kTracepoint};
  probe->Attach(options, nullptr);
  for (const auto& hook : probe->Report().hooks) {
    EXPECT_EQ(hook.attach_type, "tracepoint");
    EXPECT_EQ(hook.target, "raw_syscalls:" + hook.hook);
    // Every other variant of the hook, whichever this architecture has
    // (fentry and kprobe only where a kernel function stands for the event).
    ASSERT_GE(hook.rejected.size(), 2u);
    for (const auto& rejected : hook.rejected)
      EXPECT_NE(rejected.find(": not in the allowed attach types"), std::string::npos) << rejected;
    EXPECT_NE(std::find(hook.rejected.begin(), hook.rejected.end(), "tp_btf: not in the allowed attach types"),
              hook.rejected.end());
  }
}

TEST(ProbeAttach, NoUsableAttachTypeIsAnInfraErrorNamingProbeAndHook) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("runqlat");
  ProbeOptions options;
  options.scope = ProbeScope::kSystem;
  options.allowed_attach_types = {AttachType::kUprobe};
  try {
    probe->Attach(options, nullptr);
    FAIL() << "attached without an allowed attach type";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    EXPECT_NE(std::string(e.what()).find("probe runqlat, hook sched_wakeup"), std::string::npos) << e.what();
  }
}

TEST(ProbeAttach, WorkloadScopeWithoutTrackerIsAnInfraError) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("kmem");
  EXPECT_THROW(probe->Attach({}, nullptr), Error);
}

TEST(WorkloadTracker, ForgetsExitedThreadsAndClears) {
  PERFGATE_REQUIRE_ROOT();
  WorkloadTracker tracker;
  tracker.Attach({});
  {
    HeldChild child([] {
      std::thread worker([] { CallGetppid(10); });
      worker.join();
    });
    tracker.Track(child.pid());
    EXPECT_EQ(tracker.TrackedCount(), 1u);
    EXPECT_TRUE(child.RunToCompletion());
  }
  // The child and its thread left the map when they exited.
  EXPECT_EQ(tracker.TrackedCount(), 0u);
  tracker.Track(getpid());
  EXPECT_GE(tracker.TrackedCount(), 1u);
  tracker.Clear();
  EXPECT_EQ(tracker.TrackedCount(), 0u);
}

TEST(ProbeCatalog, EveryEntryCanBeCreated) {
  for (const auto& info : ProbeCatalog()) {
    EXPECT_NE(CreateProbe(info.name), nullptr) << info.name;
    EXPECT_FALSE(info.metrics.empty()) << info.name;
  }
  EXPECT_EQ(CreateProbe("no-such-probe"), nullptr);
}

// Every probe, attached around work that fires its hooks, emits only the
// metrics its definition declares, with the declared kind, unit and
// direction (ufunc, which needs functions to trace, in UfuncProbe.*).
TEST(ProbeMetrics, EveryProbeEmitsOnlyWhatItDeclares) {
  PERFGATE_REQUIRE_ROOT();
  for (const ProbeInfo& info : ProbeCatalog()) {
    if (info.name == "ufunc") continue;
    SCOPED_TRACE(info.name);
    auto probe = CreateProbe(info.name);
    ProbeOptions options;
    options.scope = ProbeScope::kSystem;
    probe->Attach(options, nullptr);
    probe->Reset();
    HeldChild child([] {
      std::thread worker([] { CallGetppid(100); });
      worker.join();
      TouchAndUnmap(1 << 20);
    });
    EXPECT_TRUE(child.RunToCompletion());
    MetricSet emitted;
    probe->Collect(0.1, emitted);
    probe->Detach();
    EXPECT_FALSE(emitted.empty());
    for (const std::string& problem : UndeclaredMetrics("probe " + info.name, info.metrics, emitted))
      ADD_FAILURE() << problem;
  }
}

TEST(AttachSupportTable, ListsEveryAttachTypeAndExplainsRefusals) {
  PERFGATE_REQUIRE_ROOT();
  std::set<uint32_t> before = LoadedProgramIds();
  auto support = ProbeAttachSupport();
  EXPECT_EQ(support.size(), 7u);
  for (const auto& row : support) {
    if (!row.supported) {
      EXPECT_FALSE(row.reason.empty()) << ToString(row.type);
    }
    if (row.type == AttachType::kRawTp || row.type == AttachType::kTracepoint) {
      EXPECT_TRUE(row.supported) << ToString(row.type) << ": " << row.reason;
    }
  }
  EXPECT_EQ(NewProgramIds(before), std::set<uint32_t>{});
}

}  // namespace
}  // namespace perfgate
