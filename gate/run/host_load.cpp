#include "run/host_load.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "metrics/metric.h"

namespace perfgate {

std::optional<CpuTimes> ParseProcStat(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu ", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guest
    // time is already included in user and nice.
    uint64_t v[8] = {};
    int n = 0;
    while (n < 8 && fields >> v[n]) ++n;
    if (n < 4) return std::nullopt;
    CpuTimes t;
    t.busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    t.steal_ticks = v[7];
    return t;
  }
  return std::nullopt;
}

std::optional<CpuTimes> ReadCpuTimes() {
  std::ifstream in("/proc/stat");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return ParseProcStat(text.str());
}

std::optional<uint64_t> ParsePressureSome(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("some ", 0) != 0) continue;
    const size_t at = line.find("total=");
    if (at == std::string::npos) return std::nullopt;
    try {
      return std::stoull(line.substr(at + 6));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

namespace {

std::optional<uint64_t> ReadPressureFile(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return ParsePressureSome(text.str());
}

}  // namespace

PressureTotals ReadPressure() {
  return {ReadPressureFile("/proc/pressure/cpu"), ReadPressureFile("/proc/pressure/memory"),
          ReadPressureFile("/proc/pressure/io")};
}

double StealCpus(const CpuTimes& before, const CpuTimes& after, double wall_s) {
  static const double kTicksPerSecond = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (wall_s <= 0 || after.steal_ticks < before.steal_ticks) return 0;
  return static_cast<double>(after.steal_ticks - before.steal_ticks) / kTicksPerSecond / wall_s;
}

std::string TaintOf(const MetricSet& metrics, int cpu_count) {
  const auto value = [&](const char* name) -> std::optional<double> {
    auto it = metrics.find(name);
    if (it == metrics.end()) return std::nullopt;
    return it->second.value;
  };
  char text[160];
  if (auto steal = value(kHostStealCpus); steal && *steal > kTaintStealCpus) {
    std::snprintf(text, sizeof text, "the hypervisor stole %.2f CPUs", *steal);
    return text;
  }
  const auto other = value(kHostOtherCpus);
  const auto cpu = value(kWorkloadCpuTime);
  const auto wall = value(kWorkloadWallTime);
  const auto behind = value(kHostRunqWaitBehindOthers);
  if (behind && wall && *wall > 0 && *behind > kTaintBehindOthersCpus * *wall) {
    std::snprintf(text, sizeof text,
                  "the workload waited %.3g s (%.0f %% of its wall time) for CPUs running other tasks", *behind,
                  100 * *behind / *wall);
    return text;
  }
  if (!other || !cpu || !wall || !(*wall > 0) || cpu_count <= 0) return "";
  const double spare = cpu_count - *other - *cpu / *wall;
  if (*other > kTaintOtherCpus && spare < kTaintSpareCpus) {
    std::snprintf(text, sizeof text, "other work kept %.2f of %d CPUs busy, leaving %.2f idle", *other, cpu_count,
                  std::max(0.0, spare));
    return text;
  }
  return "";
}

bool SawTheSameLoad(const std::vector<const MetricSet*>& arms) {
  const auto spread = [&](auto value_of) {
    double low = HUGE_VAL, high = -HUGE_VAL;
    for (const MetricSet* metrics : arms) {
      if (const std::optional<double> v = value_of(*metrics)) {
        low = std::min(low, *v);
        high = std::max(high, *v);
      }
    }
    return high >= low ? high - low : 0.0;
  };
  const auto metric = [](const char* name) {
    return [name](const MetricSet& metrics) -> std::optional<double> {
      auto it = metrics.find(name);
      if (it == metrics.end()) return std::nullopt;
      return it->second.value;
    };
  };
  const auto behind_cpus = [](const MetricSet& metrics) -> std::optional<double> {
    auto behind = metrics.find(kHostRunqWaitBehindOthers);
    auto wall = metrics.find(kWorkloadWallTime);
    if (behind == metrics.end() || wall == metrics.end() || !(wall->second.value > 0)) return std::nullopt;
    return behind->second.value / wall->second.value;
  };
  return arms.size() > 1 && spread(metric(kHostOtherCpus)) <= kSameLoadCpus &&
         spread(metric(kHostStealCpus)) <= kSameLoadCpus && spread(behind_cpus) <= kSameLoadCpus;
}

double OtherCpus(const CpuTimes& before, const CpuTimes& after, double workload_cpu_s, double wall_s) {
  static const double kTicksPerSecond = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (wall_s <= 0 || after.busy_ticks < before.busy_ticks) return 0;
  const double busy_s = static_cast<double>(after.busy_ticks - before.busy_ticks) / kTicksPerSecond;
  return std::max(0.0, (busy_s - workload_cpu_s) / wall_s);
}

}  // namespace perfgate
