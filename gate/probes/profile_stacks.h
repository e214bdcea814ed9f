// The stacks behind on-CPU samples, captured by the profile probe, for the
// evidence reports (where a slower workload spends its CPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perfgate {

// Samples of one process at one (kernel, user) stack pair.
struct SampledStack {
  uint32_t tgid = 0;
  uint64_t samples = 0;
  // Instruction pointers, innermost first; empty when not captured (user
  // stacks of kernel threads, kernel stacks of samples taken in user mode).
  std::vector<uint64_t> kernel_ips;
  std::vector<uint64_t> user_ips;
};

// Implemented by the profile probe: dynamic_cast a Probe* from CreateProbe("profile").
class ProfileStackSource {
 public:
  virtual ~ProfileStackSource() = default;
  // Every stack sampled in the repetition just collected.
  virtual std::vector<SampledStack> SampledStacks() const = 0;
  // The sampling frequency the probe was attached with.
  virtual int frequency_hz() const = 0;
  // The perf event sampled: "cycles" or "cpu-clock"; empty before Attach().
  virtual const std::string& sampled_event() const = 0;
};

}  // namespace perfgate
