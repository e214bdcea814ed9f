#include "metrics/cpu_holders.h"

#include <algorithm>

#include "base/quantity.h"
#include "metrics/results.h"

namespace perfgate {

std::string PrintableComm(const char* comm, size_t size) {
  std::string out;
  for (size_t i = 0; i < size && comm[i] != '\0'; ++i) {
    const auto c = static_cast<unsigned char>(comm[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  return out;
}

std::vector<CpuHolder> TopCpuHolders(const std::map<std::string, double>& seconds_by_comm, size_t n) {
  std::vector<CpuHolder> all;
  for (const auto& [comm, seconds] : seconds_by_comm) {
    if (seconds > 0) all.push_back({comm, seconds});
  }
  // std::map iterates in comm order, and stable_sort keeps it among equal times.
  std::stable_sort(all.begin(), all.end(),
                   [](const CpuHolder& a, const CpuHolder& b) { return a.seconds > b.seconds; });
  if (all.size() > n) all.resize(n);
  return all;
}

std::vector<CpuHolder> TopCpuHolders(const std::vector<Repetition>& repetitions, size_t n) {
  std::map<std::string, double> sum;
  for (const Repetition& rep : repetitions) {
    if (!rep.measured()) continue;
    for (const CpuHolder& h : rep.cpu_holders) sum[h.comm] += h.seconds;
  }
  return TopCpuHolders(sum, n);
}

std::string DescribeCpuHolders(const std::vector<CpuHolder>& holders) {
  std::string text;
  for (const CpuHolder& h : holders) text += (text.empty() ? "" : ", ") + h.comm + " " + FormatQuantity(h.seconds, "s");
  return text;
}

}  // namespace perfgate
