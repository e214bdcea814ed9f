// Reading and zeroing the single-slot per-CPU arrays that hold each probe's
// aggregates (bpf/stats.h).
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "probes/features.h"

namespace perfgate {

// Every CPU's copy of slot 0 of a BPF_MAP_TYPE_PERCPU_ARRAY whose value is T.
template <class T>
std::vector<T> ReadPerCpu(int map_fd, const std::string& what) {
  // The kernel lays per-CPU values out 8-byte aligned; our structs are u64 only.
  static_assert(sizeof(T) % 8 == 0);
  int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) throw InfraError(what + ": cannot count possible CPUs: " + ErrnoText(-cpus));
  std::vector<T> values(static_cast<size_t>(cpus));
  const uint32_t zero = 0;
  if (bpf_map_lookup_elem(map_fd, &zero, values.data()) != 0)
    throw InfraError(what + ": read per-CPU map: " + ErrnoText(errno));
  return values;
}

// Every CPU's copy of slot 0 added up field by field: the stats structs are
// __u64 fields only (bpf/stats.h), histogram buckets included.
template <class T>
T ReadPerCpuTotal(int map_fd, const std::string& what) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % sizeof(uint64_t) == 0);
  constexpr size_t kWords = sizeof(T) / sizeof(uint64_t);
  std::array<uint64_t, kWords> total{};
  for (const T& cpu : ReadPerCpu<T>(map_fd, what)) {
    std::array<uint64_t, kWords> words;
    std::memcpy(words.data(), &cpu, sizeof(T));
    for (size_t i = 0; i < kWords; ++i) total[i] += words[i];
  }
  T out;
  std::memcpy(&out, total.data(), sizeof(T));
  return out;
}

template <class T>
void ZeroPerCpu(int map_fd, const std::string& what) {
  static_assert(sizeof(T) % 8 == 0);
  int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) throw InfraError(what + ": cannot count possible CPUs: " + ErrnoText(-cpus));
  std::vector<T> zeros(static_cast<size_t>(cpus));
  const uint32_t zero = 0;
  if (bpf_map_update_elem(map_fd, &zero, zeros.data(), BPF_ANY) != 0)
    throw InfraError(what + ": reset per-CPU map: " + ErrnoText(errno));
}

}  // namespace perfgate
