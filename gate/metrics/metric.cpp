#include "metrics/metric.h"

#include <utility>

namespace perfgate {

std::vector<std::string> StatisticsFor(MetricKind kind) {
  switch (kind) {
    case MetricKind::kScalar:
      return {"value"};
    case MetricKind::kCounter:
      return {"count", "rate", "per_op"};
    case MetricKind::kHistogram:
      return {"p50", "p90", "p99", "p99.9", "max", "mean", "count"};
  }
  return {};
}

std::string DefaultStatistic(MetricKind kind) {
  switch (kind) {
    case MetricKind::kScalar:
      return "value";
    case MetricKind::kCounter:
      return "rate";
    case MetricKind::kHistogram:
      return "p50";
  }
  return "value";
}

std::optional<double> StatisticValue(const Metric& m, const std::string& stat) {
  switch (m.kind) {
    case MetricKind::kScalar:
      if (stat == "value") return m.value;
      return std::nullopt;
    case MetricKind::kCounter:
      if (stat == "count") return m.value;
      if (stat == "rate") return m.duration_s > 0 ? std::optional<double>(m.value / m.duration_s) : std::nullopt;
      if (stat == "per_op") return m.ops && *m.ops > 0 ? std::optional<double>(m.value / *m.ops) : std::nullopt;
      return std::nullopt;
    case MetricKind::kHistogram:
      if (stat == "count") return static_cast<double>(m.hist.count());
      if (m.hist.empty()) return std::nullopt;
      if (stat == "p50") return m.hist.Quantile(0.50);
      if (stat == "p90") return m.hist.Quantile(0.90);
      if (stat == "p99") return m.hist.Quantile(0.99);
      if (stat == "p99.9") return m.hist.Quantile(0.999);
      if (stat == "max") return m.hist.Max();
      if (stat == "mean") return m.hist.Mean();
      return std::nullopt;
  }
  return std::nullopt;
}

std::string StatisticUnit(const Metric& m, const std::string& stat) {
  if (m.kind == MetricKind::kCounter) {
    if (stat == "rate") return m.unit + "/s";
    if (stat == "per_op") return m.unit + "/op";
    return m.unit;
  }
  if (m.kind == MetricKind::kHistogram && stat == "count") return "count";
  return m.unit;
}

std::string ToString(MetricKind kind) {
  switch (kind) {
    case MetricKind::kScalar:
      return "scalar";
    case MetricKind::kCounter:
      return "counter";
    case MetricKind::kHistogram:
      return "histogram";
  }
  return "scalar";
}

std::string ToString(Better better) {
  switch (better) {
    case Better::kLower:
      return "lower";
    case Better::kHigher:
      return "higher";
    case Better::kNone:
      return "none";
  }
  return "none";
}

std::optional<MetricKind> ParseMetricKind(const std::string& t) {
  if (t == "scalar") return MetricKind::kScalar;
  if (t == "counter") return MetricKind::kCounter;
  if (t == "histogram") return MetricKind::kHistogram;
  return std::nullopt;
}

std::optional<Better> ParseBetter(const std::string& t) {
  if (t == "lower") return Better::kLower;
  if (t == "higher") return Better::kHigher;
  if (t == "none") return Better::kNone;
  return std::nullopt;
}

bool IsTimeUnit(const std::string& unit) { return unit == "s" || unit == "ms" || unit == "us" || unit == "ns"; }

bool IsMetricName(std::string_view name) {
  static constexpr std::string_view kSegmentPunctuation = "_:<>*/+-";
  size_t segments = 0;
  size_t length = 0;
  for (char c : name) {
    if (c == '.') {
      if (length == 0) return false;
      ++segments;
      length = 0;
      continue;
    }
    const bool digit_or_lower = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_';
    const bool ok = segments == 0 ? digit_or_lower
                                  : digit_or_lower || (c >= 'A' && c <= 'Z') ||
                                        kSegmentPunctuation.find(c) != std::string_view::npos;
    if (!ok) return false;
    ++length;
  }
  return segments >= 1 && length > 0;
}

Metric ScalarMetric(const std::string& name, double value, const std::string& unit, Better better) {
  Metric metric;
  metric.name = name;
  metric.kind = MetricKind::kScalar;
  metric.unit = unit;
  metric.better = better;
  metric.value = value;
  return metric;
}

Metric CounterMetric(const std::string& name, const std::string& unit, double value, double duration_s) {
  Metric metric = ScalarMetric(name, value, unit);
  metric.kind = MetricKind::kCounter;
  metric.duration_s = duration_s;
  return metric;
}

Metric HistogramMetric(const std::string& name, const std::string& unit, LogLinearHistogram hist, double duration_s) {
  Metric metric = ScalarMetric(name, 0, unit);
  metric.kind = MetricKind::kHistogram;
  metric.duration_s = duration_s;
  metric.hist = std::move(hist);
  return metric;
}

bool IsInstructionCount(std::string_view name) {
  return name.starts_with("instr.") || name == "cpu.instructions" || name.starts_with("cpu.instructions.");
}

}  // namespace perfgate
