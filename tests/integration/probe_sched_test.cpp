// The scheduler and process probes (offcpu, sched, lifecycle) and the
// per-syscall and page-free extensions of syscalls and kmem, against held
// children whose sleeps, forks and syscalls are known. Each probe runs with
// every attach type this kernel supports; exact counts use workload scope,
// since other tests may run BPF workloads on the machine at the same time.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "harness/environment.h"
#include "harness/probe.h"
#include "probes/offcpu_stacks.h"
#include "probes/probe.h"
#include "probes/tracker.h"

namespace perfgate {
namespace {

using std::chrono::milliseconds;

void SleepFor(milliseconds duration) { std::this_thread::sleep_for(duration); }

// Runs `work` in a loop in a forked process until destroyed. Unlike a Noise
// thread, its memory is not this process's, which held children copy.
class NoiseProcess {
 public:
  explicit NoiseProcess(const std::function<void()>& work) {
    pid_ = fork();
    if (pid_ == 0) {
      for (;;) work();
    }
  }
  ~NoiseProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

 private:
  pid_t pid_ = -1;
};

// Forks `n` children that each run `work` and exit, and waits for them all.
void ForkChildren(
    int n, const std::function<void()>& work = [] {}) {
  std::vector<pid_t> children;
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      work();
      _exit(0);
    }
    if (pid < 0) _exit(1);
    children.push_back(pid);
  }
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
}

bool PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

// ---- offcpu -----------------------------------------------------------------

class OffCpuProbe : public ProbeRun {};

TEST_P(OffCpuProbe, SleepIsOffCpuTimeInTheSleepBucket) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("offcpu", ProbeScope::kWorkload, [] { SleepFor(milliseconds(50)); });
  const Metric& total = metrics.at("sched.offcpu_time");
  EXPECT_EQ(total.kind, MetricKind::kCounter);
  EXPECT_EQ(total.unit, "ns");
  EXPECT_GE(total.value, 50 * kMs) << child_switches_ << "; the probe's drops " << report_.drops;
  // The child did little else than sleep: well under a second off-CPU.
  EXPECT_LT(total.value, 1000 * kMs);
  const Metric& sleep = metrics.at("sched.offcpu.sleep");
  EXPECT_EQ(sleep.kind, MetricKind::kHistogram);
  EXPECT_GE(sleep.hist.count(), 1u);
  // One wait of at least 50 ms, give or take the bucket's width (3 %).
  EXPECT_GE(sleep.hist.Max(), 50 * kMs * 0.97);
  EXPECT_LT(metrics.at("sched.offcpu.io").hist.Max(), 50 * kMs);
  const Metric& all = metrics.at("sched.offcpu");
  EXPECT_GE(all.hist.count(), sleep.hist.count() + metrics.at("sched.offcpu.io").hist.count() +
                                  metrics.at("sched.offcpu.preempted").hist.count());
  EXPECT_GE(all.hist.Max(), 50 * kMs * 0.97);
}

// A vfork parent waits uninterruptibly (TASK_KILLABLE) for its child to exit
// or exec: a D-state wait of a known length, without depending on a disk.
TEST_P(OffCpuProbe, UninterruptibleWaitIsInTheIoBucket) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("offcpu", ProbeScope::kWorkload, [] {
    pid_t child = vfork();
    if (child == 0) {
      // Only async-signal-safe calls in a vfork child.
      struct timespec pause = {0, 50 * 1000 * 1000};
      nanosleep(&pause, nullptr);
      _exit(0);
    }
    waitpid(child, nullptr, 0);
  });
  std::string buckets = "drops " + std::to_string(report_.drops);
  for (const char* name : {"sched.offcpu.sleep", "sched.offcpu.io", "sched.offcpu.preempted"}) {
    const LogLinearHistogram& h = metrics.at(name).hist;
    buckets += std::string(", ") + name + ": " + std::to_string(h.count()) + " max " + std::to_string(h.Max());
  }
  // A program run the kernel skipped and counted (a tracepoint program while
  // another BPF program of its kind holds the CPU) may be the parent's
  // switch: the wait is then not timed. Without a drop it must be.
  if (report_.drops == 0) {
    const Metric& io = metrics.at("sched.offcpu.io");
    EXPECT_GE(io.hist.count(), 1u) << buckets;
    EXPECT_GE(io.hist.Max(), 50 * kMs * 0.97) << buckets;
  }
  // The vfork child's own 50 ms sleep is off-CPU time too.
  EXPECT_GE(metrics.at("sched.offcpu_time").value, 50 * kMs) << buckets;
}

