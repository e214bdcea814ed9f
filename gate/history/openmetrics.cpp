#include "history/openmetrics.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "base/escape.h"
#include "stats/descriptive.h"

namespace perfgate {
namespace {

struct Sample {
  std::string labels;  // {a="b",...}
  double value;
};

struct Family {
  std::string help;
  std::string unit;  // OpenMetrics unit suffix of the name, "" for none
  double scale = 1;  // multiplies values into that unit
  std::vector<Sample> samples;
};

// Prometheus base units: seconds and bytes.
void UnitOf(const std::string& unit, Family& family) {
  static const std::map<std::string, std::pair<const char*, double>> kUnits = {
      {"s", {"seconds", 1}},     {"ms", {"seconds", 1e-3}}, {"us", {"seconds", 1e-6}},
      {"ns", {"seconds", 1e-9}}, {"bytes", {"bytes", 1}},
  };
  auto it = kUnits.find(unit);
  if (it == kUnits.end()) return;
  family.unit = it->second.first;
  family.scale = it->second.second;
}

std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buffer[40];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);  // shortest form that reads back exactly
  return std::string(buffer, ec == std::errc() ? end : buffer);
}

// Backslash and newline escaped, and the double quote too when `quote`
// (label values; HELP text leaves it), as both formats require.
std::string EscapeText(const std::string& text, bool quote) {
  std::string out;
  for (char c : SanitizeText(text)) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || (quote && c == '"')) out += '\\';
    out += c;
  }
  return out;
}

std::string Labels(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string out = "{";
  for (const auto& [name, value] : labels) {
    out += (out.size() > 1 ? "," : "") + name + "=\"" + EscapeLabelValue(value) + "\"";
  }
  return out + "}";
}

// The values of each (metric, statistic) over the measured repetitions; the
// first repetition's metric of each name goes into `metrics`.
std::map<std::pair<std::string, std::string>, std::vector<double>> ValuesOf(
    const ScenarioResult& scenario, std::map<std::string, const Metric*>& metrics) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> values;
  for (const Repetition& rep : scenario.repetitions) {
    if (!rep.measured()) continue;
    for (const auto& [name, metric] : rep.metrics) {
      metrics.emplace(name, &metric);
      for (const std::string& statistic : StatisticsFor(metric.kind)) {
        std::optional<double> v = StatisticValue(metric, statistic);
        if (v && std::isfinite(*v)) values[{name, statistic}].push_back(*v);
      }
    }
  }
  return values;
}

// The labels of a scenario's samples: a dashboard selects by suite, scenario
// and host (two runners of one suite are two series, not one that flips).
std::vector<std::pair<std::string, std::string>> ScenarioLabels(const RunResults& results,
                                                                const ScenarioResult& scenario) {
  return {{"suite", results.suite}, {"scenario", scenario.name}, {"host", results.environment.hostname}};
}

// One gauge per metric statistic: the median over the repetitions.
void AddMetricSamples(const RunResults& results, const ScenarioResult& scenario,
                      std::map<std::string, Family>& families) {
  std::string labels = Labels(ScenarioLabels(results, scenario));
  std::map<std::string, const Metric*> metrics;
  for (const auto& [key, values] : ValuesOf(scenario, metrics)) {
    const auto& [name, statistic] = key;
    std::string unit = StatisticUnit(*metrics.at(name), statistic);
    Family& family = families["perfgate_" + MetricFamilyName(name + "_" + statistic)];
    if (family.help.empty()) {
      UnitOf(unit, family);
      family.help = "perfgate " + name + " " + statistic + (unit.empty() ? "" : " (" + unit + ")") +
                    ": median over the repetitions of the run";
    }
    family.samples.push_back({labels, stats::Median(values) * family.scale});
  }
}

void AddCheckSamples(const RunResults& results, const ScenarioResult& scenario,
                     std::map<std::string, Family>& families) {
  std::map<std::string, int> check_names;  // a suite may name two checks alike; series must differ
  for (const CheckResult& check : scenario.checks) {
    int seen = check_names[check.spec.name]++;
    std::string check_name = seen == 0 ? check.spec.name : check.spec.name + " #" + std::to_string(seen + 1);
    Family& family = families["perfgate_check_failed"];
    family.help = "1 when the check's verdict fails the run (regression or error), else 0";
    bool failed = check.verdict == Verdict::kRegression || check.verdict == Verdict::kError;
    auto labels = ScenarioLabels(results, scenario);
    labels.insert(labels.end(), {{"check", check_name}, {"verdict", ToString(check.verdict)}});
    family.samples.push_back({Labels(labels), failed ? 1.0 : 0.0});
  }
}

