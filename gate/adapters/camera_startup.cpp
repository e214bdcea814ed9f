#include "adapters/camera_startup.h"

#include <unistd.h>

#include <filesystem>
#include <memory>

#include "adapters/command.h"
#include "adapters/tool_output.h"
#include "base/error.h"

namespace perfgate {

const WorkloadKeys& CameraStartupAdapter::keys() const {
  static const WorkloadKeys kKeys = [] {
    WorkloadKeys k{.argv = false, .args = true, .shell = false};
    k.keys = {
        {"binary", WorkloadKeyType::kString, "", false, "the simulator (default: pg-camera in perfgate's directory)"},
        {"scratch_dir", WorkloadKeyType::kString, "", false, "its cache directory for the app's files (--cache-dir)"},
    };
    for (auto& key : ColdStartKeys(R"({"phase":"first_frame"})", "wait")) k.keys.push_back(std::move(key));
    return k;
  }();
  return kKeys;
}

std::vector<std::string> CameraStartupAdapter::LaunchArgv(const WorkloadSpec& spec) const {
  const WorkloadOptions options = Options(spec);
  const std::string binary = options.Find("binary").value_or(PerfgateDir() + "/pg-camera");
  std::filesystem::path path = binary;
  if (path.is_relative() && !spec.cwd.empty()) path = std::filesystem::path(spec.cwd) / path;
  if (access(path.c_str(), X_OK) != 0 || std::filesystem::is_directory(path)) {
    throw InfraError("camera-startup workload: simulator " + binary +
                     " not found or not executable (build the pg-camera target, or set \"binary\")");
  }
  // The memory limit and antagonist are the cold start's (MemoryLimitOf), checked here too.
  MemoryLimitOf(spec);
  std::vector<std::string> argv = {binary};
  if (auto dir = options.Find("scratch_dir")) argv.insert(argv.end(), {"--cache-dir", *dir});
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  return argv;
}

WorkloadOutput CameraStartupAdapter::ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const {
  const std::string source = "camera simulator output (" + Options(spec).Find("binary").value_or("pg-camera") + ")";
  WorkloadOutput out = ParseStartOutput(stdout_text, source);
  if (!out.metrics.count("camera.time_to_first_frame")) {
    throw InfraError(source + ": no camera.time_to_first_frame line; is it the camera simulator?");
  }
  return out;
}

std::vector<MetricDeclaration> CameraStartupAdapter::metrics() const {
  std::vector<MetricDeclaration> out = ColdStartAdapter::metrics();
  out.insert(out.end(),
             {
                 OutcomeScalar("camera.time_to_first_frame", "ms", Better::kLower, "exec to the first frame shown"),
                 OutcomeScalar("camera.<metric>", kUnitAsReported, Better::kLower,
                               "what the camera app reports of itself: its phases (camera.phase.<phase>), frame "
                               "intervals, dropped frames"),
             });
  return out;
}

std::unique_ptr<WorkloadAdapter> MakeCameraStartupAdapter() { return std::make_unique<CameraStartupAdapter>(); }

}  // namespace perfgate
