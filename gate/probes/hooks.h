// Choosing an attach type per hook and loading a BPF object with it. A hook
// (one kernel event) has one program per attach type, all calling the same
// body; the plan picks the fastest that this kernel and the options allow,
// and falls back to the next one when libbpf fails to load or attach it.
#pragma once

#include <bpf/libbpf.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "metrics/results.h"
#include "probes/probe.h"

namespace perfgate {

struct HookVariant {
  AttachType type;
  std::string program;  // BPF program (function) name in the object
  // fentry/fexit and kprobe/kretprobe: the kernel function that stands for
  // the event, as each kernel version names it; the plan keeps the first
  // this kernel has. A kretprobe or fexit program says so in its section.
  std::vector<std::string> functions = {};
};

struct HookSpec {
  std::string event;                  // tracepoint name: "sched_switch"
  std::string category;               // tracepoint category: "sched"
  std::vector<HookVariant> variants;  // fastest first
};

// A tracepoint hook whose programs are named <prefix>_tp_btf, <prefix>_raw_tp
// and <prefix>_tracepoint, the convention of every bpf/*.bpf.c. With
// `functions` (the kernel function that does what the event reports, by its
// names across kernel versions) also <prefix>_fentry first and
// <prefix>_kprobe last: fentry is the cheapest attach type, a kprobe the
// costliest, but both work on kernels whose tracepoint lacks what we need.
HookSpec TracepointHook(const std::string& category, const std::string& event, const std::string& program_prefix,
                        const std::vector<std::string>& functions = {});

// sched_process_fork with wake_up_new_task(child) (the parent's context,
// just after the event, before the child first runs) and sched_process_exit
// with do_exit() (the exiting thread, just before the event): the process
// tree's hooks of the tracker and of the probes that follow it.
HookSpec ProcessForkHook(const std::string& program_prefix);
HookSpec ThreadExitHook(const std::string& program_prefix);

class HookPlan {
 public:
  // Runs the feature probes; throws InfraError when a hook has no usable variant.
  HookPlan(std::string probe, std::vector<HookSpec> hooks, const ProbeOptions& options);

  const std::string& probe() const { return probe_; }
  // Loads exactly the chosen program of every hook, no other program.
  void ApplyAutoload(bpf_object* object) const;
  // Attaches every chosen program. On failure returns the failing hook's index
  // and the reason, having destroyed the links it created.
  std::optional<std::pair<size_t, std::string>> Attach(bpf_object* object, std::vector<bpf_link*>& links) const;
  // The hook whose chosen program libbpf's load log blames.
  std::optional<size_t> HookBlamedBy(const std::string& libbpf_log) const;
  const std::string& ChosenProgram(size_t hook) const;
  // The attach type of every hook's chosen variant, when they all agree.
  std::optional<AttachType> CommonType() const;
  // Whether any hook's chosen variant is of `type`.
  bool Chose(AttachType type) const;
  // Moves a hook to its next variant; throws InfraError when none is left.
  void Reject(size_t hook, const std::string& reason);
  std::vector<HookChoice> Choices() const;

 private:
  struct Hook {
    HookSpec spec;
    std::vector<HookVariant> usable;  // front = chosen
    std::vector<std::string> rejected;
  };
  std::string HookName(const Hook& hook) const;

  std::string probe_;
  std::vector<Hook> hooks_;
};

// Collects libbpf's log lines while alive (instead of printing them), so a
// failed load can be blamed on a program and explained in an error.
class LibbpfLogCapture {
 public:
  LibbpfLogCapture();
  ~LibbpfLogCapture();
  LibbpfLogCapture(const LibbpfLogCapture&) = delete;
  LibbpfLogCapture& operator=(const LibbpfLogCapture&) = delete;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  libbpf_print_fn_t previous_;
};

// Why `program` failed to load, from libbpf's log of the load (what a
// LibbpfLogCapture collected): libbpf's line on the program, the CO-RE
// relocation this kernel's BTF could not resolve if one was the cause (it
// names the type and field the kernel lacks), and the verifier's verdict.
std::string LoadFailureSummary(const std::string& log, const std::string& program);

// Opens, configures, loads and attaches one skeleton-backed object, retrying
// with the next variant of whichever hook failed. `open` returns the opened
// and configured object (rodata, map fds); `close` destroys it.
void LoadAndAttach(HookPlan& plan, const std::function<bpf_object*()>& open, const std::function<void()>& close,
                   std::vector<bpf_link*>& links);

void DestroyLinks(std::vector<bpf_link*>& links);

// For probes with a single attach type of their own (uprobe, perf_event),
// outside the hook plans: throws the plans' "no usable attach type" error
// when `options` rules `type` out (a test forcing other types).
void RequireAllowedAttachType(const ProbeOptions& options, AttachType type, const std::string& probe);

// Once per process: large blocks (libbpf's copy of the kernel BTF, read for
// every object) stay on the heap and are reused instead of page-faulted in
// anew. LoadAndAttach calls it; call it before loading objects otherwise.
void KeepLargeAllocationsOnTheHeap();

}  // namespace perfgate