// What each attached probe cost, from the BPF run-time stats: invocations
// and run time over the measured repetitions, the run time as a share of the
// workload's CPU time, and the events its ring buffer had no room for.
void AddProbeSamples(const RunResults& results, const ScenarioResult& scenario,
                     std::map<std::string, Family>& families) {
  for (const ProbeReport& probe : scenario.probes) {
    if (!probe.not_attached.empty()) continue;
    auto labels = ScenarioLabels(results, scenario);
    labels.emplace_back("probe", probe.name);
    const std::string text = Labels(labels);
    // No invocations counted: the run-time stats were off, not a free probe.
    if (probe.run_count > 0) {
      Family& events = families["perfgate_probe_events"];
      events.help = "BPF program invocations of the probe over the measured repetitions";
      events.samples.push_back({text, static_cast<double>(probe.run_count)});
      Family& run_time = families["perfgate_probe_run_time"];
      if (run_time.help.empty()) {
        UnitOf("ns", run_time);
        run_time.help = "BPF program run time of the probe over the measured repetitions";
      }
      run_time.samples.push_back({text, static_cast<double>(probe.run_time_ns) * run_time.scale});
    }
    if (std::optional<double> share = probe.CpuShare()) {
      Family& cpu_share = families["perfgate_probe_cpu_share"];
      cpu_share.help = "the probe's BPF run time as a share of the workload's CPU time";
      cpu_share.samples.push_back({text, *share});
    }
    Family& drops = families["perfgate_probe_drops"];
    drops.help = "events the probe's ring buffer had no room for";
    drops.samples.push_back({text, static_cast<double>(probe.drops)});
  }
}

}  // namespace

std::string MetricFamilyName(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "_" + out;
  return out;
}

std::string EscapeLabelValue(const std::string& text) { return EscapeText(text, true); }

namespace {

void AddExitCode(const RunResults& results, const std::string& labels, std::map<std::string, Family>& families) {
  Family& exit_code = families["perfgate_exit_code"];
  exit_code.help = "perfgate's exit code for the run: 0 pass, 1 a check failed, 3 infrastructure";
  exit_code.samples.push_back({labels, static_cast<double>(results.exit_code)});
}

std::string Render(const std::map<std::string, Family>& families, ExpositionFormat format) {
  std::string out;
  for (const auto& [base, family] : families) {
    std::string name = family.unit.empty() ? base : base + "_" + family.unit;
    out += "# HELP " + name + " " + EscapeText(family.help, false) + "\n# TYPE " + name + " gauge\n";
    if (format == ExpositionFormat::kOpenMetrics && !family.unit.empty()) {
      out += "# UNIT " + name + " " + family.unit + "\n";
    }
    for (const Sample& s : family.samples) out += name + s.labels + " " + Number(s.value) + "\n";
  }
  if (format == ExpositionFormat::kOpenMetrics) out += "# EOF\n";
  return out;
}

}  // namespace

std::string RenderMetrics(const RunResults& results, ExpositionFormat format) {
  std::map<std::string, Family> families;  // by name without unit suffix
  for (const ScenarioResult& scenario : results.scenarios) {
    AddMetricSamples(results, scenario, families);
    AddCheckSamples(results, scenario, families);
    AddProbeSamples(results, scenario, families);
  }
  AddExitCode(results, Labels({{"suite", results.suite}, {"host", results.environment.hostname}}), families);
  return Render(families, format);
}

std::string RenderScenarioMetrics(const RunResults& results, size_t scenario, ExpositionFormat format) {
  const ScenarioResult& s = results.scenarios.at(scenario);
  std::map<std::string, Family> families;
  AddMetricSamples(results, s, families);
  AddCheckSamples(results, s, families);
  AddProbeSamples(results, s, families);
  AddExitCode(results, Labels(ScenarioLabels(results, s)), families);
  return Render(families, format);
}

}  // namespace perfgate
