// syscalls.count (exact), syscalls.count.<name> (exact, the `top` syscalls
// with the most calls), syscalls.latency (sampled) and syscalls.time.<name>
// (the `top` syscalls' time on the CPU, estimated from their sampled calls)
// from raw_syscalls sys_enter/sys_exit; see bpf/syscalls.bpf.c for the
// in-kernel side.
#include "probes/syscalls.h"

#include <bpf/bpf.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"
#include "stats.h"
#include "syscalls.skel.h"

namespace perfgate {
namespace {

// The kernel allocates per-CPU map values of at most 32 KiB.
static_assert(sizeof(pg_syscalls_stats) <= 32 * 1024, "the per-CPU syscalls value outgrew what the kernel allocates");

// Consecutive syscall numbers and their names.
struct SyscallRange {
  long first;
  const char* const* names;
  long size;
};

// 424..469: the same numbers on every architecture (the kernel's common
// syscall numbering since 5.1).
// clang-format off
constexpr const char* kFrom424[] = {
    "pidfd_send_signal", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick", "pidfd_open", "clone3", "close_range", "openat2", "pidfd_getfd", "faccessat2",
    "process_madvise", "epoll_pwait2", "mount_setattr", "quotactl_fd", "landlock_create_ruleset", "landlock_add_rule",
    "landlock_restrict_self", "memfd_secret", "process_mrelease", "futex_waitv", "set_mempolicy_home_node",
    "cachestat", "fchmodat2", "map_shadow_stack", "futex_wake", "futex_wait", "futex_requeue", "statmount",
    "listmount", "lsm_get_self_attr", "lsm_set_self_attr", "lsm_list_modules", "mseal", "setxattrat", "getxattrat",
    "listxattrat", "removexattrat", "open_tree_attr", "file_getattr", "file_setattr",
};
// clang-format on

#if defined(__x86_64__)
// x86_64 syscall names by number, from the kernel's syscall_64.tbl (through
// <asm/unistd_64.h>, plus the numbers added up to Linux 6.17). Numbers
// 335..423 are unused; 512 and up are x32. Compiled in, so that naming never
// depends on the tools or headers of the machine under test. 32-bit (ia32)
// processes report their own numbers to raw_syscalls, which this table names
// as if they were native: a known limit.
// clang-format off
// 0..334
constexpr const char* kX86_64From0[] = {
    "read", "write", "open", "close", "stat", "fstat", "lstat", "poll", "lseek", "mmap", "mprotect", "munmap", "brk",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "ioctl", "pread64", "pwrite64", "readv", "writev", "access",
    "pipe", "select", "sched_yield", "mremap", "msync", "mincore", "madvise", "shmget", "shmat", "shmctl", "dup",
    "dup2", "pause", "nanosleep", "getitimer", "alarm", "setitimer", "getpid", "sendfile", "socket", "connect",
    "accept", "sendto", "recvfrom", "sendmsg", "recvmsg", "shutdown", "bind", "listen", "getsockname", "getpeername",
    "socketpair", "setsockopt", "getsockopt", "clone", "fork", "vfork", "execve", "exit", "wait4", "kill", "uname",
    "semget", "semop", "semctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "fcntl", "flock", "fsync",
    "fdatasync", "truncate", "ftruncate", "getdents", "getcwd", "chdir", "fchdir", "rename", "mkdir", "rmdir", "creat",
    "link", "unlink", "symlink", "readlink", "chmod", "fchmod", "chown", "fchown", "lchown", "umask", "gettimeofday",
    "getrlimit", "getrusage", "sysinfo", "times", "ptrace", "getuid", "syslog", "getgid", "setuid", "setgid",
    "geteuid", "getegid", "setpgid", "getppid", "getpgrp", "setsid", "setreuid", "setregid", "getgroups", "setgroups",
    "setresuid", "getresuid", "setresgid", "getresgid", "getpgid", "setfsuid", "setfsgid", "getsid", "capget",
    "capset", "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo", "rt_sigsuspend", "sigaltstack", "utime", "mknod",
    "uselib", "personality", "ustat", "statfs", "fstatfs", "sysfs", "getpriority", "setpriority", "sched_setparam",
    "sched_getparam", "sched_setscheduler", "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min",
    "sched_rr_get_interval", "mlock", "munlock", "mlockall", "munlockall", "vhangup", "modify_ldt", "pivot_root",
    "_sysctl", "prctl", "arch_prctl", "adjtimex", "setrlimit", "chroot", "sync", "acct", "settimeofday", "mount",
    "umount2", "swapon", "swapoff", "reboot", "sethostname", "setdomainname", "iopl", "ioperm", "create_module",
    "init_module", "delete_module", "get_kernel_syms", "query_module", "quotactl", "nfsservctl", "getpmsg", "putpmsg",
    "afs_syscall", "tuxcall", "security", "gettid", "readahead", "setxattr", "lsetxattr", "fsetxattr", "getxattr",
    "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
    "tkill", "time", "futex", "sched_setaffinity", "sched_getaffinity", "set_thread_area", "io_setup", "io_destroy",
    "io_getevents", "io_submit", "io_cancel", "get_thread_area", "lookup_dcookie", "epoll_create", "epoll_ctl_old",
    "epoll_wait_old", "remap_file_pages", "getdents64", "set_tid_address", "restart_syscall", "semtimedop",
    "fadvise64", "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete", "clock_settime",
    "clock_gettime", "clock_getres", "clock_nanosleep", "exit_group", "epoll_wait", "epoll_ctl", "tgkill", "utimes",
    "vserver", "mbind", "set_mempolicy", "get_mempolicy", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
    "mq_notify", "mq_getsetattr", "kexec_load", "waitid", "add_key", "request_key", "keyctl", "ioprio_set",
    "ioprio_get", "inotify_init", "inotify_add_watch", "inotify_rm_watch", "migrate_pages", "openat", "mkdirat",
    "mknodat", "fchownat", "futimesat", "newfstatat", "unlinkat", "renameat", "linkat", "symlinkat", "readlinkat",
    "fchmodat", "faccessat", "pselect6", "ppoll", "unshare", "set_robust_list", "get_robust_list", "splice", "tee",
    "sync_file_range", "vmsplice", "move_pages", "utimensat", "epoll_pwait", "signalfd", "timerfd_create", "eventfd",
    "fallocate", "timerfd_settime", "timerfd_gettime", "accept4", "signalfd4", "eventfd2", "epoll_create1", "dup3",
    "pipe2", "inotify_init1", "preadv", "pwritev", "rt_tgsigqueueinfo", "perf_event_open", "recvmmsg", "fanotify_init",
    "fanotify_mark", "prlimit64", "name_to_handle_at", "open_by_handle_at", "clock_adjtime", "syncfs", "sendmmsg",
    "setns", "getcpu", "process_vm_readv", "process_vm_writev", "kcmp", "finit_module", "sched_setattr",
    "sched_getattr", "renameat2", "seccomp", "getrandom", "memfd_create", "kexec_file_load", "bpf", "execveat",
    "userfaultfd", "membarrier", "mlock2", "copy_file_range", "preadv2", "pwritev2", "pkey_mprotect", "pkey_alloc",
    "pkey_free", "statx", "io_pgetevents", "rseq",
};

// clang-format on

constexpr SyscallRange kSyscallRanges[] = {
    {0, kX86_64From0, static_cast<long>(std::size(kX86_64From0))},
    {424, kFrom424, static_cast<long>(std::size(kFrom424))},
};
static_assert(std::size(kX86_64From0) == 335 && std::size(kFrom424) == 46);
#elif defined(__aarch64__)
// arm64 syscall names by number: the kernel's generic table
// (<asm-generic/unistd.h>, which arm64 uses), compiled in like x86_64's.
// 244..259 are for architecture-specific calls, none on arm64; 295..423 are
// unused (32-bit time calls only). 32-bit (compat) processes report their
// own numbers: the same known limit as ia32 on x86_64.
// clang-format off
// 0..243
constexpr const char* kArm64From0[] = {
    "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "setxattr", "lsetxattr", "fsetxattr",
    "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr", "lremovexattr",
    "fremovexattr", "getcwd", "lookup_dcookie", "eventfd2", "epoll_create1", "epoll_ctl", "epoll_pwait", "dup", "dup3",
    "fcntl", "inotify_init1", "inotify_add_watch", "inotify_rm_watch", "ioctl", "ioprio_set", "ioprio_get", "flock",
    "mknodat", "mkdirat", "unlinkat", "symlinkat", "linkat", "renameat", "umount2", "mount", "pivot_root", "nfsservctl",
    "statfs", "fstatfs", "truncate", "ftruncate", "fallocate", "faccessat", "chdir", "fchdir", "chroot", "fchmod",
    "fchmodat", "fchownat", "fchown", "openat", "close", "vhangup", "pipe2", "quotactl", "getdents64", "lseek", "read",
    "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "sendfile", "pselect6", "ppoll",
    "signalfd4", "vmsplice", "splice", "tee", "readlinkat", "newfstatat", "fstat", "sync", "fsync", "fdatasync",
    "sync_file_range", "timerfd_create", "timerfd_settime", "timerfd_gettime", "utimensat", "acct", "capget", "capset",
    "personality", "exit", "exit_group", "waitid", "set_tid_address", "unshare", "futex", "set_robust_list",
    "get_robust_list", "nanosleep", "getitimer", "setitimer", "kexec_load", "init_module", "delete_module",
    "timer_create", "timer_gettime", "timer_getoverrun", "timer_settime", "timer_delete", "clock_settime",
    "clock_gettime", "clock_getres", "clock_nanosleep", "syslog", "ptrace", "sched_setparam", "sched_setscheduler",
    "sched_getscheduler", "sched_getparam", "sched_setaffinity", "sched_getaffinity", "sched_yield",
    "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval", "restart_syscall", "kill", "tkill",
    "tgkill", "sigaltstack", "rt_sigsuspend", "rt_sigaction", "rt_sigprocmask", "rt_sigpending", "rt_sigtimedwait",
    "rt_sigqueueinfo", "rt_sigreturn", "setpriority", "getpriority", "reboot", "setregid", "setgid", "setreuid",
    "setuid", "setresuid", "getresuid", "setresgid", "getresgid", "setfsuid", "setfsgid", "times", "setpgid", "getpgid",
    "getsid", "setsid", "getgroups", "setgroups", "uname", "sethostname", "setdomainname", "getrlimit", "setrlimit",
    "getrusage", "umask", "prctl", "getcpu", "gettimeofday", "settimeofday", "adjtimex", "getpid", "getppid", "getuid",
    "geteuid", "getgid", "getegid", "gettid", "sysinfo", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
    "mq_notify", "mq_getsetattr", "msgget", "msgctl", "msgrcv", "msgsnd", "semget", "semctl", "semtimedop", "semop",
    "shmget", "shmctl", "shmat", "shmdt", "socket", "socketpair", "bind", "listen", "accept", "connect", "getsockname",
    "getpeername", "sendto", "recvfrom", "setsockopt", "getsockopt", "shutdown", "sendmsg", "recvmsg", "readahead",
    "brk", "munmap", "mremap", "add_key", "request_key", "keyctl", "clone", "execve", "mmap", "fadvise64", "swapon",
    "swapoff", "mprotect", "msync", "mlock", "munlock", "mlockall", "munlockall", "mincore", "madvise",
    "remap_file_pages", "mbind", "get_mempolicy", "set_mempolicy", "migrate_pages", "move_pages", "rt_tgsigqueueinfo",
    "perf_event_open", "accept4", "recvmmsg",
};

// 260..294
constexpr const char* kArm64From260[] = {
    "wait4", "prlimit64", "fanotify_init", "fanotify_mark", "name_to_handle_at", "open_by_handle_at", "clock_adjtime",
    "syncfs", "setns", "sendmmsg", "process_vm_readv", "process_vm_writev", "kcmp", "finit_module", "sched_setattr",
    "sched_getattr", "renameat2", "seccomp", "getrandom", "memfd_create", "bpf", "execveat", "userfaultfd",
    "membarrier", "mlock2", "copy_file_range", "preadv2", "pwritev2", "pkey_mprotect", "pkey_alloc", "pkey_free",
    "statx", "io_pgetevents", "rseq", "kexec_file_load",
};
// clang-format on

constexpr SyscallRange kSyscallRanges[] = {
    {0, kArm64From0, static_cast<long>(std::size(kArm64From0))},
    {260, kArm64From260, static_cast<long>(std::size(kArm64From260))},
    {424, kFrom424, static_cast<long>(std::size(kFrom424))},
};
static_assert(std::size(kArm64From0) == 244 && std::size(kArm64From260) == 35 && std::size(kFrom424) == 46);
#else
// Other architectures: every syscall is "syscall_<nr>" until it gets a table.
constexpr SyscallRange kSyscallRanges[] = {{0, nullptr, 0}};
#endif

// The kernel function every syscall passes with its number as the second
// argument, for the fentry and kprobe variants: x86-64 dispatches through
// x64_sys_call(regs, nr) since the branch history injection fixes (6.9, and
// 6.1.85 on the stable branch); arm64 through invoke_syscall(regs, scno, ...),
// which Debian's arm64 kernels keep as a function of its own.
#if defined(__x86_64__)
const std::vector<std::string> kSyscallFunctions = {"x64_sys_call"};
#elif defined(__aarch64__)
const std::vector<std::string> kSyscallFunctions = {"invoke_syscall"};
#else
const std::vector<std::string> kSyscallFunctions = {};
#endif

class SyscallsProbe final : public BpfProbe<syscalls_bpf> {
 public:
  explicit SyscallsProbe(const SyscallsProbeOptions& options)
      : BpfProbe("syscalls", {syscalls_bpf__open, syscalls_bpf__destroy}), options_(options) {}

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    top_ = options_.top;
    if (auto top = options.params.find("top"); top != options.params.end()) {
      int64_t value = top->get<int64_t>();
      if (value < 0 || value > PG_SYSCALL_SLOTS)
        throw InputError("probe syscalls: top must be between 0 and " + std::to_string(PG_SYSCALL_SLOTS) + ", not " +
                         std::to_string(value));
      top_ = static_cast<uint32_t>(value);
    }
    latency_ = options.params.value("latency", options_.latency);
    // A trace reports slow syscalls, which only sys_exit can time.
    time_syscalls_ = latency_ || options.trace != nullptr;
    BpfProbe::Attach(options, tracker);
  }

