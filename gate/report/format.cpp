#include "report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "metrics/metric.h"
#include "stats/descriptive.h"

namespace perfgate {

std::string FormatPercent(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  // Three significant digits; a change that one decimal would round to
  // zero keeps its sign with two ("-0.029%"), and no change is "+0.0%".
  if (pct == 0) return "+0.0%";
  if (std::round(pct * 10) == 0) return FormatValue("%+.2g%%", pct);
  if (std::fabs(pct) >= 1000) return FormatValue("%+.0f%%", pct);
  return FormatValue("%+.1f%%", pct);
}

std::string FormatInterval(const std::optional<double>& low, const std::optional<double>& high) {
  if (!low || !high) return "";
  return "[" + FormatPercent(*low) + ", " + FormatPercent(*high) + "]";
}

std::string FormatPValue(const std::optional<double>& p) {
  if (!p || !std::isfinite(*p)) return "";
  if (*p < 1e-4) return "<0.0001";
  return FormatValue("%.2g", *p);
}

bool HasBaseline(const CheckResult& check) { return !check.baseline_values.empty(); }

std::string FormatThreshold(const CheckResult& check) {
  const CheckSpec& spec = check.spec;
  if (spec.type == CheckSpec::Type::kBudget) {
    if (spec.min && spec.max) {
      return FormatQuantity(*spec.min, check.unit) + " .. " + FormatQuantity(*spec.max, check.unit);
    }
    if (spec.max) return "<= " + FormatQuantity(*spec.max, check.unit);
    if (spec.min) return ">= " + FormatQuantity(*spec.min, check.unit);
    return "";
  }
  double pct = spec.max_regression_pct;
  switch (check.better) {
    case Better::kLower:
      return FormatPercent(pct);
    case Better::kHigher:
      return FormatPercent(-pct);
    case Better::kNone:
      return "\u00b1" + FormatPercent(pct).substr(1);
  }
  return "";
}

std::string FormatBaseline(const CheckResult& check) {
  return HasBaseline(check) ? FormatQuantity(check.baseline_median, check.unit) : "";
}

std::string FormatCandidate(const CheckResult& check) {
  return check.candidate_values.empty() ? "" : FormatQuantity(check.candidate_median, check.unit);
}

std::string FormatChange(const CheckResult& check) {
  if (!HasBaseline(check) || check.candidate_values.empty()) return "";
  std::string interval = FormatInterval(check.change_ci_low_pct, check.change_ci_high_pct);
  return interval.empty() ? FormatPercent(check.change_pct) : FormatPercent(check.change_pct) + " " + interval;
}

std::string FormatTrace(const TraceSummary& trace) {
  std::string text = trace.file + ": one extra traced repetition after the measured ones";
  if (!trace.reason.empty()) text += " (worst check: " + trace.reason + ")";
  text += "; " + std::to_string(trace.received) + " records, " + std::to_string(trace.dropped) + " dropped";
  if (trace.produced > 0 && trace.dropped > 0) {
    const double share = static_cast<double>(trace.dropped) / static_cast<double>(trace.produced);
    text += " (" + FormatNumber(100.0 * share) + " %)";
  }
  text += ", ring buffer " + FormatQuantity(static_cast<double>(trace.buffer_bytes), "bytes");
  return text;
}

std::string FormatCpuHolders(const ScenarioResult& scenario) {
  std::vector<double> behind, share, wall;
  for (const Repetition& rep : scenario.repetitions) {
    if (!rep.measured()) continue;
    auto b = rep.metrics.find(kHostRunqWaitBehindOthers);
    auto w = rep.metrics.find(kWorkloadWallTime);
    if (b == rep.metrics.end() || w == rep.metrics.end()) continue;
    behind.push_back(b->second.value);
    wall.push_back(w->second.value);
    auto s = rep.metrics.find(kHostRunqWaitBehindOthersShare);
    if (s != rep.metrics.end()) share.push_back(s->second.value);
  }
  if (behind.empty()) return "";
  const double median = stats::Median(behind);
  if (!(median > 0) || median < kShownBehindOthersShareOfWall * stats::Median(wall)) return "";
  std::string text =
      "the workload waited " + FormatQuantity(median, "s") + " per repetition for CPUs running other tasks";
  if (!share.empty()) text += " (" + FormatNumber(100 * stats::Median(share)) + " % of its run-queue wait)";
  const std::vector<CpuHolder> holders = TopCpuHolders(scenario.repetitions, kTopCpuHolders);
  if (!holders.empty()) text += ", held by: " + DescribeCpuHolders(holders);
  return text;
}

// "host canary (medians of 7): loop 1.71 ms per 2^20 iterations, stream
// 450 ms per GiB, faults 620 us per MiB, direct read 120 us"; "" without canaries.
std::string CanaryMedians(const ScenarioResult& scenario) {
  std::string text;
  const std::pair<const char*, const char*> parts[] = {{kHostCanaryCpu, "loop %s per 2^20 iterations"},
                                                       {kHostCanaryMemory, "stream %s per GiB"},
                                                       {kHostCanaryFault, "faults %s per MiB"},
                                                       {kHostCanaryIo, "direct read %s"}};
  size_t count = 0;
  for (const auto& [name, format] : parts) {
    std::vector<double> values;
    for (const Repetition& rep : scenario.repetitions) {
      if (auto it = rep.metrics.find(name); it != rep.metrics.end()) values.push_back(it->second.value);
    }
    if (values.empty()) continue;
    count = std::max(count, values.size());
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    char part[160];
    std::snprintf(part, sizeof part, format, FormatQuantity(values[values.size() / 2], "s").c_str());
    text += (text.empty() ? "" : ", ") + std::string(part);
  }
  if (text.empty()) return "";
  return "host canary (medians of " + std::to_string(count) + "): " + text;
}

std::vector<std::string> HostLoadParts(const ScenarioResult& scenario) {
  size_t kept = 0;
  std::string first;
  for (const Repetition& rep : scenario.repetitions) {
    if (rep.tainted.empty()) continue;
    ++kept;
    if (first.empty()) first = rep.tainted;
  }
  std::vector<std::string> parts;
  if (!scenario.retaken.empty()) {
    const std::string& why = scenario.retaken.front().tainted;
    parts.push_back(std::to_string(scenario.retaken.size()) +
                    (scenario.retaken.size() == 1 ? " repetition" : " repetitions") +
                    " measured again while the host was busy (first: " + why + ")");
  }
  if (kept > 0) {
    parts.push_back(std::to_string(kept) + (kept == 1 ? " repetition" : " repetitions") +
                    " counted although the host was busy (" + first + ")");
  }
  if (scenario.host_speed) parts.push_back(DescribeHostSpeed(*scenario.host_speed));
  if (std::string canary = CanaryMedians(scenario); !canary.empty()) parts.push_back(canary);
  if (scenario.adaptive && scenario.adaptive->busy_host) {
    parts.push_back(std::to_string(scenario.repetitions.size()) + " of at most " +
                    std::to_string(scenario.adaptive->max) + " pairs measured: the suite's " +
                    std::to_string(scenario.adaptive->min) +
                    " were extended while a check could still be decided, since pairs beside other work vary more");
  }
  return parts;
}

std::string FormatHostLoad(const ScenarioResult& scenario) {
  std::string text;
  for (const std::string& part : HostLoadParts(scenario)) text += (text.empty() ? "" : "; ") + part;
  return text;
}

std::string Plural(size_t n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

}  // namespace perfgate
