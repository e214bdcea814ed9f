// `perfgate run --trace` end to end, and the ring buffer's accounting at a
// high record rate: every record the probes produce is either read and
// written to the trace or counted as dropped, exactly.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "base/error.h"
#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/perfetto_trace.h"
#include "harness/probe.h"
#include "probes/probe.h"
#include "probes/trace_buffer.h"
#include "probes/tracker.h"
#include "report/perfetto_writer.h"

namespace perfgate {
namespace {

using testing::ReadFile;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFile;

// Writes the suite `suite_json` into `dir` and runs it with --trace; false
// (and the console as the failure) when the run did not pass.
bool RunTraced(const ScratchDir& dir, const std::string& suite_json) {
  const std::string suite = dir / "suite.json";
  WriteFile(suite, suite_json);
  testing::CliRun run = RunCli({"run", suite, "--baseline-dir", dir / "b", "--out", dir / "o", "--quiet", "--trace"});
  if (run.exit_code == 0) return true;
  ADD_FAILURE() << "exit " << run.exit_code << "\n" << run.output;
  return false;
}

// The run's trace, decoded; each problem the decoder found is a failure.
testing::DecodedTrace DecodedTraceOf(const ScratchDir& dir) {
  testing::DecodedTrace d = testing::DecodePerfettoTrace(ReadFile(dir / "o/trace.perfetto-trace"));
  for (const std::string& problem : d.problems) ADD_FAILURE() << problem;
  return d;
}

// The uuid of the (last) track named `name`; 0 when there is none.
uint64_t TrackNamed(const testing::DecodedTrace& d, const std::string& name) {
  uint64_t found = 0;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.name() == name) found = uuid;
  }
  return found;
}

TEST(TraceRun, CameraStartupTraceHasItsThreadsWaitsCountersAndPhases) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  ASSERT_TRUE(RunTraced(dir, R"({"name": "trace", "scenarios": [{
      "name": "camera", "workload": {"kind": "camera-startup"}, "warmup": 0, "repetitions": 2, "timeout_s": 60,
      "probes": ["offcpu", "syscalls", "kmem", "runqlat", "reclaim"],
      "checks": [{"metric": "camera.time_to_first_frame", "type": "budget", "max": 1000000}]}]})"));

  const auto results = nlohmann::json::parse(ReadFile(dir / "o/results.json"));
  const auto& summary = results["scenarios"][0]["trace"];
  ASSERT_TRUE(summary.is_object()) << results["scenarios"][0].dump();
  EXPECT_EQ(summary["file"], "trace.perfetto-trace");
  EXPECT_EQ(summary["received"].get<uint64_t>() + summary["dropped"].get<uint64_t>(),
            summary["produced"].get<uint64_t>());
  EXPECT_NE(ReadFile(dir / "o/summary.md").find("Perfetto trace of camera"), std::string::npos);

  const testing::DecodedTrace d = DecodedTraceOf(dir);
  int32_t camera_pid = 0;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_process() && t.process().process_name() == "pg-camera") camera_pid = t.process().pid();
  }
  EXPECT_NE(camera_pid, 0) << "no process track named pg-camera";
  std::set<int64_t> camera_threads;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_thread() && t.thread().pid() == camera_pid) camera_threads.insert(t.thread().tid());
  }
  std::map<std::string, int> slices;
  for (const auto& s : d.slices) {
    slices[s.name.rfind("off-CPU", 0) == 0 ? "off-CPU" : s.name.rfind("syscall", 0) == 0 ? "syscall" : s.name]++;
  }
  std::map<std::string, int> counter_values;  // by counter track name
  for (const auto& [track, values] : d.counters) counter_values[d.tracks.at(track).name()] += values.size();
  // The main thread and its sensor, ISP and preview threads.
  EXPECT_GE(camera_threads.size(), 2u);
  EXPECT_GE(slices["off-CPU"], 1);
  EXPECT_GE(slices["syscall"], 1);
  for (const char* phase : {"load_libraries", "load_tuning", "allocate_buffers", "start_pipeline", "first_frame"})
    EXPECT_EQ(slices[phase], 1) << phase;
  EXPECT_GE(counter_values["page allocations/s"], 1);
  EXPECT_GE(counter_values["run-queue latency"], 1);
}