// Two busy threads on one CPU take turns: each waits, still runnable, while
// the other runs.
TEST_P(OffCpuProbe, BusyThreadsSharingACpuArePreempted) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("offcpu", ProbeScope::kWorkload, [] {
    if (!PinToCpu(0)) _exit(1);
    auto until = std::chrono::steady_clock::now() + milliseconds(200);
    auto spin = [until] {
      while (std::chrono::steady_clock::now() < until) {
      }
    };
    std::thread other(spin);
    spin();
    other.join();
  });
  const Metric& preempted = metrics.at("sched.offcpu.preempted");
  EXPECT_GE(preempted.hist.count(), 2u);
  // About half of each thread's 200 ms is spent waiting for the CPU.
  double preempted_ns = 0;
  for (const auto& [index, count] : preempted.hist.buckets())
    preempted_ns += static_cast<double>(count) * static_cast<double>(LogLinearHistogram::BucketLower(index));
  EXPECT_GE(preempted_ns, 50 * kMs);
}

TEST_P(OffCpuProbe, IgnoresUntrackedThreadsInWorkloadScope) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  Noise noise([] { SleepFor(milliseconds(1)); });
  MetricSet metrics = Measure("offcpu", ProbeScope::kWorkload, [] { SleepFor(milliseconds(100)); });
  EXPECT_GT(noise.rounds(), 20);
  // The child's sleep and its few other waits (exit, page faults).
  EXPECT_LT(metrics.at("sched.offcpu").hist.count(), 20u);
}

TEST_P(OffCpuProbe, SystemScopeSeesOtherThreads) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  Noise noise([] { SleepFor(milliseconds(1)); });
  MetricSet metrics = Measure("offcpu", ProbeScope::kSystem, [] { SleepFor(milliseconds(100)); });
  EXPECT_GT(metrics.at("sched.offcpu").hist.count(), 20u);
  EXPECT_GE(metrics.at("sched.offcpu_time").value, 100 * kMs);
}

// With `stacks`, the off-CPU time is also summed per stack; the child's
// 50 ms sleep is the top one, in nanosleep's kernel path.
TEST_P(OffCpuProbe, StacksAttributeTheSleepToTheSleepingProcess) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  params_ = {{"stacks", true}};
  auto probe = CreateProbe("offcpu");
  auto* stacks = dynamic_cast<OffCpuStackSource*>(probe.get());
  ASSERT_NE(stacks, nullptr);
  WorkloadTracker tracker;
  tracker.Attach(Options(ProbeScope::kWorkload));
  probe->Attach(Options(ProbeScope::kWorkload), &tracker);
  HeldChild child([] { SleepFor(milliseconds(50)); });
  tracker.Track(child.pid());
  probe->Reset();
  ASSERT_TRUE(child.RunToCompletion());
  MetricSet metrics;
  probe->Collect(0.1, metrics);
  const std::vector<OffCpuStack> top = stacks->TopOffCpuStacks(3);
  ASSERT_FALSE(top.empty()) << child.Switches();
  EXPECT_LE(top.size(), 3u);
  EXPECT_EQ(top[0].tgid, static_cast<uint32_t>(child.pid()));
  // The sleep's timer starts before the child leaves the CPU, and its wait
  // is timed from the switch: it may come out a little short of the 50 ms
  // (0.4 us short once).
  EXPECT_GE(top[0].time_ns, 49 * kMs) << child.Switches();
  EXPECT_GE(top[0].count, 1u);
  EXPECT_FALSE(top[0].kernel_ips.empty());
  for (size_t i = 1; i < top.size(); ++i) EXPECT_GE(top[i - 1].time_ns, top[i].time_ns);
  EXPECT_EQ(probe->Report().drops, 0u);

  // A new repetition starts without the old stacks.
  probe->Reset();
  EXPECT_TRUE(stacks->TopOffCpuStacks(3).empty());
}

TEST_P(OffCpuProbe, NoStacksUnlessAskedFor) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  auto probe = CreateProbe("offcpu");
  WorkloadTracker tracker;
  tracker.Attach(Options(ProbeScope::kSystem));
  probe->Attach(Options(ProbeScope::kSystem), &tracker);
  probe->Reset();
  SleepFor(milliseconds(20));
  EXPECT_TRUE(dynamic_cast<OffCpuStackSource*>(probe.get())->TopOffCpuStacks(3).empty());
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, OffCpuProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);

