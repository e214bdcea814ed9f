// A run as metrics for Prometheus: one gauge family per metric statistic,
// named perfgate_<metric>_<statistic>[_<unit>], with the median over the
// measured repetitions as the value and suite, scenario and host as labels;
// plus the run's exit code, each check's verdict and each probe's cost
// (perfgate_probe_events, _run_time_seconds, _cpu_share, _drops, labelled
// with the probe). dashboards/grafana/perfgate.json charts these names; its
// tests fail when a panel queries one no longer written.
#pragma once

#include <string>

#include "metrics/results.h"

namespace perfgate {

enum class ExpositionFormat {
  kOpenMetrics,  // OpenMetrics 1.0 text: UNIT lines, "# EOF" at the end
  kPrometheus,   // Prometheus text 0.0.4, what a Pushgateway accepts
};

// Characters a metric name does not allow become '_'.
std::string MetricFamilyName(const std::string& text);
// A label value inside double quotes: backslash, quote and newline escaped.
std::string EscapeLabelValue(const std::string& text);

// The exposition of `results`. Pure.
std::string RenderMetrics(const RunResults& results, ExpositionFormat format);

// The exposition of one scenario of `results` (by index): its metrics and
// checks, and the run's exit code labelled with the suite and that scenario,
// which is what a Pushgateway group of one scenario holds. Pure.
std::string RenderScenarioMetrics(const RunResults& results, size_t scenario, ExpositionFormat format);

}  // namespace perfgate
