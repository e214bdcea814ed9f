// The stacks behind off-CPU time, captured by the offcpu probe when its
// `stacks` parameter is true, for reports that explain where a workload waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace perfgate {

// Off-CPU time of one process spent at one (kernel, user) stack pair.
struct OffCpuStack {
  uint32_t tgid = 0;
  uint64_t time_ns = 0;  // summed over the waits that ended in the repetition
  uint64_t count = 0;    // waits
  // Still runnable when switched out (preempted, or yielded): waiting for a
  // CPU rather than blocked at this stack.
  bool preempted = false;
  // Ids in the probe's stack map, valid until its next Reset(); negative when
  // the stack was not captured.
  int32_t kernel_stack_id = -1;
  int32_t user_stack_id = -1;
  // Instruction pointers, innermost first; empty when not captured (user
  // stacks of kernel threads, stacks without frame pointers).
  std::vector<uint64_t> kernel_ips;
  std::vector<uint64_t> user_ips;
};

// Implemented by the offcpu probe: dynamic_cast a Probe* from CreateProbe("offcpu").
class OffCpuStackSource {
 public:
  virtual ~OffCpuStackSource() = default;
  // The `n` stacks with the most off-CPU time in the repetition just
  // collected, most first; empty unless attached with `stacks: true`.
  virtual std::vector<OffCpuStack> TopOffCpuStacks(size_t n) const = 0;
};

// The `n` entries with the most time, most first (ties: more waits first, then lower tgid).
std::vector<OffCpuStack> MostOffCpuTime(std::vector<OffCpuStack> stacks, size_t n);

}  // namespace perfgate