// ---- sched ------------------------------------------------------------------

class SchedProbe : public ProbeRun {};

constexpr int kSleeps = 50;

void SleepManyTimes() {
  for (int i = 0; i < kSleeps; ++i) SleepFor(milliseconds(1));
}

TEST_P(SchedProbe, CountsASwitchAndAWakeupPerSleep) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  Noise noise([] { SleepFor(milliseconds(1)); });  // untracked: not counted
  MetricSet metrics = Measure("sched", ProbeScope::kWorkload, SleepManyTimes);
  const Metric& switches = metrics.at("sched.switches");
  EXPECT_EQ(switches.kind, MetricKind::kCounter);
  EXPECT_EQ(switches.unit, "count");
  EXPECT_GT(switches.duration_s, 0);
  EXPECT_GE(switches.value, kSleeps);
  // Every sleep ends in a wakeup, but a BPF program on sched_wakeup now and
  // then misses one that tracefs records (seen on Linux 6.18 for timer
  // wakeups in hard-IRQ context, with no recursion miss reported).
  EXPECT_GE(metrics.at("sched.wakeups").value, kSleeps - kSleeps / 10);
  // The noise thread slept about as often; none of it is the workload's.
  EXPECT_GT(noise.rounds(), kSleeps / 2);
  EXPECT_LT(switches.value, 2 * kSleeps + 50);
  EXPECT_LT(metrics.at("sched.wakeups").value, 2 * kSleeps + 50);
}

// Changing a running thread's affinity to another CPU moves it there.
TEST_P(SchedProbe, CountsMigrationsBetweenCpus) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
  constexpr int kHops = 20;
  MetricSet metrics = Measure("sched", ProbeScope::kWorkload, [] {
    for (int i = 0; i < kHops; ++i) {
      if (!PinToCpu(i % 2)) _exit(1);
    }
  });
  // The first pin may find the thread on CPU 0 already.
  EXPECT_GE(metrics.at("sched.migrations").value, kHops - 1);
}

TEST_P(SchedProbe, SystemScopeCountsUntrackedThreads) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  Noise noise([] { SleepFor(milliseconds(1)); });
  MetricSet metrics = Measure("sched", ProbeScope::kSystem, SleepManyTimes);
  // The noise thread alone sleeps about as often as the child.
  EXPECT_GE(metrics.at("sched.switches").value, kSleeps + 10);
  EXPECT_GE(metrics.at("sched.wakeups").value, kSleeps + 10);
}

// Threads the workload creates are marked by the tracker's fork hook (tp_btf)
// or found in its map (the other variants): both count them.
TEST_P(SchedProbe, CountsSleepsOfThreadsTheWorkloadCreates) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("sched", ProbeScope::kWorkload, [] { std::thread(SleepManyTimes).join(); });
  EXPECT_GE(metrics.at("sched.switches").value, kSleeps);
  EXPECT_GE(metrics.at("sched.wakeups").value, kSleeps - kSleeps / 10);
}

// A thread tracked before Clear() keeps its mark in task-local storage (user
// space cannot list marks to remove them): the new epoch must make it stale.
TEST_P(SchedProbe, ThreadsTrackedBeforeAClearAreNotCounted) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  WorkloadTracker tracker;
  tracker.Attach(Options(ProbeScope::kWorkload));
  EXPECT_EQ(tracker.marks_tasks(), GetParam() == AttachType::kTpBtf && TaskStorageUsableFromTracepoints());
  auto probe = CreateProbe("sched");
  probe->Attach(Options(ProbeScope::kWorkload), &tracker);
  HeldChild earlier(SleepManyTimes);
  tracker.Track(earlier.pid());
  tracker.Clear();
  probe->Reset();
  EXPECT_TRUE(earlier.RunToCompletion());
  // Forked after `earlier` ran: a child holding its gate open would hang it.
  HeldChild current(SleepManyTimes);
  tracker.Track(current.pid());
  EXPECT_TRUE(current.RunToCompletion());
  MetricSet metrics;
  probe->Collect(1, metrics);
  // The current child's sleeps only (one switch each, a few preemptions):
  // counting the earlier child's too would make it at least 2 * kSleeps.
  EXPECT_GE(metrics.at("sched.switches").value, kSleeps);
  EXPECT_LT(metrics.at("sched.switches").value, 2 * kSleeps);
  EXPECT_LT(metrics.at("sched.wakeups").value, 2 * kSleeps);
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, SchedProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);

