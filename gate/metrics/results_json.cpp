#include "metrics/results_json.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "metrics/error.h"
#include "metrics/json_reader.h"

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
  if (type == "budget") s.type = CheckSpec::Type::kBudget;
  else if (type == "regression") s.type = CheckSpec::Type::kRegression;
  else r.Fail(r.At("type"), "expected \"regression\" or \"budget\", got \"" + type + "\"");
  s.metric = r.String("metric");
  s.statistic = r.String("statistic", "");
  s.name = r.String("name", s.metric);
  s.max_regression_pct = r.Number("max_regression_pct", s.max_regression_pct);
  s.max = r.OptionalNumber("max");
  s.min = r.OptionalNumber("min");
  return s;
}

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

}  // namespace

json ToJson(const Metric& m) {
  json j = {{"kind", ToString(m.kind)}, {"unit", m.unit}, {"better", ToString(m.better)}};
  switch (m.kind) {
    case MetricKind::kScalar:
      j["value"] = m.value;
      break;
    case MetricKind::kCounter:
      j["count"] = m.value;
      j["duration_s"] = m.duration_s;
      if (m.ops) j["ops"] = *m.ops;
      break;
    case MetricKind::kHistogram: {
      json buckets = json::array();
      for (const auto& [index, count] : m.hist.buckets()) buckets.push_back({index, count});
      j["buckets"] = buckets;
      j["count"] = m.hist.count();
      break;
    }
  }
  return j;
}

Metric MetricFromJson(const json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  Metric m;
  auto kind = ParseMetricKind(r.String("kind"));
  if (!kind) r.Fail(r.At("kind"), "expected scalar, counter or histogram");
  m.kind = *kind;
  m.unit = r.String("unit", "");
  auto better = ParseBetter(r.String("better", "lower"));
  if (!better) r.Fail(r.At("better"), "expected lower, higher or none");
  m.better = *better;
  switch (m.kind) {
    case MetricKind::kScalar:
      m.value = r.Number("value");
      break;
    case MetricKind::kCounter:
      m.value = r.Number("count");
      m.duration_s = r.Number("duration_s", 0);
      m.ops = r.OptionalNumber("ops");
      break;
    case MetricKind::kHistogram: {
      const json& buckets = r.ArrayOrEmpty("buckets");
      for (size_t i = 0; i < buckets.size(); ++i) {
        const json& b = buckets[i];
        if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() || !b[1].is_number_unsigned() ||
            b[0].get<uint64_t>() >= LogLinearHistogram::kBucketCount) {
          r.Fail(r.At("buckets", i), "expected [bucket index, count] with a valid index");
        }
        m.hist.AddBucket(b[0].get<unsigned>(), b[1].get<uint64_t>());
      }
      break;
    }
  }
  return m;
}

json ToJson(const Environment& e) {
  return {{"kernel", e.kernel},
          {"cpu_model", e.cpu_model},
          {"cpu_count", e.cpu_count},
          {"perfgate_version", e.perfgate_version},
          {"git_commit", e.git_commit},
          {"hostname", e.hostname},
          {"timestamp", e.timestamp}};
}

Environment EnvironmentFromJson(const json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  Environment e;
  e.kernel = r.String("kernel", "");
  e.cpu_model = r.String("cpu_model", "");
  e.cpu_count = r.Int("cpu_count", 0);
  e.perfgate_version = r.String("perfgate_version", "");
  e.git_commit = r.String("git_commit", "");
  e.hostname = r.String("hostname", "");
  e.timestamp = r.String("timestamp", "");
  return e;
}

