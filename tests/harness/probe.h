// Shared by the probe integration tests: a held child process, the set of
// loaded BPF programs, background noise, fresh memory, and a fixture that
// runs one probe forced to one attach type around a child's work.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness/bpf_objects.h"
#include "metrics/metric.h"
#include "probes/features.h"
#include "probes/probe.h"
#include "probes/tracker.h"

namespace perfgate {

constexpr int kGetppidCalls = 20000;
// Nanoseconds in a millisecond, for the probes' ns counters.
constexpr double kMs = 1e6;

inline void CallGetppid(int times) {
  for (int i = 0; i < times; ++i) syscall(SYS_getppid);
}

// A forked child that runs `work` only once released, so the test can track
// it and reset the probe first.
class HeldChild {
 public:
  explicit HeldChild(std::function<void()> work) {
    if (pipe(gate_) != 0) throw std::runtime_error("pipe: " + std::string(strerror(errno)));
    pid_ = fork();
    if (pid_ == 0) {
      close(gate_[1]);
      char byte;
      while (read(gate_[0], &byte, 1) < 0 && errno == EINTR) {
      }
      work();
      _exit(0);
    }
    close(gate_[0]);
    WaitUntilHeld();
  }
  ~HeldChild() {
    if (gate_[1] >= 0) close(gate_[1]);
    if (pid_ > 0 && !reaped_) waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  // Releases the child and waits for it; true when it exited cleanly.
  bool RunToCompletion() {
    close(gate_[1]);
    gate_[1] = -1;
    int status = 0;
    reaped_ = wait4(pid_, &status, 0, &usage_) == pid_;
    return reaped_ && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  // What the kernel accounted to the child once reaped: its switches off the
  // CPU (voluntary: it waited; involuntary: it was preempted), to tell a
  // probe that missed the child's waits from a child that had none.
  std::string Switches() const {
    return "the child switched off the CPU " + std::to_string(usage_.ru_nvcsw) + " times waiting and " +
           std::to_string(usage_.ru_nivcsw) + " times preempted";
  }

 private:
  // Returns once the child sleeps in its read of the gate (state S), at most
  // 10 s. A test then tracks it and resets its probe while it makes no system
  // call: a child still on its way there (a slow, emulated guest) could
  // count a call in the middle of the reset and lose that call's sample.
  void WaitUntilHeld() const {
    const std::string path = "/proc/" + std::to_string(pid_) + "/stat";
    for (int i = 0; i < 10000; ++i) {
      std::ifstream in(path);
      std::string stat;
      std::getline(in, stat);
      // pid (comm) state ...: comm may hold anything, so the state follows the last ')'.
      const size_t paren = stat.rfind(')');
      char state = 0;
      if (paren != std::string::npos && std::sscanf(stat.c_str() + paren + 1, " %c", &state) == 1 && state == 'S')
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  int gate_[2] = {-1, -1};
  pid_t pid_ = -1;
  bool reaped_ = false;
  struct rusage usage_ = {};
};

using testing::LoadedProgramIds;
using testing::NewProgramIds;
using testing::NewProgramIdsNow;
using testing::ProgramIdsNamed;
using testing::ProgramIdsStillLoaded;

// Runs `work` in a thread of this (untracked) process until destroyed.
class Noise {
 public:
  explicit Noise(std::function<void()> work)
      : thread_([this, work = std::move(work)] {
          while (!stop_.load()) {
            work();
            ++rounds_;
          }
        }) {}
  ~Noise() {
    stop_ = true;
    thread_.join();
  }
  long rounds() const { return rounds_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<long> rounds_{0};
  std::thread thread_;
};

// Maps `bytes` of fresh anonymous memory, touches each page and unmaps it:
// page allocations, then page frees, in the calling process.
inline void TouchAndUnmap(size_t bytes) {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) _exit(1);
  for (size_t offset = 0; offset < bytes; offset += 4096) static_cast<volatile char*>(memory)[offset] = 1;
  munmap(memory, bytes);
}

// The probe `name`, attached in system scope.
inline std::unique_ptr<Probe> AttachedInSystemScope(const std::string& name) {
  auto probe = CreateProbe(name);
  ProbeOptions options;
  options.scope = ProbeScope::kSystem;
  probe->Attach(options, nullptr);
  return probe;
}

inline std::vector<AttachType> TestedAttachTypes() {
  return {AttachType::kTpBtf, AttachType::kRawTp, AttachType::kTracepoint};
}

// fentry/fexit and kprobe/kretprobe, on kernel functions: the project's own
// machines have neither (fentry EPERM, no kprobe PMU), so only where
// PERFGATE_TEST_FUNCTION_ATTACH says the kernel has them (tests/vm/ sets it
// in its virtual machines): "1" for both, or the one it has, "kprobe" or
// "fentry" (arm64 before 6.4 has no fentry). There a probe forced to them
// must load and count; it never skips. Any other value ends the tests.
inline std::vector<AttachType> TestedFunctionAttachTypes() {
  const char* wanted = std::getenv("PERFGATE_TEST_FUNCTION_ATTACH");
  if (wanted == nullptr) return {};
  const std::string value = wanted;
  if (value == "1") return {AttachType::kFentry, AttachType::kKprobe};
  if (value == "fentry") return {AttachType::kFentry};
  if (value == "kprobe") return {AttachType::kKprobe};
  std::fprintf(stderr, "PERFGATE_TEST_FUNCTION_ATTACH=%s: expected 1, fentry or kprobe\n", wanted);
  std::exit(2);
}

inline bool IsFunctionAttachType(AttachType type) { return type == AttachType::kFentry || type == AttachType::kKprobe; }

inline std::string AttachTypeName(const ::testing::TestParamInfo<AttachType>& info) { return ToString(info.param); }

// Runs one probe, forced to one attach type, around a held child's work.
class ProbeRun : public ::testing::TestWithParam<AttachType> {
 protected:
  void SkipUnlessKernelSupports() {
    if (GetParam() == AttachType::kTpBtf && !TpBtfSupported().supported)
      GTEST_SKIP() << "tp_btf: " << TpBtfSupported().reason;
  }

  ProbeOptions Options(ProbeScope scope) const {
    ProbeOptions options;
    options.scope = scope;
    options.allowed_attach_types = {GetParam()};
    for (const auto& [hook, type] : forced_hooks_) options.hook_attach_types[hook] = {type};
    options.params = params_;
    return options;
  }

  // The probe's suite parameters for the next Measure().
  nlohmann::json params_ = nlohmann::json::object();
  // Hooks forced to another attach type than the parameter's, by tracepoint.
  std::map<std::string, AttachType> forced_hooks_;

  // The probe's hooks that have no fentry or kprobe variant (no one function
  // fires their event): forced to fentry or kprobe, the probe keeps them on
  // tp_btf.
  void WithoutFunctionVariants(const std::vector<std::string>& hooks) {
    if (!IsFunctionAttachType(GetParam())) return;
    for (const auto& hook : hooks) forced_hooks_[hook] = AttachType::kTpBtf;
  }

  // Attaches `probe_name` (and the tracker in workload scope), runs `work` in
  // a held child and returns the probe's metrics.
  MetricSet Measure(const std::string& probe_name, ProbeScope scope, std::function<void()> work) {
    auto probe = CreateProbe(probe_name);
    EXPECT_NE(probe, nullptr);
    if (!probe) return {};
    return Measure(std::move(probe), scope, std::move(work));
  }

  MetricSet Measure(std::unique_ptr<Probe> probe, ProbeScope scope, std::function<void()> work) {
    // Under fentry and kprobe (only in tests/vm/'s virtual machines, where no
    // other test loads programs meanwhile), every program that the probe and
    // the tracker loaded must be gone once they are.
    const bool check_unload = IsFunctionAttachType(GetParam());
    const std::vector<std::string> prefixes = {probe->name() + "_", "tracker_"};
    std::set<uint32_t> before, loaded;
    for (const auto& prefix : prefixes) {
      if (check_unload) before.merge(ProgramIdsNamed(prefix));
    }
    MetricSet metrics;
    {
      WorkloadTracker tracker;
      tracker.Attach(Options(scope));
      probe->Attach(Options(scope), &tracker);
      for (const auto& prefix : prefixes) {
        if (check_unload) loaded.merge(NewProgramIdsNow(before, prefix));
      }
      for (const auto& hook : probe->Report().hooks) {
        auto forced = forced_hooks_.find(hook.hook);
        EXPECT_EQ(hook.attach_type, ToString(forced != forced_hooks_.end() ? forced->second : GetParam())) << hook.hook;
      }

      HeldChild child(std::move(work));
      if (scope == ProbeScope::kWorkload) tracker.Track(child.pid());
      probe->Reset();
      auto begin = std::chrono::steady_clock::now();
      EXPECT_TRUE(child.RunToCompletion());
      probe->Collect(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(), metrics);
      child_switches_ = child.Switches();
      report_ = probe->Report();
      holders_ = probe->CpuHolders();
      probe.reset();
    }
    if (check_unload) {
      EXPECT_FALSE(loaded.empty());
      EXPECT_EQ(ProgramIdsStillLoaded(loaded), std::set<uint32_t>{}) << "programs left loaded after detach";
    }
    return metrics;
  }

  ProbeReport report_;
  std::vector<CpuHolder> holders_;  // of the last Measure()
  std::string child_switches_;      // of the last Measure(): HeldChild::Switches()
};

}  // namespace perfgate
