// The `gbench` adapter: runs a Google Benchmark binary with JSON output and
// reads each benchmark's iteration rows (aggregate rows — mean, median,
// stddev, BigO — are ignored: perfgate's repetitions are fresh processes, and
// repetitions inside one process are not independent samples).
//
// Keys: declared in keys() (binary, filter), and "args" (more arguments,
// e.g. "--benchmark_min_time=0.2").
//
// Metrics, per benchmark; <benchmark> is the benchmark's name with characters
// a metric-name segment does not allow ('.', spaces, commas, parentheses,
// ...) replaced by '_' — '/', ':', '<', '>', '*', '+', '-' stay, so
// "BM_Copy/64/threads:2" is itself:
//   gbench.<benchmark>.real_time    ns per iteration (converted from time_unit), lower is better
//   gbench.<benchmark>.cpu_time     ns per iteration, lower is better
//   gbench.<benchmark>.<counter>    each user counter; bytes_per_second and
//                                   items_per_second higher is better, the
//                                   memory manager's counts lower, others either way
// With --benchmark_repetitions=N a benchmark has N iteration rows; the
// repetition's value is their median. A benchmark that reports an error
// (error_occurred) or is skipped gets no metrics, so a check on it reports
// the metric missing; the reason is in WorkloadOutput::warnings. NaN and
// infinite values are dropped the same way.
#pragma once

#include "adapters/adapter.h"

namespace perfgate {

class GbenchAdapter : public WorkloadAdapter {
 public:
  std::string kind() const override { return "gbench"; }
  const WorkloadKeys& keys() const override;
  std::vector<MetricDeclaration> metrics() const override;
  std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const override;
  std::vector<std::string> InstrumentedArgs(const WorkloadSpec& spec) const override;
  std::vector<std::string> InstrumentedPauses(const WorkloadSpec& spec) const override;
  WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const override;
};

// Parses --benchmark_format=json output; `source` names it in errors.
WorkloadOutput ParseGbenchJson(const std::string& text, const std::string& source);

}  // namespace perfgate