namespace {

json ToJson(const std::vector<Repetition>& repetitions) {
  json reps = json::array();
  for (const auto& rep : repetitions) {
    json metrics = json::object();
    for (const auto& [name, m] : rep.metrics) metrics[name] = ToJson(m);
    json jr = {{"index", rep.index}, {"exit_status", rep.exit_status}, {"metrics", metrics}};
    if (!rep.failure.empty()) jr["failure"] = rep.failure;
    if (!rep.tainted.empty()) jr["tainted"] = rep.tainted;
    if (!rep.warnings.empty()) jr["warnings"] = rep.warnings;
    for (const CpuHolder& h : rep.cpu_holders) jr["cpu_holders"].push_back({{"comm", h.comm}, {"seconds", h.seconds}});
    reps.push_back(std::move(jr));
  }
  return reps;
}

std::vector<Repetition> RepetitionsFromJson(const JsonObjectReader& r, const char* key, const std::string& file) {
  std::vector<Repetition> out;
  const json& reps = r.ArrayOrEmpty(key);
  for (size_t i = 0; i < reps.size(); ++i) {
    std::string rp = r.At(key, i);
    JsonObjectReader rr(reps[i], file, rp);
    Repetition rep;
    rep.index = rr.Int("index", static_cast<int>(i));
    rep.exit_status = rr.Int("exit_status", 0);
    rep.failure = rr.String("failure", "");
    rep.tainted = rr.String("tainted", "");
    if (rr.Has("warnings")) {
      const json& warnings = rr.ArrayOrEmpty("warnings");
      for (size_t w = 0; w < warnings.size(); ++w) {
        if (!warnings[w].is_string()) rr.Fail(rr.At("warnings", w), "expected a string");
        rep.warnings.push_back(warnings[w].get<std::string>());
      }
    }
    const json& holders = rr.ArrayOrEmpty("cpu_holders");
    for (size_t h = 0; h < holders.size(); ++h) {
      JsonObjectReader hr(holders[h], file, rr.At("cpu_holders", h));
      rep.cpu_holders.push_back({hr.String("comm"), hr.Number("seconds", 0.0, 1e9)});
    }
    const json& metrics = rr.Get("metrics");
    if (!metrics.is_object()) rr.Fail(rr.At("metrics"), "expected an object");
    for (const auto& [name, mj] : metrics.items()) {
      Metric m = MetricFromJson(mj, file, rr.At("metrics") + "[\"" + name + "\"]");
      m.name = name;
      rep.metrics.emplace(name, std::move(m));
    }
    out.push_back(std::move(rep));
  }
  return out;
}

json ToJson(const Evidence& e) {
  json profiles = json::array();
  for (const auto& p : e.profiles) {
    json stacks = json::object();
    for (const auto& [stack, weight] : p.stacks) stacks[stack] = weight;
    json pj = {{"kind", p.kind},
               {"unit", p.unit},
               {"total", p.total},
               {"samples", p.samples},
               {"truncated_user_stacks", p.truncated_user_stacks},
               {"stacks", stacks}};
    if (!p.sources.empty()) pj["sources"] = p.sources;
    if (!p.file.empty()) pj["file"] = p.file;
    if (p.spread_df > 0) pj["spread"] = {{"chi_square", p.spread_chi_square}, {"df", p.spread_df}};
    profiles.push_back(std::move(pj));
  }
  return {{"side", e.side},   {"reason", e.reason}, {"frequency_hz", e.frequency_hz},
          {"slowdown", e.slowdown}, {"notes", e.notes},   {"profiles", profiles}};
}

uint64_t Count(const JsonObjectReader& r, const std::string& key) {
  const int64_t n = r.Integer(key, 0);
  if (n < 0) r.Fail(r.At(key), "expected a non-negative integer");
  return static_cast<uint64_t>(n);
}

std::vector<std::string> StringArray(const JsonObjectReader& r, const std::string& key) {
  std::vector<std::string> out;
  const json& a = r.ArrayOrEmpty(key);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) r.Fail(r.At(key, i), "expected a string");
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

Evidence EvidenceFromJson(const json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  Evidence e;
  e.side = r.String("side");
  if (e.side != "baseline" && e.side != "candidate") r.Fail(r.At("side"), "expected \"baseline\" or \"candidate\"");
  e.reason = r.String("reason", "");
  const int64_t hz = r.Integer("frequency_hz", 0);
  if (hz < 0 || hz > 100000) r.Fail(r.At("frequency_hz"), "expected 0..100000");
  e.frequency_hz = static_cast<int>(hz);
  e.slowdown = r.Number("slowdown", 0);
  e.notes = StringArray(r, "notes");
  const json& profiles = r.ArrayOrEmpty("profiles");
  for (size_t i = 0; i < profiles.size(); ++i) {
    JsonObjectReader pr(profiles[i], file, r.At("profiles", i));
    FoldedProfile p;
    p.kind = pr.String("kind");
    if (p.kind != "on-cpu" && p.kind != "off-cpu" && p.kind != "preempted" && p.kind != "futex" && p.kind != "counted")
      pr.Fail(pr.At("kind"), "expected \"on-cpu\", \"off-cpu\", \"preempted\", \"futex\" or \"counted\"");
    p.unit = pr.String("unit", "");
    p.total = Count(pr, "total");
    p.samples = Count(pr, "samples");
    p.truncated_user_stacks = Count(pr, "truncated_user_stacks");
    p.file = pr.String("file", "");
    if (pr.Has("spread")) {
      JsonObjectReader sr(pr.Get("spread"), file, pr.At("spread"));
      p.spread_chi_square = sr.Number("chi_square", 0, std::numeric_limits<double>::max());
      p.spread_df = static_cast<uint32_t>(sr.Integer("df", 1, std::numeric_limits<int>::max()));
    }
    if (pr.Has("stacks")) {
      const json& stacks = pr.Get("stacks");
      if (!stacks.is_object()) pr.Fail(pr.At("stacks"), "expected an object of folded stack -> weight");
      for (const auto& [stack, weight] : stacks.items()) {
        if (!weight.is_number_unsigned()) pr.Fail(pr.At("stacks") + "[\"" + stack + "\"]", "expected a non-negative integer");
        p.stacks[stack] = weight.get<uint64_t>();
      }
    }
    if (pr.Has("sources")) {
      const json& sources = pr.Get("sources");
      if (!sources.is_object()) pr.Fail(pr.At("sources"), "expected an object of frame -> \"file:line\"");
      for (const auto& [frame, source] : sources.items()) {
        if (!source.is_string()) pr.Fail(pr.At("sources") + "[\"" + frame + "\"]", "expected a string");
        p.sources[frame] = source.get<std::string>();
      }
    }
    e.profiles.push_back(std::move(p));
  }
  return e;
}

// Every element of the array at `key` (absent: none), read by `read`.
template <typename Read>
auto ArrayFromJson(const JsonObjectReader& r, const std::string& key, const std::string& file, Read read) {
  std::vector<decltype(read(json(), file, std::string()))> out;
  const json& items = r.ArrayOrEmpty(key);
  for (size_t i = 0; i < items.size(); ++i) out.push_back(read(items[i], file, r.At(key, i)));
  return out;
}

json FiniteOrNull(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

std::optional<Pricing> ParsePricing(const std::string& text) {
  for (Pricing p : {Pricing::kWaitTime, Pricing::kEvents, Pricing::kLatencySum, Pricing::kReadBack, Pricing::kUnpriced})
    if (ToString(p) == text) return p;
  return std::nullopt;
}

json ToJson(const KernelShift& shift) {
  json j = {{"metric", shift.metric}, {"statistic", shift.statistic}, {"unit", shift.unit}};
  const std::pair<const char*, double> numbers[] = {{"baseline", shift.baseline_median},
                                                    {"candidate", shift.candidate_median},
                                                    {"change_pct", shift.change_pct},
                                                    {"effect_size", shift.effect_size}};
  for (const auto& [key, value] : numbers) j[key] = FiniteOrNull(value);
  j["pricing"] = ToString(shift.pricing);
  j["per"] = shift.per_op ? "op" : "repetition";
  if (shift.pricing != Pricing::kUnpriced) {
    j["accounted_s"] = FiniteOrNull(shift.accounted_s);
    j["accounted_at_least_s"] = FiniteOrNull(shift.accounted_low_s);
    if (shift.share) j["share_of_wall_time_change"] = FiniteOrNull(*shift.share);
    if (shift.event_cost_s > 0) j["event_cost_s"] = FiniteOrNull(shift.event_cost_s);
    if (!shift.excluding.empty()) j["excluding"] = shift.excluding;
  }
  return j;
}

KernelShift KernelShiftFromJson(const json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  KernelShift shift{.metric = r.String("metric"), .statistic = r.String("statistic", ""), .unit = r.String("unit", "")};
  shift.baseline_median = r.OptionalNumber("baseline").value_or(0);
  shift.candidate_median = r.OptionalNumber("candidate").value_or(0);
  // null: a change from zero, +inf or -inf as the medians say.
  shift.change_pct =
      r.OptionalNumber("change_pct").value_or(std::copysign(HUGE_VAL, shift.candidate_median - shift.baseline_median));
  shift.effect_size = r.OptionalNumber("effect_size").value_or(0);
  const std::string pricing = r.String("pricing", "unpriced");
  auto parsed = ParsePricing(pricing);
  if (!parsed) r.Fail(r.At("pricing"), "unknown pricing \"" + pricing + "\"");
  shift.pricing = *parsed;
  shift.per_op = r.String("per", "repetition") == "op";
  shift.accounted_s = r.OptionalNumber("accounted_s").value_or(0);
  shift.accounted_low_s = r.OptionalNumber("accounted_at_least_s").value_or(0);
  shift.share = r.OptionalNumber("share_of_wall_time_change");
  shift.event_cost_s = r.OptionalNumber("event_cost_s").value_or(0);
  const json& excluding = r.ArrayOrEmpty("excluding");
  for (size_t i = 0; i < excluding.size(); ++i) {
    if (!excluding[i].is_string()) r.Fail(r.At("excluding", i), "expected a string");
    shift.excluding.push_back(excluding[i].get<std::string>());
  }
  return shift;
}

json ToJson(const Explanation& e) {
  json j = {{"failing", e.failing}, {"per", e.per_op ? "op" : "repetition"}, {"causes", json::array()}};
  if (e.wall_change_s) j["wall_time_change_s"] = FiniteOrNull(*e.wall_change_s);
  for (const KernelShift& shift : e.causes) j["causes"].push_back(ToJson(shift));
  if (e.user_code) {
    j["user_code"] = {{"function", e.user_code->function},
                      {"self_delta_pp", FiniteOrNull(e.user_code->self_delta_pp)},
                      {"samples", e.user_code->samples},
                      {"margin_pp", FiniteOrNull(e.user_code->margin_pp)}};
    if (e.user_code->counted) j["user_code"]["counted"] = true;
  }
  for (const HostShift& host : e.host) {
    j["host_noise"].push_back({{"metric", host.metric},
                               {"unit", host.unit},
                               {"baseline", FiniteOrNull(host.baseline_median)},
                               {"candidate", FiniteOrNull(host.candidate_median)},
                               {"change_pct", FiniteOrNull(host.change_pct)},
                               {"moved", host.moved}});
  }
  for (const KernelShift& wait : e.cpu_waits) j["cpu_waits_on_busy_host"].push_back(ToJson(wait));
  for (const CpuHolder& holder : e.cpu_holders)
    j["cpu_holders"].push_back({{"comm", holder.comm}, {"seconds", FiniteOrNull(holder.seconds)}});
  return j;
}

Explanation ExplanationFromJson(const json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  Explanation e;
  const json& failing = r.ArrayOrEmpty("failing");
  for (size_t i = 0; i < failing.size(); ++i) {
    if (!failing[i].is_string()) r.Fail(r.At("failing", i), "expected a string");
    e.failing.push_back(failing[i].get<std::string>());
  }
  e.per_op = r.String("per", "repetition") == "op";
  e.wall_change_s = r.OptionalNumber("wall_time_change_s");
  e.causes = ArrayFromJson(r, "causes", file, KernelShiftFromJson);
  e.cpu_waits = ArrayFromJson(r, "cpu_waits_on_busy_host", file, KernelShiftFromJson);
  if (r.Has("user_code")) {
    JsonObjectReader u(r.Get("user_code"), file, r.At("user_code"));
    e.user_code = UserCodeGrowth{.function = u.String("function"),
                                 .self_delta_pp = u.OptionalNumber("self_delta_pp").value_or(0),
                                 .samples = Count(u, "samples"),
                                 .margin_pp = u.OptionalNumber("margin_pp").value_or(0),
                                 .counted = u.Bool("counted", false)};
  }
  const json& host = r.ArrayOrEmpty("host_noise");
  for (size_t i = 0; i < host.size(); ++i) {
    JsonObjectReader h(host[i], file, r.At("host_noise", i));
    e.host.push_back({.metric = h.String("metric"),
                      .unit = h.String("unit", ""),
                      .baseline_median = h.OptionalNumber("baseline").value_or(0),
                      .candidate_median = h.OptionalNumber("candidate").value_or(0),
                      .change_pct = h.OptionalNumber("change_pct").value_or(0),
                      .moved = h.Bool("moved", true)});
  }
  const json& holders = r.ArrayOrEmpty("cpu_holders");
  for (size_t i = 0; i < holders.size(); ++i) {
    JsonObjectReader h(holders[i], file, r.At("cpu_holders", i));
    e.cpu_holders.push_back({h.String("comm"), h.OptionalNumber("seconds").value_or(0)});
  }
  return e;
}

}  // namespace

json ToJson(const ScenarioResult& s) {
  json reps = ToJson(s.repetitions);
  json probes = json::array();
  for (const auto& p : s.probes) probes.push_back(ToJson(p));
  json checks = json::array();
  for (const auto& c : s.checks) checks.push_back(ToJson(c));
  json j = {{"name", s.name},     {"workload_kind", s.workload_kind}, {"repetitions", reps},
            {"probes", probes},   {"checks", checks},                 {"duration_s", s.duration_s},
            {"timestamp", s.timestamp}};
  if (!s.error.empty()) j["error"] = s.error;
  if (!s.baseline_repetitions.empty()) j["baseline_repetitions"] = ToJson(s.baseline_repetitions);
  if (!s.retaken.empty()) j["retaken_repetitions"] = ToJson(s.retaken);
  if (s.adaptive) {
    j["adaptive"] = {{"min", s.adaptive->min}, {"max", s.adaptive->max}, {"paired", s.adaptive->paired}};
    if (s.adaptive->busy_host) j["adaptive"]["busy_host"] = true;
  }
  if (s.host_speed) {
    const HostSpeed& h = *s.host_speed;
    j["host_speed"] = {{"direction", ToString(h.direction)}, {"canary", h.canary},
                       {"change_pct", h.change_pct},         {"low_pct", h.low_pct},
                       {"high_pct", h.high_pct},             {"confidence", h.confidence},
                       {"baseline_count", h.baseline_count},
                       {"candidate_count", h.candidate_count}};
  }
  if (s.trace) {
    j["trace"] = {{"file", s.trace->file},         {"reason", s.trace->reason},
                  {"produced", s.trace->produced}, {"received", s.trace->received},
                  {"dropped", s.trace->dropped},   {"buffer_bytes", s.trace->buffer_bytes},
                  {"expected_rate", s.trace->expected_rate}};
  }
  if (!s.evidence.empty()) {
    json evidence = json::array();
    for (const auto& e : s.evidence) evidence.push_back(ToJson(e));
    j["evidence"] = evidence;
  }
  if (s.explanation) j["explanation"] = ToJson(*s.explanation);
  return j;
}

ScenarioResult ScenarioFromJson(const json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  ScenarioResult s;
  s.name = r.String("name");
  s.workload_kind = r.String("workload_kind", "");
  s.error = r.String("error", "");
  s.duration_s = r.Number("duration_s", 0);
  s.timestamp = r.String("timestamp", "");
  if (r.Has("adaptive")) {
    JsonObjectReader a(r.Get("adaptive"), file, r.At("adaptive"));
    AdaptiveRepetitions adaptive;
    adaptive.min = a.Int("min", 0);
    adaptive.max = a.Int("max", 0);
    adaptive.paired = a.Bool("paired", false);
    adaptive.busy_host = a.Bool("busy_host", false);
    if (adaptive.min < 2 || adaptive.max < adaptive.min || adaptive.max > 10000)
      a.Fail(r.At("adaptive"), "expected 2 <= min <= max <= 10000");
    s.adaptive = adaptive;
  }
  if (r.Has("host_speed")) {
    JsonObjectReader h(r.Get("host_speed"), file, r.At("host_speed"));
    HostSpeed speed;
    const std::string direction = h.String("direction");
    if (direction == "slower") {
      speed.direction = HostSpeed::Direction::kSlower;
    } else if (direction == "faster") {
      speed.direction = HostSpeed::Direction::kFaster;
    } else if (direction != "steady") {
      h.Fail(h.At("direction"), "expected \"steady\", \"slower\" or \"faster\", got \"" + direction + "\"");
    }
    speed.canary = h.String("canary");
    speed.change_pct = h.Number("change_pct");
    speed.low_pct = h.Number("low_pct");
    speed.high_pct = h.Number("high_pct");
    speed.confidence = h.Number("confidence", 0.5, 0.9999);
    speed.baseline_count = h.Int("baseline_count", 0);
    speed.candidate_count = h.Int("candidate_count", 0);
    s.host_speed = speed;
  }
  if (r.Has("trace")) {
    JsonObjectReader t(r.Get("trace"), file, r.At("trace"));
    TraceSummary trace;
    trace.file = t.String("file");
    trace.reason = t.String("reason", "");
    trace.produced = Count(t, "produced");
    trace.received = Count(t, "received");
    trace.dropped = Count(t, "dropped");
    trace.buffer_bytes = Count(t, "buffer_bytes");
    trace.expected_rate = t.Number("expected_rate", 0);
    s.trace = trace;
  }
  s.evidence = ArrayFromJson(r, "evidence", file, EvidenceFromJson);
  s.repetitions = RepetitionsFromJson(r, "repetitions", file);
  s.baseline_repetitions = RepetitionsFromJson(r, "baseline_repetitions", file);
  s.retaken = RepetitionsFromJson(r, "retaken_repetitions", file);
  s.probes = ArrayFromJson(r, "probes", file, ProbeReportFromJson);
  s.checks = ArrayFromJson(r, "checks", file, CheckResultFromJson);
  if (r.Has("explanation")) s.explanation = ExplanationFromJson(r.Get("explanation"), file, r.At("explanation"));
  return s;
}

json ToJson(const RunResults& res) {
  json scenarios = json::array();
  for (const auto& s : res.scenarios) scenarios.push_back(ToJson(s));
  json j = {{"schema_version", res.schema_version},
            {"suite", res.suite},
            {"suite_file", res.suite_file},
            {"environment", ToJson(res.environment)},
            {"scenarios", scenarios},
            {"partial", res.partial},
            {"verdict", ToString(res.verdict)},
            {"exit_code", res.exit_code}};
  if (res.baseline_environment) j["baseline_environment"] = ToJson(*res.baseline_environment);
  if (!res.baseline_source.empty()) j["baseline_source"] = res.baseline_source;
  if (res.strict) j["strict"] = true;
  if (!res.shard.empty()) j["shard"] = res.shard;
  if (!res.skipped_trailers.empty()) j["skipped_trailers"] = res.skipped_trailers;
  return j;
}

RunResults ResultsFromJson(const json& j, const std::string& file) {
  JsonObjectReader r(j, file, "$");
  RunResults res;
  // Compared before narrowing: 2^32 + 1 must not read as version 1.
  const int64_t schema_version = r.Integer("schema_version");
  if (schema_version != kResultsSchemaVersion) {
    r.Fail(r.At("schema_version"), "unsupported schema version " + std::to_string(schema_version) +
                                       " (this perfgate reads " + std::to_string(kResultsSchemaVersion) + ")");
  }
  res.schema_version = kResultsSchemaVersion;
  res.suite = r.String("suite");
  res.suite_file = r.String("suite_file", "");
  if (r.Has("environment")) res.environment = EnvironmentFromJson(r.Get("environment"), file, r.At("environment"));
  if (r.Has("baseline_environment")) {
    res.baseline_environment = EnvironmentFromJson(r.Get("baseline_environment"), file, r.At("baseline_environment"));
  }
  res.baseline_source = r.String("baseline_source", "");
  res.strict = r.Bool("strict", false);
  res.shard = r.String("shard", "");
  res.skipped_trailers = StringArray(r, "skipped_trailers");
  const json& scenarios = r.ArrayOrEmpty("scenarios");
  for (size_t i = 0; i < scenarios.size(); ++i) {
    res.scenarios.push_back(ScenarioFromJson(scenarios[i], file, r.At("scenarios", i)));
  }
  res.partial = r.Bool("partial", false);
  auto verdict = ParseVerdict(r.String("verdict", "pass"));
  if (!verdict) r.Fail(r.At("verdict"), "unknown verdict");
  res.verdict = *verdict;
  res.exit_code = r.Int("exit_code", 0);
  return res;
}

RunResults ReadResultsFile(const std::string& file) { return ResultsFromJson(ReadJsonFile(file), file); }

}  // namespace perfgate
