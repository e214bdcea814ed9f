// The stacks behind on-CPU samples, captured by the profile probe, for the
// evidence reports (where a slower workload spends its CPU).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace perfgate {

// A thread's user registers and the top of its user stack at one sample,
// copied so that a stack without frame pointers can be unwound after the
// run from the unwind tables of the mapped files (symbolize/dwarf_unwind.h).
struct UserStackCopy {
  static constexpr size_t kRegisters = 17;
  static constexpr size_t kStackPointer = 7;
  static constexpr size_t kInstructionPointer = 16;
  // DWARF's x86_64 numbering: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip.
  std::array<uint64_t, kRegisters> regs{};
  std::vector<uint8_t> stack;  // the bytes from regs[kStackPointer] up
};

// Samples of one process at one (kernel, user) stack pair.
struct SampledStack {
  uint32_t tgid = 0;
  uint64_t samples = 0;
  // Instruction pointers, innermost first; empty when not captured (user
  // stacks of kernel threads, kernel stacks of samples taken in user mode).
  std::vector<uint64_t> kernel_ips;
  std::vector<uint64_t> user_ips;
  // Copies of the user stack at some of these samples (the probe parameter
  // user_stack_bytes; at most a sample of them where there are very many):
  // each stands for samples / copies.size() of them.
  std::vector<UserStackCopy> copies;
};

// Implemented by the profile probe: dynamic_cast a Probe* from CreateProbe("profile").
class ProfileStackSource {
 public:
  virtual ~ProfileStackSource() = default;
  // Every stack sampled in the repetition just collected; the user stack
  // copies are handed over, not kept.
  virtual std::vector<SampledStack> SampledStacks() = 0;
  // The sampling frequency the probe was attached with.
  virtual int frequency_hz() const = 0;
  // The perf event sampled: "cycles" or "cpu-clock"; empty before Attach().
  virtual const std::string& sampled_event() const = 0;
};

}  // namespace perfgate
