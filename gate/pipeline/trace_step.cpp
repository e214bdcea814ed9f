#include "pipeline/trace_step.h"

#include <cstdio>
#include <filesystem>

#include "base/error.h"
#include "base/log.h"
#include "report/perfetto_writer.h"
#include "run/trace_run.h"

namespace perfgate {

namespace fs = std::filesystem;

void TraceWorstScenario(const Suite& suite, const RunOptions& options, double min_us, const std::string& out_dir,
                        RunResults& results, const Suite* baseline) {
  const std::optional<TraceTarget> target = WorstScenario(results);
  if (!target) {
    log::Warning("--trace: no scenario ran, so there is nothing to trace\n");
    return;
  }
  ScenarioResult& scenario = results.scenarios[target->scenario];
  const ScenarioSpec* spec = FindScenario(suite, scenario.name);
  const ScenarioSpec* baseline_spec = baseline != nullptr ? FindScenario(*baseline, scenario.name) : nullptr;
  if (spec == nullptr) return;  // results come from this suite: cannot happen

  TraceSettings settings;
  settings.slow_syscall_ns = settings.long_offcpu_ns = static_cast<uint64_t>(min_us * 1000);
  const double rate = ExpectedTraceRate(scenario, settings);
  settings.buffer_bytes = TraceBufferBytes(rate, settings.poll_interval_ms);
  const std::string name = "trace.perfetto-trace";
  const std::string file = (fs::path(out_dir) / name).string();
  if (!options.quiet) log::Progress("%s: traced repetition (%s)\n", scenario.name.c_str(), target->reason.c_str());
  try {
    // Both sides of an interleaved run, the baseline's first as in its pairs.
    const TraceCapture capture =
        baseline_spec != nullptr ? MergeTraceSides({{"baseline", TraceRepetition(*baseline_spec, options, settings)},
                                                    {"candidate", TraceRepetition(*spec, options, settings)}})
                                 : TraceRepetition(*spec, options, settings);
    fs::create_directories(out_dir);
    WritePerfettoTrace(capture, file);
    TraceSummary summary;
    summary.file = name;
    summary.reason = target->reason;
    summary.produced = capture.produced;
    summary.received = capture.events.size();
    summary.dropped = capture.dropped;
    summary.buffer_bytes = capture.buffer_bytes;
    summary.expected_rate = rate;
    scenario.trace = summary;
    std::printf("perfgate: trace %s: %llu records, %llu dropped\n", file.c_str(),
                static_cast<unsigned long long>(summary.received), static_cast<unsigned long long>(summary.dropped));
  } catch (const Error& e) {
    if (e.code() == ExitCode::kBadInput) throw;
    log::Error("--trace: scenario \"%s\": %s\n", scenario.name.c_str(), e.what());
    results.exit_code = static_cast<int>(ExitCode::kInfra);
  }
}

}  // namespace perfgate