// The first seed's case on one timeline: a background allocator in the
// camera's 80 MiB memory cgroup pushes the camera's own allocations into
// memcg reclaim, and the trace shows those reclaims on the camera's threads,
// inside the start-up its main thread reports (its phases).
TEST(TraceRun, CameraReclaimUnderMemoryPressureFallsInsideTheMainThreadsStartup) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  ASSERT_TRUE(RunTraced(dir, R"({"name": "trace", "scenarios": [{
      "name": "camera", "workload": {"kind": "camera-startup", "memory_limit_mb": 80, "antagonist": true},
      "warmup": 0, "repetitions": 2, "timeout_s": 90,
      "probes": ["reclaim", "kmem", "runqlat", "offcpu", "biolat"],
      "checks": [{"metric": "camera.time_to_first_frame", "type": "budget", "max": 1000000}]}]})"));

  const testing::DecodedTrace d = DecodedTraceOf(dir);

  // The start-up window: the phases the camera's main thread reported.
  const uint64_t phases = TrackNamed(d, "phases");
  ASSERT_NE(phases, 0u) << "no phases track";
  const perfetto::ThreadDescriptor* main_thread = d.ThreadOf(phases);
  ASSERT_NE(main_thread, nullptr) << "the phases track is not under a thread";
  EXPECT_EQ(main_thread->tid(), main_thread->pid()) << "the phases are not on the main thread";
  uint64_t startup_begin = UINT64_MAX, startup_end = 0;
  for (const auto& s : d.SlicesOn(phases)) {
    startup_begin = std::min(startup_begin, s.begin);
    startup_end = std::max(startup_end, s.end);
  }
  ASSERT_LT(startup_begin, startup_end);

  // The camera allocates its buffers and reads its files on the main thread
  // during the start-up: that is where its reclaims are. After the first
  // frame it keeps showing frames, and an allocation then may reclaim too
  // (one of about 200 reclaims in 1 of 20 runs on a loaded host): the
  // start-up holds at least three quarters, not all.
  int camera_reclaims = 0, inside = 0, main_thread_inside = 0;
  uint64_t camera_reclaim_ns = 0;
  for (const auto& s : d.slices) {
    if (s.name.find("reclaim") == std::string::npos || d.ProcessOf(s.track) != main_thread->pid()) continue;
    ++camera_reclaims;
    camera_reclaim_ns += s.end - s.begin;
    if (s.begin < startup_begin || s.end > startup_end) continue;
    ++inside;
    if (d.ThreadOf(s.track)->tid() == main_thread->tid()) ++main_thread_inside;
  }
  EXPECT_GE(main_thread_inside, 1) << "no reclaim of the main thread inside its start-up";
  EXPECT_GE(4 * inside, 3 * camera_reclaims)
      << inside << " of the camera's " << camera_reclaims << " reclaims inside its start-up";

  // The camera reads its libraries and tuning files after dropping them from
  // the page cache: block requests of its process while it starts.
  int block_requests = 0, during_startup = 0;
  for (const auto& s : d.slices) {
    if (d.tracks.at(s.track).name() != "block I/O") continue;
    EXPECT_EQ(d.ProcessOf(s.track), main_thread->pid());
    ++block_requests;
    if (s.begin >= startup_begin && s.end <= startup_end) ++during_startup;
  }
  EXPECT_GE(during_startup, 1) << block_requests << " block requests, none during the start-up";
  std::printf(
      "[ trace    ] %d reclaims on the camera's threads (%d in the start-up, %d of them on the main thread), "
      "%.2f ms, in a start-up of %.2f ms; %d block requests, %d during it\n",
      camera_reclaims, inside, main_thread_inside, static_cast<double>(camera_reclaim_ns) / 1e6,
      static_cast<double>(startup_end - startup_begin) / 1e6, block_requests, during_startup);
}