// ---- runqlat: who held the CPU ----------------------------------------------

constexpr char kBurnerComm[] = "pg-runq-burner";
constexpr int kWorkloadCpu = 0;
constexpr double kSpinSeconds = 0.3;

// The burner and the workload are round-robin real-time tasks of the lowest
// priority: no task of the machine's other work (normal tasks, in whatever
// session or cgroup, where nice values do not reach) runs on their CPU
// while either is runnable, so who holds it is known. They run for well
// under the kernel's real-time budget (0.95 s a second), so it never
// throttles them in favour of the others.
bool BecomeRoundRobin() {
  sched_param param{};
  param.sched_priority = sched_get_priority_min(SCHED_RR);
  return sched_setscheduler(0, SCHED_RR, &param) == 0;
}

// A process of its own, so untracked, that spins on `cpu` as kBurnerComm
// until destroyed (or its parent dies, or 5 s have passed).
class CpuBurner {
 public:
  explicit CpuBurner(int cpu) {
    int ready[2];
    if (pipe(ready) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      // Every other descriptor closed: a held child's gate among them
      // would keep that child waiting for as long as the burner runs.
      for (int fd = 3; fd < 1024; ++fd) {
        if (fd != ready[1]) close(fd);
      }
      prctl(PR_SET_NAME, kBurnerComm);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (!BecomeRoundRobin() || !PinToCpu(cpu)) _exit(1);
      if (write(ready[1], "r", 1) != 1) _exit(1);
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (std::chrono::steady_clock::now() < until) {
      }
      _exit(0);
    }
    close(ready[1]);
    char byte = 0;
    while (read(ready[0], &byte, 1) < 0 && errno == EINTR) {
    }
    close(ready[0]);
    running_ = byte == 'r';
  }
  ~CpuBurner() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool running() const { return running_; }

 private:
  pid_t pid_ = -1;
  bool running_ = false;
};

// The workload: round-robin on kWorkloadCpu, it spins for kSpinSeconds of
// wall time. Beside the burner the two take turns in 100 ms slices, and it
// waits whenever the burner has the CPU.
void SpinOnTheWorkloadCpu() {
  if (!BecomeRoundRobin() || !PinToCpu(kWorkloadCpu)) _exit(1);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kSpinSeconds);
  while (std::chrono::steady_clock::now() < until) {
  }
}

class RunqHolders : public ProbeRun {
 protected:
  // Like Measure(), with the burner (if any) started after the probe is
  // reset and just before the workload runs, so that it holds the CPU only
  // while the workload does.
  MetricSet MeasureSpin(bool burner) {
    WorkloadTracker tracker;
    tracker.Attach(Options(ProbeScope::kWorkload));
    auto probe = CreateProbe("runqlat");
    probe->Attach(Options(ProbeScope::kWorkload), &tracker);
    // This process and the child stay off the burner's CPU (the child
    // inherits the affinity), so neither waits behind it as a normal task:
    // the child becomes real-time before it moves there.
    cpu_set_t saved;
    const bool pinned = sched_getaffinity(0, sizeof saved, &saved) == 0 && PinToCpu(kWorkloadCpu + 1);
    HeldChild child(SpinOnTheWorkloadCpu);
    tracker.Track(child.pid());
    probe->Reset();
    std::unique_ptr<CpuBurner> held;
    if (burner) {
      held = std::make_unique<CpuBurner>(kWorkloadCpu);
      EXPECT_TRUE(held->running());
    }
    const auto begin = std::chrono::steady_clock::now();
    EXPECT_TRUE(child.RunToCompletion());
    wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    held.reset();
    if (pinned) sched_setaffinity(0, sizeof saved, &saved);
    MetricSet metrics;
    probe->Collect(wall_s_, metrics);
    holders_ = probe->CpuHolders();
    return metrics;
  }

  std::string Holders() const {
    std::string text = "wall " + std::to_string(wall_s_) + " s; holders:";
    for (const CpuHolder& h : holders_) text += " " + h.comm + " " + std::to_string(h.seconds) + " s;";
    return text;
  }

  double wall_s_ = 0;
};

