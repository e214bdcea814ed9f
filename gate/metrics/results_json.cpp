#include "metrics/results_json.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "base/json_reader.h"
#include "metrics/results_json_parts.h"

namespace perfgate {

using nlohmann::json;

using results_json::ArrayFromJson;
using results_json::Count;
using results_json::StringArray;

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
  return {{"kernel", e.kernel},         {"cpu_model", e.cpu_model},
          {"cpu_count", e.cpu_count},   {"perfgate_version", e.perfgate_version},
          {"git_commit", e.git_commit}, {"hostname", e.hostname},
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

}  // namespace

json ToJson(const ScenarioResult& s) {
  json reps = ToJson(s.repetitions);
  json probes = json::array();
  for (const auto& p : s.probes) probes.push_back(ToJson(p));
  json checks = json::array();
  for (const auto& c : s.checks) checks.push_back(ToJson(c));
  json j = {{"name", s.name},   {"workload_kind", s.workload_kind}, {"repetitions", reps},     {"probes", probes},
            {"checks", checks}, {"duration_s", s.duration_s},       {"timestamp", s.timestamp}};
  if (!s.error.empty()) j["error"] = s.error;
  if (!s.baseline_repetitions.empty()) j["baseline_repetitions"] = ToJson(s.baseline_repetitions);
  if (!s.retaken.empty()) j["retaken_repetitions"] = ToJson(s.retaken);
  if (s.adaptive) {
    j["adaptive"] = {{"min", s.adaptive->min}, {"max", s.adaptive->max}, {"paired", s.adaptive->paired}};
    if (s.adaptive->busy_host) j["adaptive"]["busy_host"] = true;
  }
  if (s.host_speed) {
    const HostSpeed& h = *s.host_speed;
    j["host_speed"] = {{"direction", ToString(h.direction)},
                       {"canary", h.canary},
                       {"change_pct", h.change_pct},
                       {"low_pct", h.low_pct},
                       {"high_pct", h.high_pct},
                       {"confidence", h.confidence},
                       {"baseline_count", h.baseline_count},
                       {"candidate_count", h.candidate_count}};
    if (h.share < 1) j["host_speed"]["share"] = h.share;
  }
  if (s.trace) {
    j["trace"] = {{"file", s.trace->file},
                  {"reason", s.trace->reason},
                  {"produced", s.trace->produced},
                  {"received", s.trace->received},
                  {"dropped", s.trace->dropped},
                  {"buffer_bytes", s.trace->buffer_bytes},
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
    speed.share = h.Has("share") ? h.Number("share", 0, 1) : 1;
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
  json j = {{"schema_version", res.schema_version},   {"suite", res.suite},        {"suite_file", res.suite_file},
            {"environment", ToJson(res.environment)}, {"scenarios", scenarios},    {"partial", res.partial},
            {"verdict", ToString(res.verdict)},       {"exit_code", res.exit_code}};
  if (res.baseline_environment) j["baseline_environment"] = ToJson(*res.baseline_environment);
  if (!res.baseline_source.empty()) j["baseline_source"] = res.baseline_source;
  if (res.strict) j["strict"] = true;
  if (!res.shard.empty()) j["shard"] = res.shard;
  for (const auto& [shard, host] : res.shard_hosts) j["shard_hosts"].push_back({{"shard", shard}, {"host", host}});
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
  const json& shard_hosts = r.ArrayOrEmpty("shard_hosts");
  for (size_t i = 0; i < shard_hosts.size(); ++i) {
    JsonObjectReader h(shard_hosts[i], file, r.At("shard_hosts", i), {"shard", "host"});
    res.shard_hosts.emplace_back(h.String("shard"), h.String("host"));
  }
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
