// What the probes cost the workload: each scenario runs alternately without
// any probe loaded and under its probes (ABBA order, so drift and warm-up
// trends hit both sides alike), and the slowdown is the ratio of the medians
// with a distribution-free interval from the rounds' pairs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/suite.h"
#include "metrics/metric.h"
#include "metrics/results.h"
#include "run/runner.h"

namespace perfgate {

struct OverheadOptions {
  int pairs = 10;                             // bare + probed repetitions per scenario
  std::string metric = kWorkloadWallTime;  // a scalar every repetition reports
  double confidence = 0.95;
};

struct OverheadResult {
  std::string scenario;
  std::vector<double> bare, probed;  // the metric, one value per repetition
  double bare_median = 0, probed_median = 0;
  double slowdown = 0;  // probed median / bare median
  std::optional<double> slowdown_low, slowdown_high;
  int pairs = 0;  // rounds the interval pairs (signed-rank); 0: the two-sample interval
  // From one extra probed run with BPF run-time stats on (stats add their own
  // cost, so they stay off while the timed repetitions run).
  std::vector<ProbeReport> probes;
  std::string error;  // why the scenario could not be measured
};

std::vector<OverheadResult> MeasureOverhead(const Suite& suite, const RunOptions& run, const OverheadOptions& options);

}  // namespace perfgate