TEST_P(RunqHolders, ABurnerOnTheWorkloadsCpuHoldsMostOfItsRunQueueWait) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
  MetricSet metrics = MeasureSpin(true);
  const double behind = metrics.at(kHostRunqWaitBehindOthers).value;
  const double share = metrics.at(kHostRunqWaitBehindOthersShare).value;
  RecordProperty("measured",
                 std::to_string(behind) + " s behind others, share " + std::to_string(share) + "; " + Holders());
  EXPECT_EQ(metrics.at(kHostRunqWaitBehindOthers).unit, "s");
  // It waits at least one of the burner's 100 ms slices, and for nothing but
  // the burner.
  EXPECT_GE(behind, kSpinSeconds / 4) << Holders();
  EXPECT_LE(behind, wall_s_) << Holders();
  EXPECT_GE(share, 0.8) << behind << " s; " << Holders();
  ASSERT_FALSE(holders_.empty());
  double total = 0;
  for (const CpuHolder& h : holders_) total += h.seconds;
  EXPECT_EQ(holders_[0].comm, kBurnerComm) << Holders();
  EXPECT_GE(holders_[0].seconds, 0.8 * total) << Holders();
  EXPECT_GE(holders_[0].seconds, 0.8 * behind) << Holders();
}

TEST_P(RunqHolders, WithoutABurnerTheWaitBehindOthersIsNearZero) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
  MetricSet metrics = MeasureSpin(false);
  RecordProperty("measured",
                 std::to_string(metrics.at(kHostRunqWaitBehindOthers).value) + " s behind others; " + Holders());
  // As a normal task it waits for its wakeup on the other CPU (under 10 ms
  // on a busy host); once real-time only the kernel's own real-time work can
  // hold the CPU from it. Beside the burner it waits 100 ms or more.
  EXPECT_LT(metrics.at(kHostRunqWaitBehindOthers).value, kSpinSeconds / 10) << Holders();
  for (const CpuHolder& h : holders_) EXPECT_NE(h.comm, kBurnerComm);
}

// In system scope every task counts as the workload's: nobody else holds a CPU.
TEST_P(RunqHolders, SystemScopeHasNoOtherTasksToBlame) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("runqlat", ProbeScope::kSystem, [] { SleepFor(milliseconds(20)); });
  EXPECT_EQ(metrics.count(kHostRunqWaitBehindOthers), 0u);
  EXPECT_TRUE(holders_.empty());
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, RunqHolders, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);

// ---- lifecycle --------------------------------------------------------------

class LifecycleProbe : public ProbeRun {};

constexpr int kForks = 10;

// The tracker's exit program was attached before the probe's, so it forgets
// each exiting thread before the probe sees the exit: the exits must still
// all be counted (the probe matches them to their forks), and nothing of the
// untracked process forking alongside.
TEST_P(LifecycleProbe, CountsForksAndExitsOfTheTreeOnly) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  Noise noise([] { ForkChildren(1); });
  MetricSet metrics =
      Measure("lifecycle", ProbeScope::kWorkload, [] { ForkChildren(kForks, [] { SleepFor(milliseconds(2)); }); });
  EXPECT_GT(noise.rounds(), 0);
  EXPECT_EQ(metrics.at("proc.forks").value, kForks);
  EXPECT_EQ(metrics.at("proc.exits").value, kForks);
  EXPECT_EQ(metrics.at("proc.threads").value, 0);
  EXPECT_EQ(metrics.at("proc.execs").value, 0);
  const Metric& lifetime = metrics.at("proc.lifetime");
  EXPECT_EQ(lifetime.kind, MetricKind::kHistogram);
  EXPECT_EQ(lifetime.unit, "ns");
  EXPECT_EQ(lifetime.hist.count(), static_cast<uint64_t>(kForks));
  // Each child slept 2 ms before exiting.
  EXPECT_GE(lifetime.hist.Quantile(0), 2 * kMs * 0.97);
  EXPECT_LT(lifetime.hist.Max(), 1000 * kMs);
}

TEST_P(LifecycleProbe, CountsThreadsApartFromProcesses) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("lifecycle", ProbeScope::kWorkload, [] {
    std::thread a([] { ForkChildren(1); });
    std::thread b([] { SleepFor(milliseconds(1)); });
    std::thread c([] {});
    a.join();
    b.join();
    c.join();
    ForkChildren(1);
  });
  EXPECT_EQ(metrics.at("proc.threads").value, 3);
  EXPECT_EQ(metrics.at("proc.forks").value, 2);
  EXPECT_EQ(metrics.at("proc.exits").value, 2);
}