// Phases are not the camera's privilege: a plain command that prints phase
// lines gets them under its main thread, on the probes' clock, so its sleep
// shows as an off-CPU wait inside the phase it printed around it.
TEST(TraceRun, AnyWorkloadsPhasesLineUpWithItsThreadsWaits) {
  PERFGATE_REQUIRE_ROOT();
  PERFGATE_REQUIRE_ENVIRONMENT(testing::ToolAvailable("/usr/bin/python3 -c 'import time; time.monotonic_ns()'"),
                               "Debian's python3 (ci/install-deps.sh)");
  ScratchDir dir;
  ASSERT_TRUE(RunTraced(dir, R"({"name": "trace", "scenarios": [{
      "name": "app", "workload": {"kind": "command", "argv": ["/usr/bin/python3", "-c",
        "import json, time\nb = time.monotonic_ns()\nx = b'\\x01' * (32 << 20)\nm = time.monotonic_ns()\ntime.sleep(0.05)\ne = time.monotonic_ns()\nprint(json.dumps({'phase': 'allocate', 'begin_ns': b, 'end_ns': m}))\nprint(json.dumps({'phase': 'wait', 'begin_ns': m, 'end_ns': e}))\n"]},
      "warmup": 0, "repetitions": 2, "timeout_s": 60,
      "probes": ["offcpu"],
      "checks": [{"metric": "workload.wall_time", "type": "budget", "max": 1000000}]}]})"));

  const testing::DecodedTrace d = DecodedTraceOf(dir);
  const uint64_t phases = TrackNamed(d, "phases");
  ASSERT_NE(phases, 0u) << "no phases track";
  const perfetto::ThreadDescriptor* main_thread = d.ThreadOf(phases);
  ASSERT_NE(main_thread, nullptr);
  EXPECT_EQ(main_thread->tid(), main_thread->pid());
  std::map<std::string, testing::TraceSlice> by_name;
  for (const auto& s : d.SlicesOn(phases)) by_name[s.name] = s;
  ASSERT_TRUE(by_name.count("allocate") && by_name.count("wait")) << by_name.size() << " phases";
  const testing::TraceSlice& wait = by_name["wait"];

  bool sleep_inside = false;
  std::string waits;  // the main thread's, for the failure message
  for (const auto& s : d.slices) {
    const perfetto::ThreadDescriptor* thread = d.ThreadOf(s.track);
    if (thread == nullptr || thread->tid() != main_thread->tid() || s.track == phases) continue;
    waits += " " + s.name + " [" + std::to_string(s.begin) + ", " + std::to_string(s.end) + "]";
    if (s.name != "off-CPU: sleep") continue;
    // The sleep is at least 50 ms of the phase's own length.
    if (s.begin >= wait.begin && s.end <= wait.end && s.end - s.begin >= 45'000'000) sleep_inside = true;
  }
  EXPECT_TRUE(sleep_inside) << "no 50 ms off-CPU sleep of the main thread inside its \"wait\" phase [" << wait.begin
                            << ", " << wait.end << "]; its waits:" << waits << "; " << ReadFile(dir / "o/summary.md");
}

// `perfgate ab --trace`: both sides of the scenario traced into one file,
// the baseline's repetition first; each side's processes named after it,
// each with the syscalls it made, and results.json's counts both sides'.
TEST(TraceRun, AbTracesBothSidesInOneFileNamedAfterTheirSide) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  const std::string suite = dir / "suite.json";
  WriteFile(suite, R"({"name": "trace", "scenarios": [{
      "name": "app", "workload": {"kind": "command", "argv": ["/bin/sh", "-c", "sleep 0.0${DELAY}"]},
      "warmup": 0, "repetitions": 2, "timeout_s": 60, "probes": ["syscalls", "offcpu"],
      "checks": [{"metric": "workload.wall_time", "type": "budget", "max": 1000000}]}]})");
  const testing::CliRun ab = RunCli({"ab", suite, "--baseline-set", "DELAY=2", "--candidate-set", "DELAY=5", "--out",
                                     dir / "o", "--quiet", "--trace", "--trace-min-us", "0"});
  ASSERT_EQ(ab.exit_code, 0) << ab.output;
  const testing::DecodedTrace d = DecodedTraceOf(dir);
  std::map<std::string, int> processes;  // process name -> its slices
  std::map<int32_t, std::string> names;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_process()) names[t.process().pid()] = t.process().process_name();
  }
  for (const auto& slice : d.slices) {
    const std::optional<int32_t> pid = d.ProcessOf(slice.track);
    if (pid && names.count(*pid)) ++processes[names[*pid]];
  }
  int baseline = 0, candidate = 0;
  std::string seen;
  for (const auto& [name, slices] : processes) {
    seen += " \"" + name + "\" (" + std::to_string(slices) + " slices)";
    if (name.rfind("baseline: ", 0) == 0) baseline += slices;
    if (name.rfind("candidate: ", 0) == 0) candidate += slices;
    EXPECT_TRUE(name.rfind("baseline: ", 0) == 0 || name.rfind("candidate: ", 0) == 0) << name;
  }
  EXPECT_GT(baseline, 0) << seen;
  EXPECT_GT(candidate, 0) << seen;
  const nlohmann::json results = nlohmann::json::parse(ReadFile(dir / "o/results.json"));
  const nlohmann::json& trace = results["scenarios"][0]["trace"];
  EXPECT_EQ(trace["file"], "trace.perfetto-trace");
  EXPECT_EQ(trace["produced"].get<uint64_t>(), trace["received"].get<uint64_t>() + trace["dropped"].get<uint64_t>());
}

