// Results JSON, baselines and the command adapter's output parsing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "adapters/command.h"
#include "base/error.h"
#include "baseline/store.h"
#include "metrics/results_json.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;

Metric MakeMetric(const std::string& name, MetricKind kind, const std::string& unit, double value) {
  Metric m;
  m.name = name;
  m.kind = kind;
  m.unit = unit;
  m.value = value;
  return m;
}

ScenarioResult SampleScenario() {
  ScenarioResult s;
  s.name = "scn";
  s.workload_kind = "command";
  for (int i = 0; i < 3; ++i) {
    Repetition r;
    r.index = i;
    Metric wall = MakeMetric("workload.wall_time", MetricKind::kScalar, "s", 0.5 + i * 0.01);
    Metric count = MakeMetric("syscalls.count", MetricKind::kCounter, "count", 1000);
    count.duration_s = 0.5;
    count.ops = 10;
    Metric lat = MakeMetric("sched.runq_latency", MetricKind::kHistogram, "ns", 0);
    for (uint64_t v = 1; v < 100000; v = v * 3 + 1) lat.hist.Record(v);
    r.metrics = {{wall.name, wall}, {count.name, count}, {lat.name, lat}};
    s.repetitions.push_back(r);
  }
  return s;
}

TEST(ResultsJson, RoundTripsEveryMetricKind) {
  RunResults r;
  r.suite = "suite";
  r.scenarios.push_back(SampleScenario());
  r.environment.kernel = "6.1";
  RunResults back = ResultsFromJson(ToJson(r), "results.json");
  ASSERT_EQ(back.scenarios.size(), 1u);
  const auto& m = back.scenarios[0].repetitions[2].metrics;
  EXPECT_DOUBLE_EQ(m.at("workload.wall_time").value, 0.52);
  EXPECT_DOUBLE_EQ(*StatisticValue(m.at("syscalls.count"), "per_op"), 100);
  EXPECT_DOUBLE_EQ(*StatisticValue(m.at("syscalls.count"), "rate"), 2000);
  EXPECT_EQ(m.at("sched.runq_latency").hist.buckets(),
            r.scenarios[0].repetitions[2].metrics.at("sched.runq_latency").hist.buckets());
  EXPECT_EQ(back.environment.kernel, "6.1");
}

TEST(ResultsJson, RoundTripsRepetitionWarnings) {
  RunResults r;
  r.scenarios.push_back(SampleScenario());
  r.scenarios[0].repetitions[1].warnings = {"BM_Fails: error_occurred: no scratch dir", "second"};
  RunResults back = ResultsFromJson(ToJson(r), "results.json");
  EXPECT_EQ(back.scenarios[0].repetitions[1].warnings, r.scenarios[0].repetitions[1].warnings);
  EXPECT_TRUE(back.scenarios[0].repetitions[0].warnings.empty());
  nlohmann::json j = ToJson(r);
  j["scenarios"][0]["repetitions"][1]["warnings"][1] = 7;
  try {
    ResultsFromJson(j, "results.json");
    FAIL() << "a warning that is not a string must be rejected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("results.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("warnings[1]"), std::string::npos) << e.what();
  }
}

// What a probe cannot measure on this host (the cpu probe without a PMU)
// stays in results.json, so `perfgate report` and `compare` say it again.
TEST(ResultsJson, RoundTripsTheMetricsAProbeCannotMeasureHereAndNamesABadOne) {
  RunResults r;
  r.scenarios.push_back(SampleScenario());
  ProbeReport cpu;
  cpu.name = "cpu";
  cpu.unavailable.push_back({{"cpu.instructions", "cpu.cycles"}, "no hardware PMU", "use --instrument"});
  r.scenarios[0].probes.push_back(cpu);
  RunResults back = ResultsFromJson(ToJson(r), "results.json");
  ASSERT_EQ(back.scenarios[0].probes.size(), 1u);
  ASSERT_EQ(back.scenarios[0].probes[0].unavailable.size(), 1u);
  const UnavailableMetrics& u = back.scenarios[0].probes[0].unavailable[0];
  EXPECT_EQ(u.metrics, (std::vector<std::string>{"cpu.instructions", "cpu.cycles"}));
  EXPECT_EQ(u.reason, "no hardware PMU");
  EXPECT_EQ(u.instead, "use --instrument");
  nlohmann::json j = ToJson(r);
  j["scenarios"][0]["probes"][0]["unavailable"][0]["metrics"][1] = 7;
  try {
    ResultsFromJson(j, "results.json");
    FAIL() << "a metric name that is not a string must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("results.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unavailable[0].metrics[1]"), std::string::npos) << e.what();
  }
}

