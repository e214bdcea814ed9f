// Building the metrics a probe reports from its in-kernel aggregates.
#pragma once

#include <string>
#include <utility>

#include "metrics/metric.h"

namespace perfgate {

// A count over the repetition (rate = value / duration_s); lower is better.
inline Metric CounterMetric(const std::string& name, const std::string& unit, double value, double duration_s) {
  Metric metric;
  metric.name = name;
  metric.kind = MetricKind::kCounter;
  metric.unit = unit;
  metric.better = Better::kLower;
  metric.value = value;
  metric.duration_s = duration_s;
  return metric;
}

// A latency (or size) distribution; lower is better.
inline Metric HistogramMetric(const std::string& name, const std::string& unit, LogLinearHistogram hist,
                              double duration_s) {
  Metric metric;
  metric.name = name;
  metric.kind = MetricKind::kHistogram;
  metric.unit = unit;
  metric.better = Better::kLower;
  metric.duration_s = duration_s;
  metric.hist = std::move(hist);
  return metric;
}

}  // namespace perfgate