// A probe's trace paths are verified only when a trace is on, so each probe
// that writes records is loaded traced on every attach type this kernel has:
// the verifier must take its trace path in every variant of its programs.
TEST(TraceRingBuffer, EveryTracingProbeLoadsTracedOnEveryAttachType) {
  PERFGATE_REQUIRE_ROOT();
  TraceBuffer buffer(TraceSettings{});
  for (const char* name : {"reclaim", "offcpu", "syscalls", "kmem", "runqlat", "biolat"}) {
    for (AttachType type : {AttachType::kTpBtf, AttachType::kRawTp, AttachType::kTracepoint}) {
      SCOPED_TRACE(std::string(name) + " on " + ToString(type));
      WorkloadTracker tracker;
      tracker.Attach({});
      auto probe = CreateProbe(name);
      ProbeOptions options;
      options.scope = ProbeScope::kWorkload;
      options.trace = &buffer;
      options.allowed_attach_types = {type};
      try {
        probe->Attach(options, &tracker);
        for (const auto& hook : probe->Report().hooks) EXPECT_EQ(hook.attach_type, ToString(type)) << hook.hook;
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
      }
      probe->Detach();
      tracker.Detach();
    }
  }
}

struct HighRate {
  TraceCapture capture;
  double seconds = 0;      // wall time of the loops
  double cpu_seconds = 0;  // their CPU time
};

double ChildrenCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  auto s = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  return s(usage.ru_utime) + s(usage.ru_stime);
}

// The syscalls probe with every syscall a slice (threshold 0), around a
// getppid loop in two processes at once (one per CPU of a 2-CPU CI host,
// the consumer competing with them): one record per syscall.
HighRate TraceGetppidLoop(const TraceSettings& settings, int calls) {
  TraceBuffer buffer(settings);
  WorkloadTracker tracker;
  tracker.Attach({});
  auto probe = CreateProbe("syscalls");
  ProbeOptions options;
  options.scope = ProbeScope::kWorkload;
  options.trace = &buffer;
  probe->Attach(options, &tracker);
  HeldChild child([calls] {
    const pid_t other = fork();
    CallGetppid(calls / 2);
    if (other == 0) _exit(0);
    int status = 0;
    if (other < 0 || waitpid(other, &status, 0) != other || !WIFEXITED(status)) _exit(1);
  });
  tracker.Track(child.pid());
  probe->Reset();
  buffer.Start();
  const double cpu_before = ChildrenCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(child.RunToCompletion());
  HighRate out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.cpu_seconds = ChildrenCpuSeconds() - cpu_before;
  probe->Detach();
  tracker.Detach();
  out.capture = buffer.Finish();
  return out;
}

// Exact accounting at the highest rate this host reaches: every record is
// read or counted as dropped, and every record read is in the trace. The
// rate itself is a performance claim, measured side by side by
// bench/trace_overhead.sh (a unit test's timing would flake on a busy or
// sanitized build); this prints it.
TEST(TraceRingBuffer, HighRateRecordsAllWrittenOrCountedDropped) {
  PERFGATE_REQUIRE_ROOT();
  TraceSettings settings;
  settings.slow_syscall_ns = 0;
  settings.buffer_bytes = TraceBufferBytes(2e6, settings.poll_interval_ms);
  const HighRate run = TraceGetppidLoop(settings, 600000);
  const TraceCapture& c = run.capture;
  std::printf(
      "[ trace    ] %llu records, %.3f s CPU (%.0f/s of CPU), %.3f s wall (%.0f/s), %llu dropped, buffer %llu KiB\n",
      static_cast<unsigned long long>(c.produced), run.cpu_seconds, static_cast<double>(c.produced) / run.cpu_seconds,
      run.seconds, static_cast<double>(c.produced) / run.seconds, static_cast<unsigned long long>(c.dropped),
      static_cast<unsigned long long>(c.buffer_bytes >> 10));
  EXPECT_GE(c.produced, 600000u) << "one record per getppid call";
  EXPECT_EQ(c.events.size() + c.dropped, c.produced);
  // The buffer (sized for 2M records/s over 25 polls) holds more than the
  // whole loop's records, so none may be dropped however slowly it is read.
  ASSERT_GT(c.buffer_bytes, c.produced * kTraceRecordBytes);
  EXPECT_EQ(c.dropped, 0u);
  PerfettoTraceStats stats;
  PerfettoTrace(c, &stats);
  EXPECT_EQ(stats.records, c.events.size()) << "every record read is in the trace";
  EXPECT_GE(stats.slices, 600000u);
}

TEST(TraceRingBuffer, DropsOfATooSmallBufferAreCountedExactly) {
  PERFGATE_REQUIRE_ROOT();
  TraceSettings settings;
  settings.slow_syscall_ns = 0;
  settings.buffer_bytes = 4096;
  settings.poll_interval_ms = 1000;  // drained only at the end
  const HighRate run = TraceGetppidLoop(settings, 50000);
  const TraceCapture& c = run.capture;
  EXPECT_GE(c.produced, 50000u);
  EXPECT_GT(c.dropped, 0u);
  EXPECT_EQ(c.events.size() + c.dropped, c.produced);
}

}  // namespace
}  // namespace perfgate