TEST(ResultsJson, RoundTripsTheAdaptivePlanAndRejectsABadOne) {
  RunResults r;
  r.scenarios.push_back(SampleScenario());
  r.scenarios[0].adaptive = AdaptiveRepetitions{5, 12, true};
  RunResults back = ResultsFromJson(ToJson(r), "results.json");
  ASSERT_TRUE(back.scenarios[0].adaptive);
  EXPECT_EQ(back.scenarios[0].adaptive->min, 5);
  EXPECT_EQ(back.scenarios[0].adaptive->max, 12);
  EXPECT_TRUE(back.scenarios[0].adaptive->paired);
  nlohmann::json j = ToJson(r);
  j["scenarios"][0]["adaptive"]["max"] = 3;
  try {
    ResultsFromJson(j, "results.json");
    FAIL() << "max below min must be rejected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("results.json: $.scenarios[0].adaptive"), std::string::npos) << e.what();
  }
}

TEST(ResultsJson, RoundTripsTheBaselineRepetitionsAndNamesTheirPathOnError) {
  RunResults r;
  r.scenarios.push_back(SampleScenario());
  r.scenarios[0].baseline_repetitions = SampleScenario().repetitions;
  r.scenarios[0].baseline_repetitions[1].metrics.at("workload.wall_time").value = 0.7;
  RunResults back = ResultsFromJson(ToJson(r), "results.json");
  ASSERT_EQ(back.scenarios[0].baseline_repetitions.size(), 3u);
  EXPECT_DOUBLE_EQ(back.scenarios[0].baseline_repetitions[1].metrics.at("workload.wall_time").value, 0.7);
  EXPECT_FALSE(ToJson(SampleScenario()).contains("baseline_repetitions"));
  nlohmann::json j = ToJson(r);
  j["scenarios"][0]["baseline_repetitions"][2]["metrics"] = 7;
  try {
    ResultsFromJson(j, "results.json");
    FAIL() << "metrics that are not an object must be rejected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("results.json: $.scenarios[0].baseline_repetitions[2].metrics"),
              std::string::npos)
        << e.what();
  }
}

TEST(ResultsJson, RoundTripsEvidenceStacksAndRejectsANegativeWeight) {
  RunResults r;
  r.scenarios.push_back(SampleScenario());
  Evidence e;
  e.side = "candidate";
  e.reason = "workload.wall_time.median regressed";
  e.frequency_hz = 99;
  e.slowdown = 1.04;
  e.notes = {"user stacks truncated in 3 of 10 samples"};
  FoldedProfile on_cpu;
  on_cpu.kind = "on-cpu";
  on_cpu.unit = "samples";
  on_cpu.stacks = {{"main;spin", 7}, {"main;read;vfs_read_[k]", 3}, {"<b>;\"x\"", 1}};
  on_cpu.total = 11;
  on_cpu.samples = 11;
  on_cpu.truncated_user_stacks = 3;
  on_cpu.file = "evidence/scn.candidate.on-cpu.folded";
  e.profiles.push_back(on_cpu);
  r.scenarios[0].evidence.push_back(e);
  RunResults back = ResultsFromJson(ToJson(r), "results.json");
  ASSERT_EQ(back.scenarios[0].evidence.size(), 1u);
  const Evidence& got = back.scenarios[0].evidence[0];
  EXPECT_EQ(got.side, "candidate");
  EXPECT_EQ(got.frequency_hz, 99);
  EXPECT_DOUBLE_EQ(got.slowdown, 1.04);
  EXPECT_EQ(got.notes, e.notes);
  const FoldedProfile* p = FindProfile(got, "on-cpu");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->stacks, on_cpu.stacks);
  EXPECT_EQ(p->truncated_user_stacks, 3u);
  EXPECT_EQ(p->file, on_cpu.file);
  EXPECT_EQ(FindProfile(got, "off-cpu"), nullptr);
  EXPECT_FALSE(ToJson(SampleScenario()).contains("evidence"));
  nlohmann::json j = ToJson(r);
  j["scenarios"][0]["evidence"][0]["profiles"][0]["stacks"]["main;spin"] = -1;
  try {
    ResultsFromJson(j, "results.json");
    FAIL() << "a negative weight must be rejected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("$.scenarios[0].evidence[0].profiles[0].stacks[\"main;spin\"]"),
              std::string::npos)
        << e.what();
  }
}

