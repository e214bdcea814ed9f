// The `camera-startup` adapter: runs perfgate's camera cold-start simulator
// (workloads/camera-startup, built as pg-camera next to perfgate) and reads
// the metrics it prints as JSON lines.
//
// Keys: declared in keys() (binary, scratch_dir, memory_limit_mb,
// antagonist), and "args" (more simulator options, e.g. ["--frames", "60"]).
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
  const WorkloadKeys& keys() const override;
  std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const override;
  WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const override;
};

}  // namespace perfgate
