// "Who held the CPU": tasks of other processes that ran on the CPUs the
// workload's threads waited for (the runqlat probe, workload scope), by
// comm. Comms come from other processes: any byte but NUL, so they are made
// printable here and escaped by every reporter.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace perfgate {

struct Repetition;

struct CpuHolder {
  std::string comm;
  double seconds = 0;  // time it ran while a workload thread waited for that CPU
};

// How many holders a repetition keeps, and a report names.
inline constexpr size_t kTopCpuHolders = 5;

// A comm as the kernel keeps it (at most `size` bytes, NUL-terminated or
// -padded), with every byte outside printable ASCII as '?'.
std::string PrintableComm(const char* comm, size_t size);

// The `n` largest entries, largest first; ties in comm order. Zero times are left out.
std::vector<CpuHolder> TopCpuHolders(const std::map<std::string, double>& seconds_by_comm, size_t n);

// The `n` largest holders of a scenario's measured repetitions (warm-ups and
// failed ones left out), each comm's time summed over them.
std::vector<CpuHolder> TopCpuHolders(const std::vector<Repetition>& repetitions, size_t n);

// "cc1plus 120 ms, make 30.0 ms": each holder with its time. Not escaped.
std::string DescribeCpuHolders(const std::vector<CpuHolder>& holders);

}  // namespace perfgate
