// Shared by the probe integration tests: a held child process, the set of
// loaded BPF programs, and a fixture that runs one probe forced to one attach
// type around a child's work.
#pragma once

#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "metrics/metric.h"
#include "probes/features.h"
#include "probes/probe.h"
#include "probes/tracker.h"

namespace perfgate {

constexpr int kGetppidCalls = 20000;

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
    reaped_ = waitpid(pid_, &status, 0) == pid_;
    return reaped_ && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

 private:
  int gate_[2] = {-1, -1};
  pid_t pid_ = -1;
  bool reaped_ = false;
};

inline std::set<uint32_t> LoadedProgramIds() {
  std::set<uint32_t> ids;
  uint32_t id = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) ids.insert(id);
  return ids;
}

// Program ids in `after` but not in `before`, waiting briefly for the kernel
// to release programs whose last reference was just dropped.
inline std::set<uint32_t> NewProgramIds(const std::set<uint32_t>& before) {
  std::set<uint32_t> added;
  for (int attempt = 0; attempt < 50; ++attempt) {
    added.clear();
    for (uint32_t id : LoadedProgramIds())
      if (!before.count(id)) added.insert(id);
    if (added.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return added;
}

inline std::vector<AttachType> TestedAttachTypes() {
  return {AttachType::kTpBtf, AttachType::kRawTp, AttachType::kTracepoint};
}

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
    options.params = params_;
    return options;
  }

  // The probe's suite parameters for the next Measure().
  nlohmann::json params_ = nlohmann::json::object();

  // Attaches `probe_name` (and the tracker in workload scope), runs `work` in
  // a held child and returns the probe's metrics.
  MetricSet Measure(const std::string& probe_name, ProbeScope scope, std::function<void()> work) {
    auto probe = CreateProbe(probe_name);
    EXPECT_NE(probe, nullptr);
    if (!probe) return {};
    return Measure(std::move(probe), scope, std::move(work));
  }

  MetricSet Measure(std::unique_ptr<Probe> probe, ProbeScope scope, std::function<void()> work) {
    WorkloadTracker tracker;
    tracker.Attach(Options(scope));
    probe->Attach(Options(scope), &tracker);
    for (const auto& hook : probe->Report().hooks) EXPECT_EQ(hook.attach_type, ToString(GetParam())) << hook.hook;

    HeldChild child(std::move(work));
    if (scope == ProbeScope::kWorkload) tracker.Track(child.pid());
    probe->Reset();
    auto begin = std::chrono::steady_clock::now();
    EXPECT_TRUE(child.RunToCompletion());
    MetricSet metrics;
    probe->Collect(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(), metrics);
    report_ = probe->Report();
    return metrics;
  }

  ProbeReport report_;
};

}  // namespace perfgate
