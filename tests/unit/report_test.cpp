// Reporters: JUnit, Markdown, HTML, JSON and WriteReports, over a results
// model built by hand with every verdict, a scenario that failed to run and
// hostile strings in every user-controlled field.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/environment.h"
#include "harness/files.h"
#include "harness/results.h"
#include "harness/text.h"
#include "metrics/error.h"
#include "metrics/results.h"
#include "report/attribution.h"
#include "report/escape.h"
#include "report/format.h"
#include "report/html_reporter.h"
#include "report/json_reporter.h"
#include "report/junit_reporter.h"
#include "report/markdown_reporter.h"
#include "report/outcome.h"
#include "report/reporter.h"

namespace perfgate {
namespace {

using testing::CheckWithValues;

const std::string kScript = "<script>alert(1)</script>";

CheckResult MakeCheck(const std::string& metric, const std::string& statistic, Verdict verdict,
                      std::vector<double> baseline, std::vector<double> candidate, double change_pct) {
  CheckResult c = CheckWithValues(metric, statistic, verdict, std::move(baseline), std::move(candidate));
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  c.baseline_median = median(c.baseline_values);
  c.candidate_median = median(c.candidate_values);
  c.change_pct = change_pct;
  c.change_ci_low_pct = change_pct - 2;
  c.change_ci_high_pct = change_pct + 2;
  c.p_value = 0.0004;
  c.p_adjusted = 0.0031;
  return c;
}

Repetition MakeRepetition(int index, double wall_ns) {
  Repetition rep;
  rep.index = index;
  Metric wall;
  wall.name = "workload.wall_time";
  wall.unit = "ns";
  wall.value = wall_ns;
  Metric runq;
  runq.name = "sched.runq_latency";
  runq.kind = MetricKind::kHistogram;
  runq.unit = "ns";
  for (uint64_t v = 1000; v < 2000000; v = v * 11 / 10) runq.hist.Record(v + index, 3);
  rep.metrics[wall.name] = wall;
  rep.metrics[runq.name] = runq;
  return rep;
}

// Scenario 1: pass, regression, budget exceeded, inconclusive, error,
// improvement and two checks the suite named alike. Scenario 2 failed to run.
RunResults HostileResults() {
  RunResults r;
  r.suite = "nightly " + kScript;
  r.suite_file = "workloads/suite.json";
  r.environment = {.kernel = "6.1.0-18-amd64",
                   .cpu_model = "Xeon \"Gold\" ]]> \x01 & 'fast'",
                   .cpu_count = 2,
                   .perfgate_version = "0.1.0",
                   .git_commit = "abc123def456",
                   .hostname = "ci-runner-1",
                   .timestamp = "2024-05-01T12:00:00Z"};
  Environment base = r.environment;
  base.kernel = "6.1.0-17-amd64";
  r.baseline_environment = base;

  ScenarioResult camera;
  camera.name = "camera " + kScript + " cold]]>start\x01";
  camera.workload_kind = "camera-startup";
  camera.duration_s = 42.5;
  camera.timestamp = "2024-05-01T12:00:01Z";
  for (int i = 0; i < 5; ++i) camera.repetitions.push_back(MakeRepetition(i, 1.3e9 + i * 1e7));

  camera.checks.push_back(MakeCheck("workload.cpu_time", "value", Verdict::kPass, {100, 101, 102}, {101, 102, 103}, 1));
  CheckResult wall = MakeCheck("workload.wall_time", "value", Verdict::kRegression, {1.00e9, 1.01e9, 0.99e9},
                               {1.30e9, 1.31e9, 1.29e9}, 30);
  wall.message = "wall time ]]> grew \x01 by 30% " + kScript + " 'quoted' \"double\"\n" + std::string(5000, 'x');
  camera.checks.push_back(wall);

  CheckResult budget = MakeCheck("mm.page_alloc", "rate", Verdict::kRegression, {}, {95000, 96000, 94000}, 0);
  budget.spec.type = CheckSpec::Type::kBudget;
  budget.spec.max = 80000;
  budget.unit = "count/s";
  budget.p_value.reset();
  budget.p_adjusted.reset();
  budget.change_ci_low_pct.reset();
  budget.change_ci_high_pct.reset();
  camera.checks.push_back(budget);

  CheckResult runq = MakeCheck("sched.runq_latency", "p99", Verdict::kInconclusive, {50, 60, 55}, {52, 63, 57}, 4);
  runq.p_value = 0.2;
  runq.p_adjusted = 0.9;
  runq.min_detectable_pct = 12;
  camera.checks.push_back(runq);

  CheckResult broken = MakeCheck("syscalls.count", "count", Verdict::kError, {}, {}, 0);
  broken.message = "probe 'syscalls' detached: " + kScript;
  camera.checks.push_back(broken);

  CheckResult rss =
      MakeCheck("workload.max_rss", "value", Verdict::kImprovement, {300, 301, 302}, {250, 251, 252}, -17);
  rss.better = Better::kLower;
  camera.checks.push_back(rss);

  for (int i = 0; i < 2; ++i) {
    CheckResult dup = MakeCheck("sched.switches", "count", Verdict::kPass, {10, 11, 12}, {10, 11, 12}, 0.5);
    dup.spec.name = "dup " + kScript;
    camera.checks.push_back(dup);
  }

  camera.probes.push_back({.name = "runqlat",
                           .scope = "workload",
                           .hooks = {{.hook = "sched_switch",
                                      .attach_type = "raw_tp",
                                      .target = "sched_switch",
                                      .rejected = {"tp_btf: not supported " + kScript}}},
                           .run_count = 100,
                           .run_time_ns = 5000,
                           .drops = 2});
  r.scenarios.push_back(camera);

  ScenarioResult fio;
  fio.name = "fio|randread *_[x]` \"q\"";
  fio.workload_kind = "fio";
  fio.error = "workload timed out after 60 s\n" + kScript;
  Repetition failed;
  failed.failure = "killed by SIGKILL ]]>";
  failed.exit_status = 137;
  failed.warnings = {"benchmark BM_<b>: error_occurred: " + kScript};
  fio.repetitions.push_back(failed);
  r.scenarios.push_back(fio);

  r.verdict = OverallVerdict(r);
  r.exit_code = ExitCodeFor(r, false);
  return r;
}

using testing::Count;
using testing::Lower;

int IntAttribute(const std::string& element, const std::string& name) {
  std::smatch m;
  std::regex re("\\s" + name + "=\"([0-9]+)\"");
  if (!std::regex_search(element, m, re)) return -1;
  return std::stoi(m[1]);
}

// The <testsuite ...>...</testsuite> blocks of a junit.xml.
std::vector<std::string> Testsuites(const std::string& xml) {
  std::vector<std::string> suites;
  for (size_t pos = xml.find("<testsuite "); pos != std::string::npos; pos = xml.find("<testsuite ", pos + 1)) {
    suites.push_back(xml.substr(pos, xml.find("</testsuite>", pos) - pos));
  }
  return suites;
}

using testing::ReadFile;
using testing::ToolAvailable;

class ReportTest : public ::testing::Test {
 protected:
  RunResults results_ = HostileResults();
};

// ---- escaping ----

TEST(Escape, XmlEscapesAllFiveSpecialCharacters) {
  EXPECT_EQ(XmlEscape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&#39;f");
}

TEST(Escape, DropsCharactersXmlForbidsAndKeepsTabsAndNewlines) {
  EXPECT_EQ(XmlEscape(std::string("a\x01\x08\x0b\x1f"
                                  "b\tc\nd")),
            "ab\tc\nd");
  EXPECT_EQ(SanitizeText("\xef\xbf\xbe"), "");  // U+FFFE
}

TEST(Escape, ReplacesMalformedUtf8AndKeepsValidMultibyte) {
  EXPECT_EQ(SanitizeText("a\xff"
                         "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(SanitizeText("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong '/'
  EXPECT_EQ(SanitizeText("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
  EXPECT_EQ(SanitizeText("\xc2\xb5s \xf0\x9f\x90\x8d"), "\xc2\xb5s \xf0\x9f\x90\x8d");
}

TEST(Escape, AttributeEscapeKeepsWhitespaceThroughNormalization) {
  EXPECT_EQ(XmlAttributeEscape("a\tb\nc\rd"), "a&#9;b&#10;c&#13;d");
}

TEST(Escape, MarkdownNeutralizesTableAndHtmlSyntax) {
  EXPECT_EQ(MarkdownEscape("a|b"), "a\\|b");
  EXPECT_EQ(MarkdownEscape(kScript), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(MarkdownEscape("*_`[x]\\"), "\\*\\_\\`\\[x\\]\\\\");
  EXPECT_EQ(MarkdownEscape("two\nlines"), "two lines");
}

TEST(Escape, AbbreviateNeverSplitsACharacter) {
  std::string micro = "\xc2\xb5";
  std::string cut = Abbreviate(std::string(10, 'a') + micro + micro, 14);
  EXPECT_LE(cut.size(), 14u);
  EXPECT_EQ(SanitizeText(cut), cut);
  EXPECT_EQ(Abbreviate("short", 14), "short");
}

// ---- formatting and classification ----

TEST(Format, ScalesTimesAndBytesToReadableUnits) {
  EXPECT_EQ(FormatQuantity(1234567, "ns"), "1.23 ms");
  EXPECT_EQ(FormatQuantity(1.5, "s"), "1.50 s");
  EXPECT_EQ(FormatQuantity(3.0 * 1024 * 1024, "bytes"), "3.00 MiB");
  EXPECT_EQ(FormatQuantity(80000, "count/s"), "80.0k count/s");
  EXPECT_EQ(FormatQuantity(std::nan(""), "ns"), "n/a");
}

TEST(Format, PercentAndPValue) {
  EXPECT_EQ(FormatPercent(30), "+30.0%");
  EXPECT_EQ(FormatPercent(-0.01), "+0.0%");
  EXPECT_EQ(FormatPercent(-2.54), "-2.5%");
  EXPECT_EQ(FormatPValue(1e-6), "<0.0001");
  EXPECT_EQ(FormatPValue(0.0012), "0.0012");
  EXPECT_EQ(FormatPValue(std::nullopt), "");
}

TEST(Outcome, FailedBudgetCheckIsOverBudgetNotRegression) {
  RunResults r = HostileResults();
  const auto& checks = r.scenarios[0].checks;
  EXPECT_EQ(OutcomeOf(checks[1]), Outcome::kRegressed);
  EXPECT_EQ(OutcomeOf(checks[2]), Outcome::kOverBudget);
}

TEST(Attribution, WorkloadAndAdapterMetricsAreOutcomes) {
  EXPECT_TRUE(IsOutcomeMetric("workload.wall_time"));
  EXPECT_TRUE(IsOutcomeMetric("fio.job1.read.clat"));
  EXPECT_TRUE(IsOutcomeMetric("camera.time_to_first_frame"));
  EXPECT_FALSE(IsOutcomeMetric("sched.runq_latency"));
  EXPECT_FALSE(IsOutcomeMetric("syscalls.count"));
  EXPECT_FALSE(IsOutcomeMetric("tcp.retransmits"));
}

TEST(Attribution, WithoutBaselineRepetitionsRanksTheChecksOnKernelMetrics) {
  RunResults r = HostileResults();
  std::vector<KernelShift> shifts = KernelShifts(r.scenarios[0]);
  // workload.* are outcomes; sched.switches did not move; page_alloc has no baseline.
  ASSERT_EQ(shifts.size(), 1u);
  EXPECT_EQ(shifts[0].metric, "sched.runq_latency");
  EXPECT_EQ(shifts[0].statistic, "p99");
  EXPECT_NEAR(shifts[0].change_pct, 100.0 * (57 - 55) / 55, 1e-9);
}

// Five repetitions a side: reclaim grows tenfold with little noise, run-queue
// latency by 20 % within wide noise, syscalls per op by 1 %.
ScenarioResult ScenarioWithBaselineRepetitions() {
  ScenarioResult s;
  s.name = "camera";
  auto repetitions = [](double reclaim, double runq, double syscalls_per_op, double wall) {
    std::vector<Repetition> reps;
    for (int i = 0; i < 5; ++i) {
      Repetition rep;
      rep.index = i;
      double noise = 1 + 0.02 * (i - 2);
      rep.metrics["mm.reclaim"] = CounterMetric("mm.reclaim", "count", reclaim * noise, 1.0);
      Metric syscalls = CounterMetric("syscalls.count", "count", syscalls_per_op * 1000 * (1 + 0.001 * i), 1.0);
      syscalls.ops = 1000;
      rep.metrics["syscalls.count"] = syscalls;
      LogLinearHistogram hist;
      hist.Record(static_cast<uint64_t>(runq * (1 + 0.3 * (i - 2))), 100);
      rep.metrics["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", hist, 1.0);
      rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", wall * noise, "s");
      reps.push_back(rep);
    }
    return reps;
  };
  s.baseline_repetitions = repetitions(10, 100000, 3.0, 1.0);
  s.repetitions = repetitions(100, 120000, 3.03, 1.3);
  return s;
}

TEST(Attribution, RanksKernelMetricsOfBothSidesRepetitionsByEffectSize) {
  std::vector<KernelShift> shifts = KernelShifts(ScenarioWithBaselineRepetitions());
  ASSERT_GE(shifts.size(), 3u);
  EXPECT_EQ(shifts[0].metric, "mm.reclaim");
  EXPECT_EQ(shifts[0].statistic, "count");
  EXPECT_NEAR(shifts[0].change_pct, 900, 1e-6);
  EXPECT_GT(shifts[0].effect_size, 20);
  for (const KernelShift& shift : shifts) EXPECT_NE(shift.metric, "workload.wall_time");
  // Per operation, since the workload counted its operations.
  auto syscalls =
      std::find_if(shifts.begin(), shifts.end(), [](const KernelShift& k) { return k.metric == "syscalls.count"; });
  ASSERT_NE(syscalls, shifts.end());
  EXPECT_EQ(syscalls->statistic, "per_op");
  for (size_t i = 1; i < shifts.size(); ++i) {
    EXPECT_GE(std::fabs(shifts[i - 1].effect_size), std::fabs(shifts[i].effect_size));
  }
  EXPECT_EQ(KernelShifts(ScenarioWithBaselineRepetitions(), 2).size(), 2u);
}

TEST(Attribution, HostLoadAndProcessCountsAreKernelSide) {
  EXPECT_FALSE(IsOutcomeMetric("host.other_cpus"));
  EXPECT_FALSE(IsOutcomeMetric("proc.forks"));
}

// ---- JUnit ----

TEST_F(ReportTest, JUnitCountsMatchTheirTestcases) {
  std::string xml = JUnitReporter().Render(results_);
  std::vector<std::string> suites = Testsuites(xml);
  ASSERT_EQ(suites.size(), 2u);
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const std::string& suite : suites) {
    std::string head = suite.substr(0, suite.find('>'));
    EXPECT_EQ(IntAttribute(head, "tests"), static_cast<int>(Count(suite, "<testcase ")));
    EXPECT_EQ(IntAttribute(head, "failures"), static_cast<int>(Count(suite, "<failure ")));
    EXPECT_EQ(IntAttribute(head, "errors"), static_cast<int>(Count(suite, "<error ")));
    EXPECT_EQ(IntAttribute(head, "skipped"), static_cast<int>(Count(suite, "<skipped ")));
    tests += IntAttribute(head, "tests");
    failures += IntAttribute(head, "failures");
    errors += IntAttribute(head, "errors");
    skipped += IntAttribute(head, "skipped");
  }
  std::string root = xml.substr(xml.find("<testsuites "), xml.find('>', xml.find("<testsuites ")));
  EXPECT_EQ(IntAttribute(root, "tests"), tests);
  EXPECT_EQ(IntAttribute(root, "failures"), failures);
  EXPECT_EQ(IntAttribute(root, "errors"), errors);
  EXPECT_EQ(IntAttribute(root, "skipped"), skipped);
  // 8 checks + the failed scenario's "run"; regression + budget; error check + run; inconclusive.
  EXPECT_EQ(tests, 9);
  EXPECT_EQ(failures, 2);
  EXPECT_EQ(errors, 2);
  EXPECT_EQ(skipped, 1);
}

TEST_F(ReportTest, JUnitTestcaseNamesAreUniquePerClassname) {
  std::string xml = JUnitReporter().Render(results_);
  std::regex testcase("<testcase classname=\"([^\"]*)\" name=\"([^\"]*)\"");
  std::set<std::string> seen;
  int n = 0;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), testcase); it != std::sregex_iterator(); ++it, ++n) {
    EXPECT_TRUE(seen.insert((*it)[1].str() + "\n" + (*it)[2].str()).second) << (*it)[0];
  }
  EXPECT_EQ(n, 9);
  EXPECT_NE(xml.find("name=\"dup &lt;script&gt;alert(1)&lt;/script&gt; #2\""), std::string::npos);
}

TEST_F(ReportTest, JUnitClassifiesFailuresErrorsAndSkips) {
  std::string xml = JUnitReporter().Render(results_);
  EXPECT_EQ(Count(xml, "<failure type=\"PerfRegression\""), 1u);
  EXPECT_EQ(Count(xml, "<failure type=\"BudgetExceeded\""), 1u);
  EXPECT_EQ(Count(xml, "<error type=\"InfrastructureError\""), 2u);
  EXPECT_EQ(Count(xml, "<skipped message=\"inconclusive: "), 1u);
  // The failed scenario is one testcase "run" carrying the error.
  std::string fio = Testsuites(xml)[1];
  EXPECT_EQ(Count(fio, "<testcase "), 1u);
  EXPECT_NE(fio.find("name=\"run\""), std::string::npos);
  EXPECT_NE(fio.find("workload timed out after 60 s"), std::string::npos);
  // The failure message carries the numbers.
  EXPECT_NE(xml.find("+30.0% [+28.0%, +32.0%]"), std::string::npos);
  EXPECT_NE(xml.find("1.30 s vs 1.00 s baseline"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"change_pct\" value=\"30\"/>"), std::string::npos);
}

TEST_F(ReportTest, JUnitCharactersAreEscapedAndInvalidOnesStripped) {
  std::string xml = JUnitReporter().Render(results_);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(Count(xml, "]]>"), 0u);
  EXPECT_EQ(xml.find("CDATA"), std::string::npos);
  EXPECT_NE(xml.find("Xeon &quot;Gold&quot; ]]&gt;  &amp; &#39;fast&#39;"), std::string::npos);
}

TEST_F(ReportTest, JUnitMessagesAreOneLine) {
  std::string xml = JUnitReporter().Render(results_);
  std::regex message(" message=\"([^\"]*)\"");
  int n = 0;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), message); it != std::sregex_iterator(); ++it, ++n) {
    EXPECT_EQ((*it)[1].str().find("&#10;"), std::string::npos) << (*it)[0];
    EXPECT_EQ((*it)[1].str().find("&#13;"), std::string::npos) << (*it)[0];
  }
  EXPECT_EQ(n, 5);  // regression, budget, inconclusive, error check, run error
  EXPECT_NE(xml.find("failed to run: workload timed out after 60 s &lt;script&gt;"), std::string::npos);
}

TEST_F(ReportTest, JUnitUnderStrictCountsInconclusiveChecksAsFailures) {
  results_.strict = true;
  std::string xml = JUnitReporter().Render(results_);
  EXPECT_EQ(Count(xml, "<skipped "), 0u);
  EXPECT_EQ(Count(xml, "<failure type=\"Inconclusive\" message=\"inconclusive (--strict): "), 1u);
  std::string root = xml.substr(xml.find("<testsuites "), xml.find('>', xml.find("<testsuites ")));
  EXPECT_EQ(IntAttribute(root, "failures"), 3);
  EXPECT_EQ(IntAttribute(root, "skipped"), 0);
}

TEST_F(ReportTest, JUnitNamesAreOneLineAndTestcasesNameTheSuiteFile) {
  results_.suite_file = "perf/suite.json";
  results_.scenarios[0].checks[0].spec.name = "two\nlines\tand\rreturn";
  std::string xml = JUnitReporter().Render(results_);
  EXPECT_NE(xml.find("name=\"two lines and return\""), std::string::npos);
  std::regex attribute(" (?:name|classname)=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), attribute); it != std::sregex_iterator(); ++it) {
    EXPECT_EQ((*it)[1].str().find("&#"), std::string::npos) << (*it)[0];
  }
  EXPECT_EQ(Count(xml, " file=\"perf/suite.json\""), Count(xml, "<testcase "));
}

TEST_F(ReportTest, JUnitOmitsATimestampThatIsNotIso8601) {
  results_.environment.timestamp = "yesterday <noon>";
  results_.scenarios[0].timestamp = "2024-05-01T12:00:01.5+02:00";
  std::string xml = JUnitReporter().Render(results_);
  EXPECT_EQ(xml.find("yesterday"), std::string::npos);
  EXPECT_EQ(Count(xml, " timestamp="), 1u);
  EXPECT_NE(xml.find("timestamp=\"2024-05-01T12:00:01.5+02:00\""), std::string::npos);
}

// ---- all formats ----

TEST_F(ReportTest, NoFormatEmitsRawMarkupFromUserStrings) {
  std::vector<std::pair<std::string, std::string>> outputs = {
      {"junit", JUnitReporter().Render(results_)},
      {"markdown", MarkdownReporter().Render(results_)},
      {"html", HtmlReporter().Render(results_)},
      {"json", JsonReporter().Render(results_)},
  };
  for (const auto& [format, text] : outputs) {
    EXPECT_EQ(Lower(text).find("<script"), std::string::npos) << format;
    EXPECT_EQ(text.find('\x01'), std::string::npos) << format;
  }
}

// ---- Markdown ----

TEST_F(ReportTest, MarkdownOpensWithTheVerdictLine) {
  std::string md = MarkdownReporter().Render(results_);
  EXPECT_EQ(md.rfind("**perfgate: ERROR** \u2014 1 regression, 1 over budget, 2 errors, 1 inconclusive, "
                     "1 improvement, 3 passed\n",
                     0),
            0u)
      << md.substr(0, 200);
}

TEST(Markdown, VerdictLineOfARegression) {
  RunResults r = HostileResults();
  r.scenarios.pop_back();
  r.scenarios[0].checks.erase(r.scenarios[0].checks.begin() + 2, r.scenarios[0].checks.end());
  std::string md = MarkdownReporter().Render(r);
  EXPECT_EQ(md.rfind("**perfgate: FAIL** \u2014 1 regression, 0 inconclusive, 1 passed\n", 0), 0u) << md;
}

TEST_F(ReportTest, MarkdownTablesKeepTheirShapeAndFoldDetailsAway) {
  std::string md = MarkdownReporter().Render(results_);
  // Every table row has exactly the header's 10 unescaped pipes.
  std::istringstream lines(md);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    ++rows;
    int pipes = 0;
    for (size_t i = 0; i < line.size(); ++i) pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    EXPECT_EQ(pipes, 10) << line;
  }
  EXPECT_EQ(rows, 2 + 5 + 9);  // two headers, 5 findings, 9 checks in <details>
  EXPECT_NE(md.find("<details><summary>All 9 checks</summary>"), std::string::npos);
  EXPECT_NE(md.find("</details>"), std::string::npos);
  EXPECT_NE(md.find("fio\\|randread \\*\\_\\[x\\]\\` \"q\""), std::string::npos);
}