TEST(ResultsJson, WrongSchemaVersionNamesFileAndPath) {
  try {
    ResultsFromJson(nlohmann::json{{"schema_version", 99}, {"suite", "s"}}, "r.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("r.json: $.schema_version: unsupported schema version 99"), std::string::npos);
  }
}

TEST(Baseline, SerializationIsSortedAndRoundTrips) {
  Baseline b{"suite", {}, SampleScenario()};
  std::string text = SerializeBaseline(b);
  EXPECT_LT(text.find("\"environment\""), text.find("\"scenario\""));
  EXPECT_LT(text.find("\"scenario\""), text.find("\"schema_version\""));
  Baseline back = ParseBaseline(text, "b.json");
  EXPECT_EQ(back.scenario.repetitions.size(), 3u);
  EXPECT_EQ(SerializeBaseline(back), text);
}

TEST(Baseline, NeverStoresTheBaselineItWasComparedWith) {
  Baseline b{"suite", {}, SampleScenario()};
  b.scenario.baseline_repetitions = SampleScenario().repetitions;
  EXPECT_EQ(SerializeBaseline(b).find("baseline_repetitions"), std::string::npos);
}

TEST(Baseline, CorruptFilesNameFileAndPath) {
  auto err = [](const std::string& text) {
    try {
      ParseBaseline(text, "b.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err("{\"schema_version\": 1, \"suite\": \"s\", \"scen").find("b.json: invalid JSON"), std::string::npos);
  EXPECT_NE(err(R"({"schema_version": 2, "suite": "s", "scenario": {}})").find("$.schema_version"), std::string::npos);
  EXPECT_NE(err(R"({"schema_version": 1, "suite": "s", "scenario": {"name": "x", "repetitions": [
      {"metrics": {"m.x": {"kind": "histogram", "buckets": [[99999, 1]]}}}]}})")
                .find("$.scenario.repetitions[0].metrics[\"m.x\"].buckets[0]"),
            std::string::npos);
  EXPECT_NE(err(R"({"schema_version": 1, "suite": "s", "scenario": {"name": "x", "repetitions": []}})")
                .find("needs repetitions"),
            std::string::npos);
}

TEST(Baseline, PathRefusesTraversal) {
  EXPECT_THROW(BaselinePath("baselines", "..", "x"), Error);
  EXPECT_THROW(BaselinePath("baselines", "s", "../../etc/passwd"), Error);
  EXPECT_EQ(BaselinePath("baselines", "s", "x"), "baselines/s/x.json");
}

TEST(Baseline, AtomicSaveLeavesNoTemporaryFiles) {
  fs::path dir = fs::temp_directory_path() / ("pg-baseline-" + std::to_string(getpid()));
  std::string file = BaselinePath(dir.string(), "s", "x");
  SaveBaseline(file, {"s", {}, SampleScenario()});
  SaveBaseline(file, {"s", {}, SampleScenario()});
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir / "s")) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1);
  EXPECT_TRUE(LoadBaseline(file).has_value());
  fs::remove_all(dir);
}

TEST(CommandOutput, ReadsMetricsAndOpsAndIgnoresOtherLines) {
  WorkloadOutput out = ParseCommandJsonLines(
      "hello\n{\"ops\": 250}\n{not json\n{\"metric\": \"app.latency\", \"value\": 1.5, \"unit\": \"ms\", \"better\": "
      "\"lower\"}\n",
      "cmd");
  EXPECT_EQ(out.ops, 250);
  ASSERT_EQ(out.metrics.count("app.latency"), 1u);
  EXPECT_DOUBLE_EQ(out.metrics["app.latency"].value, 1.5);
  EXPECT_EQ(out.metrics["app.latency"].unit, "ms");
}

TEST(CommandOutput, MalformedMetricLineIsAnInfrastructureError) {
  try {
    ParseCommandJsonLines("{\"metric\": \"app.x\", \"value\": \"fast\"}\n", "cmd");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    EXPECT_NE(std::string(e.what()).find("cmd: line 1"), std::string::npos);
  }
}

}  // namespace
}  // namespace perfgate
