#include "adapters/camera_startup.h"

#include <unistd.h>

#include <filesystem>

#include "adapters/command.h"
#include "adapters/tool_output.h"
#include "metrics/error.h"

namespace perfgate {

std::vector<std::string> CameraStartupAdapter::LaunchArgv(const WorkloadSpec& spec) const {
  RequireOnlyOptions(spec, {"binary", "scratch_dir", "memory_limit_mb", "antagonist"});
  std::string binary = PerfgateDir() + "/pg-camera";
  if (auto it = spec.options.find("binary"); it != spec.options.end()) binary = it->second;
  std::filesystem::path path = binary;
  if (path.is_relative() && !spec.cwd.empty()) path = std::filesystem::path(spec.cwd) / path;
  if (access(path.c_str(), X_OK) != 0 || std::filesystem::is_directory(path)) {
    throw InfraError("camera-startup workload: simulator " + binary +
                     " not found or not executable (build the pg-camera target, or set \"binary\")");
  }
  std::vector<std::string> argv = {binary};
  if (auto it = spec.options.find("scratch_dir"); it != spec.options.end()) {
    argv.insert(argv.end(), {"--cache-dir", it->second});
  }
  auto limit = spec.options.find("memory_limit_mb");
  if (limit != spec.options.end()) argv.insert(argv.end(), {"--memory-limit-mb", limit->second});
  if (auto it = spec.options.find("antagonist"); it != spec.options.end() && it->second == "true") {
    if (limit == spec.options.end()) {
      throw InputError("camera-startup workload: \"antagonist\" needs \"memory_limit_mb\" (the cgroup it shares)");
    }
    argv.push_back("--antagonist");
  }
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  return argv;
}

WorkloadOutput CameraStartupAdapter::ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const {
  auto binary = spec.options.find("binary");
  const std::string source =
      "camera simulator output (" + (binary == spec.options.end() ? std::string("pg-camera") : binary->second) + ")";
  WorkloadOutput out = ParseCommandJsonLines(stdout_text, source);
  if (!out.metrics.count("camera.time_to_first_frame")) {
    throw InfraError(source + ": no camera.time_to_first_frame line; is it the camera simulator?");
  }
  return out;
}

}  // namespace perfgate
