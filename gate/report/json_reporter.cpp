#include "report/json_reporter.h"

#include <cmath>

#include "metrics/results_json.h"
#include "report/attribution.h"

namespace perfgate {
namespace {

// < > & only occur inside JSON strings; as \u escapes they parse to the same
// value, and results.json can no longer be mistaken for markup when a CI
// artifact viewer sniffs its type (what Go's encoding/json does by default).
std::string EscapeMarkupCharacters(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

nlohmann::json Number(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr); }

std::string ToString(Pricing pricing) {
  switch (pricing) {
    case Pricing::kWaitTime:
      return "wait_time";
    case Pricing::kEvents:
      return "events";
    case Pricing::kLatencySum:
      return "latency_sum";
    case Pricing::kReadBack:
      return "read_back";
    case Pricing::kUnpriced:
      break;
  }
  return "unpriced";
}

// The "why" of every scenario whose outcome regressed (report/attribution.h),
// derived from the results: readers of results.json ignore it.
nlohmann::json WhyJson(const RunResults& results) {
  nlohmann::json why = nlohmann::json::array();
  for (const Explanation& e : Explain(FindingsOf(results))) {
    nlohmann::json item = {{"scenario", e.scenario->name}, {"per", e.per_op ? "op" : "repetition"}};
    for (const CheckResult* check : e.failing) item["failing"].push_back(CheckName(*check));
    if (e.wall_change_s) item["wall_time_change_s"] = Number(*e.wall_change_s);
    if (!e.user_code.empty()) item["user_code"] = e.user_code;
    item["causes"] = nlohmann::json::array();
    for (const KernelShift& shift : e.shifts) {
      nlohmann::json cause = {{"metric", shift.metric},
                              {"statistic", shift.statistic},
                              {"unit", shift.unit},
                              {"baseline", Number(shift.baseline_median)},
                              {"candidate", Number(shift.candidate_median)},
                              {"change_pct", Number(shift.change_pct)},
                              {"pricing", ToString(shift.pricing)}};
      if (shift.pricing != Pricing::kUnpriced) {
        cause["accounted_s"] = Number(shift.accounted_s);
        cause["accounted_at_least_s"] = Number(shift.accounted_low_s);
        if (shift.share) cause["share_of_wall_time_change"] = Number(*shift.share);
        if (shift.event_cost_s > 0) cause["event_cost_s"] = Number(shift.event_cost_s);
        if (!shift.excluding.empty()) cause["excluding"] = shift.excluding;
      }
      item["causes"].push_back(std::move(cause));
    }
    for (const HostShift& host : e.host) {
      item["host_noise"].push_back({{"metric", host.metric},
                                    {"unit", host.unit},
                                    {"baseline", Number(host.baseline_median)},
                                    {"candidate", Number(host.candidate_median)},
                                    {"change_pct", Number(host.change_pct)}});
    }
    for (const KernelShift& wait : e.cpu_waits) {
      item["cpu_waits_on_busy_host"].push_back({{"metric", wait.metric},
                                                {"accounted_s", Number(wait.accounted_s)},
                                                {"change_pct", Number(wait.change_pct)}});
    }
    for (const CpuHolder& holder : e.cpu_holders)
      item["cpu_holders"].push_back({{"comm", holder.comm}, {"seconds", Number(holder.seconds)}});
    why.push_back(std::move(item));
  }
  return why;
}

}  // namespace

std::string JsonReporter::Render(const RunResults& results) const {
  // Indented, so that results and baselines diff line by line in review;
  // invalid UTF-8 from workload output is replaced rather than thrown on.
  nlohmann::json j = ToJson(results);
  if (nlohmann::json why = WhyJson(results); !why.empty()) j["why"] = std::move(why);
  std::string json = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  return EscapeMarkupCharacters(json) + "\n";
}

}  // namespace perfgate