TEST(Markdown, StaysUnderOneMebibyteWithFiftyThousandChecks) {
  RunResults r;
  r.suite = "huge";
  ScenarioResult s;
  s.name = "many";
  for (int i = 0; i < 50000; ++i) {
    CheckResult c = MakeCheck("workload.metric_" + std::to_string(i) + std::string(40, '_'), "value",
                              i % 2 ? Verdict::kRegression : Verdict::kInconclusive, {1, 2, 3}, {2, 3, 4}, 50);
    c.message = std::string(200, '*');
    s.checks.push_back(c);
  }
  r.scenarios.push_back(s);
  std::string md = MarkdownReporter().Render(r);
  EXPECT_LT(md.size(), 1024u * 1024u);
  EXPECT_GT(md.size(), 900u * 1024u);  // truncated near the limit, not far below it
  EXPECT_NE(md.find("more lines not shown"), std::string::npos);
  EXPECT_EQ(md.rfind("**perfgate: FAIL**", 0), 0u);

  std::string comment = MarkdownReporter(65536).Render(r);
  EXPECT_LE(comment.size(), 65536u);
  EXPECT_NE(comment.find("more lines not shown"), std::string::npos);
}

TEST_F(ReportTest, MarkdownUnderATinyLimitKeepsTheVerdictLine) {
  results_.scenarios[1].error = std::string(5 << 20, 'e');  // a 5 MiB error message
  results_.environment.kernel = std::string(1 << 20, 'k');
  for (size_t limit : {size_t{200}, size_t{1500}, size_t{4096}}) {
    std::string md = MarkdownReporter(limit).Render(results_);
    EXPECT_LE(md.size(), limit);
    EXPECT_EQ(md.rfind("**perfgate: ERROR**", 0), 0u) << limit << ": " << md;
  }
  EXPECT_LT(MarkdownReporter().Render(results_).size(), 1024u * 1024u);
}

