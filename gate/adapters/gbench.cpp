#include "adapters/gbench.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "adapters/tool_output.h"
#include "base/error.h"

namespace perfgate {

namespace {

using nlohmann::json;

// Fields of a row that are not counters (json_reporter.cc of Google Benchmark).
bool IsRowField(const std::string& key) {
  static const std::set<std::string> kFields = {
      // which run
      "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions", "repetition_index",
      "threads", "aggregate_name", "aggregate_unit", "label",
      // how it went
      "error_occurred", "error_message", "skipped", "skip_message",
      // the measurement (BigO and RMS rows have coefficients instead)
      "iterations", "real_time", "cpu_time", "time_unit", "cpu_coefficient", "real_coefficient", "big_o", "rms"};
  return kFields.count(key) > 0;
}

Better CounterBetter(const std::string& counter) {
  if (counter == "bytes_per_second" || counter == "items_per_second") return Better::kHigher;
  if (counter == "allocs_per_iter" || counter == "max_bytes_used" || counter == "total_allocated_bytes" ||
      counter == "net_heap_growth") {
    return Better::kLower;
  }
  // A user counter's meaning is the benchmark's own: a change either way is news.
  return Better::kNone;
}

std::string CounterUnit(const std::string& counter) {
  if (counter == "bytes_per_second") return "bytes/s";
  if (counter == "items_per_second") return "items/s";
  if (counter == "max_bytes_used" || counter == "total_allocated_bytes" || counter == "net_heap_growth") {
    return "bytes";
  }
  return "";
}

std::optional<double> NanosecondsPer(const std::string& unit) {
  if (unit == "ns") return 1;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return std::nullopt;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool Flag(const json& row, const char* key) {
  return row.contains(key) && row.at(key).is_boolean() && row.at(key).get<bool>();
}

std::string Text(const json& row, const char* key) {
  return row.contains(key) && row.at(key).is_string() ? row.at(key).get<std::string>() : "";
}

struct Series {
  std::string unit;
  Better better = Better::kLower;
  std::vector<double> values;
};

}  // namespace

const WorkloadKeys& GbenchAdapter::keys() const {
  static const WorkloadKeys kKeys{
      .argv = false,
      .args = true,
      .shell = false,
      .keys = {
          {"binary", WorkloadKeyType::kString, "", true, "the Google Benchmark binary"},
          {"filter", WorkloadKeyType::kString, "", false, "the benchmarks to run (--benchmark_filter)"},
      }};
  return kKeys;
}

std::vector<std::string> GbenchAdapter::LaunchArgv(const WorkloadSpec& spec) const {
  const WorkloadOptions options = Options(spec);
  const std::string binary = options.Required("binary");
  std::filesystem::path path = binary;
  if (binary.find('/') == std::string::npos) {
    path = FindExecutable(binary);
  } else if (path.is_relative() && !spec.cwd.empty()) {
    path = std::filesystem::path(spec.cwd) / path;
  }
  if (path.empty() || access(path.c_str(), X_OK) != 0 || std::filesystem::is_directory(path)) {
    throw InfraError("gbench workload: benchmark binary " + binary + " not found or not executable");
  }
  std::vector<std::string> argv = {binary, "--benchmark_format=json"};
  if (auto filter = options.Find("filter")) argv.push_back("--benchmark_filter=" + *filter);
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  return argv;
}

std::vector<std::string> GbenchAdapter::InstrumentedArgs(const WorkloadSpec& /*spec*/) const {
  // Google Benchmark runs each benchmark until a minimum time has passed, so
  // the number of iterations, and with it the instructions, would follow
  // how fast the host ran. A minimum time of 0 runs one iteration of each
  // (1.7 and later; the last --benchmark_min_time given wins, so it
  // overrides the suite's). A benchmark whose code sets its own MinTime
  // still runs for a time: its counts spread, and the check says so.
  return {"--benchmark_min_time=0"};
}

std::vector<std::string> GbenchAdapter::InstrumentedPauses(const WorkloadSpec& /*spec*/) const {
  // The reporters (console, JSON, CSV, a custom one named *Reporter) print
  // the times each benchmark took: what they execute follows those values,
  // a few hundred instructions from one repetition to the next, and was
  // most of the counts' spread. Their methods are public API, so named
  // even in a stripped libbenchmark. A reporter that calls another
  // reporter's Report method would turn counting back on inside it.
  return {"benchmark::*Reporter::Report*"};
}

WorkloadOutput GbenchAdapter::ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const {
  WorkloadOutput out =
      ParseGbenchJson(stdout_text, "Google Benchmark output of " + Options(spec).Find("binary").value_or("?"));
  // Its warnings reach the repetition, which the schedule says once.
  return out;
}

WorkloadOutput ParseGbenchJson(const std::string& text, const std::string& source) {
  const json doc = ParseToolJson(text, source);
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc.at("benchmarks").is_array()) {
    throw InfraError(source + ": no \"benchmarks\" array in the JSON document");
  }
  const json& rows = doc.at("benchmarks");
  if (rows.empty()) throw InfraError(source + ": no benchmark ran (does the filter match any?)");
  WorkloadOutput out;
  std::map<std::string, Series> series;       // metric name -> values of its iteration rows
  std::map<std::string, std::string> origin;  // metric-name segment -> benchmark name, to catch collisions
  std::set<std::string> failed_benchmarks;    // metric prefixes of benchmarks with an errored or skipped row
  std::set<std::string> failed_metrics;       // values that were NaN or infinite in some row
  size_t iteration_rows = 0;
  // Once per cause, not once per in-process repetition.
  auto warn = [&out](const std::string& w) {
    if (std::find(out.warnings.begin(), out.warnings.end(), w) == out.warnings.end()) out.warnings.push_back(w);
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    std::string where = source + ": benchmarks[" + std::to_string(i) + "]";
    if (!row.is_object() || !row.contains("name") || !row.at("name").is_string()) {
      throw InfraError(where + ": missing \"name\"");
    }
    // Rows without run_type come from Google Benchmark before 1.5, which had no aggregates in JSON.
    if (row.contains("run_type") && row.at("run_type") != "iteration") continue;
    ++iteration_rows;
    const std::string name = row.at("name").get<std::string>();
    where += " (" + name + ")";
    const std::string segment = MetricSegment(name);
    if (auto [it, inserted] = origin.emplace(segment, name); !inserted && it->second != name) {
      throw InfraError(where + ": benchmarks \"" + it->second + "\" and \"" + name + "\" both become metric gbench." +
                       segment + "; rename one");
    }
    const std::string prefix = "gbench." + segment + ".";
    if (Flag(row, "error_occurred")) {
      warn(source + ": benchmark " + name + " reported an error (" + Text(row, "error_message") +
           "); no metrics from it");
      failed_benchmarks.insert(prefix);
      continue;
    }
    if (Flag(row, "skipped")) {
      warn(source + ": benchmark " + name + " was skipped (" + Text(row, "skip_message") + "); no metrics from it");
      failed_benchmarks.insert(prefix);
      continue;
    }
    std::string unit = "ns";
    if (row.contains("time_unit")) {
      if (!row.at("time_unit").is_string()) throw InfraError(where + ".time_unit: expected a string");
      unit = row.at("time_unit").get<std::string>();
    }
    std::optional<double> scale = NanosecondsPer(unit);
    if (!scale) throw InfraError(where + ".time_unit: unknown unit \"" + unit + "\"");
    for (const char* key : {"real_time", "cpu_time"}) {
      if (!row.contains(key)) throw InfraError(where + ": missing \"" + std::string(key) + "\"");
    }
    for (const auto& [key, value] : row.items()) {
      const bool is_time = key == "real_time" || key == "cpu_time";
      if (!is_time && IsRowField(key)) continue;
      if (value.is_string() || value.is_boolean() || value.is_object() || value.is_array()) continue;
      const std::string metric = prefix + MetricSegment(key);
      // null is where the output had NaN or Infinity.
      if (!value.is_number() || !std::isfinite(value.get<double>())) {
        warn(source + ": benchmark " + name + ": " + key + " is not a finite number; left out");
        failed_metrics.insert(metric);
        continue;
      }
      Series& s = series[metric];
      if (is_time) {
        s.unit = "ns";
        s.better = Better::kLower;
        s.values.push_back(value.get<double>() * *scale);
      } else {
        s.unit = CounterUnit(key);
        s.better = CounterBetter(key);
        s.values.push_back(value.get<double>());
      }
    }
  }
  if (iteration_rows == 0) {
    throw InfraError(source + ": only aggregate rows; run without --benchmark_report_aggregates_only");
  }
  for (const auto& [name, s] : series) {
    // A benchmark or value that failed in one repetition of the process has
    // no trustworthy median: leave it out rather than report the others.
    if (failed_metrics.count(name) || failed_benchmarks.count(name.substr(0, name.rfind('.') + 1))) continue;
    out.metrics[name] = ScalarMetric(name, Median(s.values), s.unit, s.better);
  }
  return out;
}

std::vector<MetricDeclaration> GbenchAdapter::metrics() const {
  return {
      OutcomeScalar("gbench.<benchmark>.real_time", "ns", Better::kLower,
                    "wall time per iteration, the median over the process's repetitions"),
      OutcomeScalar("gbench.<benchmark>.cpu_time", "ns", Better::kLower, "CPU time per iteration, likewise"),
      OutcomeScalar("gbench.<benchmark>.<counter>", kUnitAsReported, Better::kNone,
                    "a counter the benchmark reports (items_per_second, bytes_per_second, its own), its unit and "
                    "direction as Google Benchmark defines them"),
  };
}

std::unique_ptr<WorkloadAdapter> MakeGbenchAdapter() { return std::make_unique<GbenchAdapter>(); }

}  // namespace perfgate
