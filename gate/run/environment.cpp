#include "run/environment.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/version.h"

namespace perfgate {

namespace {

// The value of a "key : value" line of /proc/cpuinfo, or nullopt for another key.
std::optional<std::string> CpuinfoValue(const std::string& line, const std::string& key) {
  if (line.rfind(key, 0) != 0) return std::nullopt;
  const auto colon = line.find(':', key.size());
  if (colon == std::string::npos || line.find_first_not_of(" \t", key.size()) != colon) return std::nullopt;
  const auto start = line.find_first_not_of(" \t", colon + 1);
  return start == std::string::npos ? std::string() : line.substr(start);
}

// Arm's implementer codes and the parts of Arm Ltd's own cores (the MIDR's
// fields, as /proc/cpuinfo prints them); others are named by their codes.
std::string ArmCoreName(const std::string& implementer, const std::string& part) {
  static const std::map<std::string, std::string> kImplementers = {
      {"0x41", "ARM"},       {"0x42", "Broadcom"}, {"0x43", "Cavium"},    {"0x46", "Fujitsu"},
      {"0x48", "HiSilicon"}, {"0x4e", "NVIDIA"},   {"0x50", "APM"},       {"0x51", "Qualcomm"},
      {"0x53", "Samsung"},   {"0x61", "Apple"},    {"0x6d", "Microsoft"}, {"0xc0", "Ampere"}};
  static const std::map<std::string, std::string> kArmParts = {
      {"0xd03", "Cortex-A53"},  {"0xd04", "Cortex-A35"},  {"0xd05", "Cortex-A55"},  {"0xd07", "Cortex-A57"},
      {"0xd08", "Cortex-A72"},  {"0xd09", "Cortex-A73"},  {"0xd0a", "Cortex-A75"},  {"0xd0b", "Cortex-A76"},
      {"0xd0c", "Neoverse-N1"}, {"0xd0d", "Cortex-A77"},  {"0xd40", "Neoverse-V1"}, {"0xd41", "Cortex-A78"},
      {"0xd44", "Cortex-X1"},   {"0xd46", "Cortex-A510"}, {"0xd47", "Cortex-A710"}, {"0xd48", "Cortex-X2"},
      {"0xd49", "Neoverse-N2"}, {"0xd4d", "Cortex-A715"}, {"0xd4e", "Cortex-X3"},   {"0xd4f", "Neoverse-V2"},
      {"0xd80", "Cortex-A520"}, {"0xd81", "Cortex-A720"}, {"0xd82", "Cortex-X4"}};
  const auto who = kImplementers.find(implementer);
  std::string name = who != kImplementers.end() ? who->second : "implementer " + implementer;
  const auto core = kArmParts.find(part);
  if (implementer == "0x41" && core != kArmParts.end()) return name + " " + core->second;
  return name + " part " + part;
}

// The first line of a file of the board's name (a device tree's strings end in NUL).
std::string BoardName() {
  for (const char* path :
       {"/proc/device-tree/model", "/sys/firmware/devicetree/base/model", "/sys/class/dmi/id/product_name"}) {
    std::ifstream in(path);
    std::string text;
    std::getline(in, text);
    text = text.substr(0, text.find('\0'));
    while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
    if (!text.empty()) return text;
  }
  return "";
}

}  // namespace

std::string CpuModelFrom(const std::string& cpuinfo, const std::string& board) {
  std::istringstream in(cpuinfo);
  std::string line, implementer, hardware;
  std::vector<std::pair<std::string, int>> cores;  // by name, in the order first seen
  while (std::getline(in, line)) {
    if (auto v = CpuinfoValue(line, "model name"); v && !v->empty()) return *v;
    if (auto v = CpuinfoValue(line, "Hardware")) hardware = *v;
    if (auto v = CpuinfoValue(line, "CPU implementer")) implementer = *v;
    if (auto v = CpuinfoValue(line, "CPU part"); v && !implementer.empty()) {
      const std::string name = ArmCoreName(implementer, *v);
      auto it = std::find_if(cores.begin(), cores.end(), [&](const auto& c) { return c.first == name; });
      if (it == cores.end())
        cores.emplace_back(name, 1);
      else
        ++it->second;
    }
  }
  std::string kinds;
  for (const auto& [name, count] : cores)
    kinds += (kinds.empty() ? "" : " + ") + name + (cores.size() > 1 ? " x" + std::to_string(count) : "");
  std::string where = !board.empty() ? board : hardware;
  if (where.empty()) return kinds.empty() ? "unknown" : kinds;
  return kinds.empty() ? where : where + ": " + kinds;
}

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
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::ostringstream text;
  text << cpuinfo.rdbuf();
  e.cpu_model = CpuModelFrom(text.str(), BoardName());
  e.cpu_count = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  e.perfgate_version = PerfgateVersion();
  e.git_commit = PerfgateGitCommit();
  e.timestamp = UtcTimestamp();
  return e;
}

}  // namespace perfgate
