// What one BPF program run costs at the least on this machine, and what the
// run-time statistics perfgate reads charge for it: an empty program
// ("r0 = 0; exit") attached to sys_enter as raw_tp and as tp_btf, under a
// getppid loop, with BPF run-time statistics on (as during perfgate's
// warm-up repetitions), and as tp_btf with them off (as during the measured
// repetitions). Rounds interleave the modes; prints per mode the median ns
// per getppid call, what the program adds to it, and the median run time per
// program run that the statistics report, which every probe's "ns per event"
// includes.
//
//   stats_floor [ROUNDS=9] [ITERATIONS=1000000]
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "stats/descriptive.h"

namespace {

struct Mode {
  std::string name;
  bpf_prog_type type = BPF_PROG_TYPE_UNSPEC;  // UNSPEC: no program
  bool statistics = true;
  std::vector<double> wall_ns;                // per getppid call
  std::vector<double> run_ns;                 // per program run, from the statistics
};

// Loads "r0 = 0; exit"; -errno on failure.
int LoadEmpty(bpf_prog_type type) {
  bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
  insns[0].dst_reg = BPF_REG_0;
  insns[1].code = BPF_JMP | BPF_EXIT;
  LIBBPF_OPTS(bpf_prog_load_opts, opts);
  if (type == BPF_PROG_TYPE_TRACING) {
    int id = libbpf_find_vmlinux_btf_id("sys_enter", BPF_TRACE_RAW_TP);
    if (id < 0) return id;
    opts.expected_attach_type = BPF_TRACE_RAW_TP;
    opts.attach_btf_id = static_cast<__u32>(id);
  }
  int fd = bpf_prog_load(type, "pg_empty", "GPL", insns, 2, &opts);
  return fd < 0 ? -errno : fd;
}

double LoopNs(long iterations) {
  auto begin = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i) syscall(SYS_getppid);
  auto elapsed = std::chrono::steady_clock::now() - begin;
  return std::chrono::duration<double, std::nano>(elapsed).count() / static_cast<double>(iterations);
}

bool RunStats(int fd, __u64& count, __u64& ns) {
  bpf_prog_info info = {};
  __u32 length = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &length) != 0) return false;
  count = info.run_cnt;
  ns = info.run_time_ns;
  return true;
}

// The statistics are on while some process holds their descriptor.
int stats_fd = -1;

// One timed loop in `mode`; false (having said why) when its program cannot
// be loaded or attached.
bool Measure(Mode& mode, long iterations) {
  if (mode.type == BPF_PROG_TYPE_UNSPEC) {
    mode.wall_ns.push_back(LoopNs(iterations));
    return true;
  }
  int prog = LoadEmpty(mode.type);
  if (prog < 0) {
    std::fprintf(stderr, "%s: load: %s\n", mode.name.c_str(), std::strerror(-prog));
    return false;
  }
  // A raw_tp program names its tracepoint here; a tp_btf one has it from load.
  int link = bpf_raw_tracepoint_open(mode.type == BPF_PROG_TYPE_TRACING ? nullptr : "sys_enter", prog);
  if (link < 0) {
    std::fprintf(stderr, "%s: attach: %s\n", mode.name.c_str(), std::strerror(errno));
    close(prog);
    return false;
  }
  __u64 count0 = 0, ns0 = 0, count1 = 0, ns1 = 0;
  bool ok = RunStats(prog, count0, ns0);
  if (!mode.statistics) close(stats_fd);
  double wall = LoopNs(iterations);
  if (!mode.statistics) stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  ok = ok && RunStats(prog, count1, ns1);
  close(link);
  close(prog);
  if (stats_fd < 0) {
    std::fprintf(stderr, "cannot turn BPF run-time statistics back on: %s\n", std::strerror(errno));
    std::exit(1);
  }
  if (!mode.statistics) {
    mode.wall_ns.push_back(wall);
    return true;
  }
  if (!ok || count1 == count0) {
    std::fprintf(stderr, "%s: no run-time statistics\n", mode.name.c_str());
    return false;
  }
  mode.wall_ns.push_back(wall);
  mode.run_ns.push_back(static_cast<double>(ns1 - ns0) / static_cast<double>(count1 - count0));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 9;
  long iterations = argc > 2 ? std::atol(argv[2]) : 1'000'000;
  if (rounds < 3 || iterations <= 0) {
    std::fprintf(stderr, "usage: %s [ROUNDS >= 3] [ITERATIONS > 0]\n", argv[0]);
    return 2;
  }
  libbpf_set_print(nullptr);
  stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (stats_fd < 0) {
    std::fprintf(stderr, "cannot turn on BPF run-time statistics: %s (needs root)\n", std::strerror(errno));
    return 2;
  }
  std::vector<Mode> modes = {{"none", BPF_PROG_TYPE_UNSPEC, true, {}, {}},
                             {"raw_tp", BPF_PROG_TYPE_RAW_TRACEPOINT, true, {}, {}},
                             {"tp_btf", BPF_PROG_TYPE_TRACING, true, {}, {}},
                             {"tp_btf, statistics off", BPF_PROG_TYPE_TRACING, false, {}, {}}};
  std::vector<bool> usable(modes.size(), true);
  for (int round = 0; round < rounds; ++round) {
    // Rotate the order so drift hits every mode alike.
    for (size_t k = 0; k < modes.size(); ++k) {
      size_t i = (k + static_cast<size_t>(round)) % modes.size();
      if (usable[i]) usable[i] = Measure(modes[i], iterations);
    }
  }
  close(stats_fd);
  double none = perfgate::stats::Median(modes[0].wall_ns);
  std::printf("%-24s %16s %10s %22s\n", "mode", "ns/getppid call", "added", "statistics ns per run");
  for (size_t i = 0; i < modes.size(); ++i) {
    if (!usable[i]) {
      std::printf("%-24s %16s\n", modes[i].name.c_str(), "unavailable");
      continue;
    }
    double wall = perfgate::stats::Median(modes[i].wall_ns);
    std::printf("%-24s %16.1f %10.1f", modes[i].name.c_str(), wall, wall - none);
    if (!modes[i].run_ns.empty()) std::printf(" %22.1f", perfgate::stats::Median(modes[i].run_ns));
    std::printf("\n");
  }
  std::printf("medians of %d interleaved rounds of %ld calls\n", rounds, iterations);
  return 0;
}
