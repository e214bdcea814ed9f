// The `camera-startup` adapter: a cold start (cold_start.h) of perfgate's
// camera simulator (workloads/camera-startup, built as pg-camera next to
// perfgate), with defaults of its own: ready when the simulator's
// "first_frame" phase line comes, and its frame stream then runs to its end
// ("after_ready": "wait"), so the frame metrics it prints at exit are kept.
//
// Keys: binary, scratch_dir, and "args" (more simulator options, e.g.
// ["--frames", "60"]); every cold-start key (ready, after_ready, evict,
// drop_caches, memory_limit_mb, antagonist) with the defaults above.
//
// Metrics (ms, lower is better): camera.time_to_first_frame,
// camera.phase.<load_libraries|load_tuning|allocate_buffers|start_pipeline|first_frame>,
// camera.frame_interval_p50/_p90/_p99/_max; camera.dropped_frames (count);
// and the cold start's: coldstart.time_to_ready (exec to the first frame),
// coldstart.major_faults, coldstart.disk_read_bytes, coldstart.phase.<phase>.
#pragma once

#include "adapters/cold_start.h"

namespace perfgate {

class CameraStartupAdapter : public ColdStartAdapter {
 public:
  std::string kind() const override { return "camera-startup"; }
  const WorkloadKeys& keys() const override;
  std::vector<MetricDeclaration> metrics() const override;
  std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const override;
  WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const override;
};

}  // namespace perfgate
