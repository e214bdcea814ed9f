#include <cmath>
#include <limits>
#include <optional>

#include "base/error.h"
#include "metrics/results_json_parts.h"

namespace perfgate {

using nlohmann::json;
using results_json::ArrayFromJson;
using results_json::Count;
using results_json::StringArray;

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
  return {{"side", e.side},         {"reason", e.reason}, {"frequency_hz", e.frequency_hz},
          {"slowdown", e.slowdown}, {"notes", e.notes},   {"profiles", profiles}};
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
        if (!weight.is_number_unsigned())
          pr.Fail(pr.At("stacks") + "[\"" + stack + "\"]", "expected a non-negative integer");
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

namespace {

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

}  // namespace

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

}  // namespace perfgate