  void Reset() override {
    // Nothing else to drop: the per-CPU "tracked" answers (bpf/filter.bpf.h)
    // are tagged with the tracked map's generation, which the tracker's
    // re-seeding has just changed.
    ZeroPerCpu<pg_syscalls_stats>(StatsFd(), "probe syscalls");
  }

  void Collect(double duration_s, MetricSet& out) override {
    auto per_cpu = ReadPerCpu<pg_syscalls_stats>(StatsFd(), "probe syscalls");
    double count = 0;
    std::vector<uint64_t> by_nr(PG_SYSCALL_SLOTS), sampled(PG_SYSCALL_SLOTS), sampled_ns(PG_SYSCALL_SLOTS);
    for (const auto& cpu : per_cpu) {
      count += static_cast<double>(cpu.count);
      for (size_t nr = 0; nr < PG_SYSCALL_SLOTS; ++nr) {
        by_nr[nr] += cpu.by_nr[nr];
        sampled[nr] += cpu.sampled_by_nr[nr];
        sampled_ns[nr] += cpu.sampled_ns_by_nr[nr];
      }
    }
    out[kSyscallsCount] = CounterMetric(kSyscallsCount, "count", count, duration_s);
    for (const auto& top : TopSyscalls(by_nr, top_)) {
      const std::string syscall = SyscallName(top.nr);
      std::string name = "syscalls.count." + syscall;
      out[name] = CounterMetric(name, "count", static_cast<double>(top.count), duration_s);
      // The exact calls at the mean latency of the sampled ones that stayed
      // on the CPU: a syscall that got slower shows here with its count
      // unchanged, and its waits off the CPU stay the offcpu probe's.
      if (!latency_ || sampled[top.nr] == 0) continue;
      const double mean_ns = static_cast<double>(sampled_ns[top.nr]) / static_cast<double>(sampled[top.nr]);
      name = "syscalls.time." + syscall;
      out[name] = CounterMetric(name, "ns", static_cast<double>(top.count) * mean_ns, duration_s);
    }
    if (!latency_) return;
    // Sampled: about 1 in latency_sample_every syscalls per CPU, so its
    // count is of sampled calls; its shape and quantiles are what matter.
    out[kSyscallsLatency] = HistogramMetric(kSyscallsLatency, "ns", MergeCpuHistograms(per_cpu), duration_s);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    std::vector<HookSpec> hooks = {TracepointHook("raw_syscalls", "sys_enter", "syscalls_enter", kSyscallFunctions)};
    if (time_syscalls_) hooks.push_back(TracepointHook("raw_syscalls", "sys_exit", "syscalls_exit", kSyscallFunctions));
    return hooks;
  }

