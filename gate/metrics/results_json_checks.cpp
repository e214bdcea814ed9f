#include <cmath>
#include <optional>

#include "base/error.h"
#include "metrics/results_json_parts.h"

namespace perfgate {

using nlohmann::json;

namespace {

std::vector<double> NumberArray(const JsonObjectReader& r, const std::string& key) {
  std::vector<double> out;
  const json& a = r.ArrayOrEmpty(key);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number() || !std::isfinite(a[i].get<double>())) r.Fail(r.At(key, i), "expected a finite number");
    out.push_back(a[i].get<double>());
  }
  return out;
}

json OptionalToJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json ToJson(const CheckSpec& s) {
  json j = {{"type", ToString(s.type)}, {"metric", s.metric}, {"name", s.name}};
  if (!s.statistic.empty()) j["statistic"] = s.statistic;
  if (s.type == CheckSpec::Type::kRegression) j["max_regression_pct"] = s.max_regression_pct;
  if (s.max) j["max"] = *s.max;
  if (s.min) j["min"] = *s.min;
  return j;
}

CheckSpec CheckSpecFromJson(const json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  CheckSpec s;
  std::string type = r.String("type");
  if (type == "budget")
    s.type = CheckSpec::Type::kBudget;
  else if (type == "regression")
    s.type = CheckSpec::Type::kRegression;
  else
    r.Fail(r.At("type"), "expected \"regression\" or \"budget\", got \"" + type + "\"");
  s.metric = r.String("metric");
  s.statistic = r.String("statistic", "");
  s.name = r.String("name", s.metric);
  s.max_regression_pct = r.Number("max_regression_pct", s.max_regression_pct);
  s.max = r.OptionalNumber("max");
  s.min = r.OptionalNumber("min");
  return s;
}

}  // namespace

json ToJson(const CheckResult& c) {
  json j = {{"spec", ToJson(c.spec)},
            {"statistic", c.statistic},
            {"unit", c.unit},
            {"better", ToString(c.better)},
            {"verdict", ToString(c.verdict)},
            {"baseline_values", c.baseline_values},
            {"candidate_values", c.candidate_values},
            {"baseline_median", c.baseline_median},
            {"candidate_median", c.candidate_median},
            {"change_pct", c.change_pct},
            {"change_ci_low_pct", OptionalToJson(c.change_ci_low_pct)},
            {"change_ci_high_pct", OptionalToJson(c.change_ci_high_pct)},
            {"p_value", OptionalToJson(c.p_value)},
            {"p_adjusted", OptionalToJson(c.p_adjusted)},
            {"min_detectable_pct", OptionalToJson(c.min_detectable_pct)},
            {"message", c.message}};
  if (c.pairs > 0) j["pairs"] = c.pairs;
  if (c.confirmation) {
    j["confirmation"] = {{"confirmed", c.confirmation->confirmed},
                         {"pairs", c.confirmation->pairs},
                         {"seconds", c.confirmation->seconds},
                         {"first", c.confirmation->first}};
  }
  if (c.triage) {
    const CheckResult::Triage& t = *c.triage;
    j["triage"] = {{"state", t.state},
                   {"measured", ToString(t.measured)},
                   {"bound_pct", OptionalToJson(t.bound_pct)},
                   {"reason", t.reason},
                   {"by", t.by},
                   {"until", t.until},
                   {"note", t.note}};
  }
  return j;
}

