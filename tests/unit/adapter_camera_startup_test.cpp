// The camera-startup adapter: the simulator's command line from the scenario's
// keys, and its JSON-lines output (tests/fixtures/camera-startup: a real
// pg-camera run in an 80 MiB memory cgroup).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "adapters/adapter.h"
#include "adapters/camera_startup.h"
#include "base/error.h"
#include "harness/files.h"

namespace perfgate {
namespace {

const testing::FixtureDir CameraFixture("camera-startup");

WorkloadSpec CameraSpec() {
  WorkloadSpec spec;
  spec.kind = "camera-startup";
  spec.options["binary"] = "/bin/true";  // any executable stands in for pg-camera here
  return spec;
}

Error LaunchError(const WorkloadSpec& spec) {
  try {
    CameraStartupAdapter().LaunchArgv(spec);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return InfraError("");
}

TEST(CameraStartupAdapter, KeysBecomeSimulatorOptions) {
  WorkloadSpec spec = CameraSpec();
  spec.options["scratch_dir"] = "/var/cache/cam";
  spec.options["memory_limit_mb"] = "96";
  spec.options["antagonist"] = "true";
  spec.argv = {"--frames", "60"};
  EXPECT_EQ(CameraStartupAdapter().LaunchArgv(spec),
            (std::vector<std::string>{"/bin/true", "--cache-dir", "/var/cache/cam", "--frames", "60"}));
}

// The memory limit is the cold start's mechanism, not a simulator option.
TEST(CameraStartupAdapter, MemoryLimitAndAntagonistAreTheColdStartsCgroup) {
  WorkloadSpec spec = CameraSpec();
  EXPECT_FALSE(CameraStartupAdapter().MemoryLimitOf(spec));
  spec.options["memory_limit_mb"] = "96";
  spec.options["antagonist"] = "true";
  const std::optional<MemoryLimit> limit = CameraStartupAdapter().MemoryLimitOf(spec);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->limit_mb, 96);
  EXPECT_TRUE(limit->antagonist);
}

// Ready at the first frame; the frames then stream on to the simulator's end.
TEST(CameraStartupAdapter, ReadyAtTheFirstFramePhaseAndRunsOn) {
  const std::unique_ptr<ReadinessMarker> ready = CameraStartupAdapter().Readiness(CameraSpec());
  ASSERT_TRUE(ready);
  EXPECT_FALSE(ready->stop_when_ready());
  EXPECT_FALSE(ready->OnOutput(OutputStream::kStdout, R"({"phase": "start_pipeline", "begin_ns": 1, "end_ns": 2})"
                                                      "\n"));
  EXPECT_TRUE(ready->OnOutput(OutputStream::kStdout, R"({"phase": "first_frame", "begin_ns": 2, "end_ns": 3})"
                                                     "\n"));
}

TEST(CameraStartupAdapter, AntagonistNeedsTheMemoryLimitItShares) {
  WorkloadSpec spec = CameraSpec();
  spec.options["antagonist"] = "true";
  Error e = LaunchError(spec);
  EXPECT_EQ(e.code(), ExitCode::kBadInput);
  EXPECT_NE(std::string(e.what()).find("needs \"memory_limit_mb\""), std::string::npos) << e.what();
}

TEST(CameraStartupAdapter, MissingSimulatorSaysWhichTargetBuildsIt) {
  WorkloadSpec spec = CameraSpec();
  spec.options["binary"] = "/nonexistent/pg-camera";
  Error e = LaunchError(spec);
  EXPECT_EQ(e.code(), ExitCode::kInfra);
  EXPECT_NE(std::string(e.what()).find("build the pg-camera target"), std::string::npos) << e.what();
}

TEST(CameraStartupAdapter, OptionsOfOtherKindsAreRefused) {
  WorkloadSpec spec = CameraSpec();
  spec.options["job"] = "x.fio";
  Error e = LaunchError(spec);
  EXPECT_EQ(e.code(), ExitCode::kBadInput);
  EXPECT_NE(std::string(e.what()).find("\"job\" does not apply"), std::string::npos) << e.what();
}

TEST(CameraStartupOutput, RealRunGivesTimeToFirstFramePhasesAndFrameIntervals) {
  WorkloadOutput out = CameraStartupAdapter().ParseOutput(CameraFixture("cold-start.txt"), CameraSpec());
  const Metric& ttff = out.metrics.at("camera.time_to_first_frame");
  EXPECT_EQ(ttff.unit, "ms");
  EXPECT_EQ(ttff.better, Better::kLower);
  double phases = 0;
  for (const char* phase : {"load_libraries", "load_tuning", "allocate_buffers", "start_pipeline", "first_frame"}) {
    phases += out.metrics.at(std::string("camera.phase.") + phase).value;
  }
  // The phases are consecutive and end at the first frame.
  EXPECT_NEAR(phases, ttff.value, 1e-3);
  EXPECT_LE(out.metrics.at("camera.frame_interval_p50").value, out.metrics.at("camera.frame_interval_p99").value);
  EXPECT_LE(out.metrics.at("camera.frame_interval_p99").value, out.metrics.at("camera.frame_interval_max").value);
  EXPECT_TRUE(out.metrics.count("camera.dropped_frames"));
}

TEST(CameraStartupOutput, OutputWithoutTimeToFirstFrameIsAnInfraError) {
  try {
    CameraStartupAdapter().ParseOutput("{\"metric\": \"app.x\", \"value\": 1}\n", CameraSpec());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    EXPECT_NE(std::string(e.what()).find("camera simulator output (/bin/true)"), std::string::npos) << e.what();
  }
  try {
    CameraStartupAdapter().ParseOutput("{\"metric\": \"camera.time_to_first_frame\", \"value\": \"soon\"}\n",
                                       CameraSpec());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 1: \"value\" must be a finite number"), std::string::npos) << e.what();
  }
}

TEST(AdapterRegistry, EveryWorkloadKindHasOneAdapter) {
  EXPECT_EQ(AdapterKinds(),
            (std::vector<std::string>{"command", "camera-startup", "cold-start", "fio", "unixbench", "gbench"}));
  for (const auto& kind : AdapterKinds()) EXPECT_EQ(FindAdapter(kind)->kind(), kind);
  EXPECT_EQ(FindAdapter("fio2"), nullptr);
}

TEST(CommandAdapter, KeysOfOtherKindsAreRefused) {
  WorkloadSpec spec;
  spec.argv = {"/bin/true"};
  spec.options["job"] = "x.fio";
  try {
    FindAdapter("command")->LaunchArgv(spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("\"job\" does not apply to command workloads"), std::string::npos);
  }
}

}  // namespace
}  // namespace perfgate