// A multi-threaded process exits when its last thread does, once.
TEST_P(LifecycleProbe, CountsAMultiThreadedProcessExitOnce) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("lifecycle", ProbeScope::kWorkload, [] {
    ForkChildren(kForks, [] {
      std::thread t([] { SleepFor(milliseconds(20)); });
      t.detach();
      SleepFor(milliseconds(1));
      _exit(0);  // exit_group: the sleeping thread exits with it
    });
  });
  EXPECT_EQ(metrics.at("proc.forks").value, kForks);
  EXPECT_EQ(metrics.at("proc.threads").value, kForks);
  EXPECT_EQ(metrics.at("proc.exits").value, kForks);
  EXPECT_EQ(metrics.at("proc.lifetime").hist.count(), static_cast<uint64_t>(kForks));
}

TEST_P(LifecycleProbe, CountsExecsInTheTree) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("lifecycle", ProbeScope::kWorkload, [] {
    ForkChildren(2, [] {
      execl("/bin/true", "true", static_cast<char*>(nullptr));
      _exit(127);
    });
  });
  EXPECT_EQ(metrics.at("proc.execs").value, 2);
  EXPECT_EQ(metrics.at("proc.forks").value, 2);
  EXPECT_EQ(metrics.at("proc.exits").value, 2);
}

TEST_P(LifecycleProbe, SystemScopeCountsUntrackedForks) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("lifecycle", ProbeScope::kSystem, [] { ForkChildren(kForks); });
  EXPECT_GE(metrics.at("proc.forks").value, kForks);
  EXPECT_GE(metrics.at("proc.exits").value, kForks);
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, LifecycleProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);
INSTANTIATE_TEST_SUITE_P(FunctionAttachTypes, LifecycleProbe, ::testing::ValuesIn(TestedFunctionAttachTypes()),
                         AttachTypeName);

// What the catalog-wide ProbeLifetime tests check, for lifecycle: their
// workload (syscalls, touched memory, a sleep) fires none of its hooks.
TEST(LifecycleProbeLifetime, DetachUnloadsEveryProgram) {
  PERFGATE_REQUIRE_ROOT();
  std::set<uint32_t> before = LoadedProgramIds();
  {
    WorkloadTracker tracker;
    tracker.Attach({});
    auto probe = CreateProbe("lifecycle");
    ASSERT_NE(probe, nullptr);
    probe->Attach({}, &tracker);
    EXPECT_EQ(probe->Report().hooks.size(), 3u);
    probe->Detach();
    probe->Detach();
    probe->Attach({}, &tracker);  // the destructor must clean this one up
  }
  EXPECT_EQ(NewProgramIds(before), std::set<uint32_t>{});
}

TEST(LifecycleProbeLifetime, ReportsRunTimeStatsWhenEnabled) {
  PERFGATE_REQUIRE_ROOT();
  BpfStatsEnabler stats;
  if (!stats.enabled()) GTEST_SKIP() << stats.reason();
  auto probe = AttachedInSystemScope("lifecycle");
  ForkChildren(2);
  ProbeReport report = probe->Report();
  EXPECT_EQ(report.scope, "system");
  EXPECT_GT(report.run_count, 0u);
  EXPECT_GT(report.run_time_ns, 0u);
}

// ---- syscalls: per-syscall counts ------------------------------------------

class SyscallsTopProbe : public ProbeRun {};

constexpr int kGetpidCalls = 3000;

void GetppidThenOthers() {
  CallGetppid(kGetppidCalls);
  for (int i = 0; i < kGetpidCalls; ++i) syscall(SYS_getpid);
  for (int i = 0; i < 100; ++i) syscall(SYS_gettid);
}

// Metrics named syscalls.count.<name>, by name.
MetricSet PerSyscall(const MetricSet& metrics) {
  MetricSet per_syscall;
  for (const auto& [name, metric] : metrics) {
    if (name.rfind("syscalls.count.", 0) == 0) per_syscall[name] = metric;
  }
  return per_syscall;
}