CheckResult CheckResultFromJson(const json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  CheckResult c;
  c.spec = CheckSpecFromJson(r.Get("spec"), file, r.At("spec"));
  c.statistic = r.String("statistic", "");
  c.unit = r.String("unit", "");
  auto better = ParseBetter(r.String("better", "lower"));
  if (!better) r.Fail(r.At("better"), "expected lower, higher or none");
  c.better = *better;
  auto verdict = ParseVerdict(r.String("verdict"));
  if (!verdict) r.Fail(r.At("verdict"), "unknown verdict");
  c.verdict = *verdict;
  c.baseline_values = NumberArray(r, "baseline_values");
  c.candidate_values = NumberArray(r, "candidate_values");
  c.baseline_median = r.Number("baseline_median", 0);
  c.candidate_median = r.Number("candidate_median", 0);
  c.change_pct = r.Number("change_pct", 0);
  c.change_ci_low_pct = r.OptionalNumber("change_ci_low_pct");
  c.change_ci_high_pct = r.OptionalNumber("change_ci_high_pct");
  c.p_value = r.OptionalNumber("p_value");
  c.p_adjusted = r.OptionalNumber("p_adjusted");
  c.min_detectable_pct = r.OptionalNumber("min_detectable_pct");
  c.message = r.String("message", "");
  c.pairs = r.Int("pairs", 0);
  if (r.Has("confirmation")) {
    JsonObjectReader cr(r.Get("confirmation"), file, r.At("confirmation"));
    CheckResult::Confirmation confirmation;
    confirmation.confirmed = cr.Bool("confirmed");
    confirmation.pairs = cr.Int("pairs", 0);
    confirmation.seconds = cr.Number("seconds", 0);
    confirmation.first = cr.String("first", "");
    c.confirmation = std::move(confirmation);
  }
  if (r.Has("triage")) {
    JsonObjectReader tr(r.Get("triage"), file, r.At("triage"));
    CheckResult::Triage t;
    t.state = tr.String("state");
    if (t.state != "accepted" && t.state != "exceeded" && t.state != "quarantined" && t.state != "expired") {
      tr.Fail(tr.At("state"), "expected accepted, exceeded, quarantined or expired");
    }
    auto measured = ParseVerdict(tr.String("measured", "pass"));
    if (!measured) tr.Fail(tr.At("measured"), "unknown verdict");
    t.measured = *measured;
    t.bound_pct = tr.OptionalNumber("bound_pct");
    t.reason = tr.String("reason", "");
    t.by = tr.String("by", "");
    t.until = tr.String("until", "");
    t.note = tr.String("note", "");
    c.triage = std::move(t);
  }
  return c;
}

json ToJson(const ProbeReport& p) {
  json hooks = json::array();
  for (const auto& h : p.hooks) {
    hooks.push_back({{"hook", h.hook}, {"attach_type", h.attach_type}, {"target", h.target}, {"rejected", h.rejected}});
  }
  json j = {{"name", p.name},
            {"scope", p.scope},
            {"hooks", hooks},
            {"run_count", p.run_count},
            {"run_time_ns", p.run_time_ns},
            {"drops", p.drops},
            {"workload_cpu_ns", p.workload_cpu_ns},
            {"not_attached", p.not_attached}};
  if (!p.unavailable.empty()) {
    json unavailable = json::array();
    for (const UnavailableMetrics& u : p.unavailable)
      unavailable.push_back({{"metrics", u.metrics}, {"reason", u.reason}, {"instead", u.instead}});
    j["unavailable"] = std::move(unavailable);
  }
  return j;
}

ProbeReport ProbeReportFromJson(const json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  ProbeReport p;
  p.name = r.String("name");
  p.scope = r.String("scope", "workload");
  const json& hooks = r.ArrayOrEmpty("hooks");
  for (size_t i = 0; i < hooks.size(); ++i) {
    JsonObjectReader h(hooks[i], file, r.At("hooks", i));
    HookChoice c{h.String("hook", ""), h.String("attach_type", ""), h.String("target", ""), {}};
    const json& rejected = h.ArrayOrEmpty("rejected");
    for (size_t k = 0; k < rejected.size(); ++k) {
      if (!rejected[k].is_string()) h.Fail(h.At("rejected", k), "expected a string");
      c.rejected.push_back(rejected[k].get<std::string>());
    }
    p.hooks.push_back(std::move(c));
  }
  p.run_count = static_cast<uint64_t>(std::max<int64_t>(0, r.Integer("run_count", 0)));
  p.run_time_ns = static_cast<uint64_t>(std::max<int64_t>(0, r.Integer("run_time_ns", 0)));
  p.drops = static_cast<uint64_t>(std::max<int64_t>(0, r.Integer("drops", 0)));
  p.workload_cpu_ns = static_cast<uint64_t>(std::max<int64_t>(0, r.Integer("workload_cpu_ns", 0)));
  p.not_attached = r.String("not_attached", "");
  const json& unavailable = r.ArrayOrEmpty("unavailable");
  for (size_t i = 0; i < unavailable.size(); ++i) {
    JsonObjectReader u(unavailable[i], file, r.At("unavailable", i));
    UnavailableMetrics entry{{}, u.String("reason"), u.String("instead", "")};
    const json& metrics = u.ArrayOrEmpty("metrics");
    for (size_t k = 0; k < metrics.size(); ++k) {
      if (!metrics[k].is_string()) u.Fail(u.At("metrics", k), "expected a string");
      entry.metrics.push_back(metrics[k].get<std::string>());
    }
    p.unavailable.push_back(std::move(entry));
  }
  return p;
}

}  // namespace perfgate
