// The futex words that user threads waited on longest, collected by the
// futex probe, for reports that say which lock a workload contends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace perfgate {

// What the kernel sums per (process, futex word, waiting user stack).
struct FutexWaitSum {
  uint32_t tgid = 0;
  uint64_t uaddr = 0;          // 0 for futex_waitv(), whose words are not read
  int32_t user_stack_id = -1;  // negative when not captured
  uint64_t time_ns = 0;
  uint64_t count = 0;
};

// Wait time of one process on one futex word (a mutex, a condition
// variable, a thread being joined), over the repetition just collected.
struct ContendedFutex {
  uint32_t tgid = 0;
  uint64_t uaddr = 0;
  uint64_t time_ns = 0;
  uint64_t count = 0;  // waits
  // With `stacks`: the waiting user stack with the most time on this word
  // (id in the probe's stack map until its next Reset(), and its instruction
  // pointers, innermost first); -1 and empty otherwise.
  int32_t user_stack_id = -1;
  std::vector<uint64_t> user_ips;
};

// Implemented by the futex probe: dynamic_cast a Probe* from CreateProbe("futex").
class FutexContentionSource {
 public:
  virtual ~FutexContentionSource() = default;
  // The `n` futex words with the most wait time, most first.
  virtual std::vector<ContendedFutex> TopContendedFutexes(size_t n) const = 0;
};

// Sums per (tgid, uaddr) and keeps the `n` with the most time, most first
// (ties: more waits, then lower tgid, then lower address); each keeps the id
// of its stack with the most time.
std::vector<ContendedFutex> MostContendedFutexes(const std::vector<FutexWaitSum>& sums, size_t n);

}  // namespace perfgate
