#include "run/host_load.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

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

double OtherCpus(const CpuTimes& before, const CpuTimes& after, double workload_cpu_s, double wall_s) {
  static const double kTicksPerSecond = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (wall_s <= 0 || after.busy_ticks < before.busy_ticks) return 0;
  const double busy_s = static_cast<double>(after.busy_ticks - before.busy_ticks) / kTicksPerSecond;
  return std::max(0.0, (busy_s - workload_cpu_s) / wall_s);
}

}  // namespace perfgate