// ---- HTML ----

TEST_F(ReportTest, HtmlHasNoScriptAndNoInlineStyle) {
  std::string html = Lower(HtmlReporter().Render(results_));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("style="), std::string::npos);
  EXPECT_EQ(html.find("<style"), std::string::npos);
  EXPECT_EQ(html.find("javascript:"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex("\\son[a-z]+\\s*=")));
  EXPECT_NE(html.find("<link rel=\"stylesheet\" href=\"report.css\"/>"), std::string::npos);
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
}

TEST_F(ReportTest, HtmlListsTheAdaptersWarningsEscaped) {
  std::string html = HtmlReporter().Render(results_);
  EXPECT_NE(html.find("<ul class=\"warnings\">\n<li>benchmark BM_&lt;b&gt;: error_occurred: "), std::string::npos);
}

TEST_F(ReportTest, HtmlShowsFailedChecksFirst) {
  std::string html = HtmlReporter().Render(results_);
  size_t attention = html.find("id=\"attention\"");
  size_t first_scenario = html.find("id=\"scenario-0\"");
  ASSERT_NE(attention, std::string::npos);
  ASSERT_NE(first_scenario, std::string::npos);
  EXPECT_LT(attention, first_scenario);
  size_t regression = html.find("row-regressed", attention);
  size_t budget = html.find("row-over-budget", attention);
  size_t error = html.find("row-error", attention);
  size_t inconclusive = html.find("row-inconclusive", attention);
  EXPECT_LT(regression, budget);
  EXPECT_LT(budget, error);
  EXPECT_LT(error, inconclusive);
  EXPECT_LT(inconclusive, first_scenario);
}