  void Configure(syscalls_bpf& skel) override {
    skel.rodata->use_task_storage =
        TaskStorageUsableFromTracepoints() && (!plan().Chose(AttachType::kKprobe) || TaskStorageUsableFromKprobes());
    // The map left unused still gets created; keep it minimal.
    if (skel.rodata->use_task_storage) bpf_map__set_max_entries(skel.maps.start_by_tid, 1);
    skel.rodata->time_syscalls = time_syscalls_;
    skel.rodata->sample_threshold = (uint64_t{1} << 32) / options_.latency_sample_every;
    skel.rodata->exit_nr = SYS_exit;
    skel.rodata->exit_group_nr = SYS_exit_group;
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.syscalls_stats); }

  SyscallsProbeOptions options_;
  uint32_t top_ = 0;           // from the suite's `top`, else options_.top
  bool latency_ = true;        // from the suite's `latency`, else options_.latency
  bool time_syscalls_ = true;  // sys_exit hooked: latency_ or a trace
};

}  // namespace

std::string SyscallName(long nr) {
  for (const auto& range : kSyscallRanges) {
    if (nr >= range.first && nr < range.first + range.size) return range.names[nr - range.first];
  }
  return "syscall_" + std::to_string(nr);
}

std::vector<SyscallCount> TopSyscalls(const std::vector<uint64_t>& count_by_nr, size_t n) {
  std::vector<SyscallCount> called;
  for (size_t nr = 0; nr < count_by_nr.size(); ++nr) {
    if (count_by_nr[nr] > 0) called.push_back({static_cast<uint32_t>(nr), count_by_nr[nr]});
  }
  n = std::min(n, called.size());
  std::partial_sort(called.begin(), called.begin() + static_cast<std::ptrdiff_t>(n), called.end(),
                    [](const SyscallCount& a, const SyscallCount& b) {
                      return a.count != b.count ? a.count > b.count : a.nr < b.nr;
                    });
  called.resize(n);
  return called;
}

std::unique_ptr<Probe> MakeSyscallsProbe(const SyscallsProbeOptions& options) {
  uint32_t every = options.latency_sample_every;
  if (every == 0 || (every & (every - 1)) != 0)
    throw InputError("probe syscalls: latency sample rate must be a power of two, not " + std::to_string(every));
  return std::make_unique<SyscallsProbe>(options);
}

ProbeDefinition DefineSyscallsProbe() {
  return {DeclaredProbe("syscalls"),
          []() -> std::unique_ptr<Probe> { return MakeSyscallsProbe(SyscallsProbeOptions{}); }};
}

}  // namespace perfgate
