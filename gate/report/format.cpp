#include "report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "metrics/metric.h"

namespace perfgate {

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
  const HostSummary& host = scenario.host_summary;
  if (!host.waited_behind_others_s) return "";
  std::string text = "the workload waited " + FormatQuantity(*host.waited_behind_others_s, "s") +
                     " per repetition for CPUs running other tasks";
  if (host.behind_others_share)
    text += " (" + FormatNumber(100 * *host.behind_others_share) + " % of its run-queue wait)";
  if (!host.holders.empty()) text += ", held by: " + DescribeCpuHolders(host.holders);
  return text;
}

// "host canary (medians of 7): loop 1.71 ms per 2^20 iterations, stream
// 450 ms per GiB, faults 620 us per MiB, direct read 120 us"; "" without canaries.
std::string CanaryMedians(const ScenarioResult& scenario) {
  const std::map<std::string, const char*> formats = {{kHostCanaryCpu, "loop %s per 2^20 iterations"},
                                                      {kHostCanaryMemory, "stream %s per GiB"},
                                                      {kHostCanaryFault, "faults %s per MiB"},
                                                      {kHostCanaryIo, "direct read %s"}};
  std::string text;
  for (const auto& [name, median] : scenario.host_summary.canary_medians) {
    auto format = formats.find(name);
    if (format == formats.end()) continue;
    char part[160];
    std::snprintf(part, sizeof part, format->second, FormatQuantity(median, "s").c_str());
    text += (text.empty() ? "" : ", ") + std::string(part);
  }
  if (text.empty()) return "";
  return "host canary (medians of " + std::to_string(scenario.host_summary.canary_count) + "): " + text;
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

}  // namespace perfgate
