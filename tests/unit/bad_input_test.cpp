// Parsers on hostile input: each case once crashed perfgate or ended in an
// "internal error" instead of a message naming the file and position.
#include <gtest/gtest.h>

#include <string>

#include "adapters/command.h"
#include "adapters/fio.h"
#include "adapters/gbench.h"
#include "adapters/unixbench.h"
#include "base/error.h"
#include "baseline/store.h"
#include "config/suite.h"
#include "harness/errors.h"
#include "metrics/metric.h"
#include "metrics/results_json.h"

namespace perfgate {
namespace {

using testing::ErrorOf;

SuiteVariables Variables() {
  SuiteVariables v;
  v.suite_dir = v.perfgate_dir = "/";
  return v;
}

std::string Nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(MetricName, AcceptsWhatTheSuiteFormatAllows) {
  for (const char* ok : {"workload.wall_time", "fio.randread.read.clat_p99_9", "gbench.BM_Copy/64/threads:2.real_time",
                         "unixbench.2copy.index", "a.b", "x_1.<lambda>*+-"}) {
    EXPECT_TRUE(IsMetricName(ok)) << ok;
  }
  for (const char* bad :
       {"", "workload", "workload.", ".wall_time", "Workload.wall_time", "a..b", "a.b c", "a.b\n", "a.é"}) {
    EXPECT_FALSE(IsMetricName(bad)) << bad;
  }
}

TEST(MetricName, LongNameIsRejectedWithoutRecursion) {
  EXPECT_TRUE(IsMetricName("app." + std::string(1 << 20, 'x')));
  EXPECT_FALSE(IsMetricName("app." + std::string(1 << 20, 'x') + "!"));
}

TEST(JsonText, NestingDeeperThanTheLimitIsAnInputErrorWithItsLine) {
  EXPECT_EQ(LineTooDeep(Nested(kMaxJsonDepth)), 0u);
  EXPECT_EQ(LineTooDeep("{\n\"a\":\n" + Nested(kMaxJsonDepth + 1) + "}"), 3u);
  // Brackets inside strings and comments do not count.
  EXPECT_EQ(LineTooDeep("{\"s\": \"" + std::string(1000, '[') + "\"} // " + std::string(1000, '{')), 0u);
  EXPECT_EQ(LineTooDeep("/* " + std::string(1000, '[') + " */ []"), 0u);
  const std::string what = ErrorOf([] { ParseJsonText(Nested(100000), "deep.json"); }, ExitCode::kBadInput);
  EXPECT_NE(what.find("deep.json: invalid JSON: line 1: arrays and objects nested deeper than 256"), std::string::npos)
      << what;
}

TEST(JsonText, NumberBeyondDoubleIsAnInputErrorWithItsLine) {
  const std::string what =
      ErrorOf([] { ParseJsonText("{\n  \"a\": 1,\n  \"b\": 1e400\n}", "big.json"); }, ExitCode::kBadInput);
  EXPECT_EQ(what, "big.json: invalid JSON: line 3: number overflow parsing '1e400'");
}

TEST(ResultsJson, SchemaVersionIsComparedBeforeNarrowing) {
  const std::string what = ErrorOf(
      [] { ResultsFromJson(nlohmann::json::parse(R"({"schema_version": 4294967297, "suite": "s"})"), "r.json"); },
      ExitCode::kBadInput);
  EXPECT_NE(what.find("r.json: $.schema_version: unsupported schema version 4294967297"), std::string::npos) << what;
}

TEST(ResultsJson, IntegersBeyondIntAreErrorsNotWrapped) {
  const std::string what = ErrorOf(
      [] {
        ResultsFromJson(
            nlohmann::json::parse(R"({"schema_version": 1, "suite": "s", "exit_code": 18446744073709551615})"),
            "r.json");
      },
      ExitCode::kBadInput);
  EXPECT_NE(what.find("r.json: $.exit_code: integer 18446744073709551615 out of range"), std::string::npos) << what;
}

TEST(ToolJson, DeepNestingAndHugeNumbersAreInfraErrors) {
  std::string what =
      ErrorOf([] { ParseFioJson("note\n{\"jobs\": " + Nested(100000) + "}", "fio output"); }, ExitCode::kInfra);
  EXPECT_NE(what.find("fio output: JSON document starting at line 2: line 2: arrays and objects nested deeper"),
            std::string::npos)
      << what;
  what = ErrorOf([] { ParseGbenchJson("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1e400}]}", "gb"); },
                 ExitCode::kInfra);
  EXPECT_NE(what.find("gb: JSON document starting at line 1: invalid JSON: line 1: number overflow parsing '1e400'"),
            std::string::npos)
      << what;
}

TEST(FioJson, QuotedValueIsCutOnACharacterBoundary) {
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "\xc3\xa9";  // é
  const std::string what = ErrorOf(
      [&] {
        ParseFioJson(R"({"jobs": [{"jobname": "j", "read": {"io_bytes": 1, "iops": ")" + accents + R"("}}]})", "fio");
      },
      ExitCode::kInfra);
  EXPECT_NE(what.find("jobs[0] (j).read.iops: expected a finite number, got \""), std::string::npos) << what;
  // Valid UTF-8 throughout: results.json, which holds the message, can be written.
  EXPECT_NO_THROW(nlohmann::json(what).dump());
}

TEST(UnixBenchText, NumbersBeyondDoubleOrIntNameTheLine) {
  const std::string head = "Benchmark Run: now\n2 CPUs in system; running 1 parallel copy of tests\n\n";
  std::string what = ErrorOf(
      [&] {
        ParseUnixBenchText(head + "System Call Overhead  " + std::string(400, '9') + " lps   (10.0 s, 7 samples)\n",
                           "ub");
      },
      ExitCode::kInfra);
  EXPECT_NE(what.find("ub: line 4: number 9999"), std::string::npos) << what;
  what = ErrorOf([] { ParseUnixBenchText("Benchmark Run: x\nrunning 99999999999 parallel copies of tests\n", "ub"); },
                 ExitCode::kInfra);
  EXPECT_NE(what.find("ub: line 2: copies must be between 1 and"), std::string::npos) << what;
}

TEST(UnixBenchText, VeryLongLineIsNotMatched) {
  const std::string text = "Benchmark Run: now\nSystem Call Overhead" + std::string(300000, ' ') +
                           "1.0 lps   (10.0 s, 7 samples)\nExecl Throughput   1920.1 lps   (29.1 s, 1 samples)\n";
  WorkloadOutput out = ParseUnixBenchText(text, "ub");
  EXPECT_EQ(out.metrics.size(), 1u);
  EXPECT_TRUE(out.metrics.count("unixbench.execl_throughput"));
}

TEST(CommandJsonLines, LongMetricNameIsAnInfraErrorNamingTheLine) {
  const std::string what = ErrorOf(
      [] {
        ParseCommandJsonLines("x\n{\"metric\": \"app." + std::string(300000, 'x') + "!\", \"value\": 1}\n", "out");
      },
      ExitCode::kInfra);
  EXPECT_NE(what.find("out: line 2: \"metric\" must be a name"), std::string::npos) << what;
}

TEST(SuiteText, LongMetricNameInACheckIsAnInputError) {
  SuiteVocabulary vocabulary;
  vocabulary.workload_kinds = {"command"};
  const std::string text = R"({"name": "s", "scenarios": [{"name": "a", "workload": {"argv": ["true"]},
      "checks": [{"metric": "workload.)" +
                           std::string(300000, 'w') + R"(!", "max_regression_pct": 5}]}]})";
  const std::string what = ErrorOf([&] { ParseSuite(text, "s.json", vocabulary, Variables()); }, ExitCode::kBadInput);
  EXPECT_NE(what.find("s.json: $.scenarios[0].checks[0].metric: \"workload."), std::string::npos)
      << what.substr(0, 200);
}

TEST(SuiteText, UnsignedBeyondInt64IsOutOfRangeNotNegative) {
  SuiteVocabulary vocabulary;
  vocabulary.workload_kinds = {"command"};
  const std::string text = R"({"name": "s", "scenarios": [{"name": "a", "workload": {"argv": ["true"]},
      "repetitions": 18446744073709551615}]})";
  const std::string what = ErrorOf([&] { ParseSuite(text, "s.json", vocabulary, Variables()); }, ExitCode::kBadInput);
  EXPECT_EQ(what, "s.json: $.scenarios[0].repetitions: value 18446744073709551615 out of range [2, 10000]");
}

TEST(ErrorText, OneLineEscapesControlCharacters) {
  EXPECT_EQ(OneLine("a\nb\tc\rd\x1b[31me\x7f"), "a\\nb\\tc\\rd\\x1b[31me\\x7f");
  EXPECT_EQ(OneLine("caf\xc3\xa9"), "caf\xc3\xa9");
}

}  // namespace
}  // namespace perfgate
