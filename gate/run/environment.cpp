#include "run/environment.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "base/version.h"

namespace perfgate {

namespace {

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

std::string UtcTimestamp() {
  time_t now = time(nullptr);
  tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

Environment CaptureEnvironment() {
  Environment e;
  utsname u{};
  if (uname(&u) == 0) {
    e.kernel = std::string(u.release) + " " + u.machine;
    e.hostname = u.nodename;
  }
  e.cpu_model = CpuModel();
  e.cpu_count = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  e.perfgate_version = PerfgateVersion();
  e.git_commit = PerfgateGitCommit();
  e.timestamp = UtcTimestamp();
  return e;
}

}  // namespace perfgate
