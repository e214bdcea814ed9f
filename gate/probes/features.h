// Small named probes of what this kernel supports, used to pick a hook's
// attach type before loading. Each loads at most one trivial program and
// closes everything it opened before returning.
#pragma once

#include <string>

namespace perfgate {

// Outcome of a feature probe: supported, or the reason it is not.
struct Feature {
  bool supported = false;
  std::string reason;
  static Feature Yes() { return {true, {}}; }
  static Feature No(std::string why) { return {false, std::move(why)}; }
};

// The kernel's BTF, found as libbpf finds it (/sys/kernel/btf/vmlinux, then
// vmlinux images on disk). Every probe is a CO-RE program that needs it; the
// reason says which file is missing, empty or unreadable. Probed once.
Feature KernelBtf();

// BTF-typed raw tracepoints (tp_btf/); probed once per process on sched_switch.
Feature TpBtfSupported();
// fentry programs; probed once per process.
Feature FentrySupported();
// The raw tracepoint `name` (e.g. "sched_switch") accepts a BPF program.
Feature RawTpSupported(const std::string& name);
// tracefs has events/<category>/<name>.
Feature TracepointExists(const std::string& category, const std::string& name);
Feature KprobeSupported();
// The kernel function `name` has a BTF type, which an fentry or fexit
// program needs as its target. Reads the vmlinux BTF once per process.
Feature KernelFunctionHasBtf(const std::string& name);
// The kernel function `name` is in /proc/kallsyms, where a kprobe finds it.
// Reads kallsyms once per process.
Feature KernelFunctionInKallsyms(const std::string& name);
Feature UprobeSupported();
Feature PerfEventSupported();
// Task-local storage is the cheapest per-thread slot for a start time, but
// older kernels do not offer its helpers to (raw) tracepoint programs.
bool TaskStorageUsableFromTracepoints();
// The same for kprobe programs, which kernels allowed it later still.
bool TaskStorageUsableFromKprobes();

// "Operation not permitted (EPERM)" for an errno value.
std::string ErrnoText(int err);

}  // namespace perfgate
