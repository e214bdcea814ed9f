#include "probes/bpf_stats.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <mutex>

#include "probes/fd.h"
#include "probes/features.h"
#include "probes/probe.h"

namespace perfgate {

namespace {

std::mutex calibration_mutex;
std::optional<double> statistics_cost_ns;  // guarded by calibration_mutex

bool ReadProgramInfo(int fd, bpf_prog_info& info) {
  info = {};
  uint32_t length = sizeof(info);
  // libbpf 1.1 predates bpf_prog_get_info_by_fd.
  return bpf_obj_get_info_by_fd(fd, &info, &length) == 0;
}

// run_time_ns per run of an empty socket filter run `repeat` times in the
// kernel, or nullopt. A socket filter because every kernel test-runs it with
// a repeat count, through the same statistics code as the tracing programs.
std::optional<double> EmptyProgramRunTime(int fd, int repeat) {
  bpf_prog_info before{}, after{};
  unsigned char packet[64] = {};
  LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = packet, .data_size_in = sizeof(packet), .repeat = repeat);
  if (!ReadProgramInfo(fd, before) || bpf_prog_test_run_opts(fd, &run) != 0 || !ReadProgramInfo(fd, after))
    return std::nullopt;
  if (after.run_cnt <= before.run_cnt) return std::nullopt;  // statistics off
  return static_cast<double>(after.run_time_ns - before.run_time_ns) /
         static_cast<double>(after.run_cnt - before.run_cnt);
}

}  // namespace

ProgramRunStats ReadRunStats(const std::vector<int>& program_fds) {
  ProgramRunStats total;
  for (int fd : program_fds) {
    bpf_prog_info info{};
    if (!ReadProgramInfo(fd, info)) continue;
    total.run_count += info.run_cnt;
    total.measured_run_time_ns += info.run_time_ns;
    total.recursion_misses += info.recursion_misses;
  }
  // Net over all programs: the clock cost is a mean, and one run of a short
  // program can come out below it.
  const double charged = static_cast<double>(total.run_count) * StatisticsCostPerRun().value_or(0);
  const double measured = static_cast<double>(total.measured_run_time_ns);
  total.run_time_ns = measured > charged ? static_cast<uint64_t>(measured - charged) : 0;
  return total;
}

std::optional<double> StatisticsCostPerRun() {
  std::lock_guard lock(calibration_mutex);
  return statistics_cost_ns;
}

bool CalibrateStatisticsCost() {
  std::lock_guard lock(calibration_mutex);
  if (statistics_cost_ns) return true;
  const bpf_insn empty[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
  };
  Fd fd(bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "pg_stats_cost", "GPL", empty, 2, nullptr));
  if (fd.get() < 0) return false;
  // The median of a few batches: an interrupt or a preemption inside one
  // batch moves its mean, not the median.
  std::vector<double> batches;
  for (int i = 0; i < 5; ++i) {
    if (auto ns = EmptyProgramRunTime(fd.get(), 20000)) batches.push_back(*ns);
  }
  if (batches.empty()) return false;
  std::nth_element(batches.begin(), batches.begin() + static_cast<std::ptrdiff_t>(batches.size() / 2), batches.end());
  statistics_cost_ns = batches[batches.size() / 2];
  return true;
}

namespace {

bool SysctlStatsOn() {
  std::ifstream in("/proc/sys/kernel/bpf_stats_enabled");
  int value = 0;
  return (in >> value) && value != 0;
}

}  // namespace

BpfStatsEnabler::BpfStatsEnabler() {
  fd_ = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (fd_ < 0) {
    int err = errno;
    // Kernels before 5.8 only have the sysctl; someone may have set it already.
    already_on_ = SysctlStatsOn();
    if (!already_on_) reason_ = "bpf_enable_stats(BPF_STATS_RUN_TIME): " + ErrnoText(err);
  }
  // Once per process; the probes' reports subtract it from their run time.
  if (enabled()) CalibrateStatisticsCost();
}

BpfStatsEnabler::~BpfStatsEnabler() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace perfgate
