#include "adapters/command.h"

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"

namespace perfgate {

std::vector<std::string> CommandAdapter::LaunchArgv(const WorkloadSpec& spec) const {
  if (spec.argv.empty()) throw InputError("command workload: empty argv");
  if (!spec.options.empty()) {
    throw InputError("command workload: \"" + spec.options.begin()->first +
                     "\" does not apply to command workloads (they take argv, env, cwd, shell)");
  }
  if (!spec.shell) return spec.argv;
  std::string line;
  for (const auto& a : spec.argv) line += (line.empty() ? "" : " ") + a;
  return {"/bin/sh", "-c", line};
}

WorkloadOutput CommandAdapter::ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const {
  return ParseCommandJsonLines(stdout_text, "output of " + (spec.argv.empty() ? std::string("command") : spec.argv[0]));
}

std::unique_ptr<WorkloadAdapter> MakeCommandAdapter() { return std::make_unique<CommandAdapter>(); }

namespace {

// {"phase": "load_libraries", "begin_ns": B, "end_ns": E}, CLOCK_MONOTONIC.
WorkloadPhase ParsePhase(const nlohmann::json& j, const std::string& where) {
  WorkloadPhase phase;
  if (!j["phase"].is_string() || j["phase"].get<std::string>().empty())
    throw InfraError(where + ": \"phase\" must be a non-empty string");
  phase.name = j["phase"].get<std::string>();
  for (const char* key : {"begin_ns", "end_ns"}) {
    if (!j.contains(key) || !j[key].is_number_unsigned())
      throw InfraError(where + ": \"" + key + "\" must be a non-negative integer (CLOCK_MONOTONIC ns)");
  }
  phase.begin_ns = j["begin_ns"].get<uint64_t>();
  phase.end_ns = j["end_ns"].get<uint64_t>();
  if (phase.end_ns < phase.begin_ns) throw InfraError(where + ": \"end_ns\" is before \"begin_ns\"");
  return phase;
}

}  // namespace

WorkloadOutput ParseCommandJsonLines(const std::string& text, const std::string& source) {
  WorkloadOutput out;
  std::istringstream in(text);
  std::string line;
  size_t line_no = 0;
  constexpr size_t kMaxMetricName = 256;
  while (std::getline(in, line)) {
    ++line_no;
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] != '{') continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) continue;  // not ours: ordinary program output
    std::string where = source + ": line " + std::to_string(line_no);
    if (j.contains("ops")) {
      const auto& ops = j["ops"];
      if (!ops.is_number() || !std::isfinite(ops.get<double>()) || ops.get<double>() < 0) {
        throw InfraError(where + ": \"ops\" must be a non-negative number");
      }
      out.ops = ops.get<double>();
    }
    if (j.contains("phase")) {
      out.phases.push_back(ParsePhase(j, where));
      continue;
    }
    if (!j.contains("metric")) continue;
    if (!j["metric"].is_string() || j["metric"].get<std::string>().size() > kMaxMetricName ||
        !IsMetricName(j["metric"].get<std::string>())) {
      throw InfraError(where + ": \"metric\" must be a name like \"app.request_time\", at most 256 characters");
    }
    if (!j.contains("value") || !j["value"].is_number() || !std::isfinite(j["value"].get<double>())) {
      throw InfraError(where + ": \"value\" must be a finite number");
    }
    Metric m;
    m.name = j["metric"].get<std::string>();
    m.kind = MetricKind::kScalar;
    m.value = j["value"].get<double>();
    if (j.contains("unit")) {
      if (!j["unit"].is_string()) throw InfraError(where + ": \"unit\" must be a string");
      m.unit = j["unit"].get<std::string>();
    }
    if (j.contains("better")) {
      auto better = j["better"].is_string() ? ParseBetter(j["better"].get<std::string>()) : std::nullopt;
      if (!better) throw InfraError(where + ": \"better\" must be \"lower\", \"higher\" or \"none\"");
      m.better = *better;
    }
    out.metrics[m.name] = std::move(m);
  }
  return out;
}

}  // namespace perfgate
