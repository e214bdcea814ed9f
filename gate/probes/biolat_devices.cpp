#include "probes/biolat_devices.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace perfgate {

namespace {
constexpr uint32_t kMinorBits = 20;
constexpr uint32_t kMinorMask = (1u << kMinorBits) - 1;
}  // namespace

BlockDeviceNumber SplitKernelDev(uint32_t dev) { return {dev >> kMinorBits, dev & kMinorMask}; }

uint32_t KernelDev(BlockDeviceNumber number) { return (number.major << kMinorBits) | (number.minor & kMinorMask); }

std::string DevNameFromUevent(const std::string& uevent) {
  std::istringstream lines(uevent);
  std::string line;
  const std::string key = "DEVNAME=";
  while (std::getline(lines, line)) {
    if (line.compare(0, key.size(), key) == 0) return line.substr(key.size());
  }
  return "";
}

std::string MetricSafeDeviceName(const std::string& name) {
  std::string safe;
  safe.reserve(name.size());
  for (unsigned char c : name) {
    char lower = static_cast<char>(std::tolower(c));
    bool keep = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') || lower == '_' || lower == '-';
    safe += keep ? lower : '_';
  }
  return safe;
}

std::string BlockDeviceName(uint32_t kernel_dev, const std::string& sysfs_root) {
  BlockDeviceNumber number = SplitKernelDev(kernel_dev);
  std::string numbers = std::to_string(number.major) + ":" + std::to_string(number.minor);
  std::ifstream in(sysfs_root + "/dev/block/" + numbers + "/uevent");
  std::stringstream text;
  text << in.rdbuf();
  std::string name = MetricSafeDeviceName(DevNameFromUevent(text.str()));
  if (!name.empty()) return name;
  return "dev" + std::to_string(number.major) + "_" + std::to_string(number.minor);
}

}  // namespace perfgate
