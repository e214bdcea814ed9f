#include "probes/features.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <unordered_set>

#include "probes/fd.h"
#include "probes/probe.h"
#include "probes/process_maps.h"

namespace perfgate {
namespace {

constexpr const char* kTracefsRoots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

// "r0 = 0; exit": valid for every program type probed here.
Fd LoadTrivialProgram(bpf_prog_type type, const bpf_prog_load_opts* opts) {
  const bpf_insn insns[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
  };
  return Fd(bpf_prog_load(type, nullptr, "GPL", insns, 2, opts));
}

// Type ids the tracing feature probes need, looked up in one parse of the
// vmlinux BTF (the slow part of probing).
struct VmlinuxIds {
  int sched_switch_tp = -1;  // typedef btf_trace_sched_switch
  int vfs_read = -1;         // func vfs_read
  std::string error;
};

int QuietLibbpf(enum libbpf_print_level, const char*, va_list) { return 0; }

// btf__load_vmlinux_btf without libbpf's complaints on stderr: a missing BTF
// is reported once, by the caller, with its reason.
btf* LoadVmlinuxBtfQuietly() {
  libbpf_print_fn_t previous = libbpf_set_print(QuietLibbpf);
  btf* vmlinux = btf__load_vmlinux_btf();
  const int err = errno;
  libbpf_set_print(previous);
  errno = err;
  return vmlinux;
}

const VmlinuxIds& LookUpVmlinuxIds() {
  static const VmlinuxIds ids = [] {
    VmlinuxIds found;
    if (Feature btf = KernelBtf(); !btf.supported) {
      found.error = btf.reason;
      return found;
    }
    btf* vmlinux = LoadVmlinuxBtfQuietly();
    if (vmlinux == nullptr) {
      found.error = "no vmlinux BTF: " + ErrnoText(errno);
      return found;
    }
    found.sched_switch_tp = btf__find_by_name_kind(vmlinux, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
    found.vfs_read = btf__find_by_name_kind(vmlinux, "vfs_read", BTF_KIND_FUNC);
    btf__free(vmlinux);
    return found;
  }();
  return ids;
}

// Loads a BTF-typed tracing program against vmlinux type `btf_id` and
// attaches it, which is where kernels without trampolines refuse.
Feature TracingProgramWorks(bpf_attach_type attach_type, int btf_id, const char* target) {
  if (!LookUpVmlinuxIds().error.empty()) return Feature::No(LookUpVmlinuxIds().error);
  if (btf_id < 0) return Feature::No(std::string(target) + " not in vmlinux BTF");
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach_type,
              .attach_btf_id = static_cast<uint32_t>(btf_id));
  Fd prog = LoadTrivialProgram(BPF_PROG_TYPE_TRACING, &opts);
  if (!prog.ok()) return Feature::No("load: " + ErrnoText(errno));
  Fd link(bpf_raw_tracepoint_open(nullptr, prog.get()));
  if (!link.ok()) return Feature::No("attach: " + ErrnoText(errno));
  return Feature::Yes();
}

// Attaches a trivial program of `type` to an opened perf event.
Feature AttachToPerfEvent(const Fd& event, bpf_prog_type type) {
  if (!event.ok()) return Feature::No("perf_event_open: " + ErrnoText(errno));
  Fd prog = LoadTrivialProgram(type, nullptr);
  if (!prog.ok()) return Feature::No("load: " + ErrnoText(errno));
  if (ioctl(event.get(), PERF_EVENT_IOC_SET_BPF, prog.get()) != 0) return Feature::No("attach: " + ErrnoText(errno));
  return Feature::Yes();
}

int PerfEventOpen(perf_event_attr& attr, pid_t pid, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

// Dynamic PMU type of "kprobe" or "uprobe"; -1 when the kernel lacks it.
int DynamicPmuType(const std::string& pmu) {
  std::ifstream in("/sys/bus/event_source/devices/" + pmu + "/type");
  int type = -1;
  in >> type;
  return in ? type : -1;
}

}  // namespace

// A function of our own binary for the uprobe probe to target.
extern "C" __attribute__((noinline, used)) void PerfgateUprobeTarget() { asm volatile(""); }

std::string ErrnoText(int err) {
  const char* name = strerrorname_np(err);
  return std::string(strerror(err)) + " (" + (name ? name : std::to_string(err)) + ")";
}

Feature KernelBtf() {
  static const Feature feature = [] {
    btf* vmlinux = LoadVmlinuxBtfQuietly();
    if (vmlinux != nullptr) {
      btf__free(vmlinux);
      return Feature::Yes();
    }
    const std::string how = ErrnoText(errno);
    constexpr const char* kPath = "/sys/kernel/btf/vmlinux";
    struct stat st {};
    std::string what;
    if (stat(kPath, &st) != 0) {
      what = std::string(kPath) + " does not exist";
    } else if (st.st_size == 0) {
      what = std::string(kPath) + " is empty";
    } else if (access(kPath, R_OK) != 0) {
      what = std::string(kPath) + " is not readable";
    } else {
      what = std::string(kPath) + " cannot be parsed";
    }
    return Feature::No("no kernel BTF: " + what + " and no vmlinux image with BTF was found (" + how +
                       "); a kernel built with CONFIG_DEBUG_INFO_BTF=y provides it");
  }();
  return feature;
}

Feature TpBtfSupported() {
  static const Feature feature =
      TracingProgramWorks(BPF_TRACE_RAW_TP, LookUpVmlinuxIds().sched_switch_tp, "btf_trace_sched_switch");
  return feature;
}

Feature FentrySupported() {
  static const Feature feature = TracingProgramWorks(BPF_TRACE_FENTRY, LookUpVmlinuxIds().vfs_read, "vfs_read");
  return feature;
}

Feature RawTpSupported(const std::string& name) {
  Fd prog = LoadTrivialProgram(BPF_PROG_TYPE_RAW_TRACEPOINT, nullptr);
  if (!prog.ok()) return Feature::No("load: " + ErrnoText(errno));
  Fd link(bpf_raw_tracepoint_open(name.c_str(), prog.get()));
  if (!link.ok()) return Feature::No("raw tracepoint " + name + ": " + ErrnoText(errno));
  return Feature::Yes();
}

Feature TracepointExists(const std::string& category, const std::string& name) {
  for (const char* root : kTracefsRoots) {
    if (access((std::string(root) + "/events").c_str(), F_OK) != 0) continue;
    std::string path = std::string(root) + "/events/" + category + "/" + name;
    if (access(path.c_str(), F_OK) == 0) return Feature::Yes();
    return Feature::No(path + " does not exist");
  }
  return Feature::No("tracefs is not mounted at /sys/kernel/tracing (perfgate doctor --fix mounts it)");
}

Feature KprobeSupported() {
  int type = DynamicPmuType("kprobe");
  if (type < 0) return Feature::No("no kprobe PMU in /sys/bus/event_source/devices");
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = static_cast<uint32_t>(type);
  attr.config1 = reinterpret_cast<uint64_t>("vfs_read");  // kprobe_func
  return AttachToPerfEvent(Fd(PerfEventOpen(attr, -1, 0)), BPF_PROG_TYPE_KPROBE);
}

Feature KernelFunctionHasBtf(const std::string& name) {
  static const std::optional<std::unordered_set<std::string>> functions =
      []() -> std::optional<std::unordered_set<std::string>> {
    btf* vmlinux = LoadVmlinuxBtfQuietly();
    if (vmlinux == nullptr) return std::nullopt;
    std::unordered_set<std::string> names;
    const uint32_t types = btf__type_cnt(vmlinux);
    for (uint32_t id = 1; id < types; ++id) {
      const btf_type* type = btf__type_by_id(vmlinux, id);
      if (btf_kind(type) == BTF_KIND_FUNC) names.insert(btf__name_by_offset(vmlinux, type->name_off));
    }
    btf__free(vmlinux);
    return names;
  }();
  if (!functions) return Feature::No(KernelBtf().reason);
  if (functions->count(name) == 0) return Feature::No("kernel function " + name + " not in vmlinux BTF");
  return Feature::Yes();
}

Feature KernelFunctionInKallsyms(const std::string& name) {
  // Text symbols only ("t"/"T"); a module's symbols carry its name after them.
  static const std::unordered_set<std::string> symbols = [] {
    std::unordered_set<std::string> names;
    std::ifstream in("/proc/kallsyms");
    std::string address, type, symbol;
    while (in >> address >> type >> symbol) {
      if (type == "t" || type == "T") names.insert(symbol);
      in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    return names;
  }();
  if (symbols.count(name) == 0) return Feature::No("kernel function " + name + " not in /proc/kallsyms");
  return Feature::Yes();
}

Feature UprobeSupported() {
  int type = DynamicPmuType("uprobe");
  if (type < 0) return Feature::No("no uprobe PMU in /sys/bus/event_source/devices");
  // File offset of our own function: its address minus its mapping's start plus the mapping's offset.
  auto address = reinterpret_cast<uintptr_t>(&PerfgateUprobeTarget);
  const std::optional<ProcessMaps> maps = ReadProcessMaps(getpid());
  const MappedRange* text = maps ? maps->Find(address) : nullptr;
  if (text == nullptr) return Feature::No("cannot locate perfgate's own text in /proc/self/maps");
  const uint64_t offset = address - text->start + text->offset;
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = static_cast<uint32_t>(type);
  attr.config1 = reinterpret_cast<uint64_t>("/proc/self/exe");  // uprobe_path
  attr.config2 = offset;                                        // probe_offset
  return AttachToPerfEvent(Fd(PerfEventOpen(attr, getpid(), -1)), BPF_PROG_TYPE_KPROBE);
}

Feature PerfEventSupported() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 1'000'000'000;  // never fires during the probe
  attr.disabled = 1;
  return AttachToPerfEvent(Fd(PerfEventOpen(attr, -1, 0)), BPF_PROG_TYPE_PERF_EVENT);
}

std::vector<AttachSupport> ProbeAttachSupport() {
  auto row = [](AttachType type, const Feature& f) { return AttachSupport{type, f.supported, f.reason}; };
  return {
      row(AttachType::kFentry, FentrySupported()),
      row(AttachType::kTpBtf, TpBtfSupported()),
      row(AttachType::kRawTp, RawTpSupported("sched_switch")),
      row(AttachType::kTracepoint, TracepointExists("sched", "sched_switch")),
      row(AttachType::kKprobe, KprobeSupported()),
      row(AttachType::kUprobe, UprobeSupported()),
      row(AttachType::kPerfEvent, PerfEventSupported()),
  };
}

bool TaskStorageUsableFromTracepoints() {
  static const bool usable = [] {
    for (bpf_prog_type type : {BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_PROG_TYPE_TRACEPOINT}) {
      if (libbpf_probe_bpf_helper(type, BPF_FUNC_task_storage_get, nullptr) != 1 ||
          libbpf_probe_bpf_helper(type, BPF_FUNC_get_current_task_btf, nullptr) != 1)
        return false;
    }
    return true;
  }();
  return usable;
}

bool TaskStorageUsableFromKprobes() {
  static const bool usable = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_storage_get, nullptr) == 1 &&
                             libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_current_task_btf, nullptr) == 1;
  return usable;
}

}  // namespace perfgate
