#include "probes/bpf_stats.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "probes/features.h"
#include "probes/probe.h"

namespace perfgate {

ProgramRunStats ReadRunStats(const std::vector<int>& program_fds) {
  ProgramRunStats total;
  for (int fd : program_fds) {
    bpf_prog_info info{};
    uint32_t length = sizeof(info);
    // libbpf 1.1 predates bpf_prog_get_info_by_fd.
    if (bpf_obj_get_info_by_fd(fd, &info, &length) != 0) continue;
    total.run_count += info.run_cnt;
    total.run_time_ns += info.run_time_ns;
    total.recursion_misses += info.recursion_misses;
  }
  return total;
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
  if (fd_ >= 0) return;
  int err = errno;
  // Kernels before 5.8 only have the sysctl; someone may have set it already.
  already_on_ = SysctlStatsOn();
  if (!already_on_) reason_ = "bpf_enable_stats(BPF_STATS_RUN_TIME): " + ErrnoText(err);
}

BpfStatsEnabler::~BpfStatsEnabler() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace perfgate
