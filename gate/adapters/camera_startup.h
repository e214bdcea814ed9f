// The `camera-startup` adapter: runs perfgate's camera cold-start simulator
// (workloads/camera-startup, built as pg-camera next to perfgate) and reads
// the metrics it prints as JSON lines.
//
// Keys: "binary" (the simulator, default pg-camera in perfgate's directory),
// "scratch_dir" (its cache directory for the app's files, --cache-dir),
// "memory_limit_mb" (run in a new memory cgroup with this limit; needs root),
// "antagonist" (true: a background allocator in the same cgroup; needs
// memory_limit_mb), "args" (more simulator options, e.g. ["--frames", "60"]).
//
// Metrics (ms, lower is better): camera.time_to_first_frame,
// camera.phase.<load_libraries|load_tuning|allocate_buffers|start_pipeline|first_frame>,
// camera.frame_interval_p50/_p90/_p99/_max; camera.dropped_frames (count).
#pragma once

#include "adapters/adapter.h"

namespace perfgate {

class CameraStartupAdapter : public WorkloadAdapter {
 public:
  std::string kind() const override { return "camera-startup"; }
  std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const override;
  WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const override;
};

}  // namespace perfgate