TEST_F(ReportTest, HtmlExplainsTheRegressionWithTheKernelMetricsThatMoved) {
  std::string html = HtmlReporter().Render(results_);
  size_t why = html.find("id=\"why\"");
  ASSERT_NE(why, std::string::npos);
  size_t end = html.find("id=\"scenario-0\"");
  size_t runq = html.find("<td class=\"name\">sched.runq_latency.p99</td>", why);
  EXPECT_LT(runq, end);
  EXPECT_EQ(html.substr(why, end - why).find("workload.max_rss"), std::string::npos);
}

TEST(Html, ShowsBaselineAndCandidateDistributionsAndRanksKernelMetrics) {
  RunResults r;
  r.suite = "s";
  r.scenarios.push_back(ScenarioWithBaselineRepetitions());
  CheckResult wall = MakeCheck("workload.wall_time", "value", Verdict::kRegression, {1, 1, 1}, {1.3, 1.3, 1.3}, 30);
  r.scenarios[0].checks.push_back(wall);
  std::string html = HtmlReporter().Render(r);
  EXPECT_NE(html.find("sched.runq_latency: baseline vs candidate"), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"distribution of sched.runq_latency\""), std::string::npos);
  EXPECT_NE(html.find("<polygon points="), std::string::npos);          // the baseline's area
  EXPECT_NE(html.find("stroke-dasharray=\"5 3\""), std::string::npos);  // the baseline's CDF
  size_t why = html.find("id=\"why\"");
  ASSERT_NE(why, std::string::npos);
  EXPECT_LT(html.find("mm.reclaim.count", why), html.find("sched.runq_latency.p", why));
  std::string md = MarkdownReporter().Render(r);
  EXPECT_NE(md.find("- camera / workload.wall\\_time.value +30.0%: mm.reclaim.count +900.0% (effect +"),
            std::string::npos)
      << md;
}