TEST_P(SyscallsTopProbe, GetppidIsTheTopSyscallWithItsExactCount) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("syscalls", ProbeScope::kWorkload, GetppidThenOthers);
  MetricSet per_syscall = PerSyscall(metrics);
  ASSERT_TRUE(per_syscall.count("syscalls.count.getppid"));
  const Metric& getppid = per_syscall.at("syscalls.count.getppid");
  EXPECT_EQ(getppid.kind, MetricKind::kCounter);
  EXPECT_EQ(getppid.unit, "count");
  EXPECT_GE(getppid.value, kGetppidCalls);
  EXPECT_LT(getppid.value, kGetppidCalls + 10);
  EXPECT_GE(per_syscall.at("syscalls.count.getpid").value, kGetpidCalls);
  EXPECT_GE(per_syscall.at("syscalls.count.gettid").value, 100);
  for (const auto& [name, metric] : per_syscall) EXPECT_LE(metric.value, getppid.value) << name;
  EXPECT_LE(per_syscall.size(), 10u);
  // The breakdown adds up to no more than the total.
  double sum = 0;
  for (const auto& [name, metric] : per_syscall) sum += metric.value;
  EXPECT_LE(sum, metrics.at("syscalls.count").value);
}

TEST_P(SyscallsTopProbe, TopParameterBoundsTheBreakdown) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  params_ = {{"top", 2}};
  MetricSet two = PerSyscall(Measure("syscalls", ProbeScope::kWorkload, GetppidThenOthers));
  EXPECT_EQ(two.size(), 2u);
  EXPECT_TRUE(two.count("syscalls.count.getppid"));
  EXPECT_TRUE(two.count("syscalls.count.getpid"));

  params_ = {{"top", 0}};
  MetricSet none = Measure("syscalls", ProbeScope::kWorkload, GetppidThenOthers);
  EXPECT_TRUE(PerSyscall(none).empty());
  EXPECT_GE(none.at("syscalls.count").value, kGetppidCalls + kGetpidCalls);
}

TEST_P(SyscallsTopProbe, NegativeTopIsAnInputError) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  params_ = {{"top", -1}};
  auto probe = CreateProbe("syscalls");
  WorkloadTracker tracker;
  tracker.Attach(Options(ProbeScope::kWorkload));
  try {
    probe->Attach(Options(ProbeScope::kWorkload), &tracker);
    FAIL() << "attached with top = -1";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, SyscallsTopProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);

// ---- kmem: frees ------------------------------------------------------------

class KmemFreeProbe : public ProbeRun {};

constexpr size_t kFreedBytes = 32u << 20;

TEST_P(KmemFreeProbe, CountsPagesFreedByMunmap) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  params_ = {{"frees", true}};
  MetricSet metrics = Measure("kmem", ProbeScope::kWorkload, [] { TouchAndUnmap(kFreedBytes); });
  const Metric& freed = metrics.at("mm.page_free");
  EXPECT_EQ(freed.kind, MetricKind::kCounter);
  EXPECT_EQ(freed.unit, "pages");
  // 32 MiB is 8192 pages of 4 KiB, freed by munmap in the child's context.
  EXPECT_GE(freed.value, 8192 * 0.9);
  EXPECT_GE(metrics.at("mm.page_alloc").value, 8192 * 0.9);
  EXPECT_GT(metrics.at("mm.kfree").value, 0);
}

TEST_P(KmemFreeProbe, IgnoresFreesOfUntrackedProcesses) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  NoiseProcess noise([] { TouchAndUnmap(kFreedBytes); });
  params_ = {{"frees", true}};
  MetricSet metrics = Measure("kmem", ProbeScope::kWorkload, [] { SleepFor(milliseconds(100)); });
  // The child's own few pages (stack, page tables) when it exits.
  EXPECT_LT(metrics.at("mm.page_free").value, 1000);
}

// Frees are counted only when asked for: by default their hooks do not
// even load.
TEST_P(KmemFreeProbe, CountsNoFreesByDefault) {
  PERFGATE_REQUIRE_ROOT();
  SkipUnlessKernelSupports();
  MetricSet metrics = Measure("kmem", ProbeScope::kWorkload, [] { TouchAndUnmap(kFreedBytes); });
  EXPECT_GE(metrics.at("mm.page_alloc").value, 8192 * 0.9);
  EXPECT_EQ(metrics.count("mm.page_free"), 0u);
  EXPECT_EQ(metrics.count("mm.kfree"), 0u);
  std::vector<std::string> hooks;
  for (const auto& hook : report_.hooks) hooks.push_back(hook.hook);
  EXPECT_EQ(hooks, (std::vector<std::string>{"mm_page_alloc", "kmalloc", "kmem_cache_alloc"}));
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, KmemFreeProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);

}  // namespace
}  // namespace perfgate
