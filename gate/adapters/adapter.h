// A workload adapter = how to launch one kind of workload + how to read its
// output into metrics (like LKP's run/parse pairs). One adapter per kind,
// registered in one table (registry.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/suite.h"
#include "metrics/metric.h"
#include "metrics/results.h"

namespace perfgate {

struct WorkloadOutput {
  MetricSet metrics;
  std::optional<double> ops;  // operations the workload reported (for per-op budgets)
  // What the parser left out and why (a benchmark that reported an error, a
  // NaN value): not fatal, but a check on it will find its metric missing.
  std::vector<std::string> warnings;
  std::vector<WorkloadPhase> phases;  // the workload's own phase markers, for the trace
};

class WorkloadAdapter {
 public:
  virtual ~WorkloadAdapter() = default;
  virtual std::string kind() const = 0;
  // The argv to exec. Throws InputError when the spec is unusable, InfraError
  // when something the workload needs is missing on this machine.
  virtual std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const = 0;
  // Parses what the workload printed. Throws InfraError naming the workload
  // and the position when the output is malformed.
  virtual WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const = 0;
};

// The adapter of a kind; nullptr when unknown.
const WorkloadAdapter* FindAdapter(const std::string& kind);
std::vector<std::string> AdapterKinds();

}  // namespace perfgate