TEST_F(ReportTest, HtmlHasProbesChartsAndEnvironment) {
  std::string html = HtmlReporter().Render(results_);
  EXPECT_NE(html.find("<span class=\"attach\">raw_tp</span>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">50.0</td>"), std::string::npos);  // 5000 ns / 100 events
  EXPECT_NE(html.find("<td class=\"num warn\">2</td>"), std::string::npos);
  EXPECT_NE(html.find("cumulative distribution of sched.runq_latency"), std::string::npos);
  EXPECT_NE(html.find("candidate against its budget"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"differs\"><th>Kernel</th>"), std::string::npos);
}

TEST(Html, StylesheetStylesEveryOutcome) {
  std::string css = HtmlReporter::Stylesheet();
  for (Outcome o :
       {Outcome::kRegressed, Outcome::kOverBudget, Outcome::kInconclusive, Outcome::kImproved, Outcome::kPassed}) {
    EXPECT_NE(css.find(".pill." + Slug(o)), std::string::npos) << Slug(o);
  }
}

// ---- files on disk and external validators ----

// PERFGATE_KEEP_REPORTS=DIR keeps the last rendered reports in DIR/nested/out
// for a look in a browser.
class WrittenReports : public ReportTest {
 protected:
  void SetUp() override {
    const char* keep = std::getenv("PERFGATE_KEEP_REPORTS");
    keep_ = keep && *keep;
    dir_ = keep_ ? std::filesystem::path(keep) : testing::MakeTempDir("perfgate-report");
    out_ = dir_ / "nested" / "out";
    WriteReports(results_, out_.string());
  }
  void TearDown() override {
    if (!keep_) std::filesystem::remove_all(dir_);
  }

  bool keep_ = false;

  std::filesystem::path dir_;
  std::filesystem::path out_;
};

TEST_F(WrittenReports, CreatesAllFiveFiles) {
  for (const char* file : {"results.json", "junit.xml", "summary.md", "report/index.html", "report/report.css"}) {
    EXPECT_TRUE(std::filesystem::is_regular_file(out_ / file)) << file;
    EXPECT_GT(std::filesystem::file_size(out_ / file), 0u) << file;
  }
  struct stat st {};
  ASSERT_EQ(::stat((out_ / "report").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07022, 0u) << "report/ must not be group/world writable";
  EXPECT_EQ(ReadFile(out_ / "report" / "report.css"), HtmlReporter::Stylesheet());
  // Rewriting over existing files works (atomic replace).
  EXPECT_NO_THROW(WriteReports(results_, out_.string()));
}

TEST_F(WrittenReports, FailsWithTheOffendingPathWhenAFileBlocksTheDirectory) {
  std::filesystem::path blocker = dir_ / "blocker";
  std::ofstream(blocker) << "x";
  std::string what;
  try {
    WriteReports(results_, (blocker / "out").string());
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    what = e.what();
  }
  std::filesystem::remove(blocker);
  EXPECT_NE(what.find("blocker"), std::string::npos) << what;
}

TEST_F(WrittenReports, XmllintParsesJUnitAndHtml) {
  if (!ToolAvailable("command -v xmllint")) GTEST_SKIP() << "xmllint not installed";
  for (const char* file : {"junit.xml", "report/index.html"}) {
    std::string command = "xmllint --noout '" + (out_ / file).string() + "'";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
}

TEST_F(WrittenReports, JUnitValidatesAgainstTheSchemaOfWhatCiToolsRead) {
  if (!ToolAvailable("command -v xmllint")) GTEST_SKIP() << "xmllint not installed";
  std::string command = "xmllint --noout --schema '" PERFGATE_FIXTURES "/junit/perfgate-junit.xsd' '" +
                        (out_ / "junit.xml").string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST_F(WrittenReports, JunitparserReadsConsistentCounts) {
  if (!ToolAvailable("/usr/bin/python3 -c 'import junitparser'")) GTEST_SKIP() << "junitparser not installed";
  std::string command = "/usr/bin/python3 '" PERFGATE_SOURCE_DIR "/tests/unit/junit_check.py' '" +
                        (out_ / "junit.xml").string() + "' 9 2 2 1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

}  // namespace
}  // namespace perfgate
