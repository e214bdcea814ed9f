#include <functional>
#include <map>

#include "probes/builtin_probes.h"
#include "probes/probe.h"

namespace perfgate {
namespace {

struct CatalogEntry {
  ProbeInfo info;
  std::unique_ptr<Probe> (*make)();
};

const std::vector<CatalogEntry>& Entries() {
  static const std::vector<CatalogEntry> entries = {
      {{"runqlat",
        "run-queue latency: wakeup or preemption to running, per thread; in workload scope also the part of "
        "those waits the CPU spent running other processes' tasks, and their comms",
        {"sched.runq_latency", "host.runq_wait_behind_others", "host.runq_wait_behind_others_share"}},
       MakeRunQueueLatencyProbe},
      {{"syscalls",
        "syscall count (exact), in total and for the `top` syscalls with the most calls, and latency "
        "(sampled, about 1 in 16 syscalls; histogram counts are of sampled calls) (raw_syscalls "
        "sys_enter/sys_exit)",
        {"syscalls.count", "syscalls.count.<name>", "syscalls.latency"},
        {{"top", ProbeParameterType::kInteger,
          "how many syscalls get a syscalls.count.<name> counter, those with the most calls (default 10)"},
         {"latency", ProbeParameterType::kBoolean,
          "keep syscalls.latency (default true); false leaves sys_exit unhooked, which takes about 40 % off the "
          "probe's cost per syscall"}}},
       MakeSyscallsProbe},
      {{"kmem",
        "pages allocated (kmem:mm_page_alloc) and slab allocations (kmem:kmalloc, kmem:kmem_cache_alloc); "
        "with frees, pages freed (kmem:mm_page_free) and slab frees (kmem:kfree, kmem:kmem_cache_free)",
        {"mm.page_alloc", "mm.kmalloc", "mm.page_free", "mm.kfree"},
        {{"frees", ProbeParameterType::kBoolean,
          "also count page and slab frees, mm.page_free and mm.kfree (default false: about twice the events)"}}},
       MakeKernelMemoryProbe},
      {{"offcpu",
        "off-CPU time per wait, from a thread leaving the CPU to running again (sched:sched_switch), in total "
        "and by its state when it left: sleep (S), io (D or in iowait), preempted (still runnable)",
        {"sched.offcpu", "sched.offcpu.sleep", "sched.offcpu.io", "sched.offcpu.preempted", "sched.offcpu_time"},
        {{"stacks", ProbeParameterType::kBoolean,
          "also sum off-CPU time per kernel and user stack, for reports (costs a stack walk per switch)"}}},
       MakeOffCpuProbe},
      {{"sched",
        "context switches (sched:sched_switch, the thread leaving), wakeups (sched:sched_wakeup) and "
        "migrations between CPUs (sched:sched_migrate_task)",
        {"sched.switches", "sched.wakeups", "sched.migrations"}},
       MakeSchedulerEventsProbe},
      {{"lifecycle",
        "processes and threads created (sched:sched_process_fork), execs (sched:sched_process_exec), exits "
        "of the processes created (sched:sched_process_exit) and their lifetime from fork to exit",
        {"proc.forks", "proc.threads", "proc.execs", "proc.exits", "proc.lifetime"}},
       MakeLifecycleProbe},
      {{"reclaim",
        "direct reclaim (vmscan:mm_vmscan_direct_reclaim_begin/_end) and memory-cgroup reclaim "
        "(vmscan:mm_vmscan_memcg_reclaim_begin/_end, and mm_vmscan_memcg_softlimit_reclaim_begin/_end where the "
        "kernel has them): latency per reclaim, reclaims, pages reclaimed",
        {"mm.reclaim_latency", "mm.memcg_reclaim_latency", "mm.reclaim", "mm.memcg_reclaim", "mm.reclaim_pages"}},
       MakeReclaimProbe},
      {{"pagefault",
        "page faults, major and minor, as the kernel counts them per thread: counters read at "
        "sched:sched_process_fork/_exit and from /proc at the start and end of a repetition (no per-fault event)",
        {"mm.page_faults", "mm.page_faults.major", "mm.page_faults.minor"}},
       MakePageFaultProbe},
      {{"biolat",
        "block request latency from block:block_rq_issue to block:block_rq_complete, in total and per disk; "
        "workload scope counts requests its threads insert (block:block_rq_insert) or issue",
        {"block.io_latency", "block.io", "block.io_bytes", "block.<disk>.io_latency"}},
       MakeBlockLatencyProbe},
      {{"irq",
        "time per hard-IRQ handler (irq:irq_handler_entry/_exit) and per softirq (irq:softirq_entry/_exit); "
        "system scope only",
        {"irq.hardirq_time", "irq.softirq_time", "irq.hardirqs", "irq.softirqs"}},
       MakeIrqProbe},
      {{"ufunc",
        "latency (uprobe to uretprobe) and calls of user-space functions chosen by glob, in the workload binary "
        "and its shared libraries",
        {"ufunc.<symbol>.latency", "ufunc.<symbol>.calls"},
        {{"functions", ProbeParameterType::kStrings,
          "required: globs over demangled C++ names (with or without parameters) or C names, e.g. [\"myapp::*\", "
          "\"compress*\"]"},
         {"binary", ProbeParameterType::kString, "the executable to search first (default: the workload's)"},
         {"libraries", ProbeParameterType::kStrings,
          "more shared objects to search with every glob: paths, or names of the binary's libraries (\"libz\")"},
         {"pid", ProbeParameterType::kInteger,
          "trace this running process only; its executable and mapped libraries are searched"}}},
       MakeUfuncProbe},
      {{"futex",
        "user lock waits: time in a futex wait, from sys_enter to sys_exit of futex(FUTEX_WAIT, "
        "_WAIT_BITSET, _LOCK_PI, _LOCK_PI2, _WAIT_REQUEUE_PI), futex_wait and futex_waitv (mutexes, condition "
        "variables, semaphores, joins); waits that fail at once with EAGAIN do not count. The time is also summed "
        "per futex word, for the most contended addresses. Hooks the futex syscalls' own tracepoints "
        "(syscalls:sys_enter_futex, ...), so other syscalls run no program; raw_syscalls where they are missing",
        {"lock.futex_wait", "lock.futex_waits", "lock.futex_wait_time"},
        {{"stacks", ProbeParameterType::kBoolean,
          "also keep the waiting user stack of each contended address, for reports (costs a stack walk per wait)"}}},
       MakeFutexProbe},
      {{"mmaplock",
        "mm lock waits: time to acquire the process's mmap_lock, read or write, from "
        "mmap_lock:mmap_lock_start_locking to mmap_lock:mmap_lock_acquire_returned (every acquisition, "
        "contended or not)",
        {"lock.mmap_lock_wait", "lock.mmap_lock_waits", "lock.mmap_lock_wait_time"}},
       MakeMmapLockProbe},
      {{"tcp",
        "TCP sockets of the workload (those it connects, and those accepted from its listeners): segments "
        "retransmitted (tcp:tcp_retransmit_skb), the kernel's smoothed RTT at each packet received while data is "
        "in flight (tcp:tcp_probe), connect latency from SYN sent to established and socket ownership "
        "(sock:inet_sock_set_state), resets sent and received (tcp:tcp_send_reset, tcp:tcp_receive_reset)",
        {"tcp.retransmits", "tcp.rtt", "tcp.connect_latency", "tcp.resets", "tcp.resets.sent", "tcp.resets.received"}},
       MakeTcpProbe},
      {{"profile",
        "on-CPU sampling: one perf event per CPU (hardware cycles, else the cpu-clock timer) at `frequency_hz`, "
        "kernel and user stacks summed in the kernel per process; perfgate's evidence repetition attaches it",
        {"profile.samples"},
        {{"frequency_hz", ProbeParameterType::kInteger, "samples per second and CPU (default 99, at most 20000)"},
         {"user_stack_bytes", ProbeParameterType::kInteger,
          "bytes of user stack copied per sample with the user registers, so that code without frame pointers "
          "is unwound from its unwind tables after the run (default 0: none; a multiple of 8, at most 16384; the "
          "evidence repetitions copy 8192)"}}},
       MakeProfileProbe},
      {{"cpu",
        "CPU counters of the workload's process tree (perf_event, counting mode, inherited by every process and "
        "thread from the workload's exec; no BPF), read once per repetition: hardware instructions (in all, in user "
        "space, in the kernel), cycles, branch "
        "and cache misses where the host has a PMU, else software task-clock, context switches, page faults and CPU "
        "migrations; counts the PMU multiplexed are scaled to the whole time and cpu.running_fraction says so",
        {"cpu.instructions", "cpu.cycles", "cpu.branch_misses", "cpu.cache_misses", "cpu.instructions.user",
         "cpu.instructions.kernel", "cpu.task_clock", "cpu.context_switches", "cpu.page_faults", "cpu.migrations",
         "cpu.running_fraction"},
        {{"counters", ProbeParameterType::kString,
          "\"auto\" (default: hardware where the host has a PMU, else software), \"hardware\" (fails without a PMU) "
          "or \"software\" (the same metrics on every host)"}}},
       MakeCpuCountersProbe},
  };
  return entries;
}

}  // namespace

const std::vector<ProbeInfo>& ProbeCatalog() {
  static const std::vector<ProbeInfo> catalog = [] {
    std::vector<ProbeInfo> infos;
    for (const auto& entry : Entries()) infos.push_back(entry.info);
    return infos;
  }();
  return catalog;
}

std::unique_ptr<Probe> CreateProbe(const std::string& name) {
  for (const auto& entry : Entries()) {
    if (entry.info.name == name) return entry.make();
  }
  return nullptr;
}

std::string ToString(ProbeParameterType type) {
  switch (type) {
    case ProbeParameterType::kString:
      return "string";
    case ProbeParameterType::kStrings:
      return "strings";
    case ProbeParameterType::kInteger:
      return "integer";
    case ProbeParameterType::kBoolean:
      return "boolean";
  }
  return "unknown";
}

ProbeReport UnattachedReport(const std::string& name, ProbeScope scope) {
  ProbeReport report;
  report.name = name;
  report.scope = scope == ProbeScope::kWorkload ? "workload" : "system";
  return report;
}

std::string ToString(AttachType type) {
  switch (type) {
    case AttachType::kFentry:
      return "fentry";
    case AttachType::kTpBtf:
      return "tp_btf";
    case AttachType::kRawTp:
      return "raw_tp";
    case AttachType::kTracepoint:
      return "tracepoint";
    case AttachType::kKprobe:
      return "kprobe";
    case AttachType::kUprobe:
      return "uprobe";
    case AttachType::kPerfEvent:
      return "perf_event";
  }
  return "unknown";
}

}  // namespace perfgate
