// The gbench adapter on real Google Benchmark 1.7 JSON output: pg-micro's
// (tests/fixtures/gbench/micro.json) and a benchmark binary with errors, NaN
// counters, template and min_time names, threads and --benchmark_repetitions=3
// (odd-repetitions.json), plus malformed variants.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "adapters/gbench.h"
#include "adapters/tool_output.h"
#include "base/error.h"
#include "harness/errors.h"
#include "harness/files.h"

namespace perfgate {
namespace {

using nlohmann::json;

const testing::FixtureDir GbenchFixture("gbench");

std::string GbenchParseError(const std::string& text) {
  return testing::ErrorOf([&] { ParseGbenchJson(text, "Google Benchmark output of bm"); }, ExitCode::kInfra);
}

const json* Row(const json& doc, const std::string& name) {
  for (const auto& row : doc["benchmarks"]) {
    if (row["name"] == name) return &row;
  }
  return nullptr;
}

bool HasWarning(const WorkloadOutput& out, const std::string& needle) {
  return std::any_of(out.warnings.begin(), out.warnings.end(),
                     [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}

TEST(GbenchOutput, RealMicroOutputGivesTimesPerIterationInNanoseconds) {
  const std::string text = GbenchFixture("micro.json");
  const json doc = json::parse(text);
  WorkloadOutput out = ParseGbenchJson(text, "bm");
  const json* getppid = Row(doc, "BM_SyscallGetppid");
  ASSERT_NE(getppid, nullptr);
  const Metric& real = out.metrics.at("gbench.BM_SyscallGetppid.real_time");
  EXPECT_DOUBLE_EQ(real.value, (*getppid)["real_time"].get<double>());
  EXPECT_EQ(real.unit, "ns");
  EXPECT_EQ(real.better, Better::kLower);
  EXPECT_DOUBLE_EQ(out.metrics.at("gbench.BM_SyscallGetppid.cpu_time").value, (*getppid)["cpu_time"].get<double>());
  // '/' is allowed in a segment: the name stays as Google Benchmark prints it.
  EXPECT_TRUE(out.metrics.count("gbench.BM_PipePingPong/real_time.real_time"));
  EXPECT_TRUE(out.metrics.count("gbench.BM_WriteFsync/real_time.cpu_time"));
  const Metric& items = out.metrics.at("gbench.BM_PageFaultTouch.items_per_second");
  EXPECT_EQ(items.better, Better::kHigher);
  EXPECT_EQ(items.unit, "items/s");
  // Six benchmarks, real and CPU time each, one counter; no "iterations" or other row fields.
  EXPECT_EQ(out.metrics.size(), 13u);
  EXPECT_TRUE(out.warnings.empty());
  EXPECT_FALSE(out.ops);
}

TEST(GbenchOutput, RepetitionsInOneProcessGiveTheirMedianAndAggregatesAreIgnored) {
  const std::string text = GbenchFixture("odd-repetitions.json");
  const json doc = ParseToolJson(text, "fixture");  // it has NaN, which json::parse refuses
  WorkloadOutput out = ParseGbenchJson(text, "bm");
  std::vector<double> rows;
  for (const auto& row : doc["benchmarks"]) {
    if (row["name"] == "BM_Vec<int, 64>/8/real_time" && row["run_type"] == "iteration") {
      EXPECT_EQ(row["time_unit"], "us");
      rows.push_back(row["real_time"].get<double>() * 1000);
    }
  }
  ASSERT_EQ(rows.size(), 3u);
  std::sort(rows.begin(), rows.end());
  // The comma and space of the template arguments are not allowed in a segment.
  const Metric& vec = out.metrics.at("gbench.BM_Vec<int__64>/8/real_time.real_time");
  EXPECT_DOUBLE_EQ(vec.value, rows[1]);
  EXPECT_TRUE(out.metrics.count("gbench.BM_Vec<int__64>/8/real_time.bytes_per_second"));
  // The '.' of "0.050" would split the segment.
  EXPECT_TRUE(out.metrics.count("gbench.BM_Threads/min_time:0_050/threads:2.items_per_second"));
  for (const auto& [name, m] : out.metrics) {
    EXPECT_EQ(name.find("_mean"), std::string::npos) << name;
    EXPECT_EQ(name.find("_stddev"), std::string::npos) << name;
  }
}

TEST(GbenchOutput, ErroredBenchmarkHasNoMetricsAndSaysWhy) {
  WorkloadOutput out = ParseGbenchJson(GbenchFixture("odd-repetitions.json"), "bm");
  for (const auto& [name, m] : out.metrics) EXPECT_EQ(name.find("BM_Fails"), std::string::npos) << name;
  EXPECT_TRUE(HasWarning(out, "BM_Fails reported an error (device not ready)"))
      << ::testing::PrintToString(out.warnings);
}

TEST(GbenchOutput, NanCounterIsLeftOutAndTheRestKept) {
  WorkloadOutput out = ParseGbenchJson(GbenchFixture("odd-repetitions.json"), "bm");
  EXPECT_FALSE(out.metrics.count("gbench.BM_NanCounter.ratio"));
  EXPECT_DOUBLE_EQ(out.metrics.at("gbench.BM_NanCounter.hits").value, 42);
  EXPECT_EQ(out.metrics.at("gbench.BM_NanCounter.hits").better, Better::kNone);
  EXPECT_TRUE(out.metrics.count("gbench.BM_NanCounter.real_time"));
  EXPECT_TRUE(HasWarning(out, "BM_NanCounter: ratio is not a finite number"));
  // Said once, though each of the three in-process repetitions had it.
  EXPECT_EQ(out.warnings.size(), 2u) << ::testing::PrintToString(out.warnings);
}

TEST(GbenchOutput, InfiniteTimeIsLeftOut) {
  std::string text = GbenchFixture("micro.json");
  json doc = json::parse(text);
  const std::string real = "\"real_time\": " + (*Row(doc, "BM_MmapMunmap"))["real_time"].dump();
  // nlohmann prints doubles differently from Google Benchmark: find the
  // row's real_time text in the original.
  size_t row = text.find("\"name\": \"BM_MmapMunmap\"");
  size_t at = text.find("\"real_time\": ", row);
  size_t end = text.find(',', at);
  text.replace(at, end - at, "\"real_time\": Infinity");
  WorkloadOutput out = ParseGbenchJson(text, "bm");
  EXPECT_FALSE(out.metrics.count("gbench.BM_MmapMunmap.real_time")) << real;
  EXPECT_TRUE(out.metrics.count("gbench.BM_MmapMunmap.cpu_time"));
}

TEST(GbenchOutput, EveryMetricNameMatchesTheSuitePattern) {
  static const std::regex kName("^[a-z0-9_]+(\\.[A-Za-z0-9_:<>*/+-]+)+$");
  for (const char* file : {"micro.json", "odd-repetitions.json"}) {
    for (const auto& [name, m] : ParseGbenchJson(GbenchFixture(file), "bm").metrics) {
      EXPECT_TRUE(std::regex_match(name, kName)) << name;
    }
  }
}

TEST(GbenchOutput, SkipsTextPrintedBeforeTheDocument) {
  const std::string text = GbenchFixture("micro.json");
  WorkloadOutput out = ParseGbenchJson("setting up {fixtures}\n2024-01-01 started\n" + text, "bm");
  EXPECT_EQ(out.metrics.size(), ParseGbenchJson(text, "bm").metrics.size());
}

TEST(GbenchOutput, TruncatedDocumentIsAnInfraErrorNamingTheOutput) {
  const std::string text = GbenchFixture("micro.json");
  std::string e = GbenchParseError(text.substr(0, text.size() - 40));
  EXPECT_NE(e.find("Google Benchmark output of bm"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
}

TEST(GbenchOutput, MissingFieldsAndBadUnitsNameTheBenchmark) {
  json doc = json::parse(GbenchFixture("micro.json"));
  doc["benchmarks"][1].erase("real_time");
  std::string e = GbenchParseError(doc.dump());
  EXPECT_NE(e.find("benchmarks[1] (BM_PipePingPong/real_time): missing \"real_time\""), std::string::npos) << e;

  doc = json::parse(GbenchFixture("micro.json"));
  doc["benchmarks"][0]["time_unit"] = "fortnights";
  EXPECT_NE(GbenchParseError(doc.dump()).find("unknown unit \"fortnights\""), std::string::npos);

  doc = json::parse(GbenchFixture("micro.json"));
  doc.erase("benchmarks");
  EXPECT_NE(GbenchParseError(doc.dump()).find("no \"benchmarks\" array"), std::string::npos);
  EXPECT_NE(GbenchParseError("error: no such flag\n").find("no JSON document"), std::string::npos);
}

TEST(GbenchOutput, NoBenchmarksOrOnlyAggregatesIsAnError) {
  EXPECT_NE(GbenchParseError(R"({"context": {}, "benchmarks": []})").find("no benchmark ran"), std::string::npos);
  json doc = ParseToolJson(GbenchFixture("odd-repetitions.json"), "fixture");
  json aggregates = json::array();
  for (const auto& row : doc["benchmarks"]) {
    if (row["run_type"] == "aggregate") aggregates.push_back(row);
  }
  doc["benchmarks"] = aggregates;
  EXPECT_NE(GbenchParseError(doc.dump()).find("only aggregate rows"), std::string::npos);
}

TEST(GbenchOutput, NamesThatBecomeTheSameMetricAreAnError) {
  json doc = json::parse(GbenchFixture("micro.json"));
  json twin = doc["benchmarks"][0];
  doc["benchmarks"][0]["name"] = "BM_a.b";
  twin["name"] = "BM_a_b";
  doc["benchmarks"].push_back(twin);
  std::string e = GbenchParseError(doc.dump());
  EXPECT_NE(e.find("\"BM_a.b\" and \"BM_a_b\" both become metric gbench.BM_a_b"), std::string::npos) << e;
}

TEST(GbenchAdapter, LaunchesTheBinaryWithJsonOutputFilterAndArgs) {
  WorkloadSpec spec;
  spec.kind = "gbench";
  spec.options["binary"] = "/bin/true";
  spec.options["filter"] = "BM_Syscall.*";
  spec.argv = {"--benchmark_min_time=0.2"};
  EXPECT_EQ(GbenchAdapter().LaunchArgv(spec),
            (std::vector<std::string>{"/bin/true", "--benchmark_format=json", "--benchmark_filter=BM_Syscall.*",
                                      "--benchmark_min_time=0.2"}));
}

TEST(GbenchAdapter, MissingBinaryIsInfraAndMissingKeyIsBadInput) {
  WorkloadSpec spec;
  spec.kind = "gbench";
  try {
    GbenchAdapter().LaunchArgv(spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("missing required key \"binary\""), std::string::npos) << e.what();
  }
  spec.options["binary"] = "/nonexistent/bench";
  try {
    GbenchAdapter().LaunchArgv(spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/bench not found"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace perfgate
