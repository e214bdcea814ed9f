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

#include "base/error.h"
#include "base/escape.h"
#include "explain/explain.h"
#include "harness/environment.h"
#include "harness/files.h"
#include "harness/paths.h"
#include "harness/results.h"
#include "harness/text.h"
#include "metrics/results.h"
#include "metrics/results_json.h"
#include "pipeline/pipeline.h"
#include "report/format.h"
#include "report/html_reporter.h"
#include "report/json_reporter.h"
#include "report/junit_reporter.h"
#include "report/markdown_reporter.h"
#include "report/outcome.h"
#include "report/reporter.h"
#include "report/svg_charts.h"
#include "report/why_text.h"

namespace perfgate {
namespace {

using testing::CheckWithValues;

const std::string kScript = "<script>alert(1)</script>";

// What the pipeline gives the why: every metric perfgate declares.
const MetricVocabulary& Vocabulary() {
  static const MetricVocabulary vocabulary = GateMetricVocabulary();
  return vocabulary;
}
Explanation Attribute(const ScenarioResult& scenario) { return perfgate::Attribute(scenario, Vocabulary()); }
std::vector<KernelShift> KernelShifts(const ScenarioResult& scenario, size_t limit = kMaxCauses) {
  return perfgate::Attribute(scenario, Vocabulary(), limit).causes;
}
bool IsOutcomeMetric(const std::string& metric) { return Vocabulary().RoleOf(metric) == MetricRole::kOutcome; }
bool IsHostMetric(const std::string& metric) { return Vocabulary().RoleOf(metric) == MetricRole::kHost; }
// The results as the pipeline hands them to the reporters: explained.
RunResults Explained(RunResults results) {
  ExplainFailures(results, Vocabulary());
  return results;
}

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
  RunResults results_ = Explained(HostileResults());
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

// A quantile at the smallest value sits on the y axis: its label goes right
// of the dot, not over the axis' "50%".
TEST(Charts, CdfQuantileLabelsStayOffTheAxisLabels) {
  LogLinearHistogram h;
  h.Record(1000, 900);
  h.Record(1000000, 100);
  const std::string svg = CdfSvg(nullptr, h, "ns", "latency");
  // (The dot's tooltip says it too: the label is the <text> element.)
  const size_t p50 = svg.find("sans-serif\">p50 ");
  ASSERT_NE(p50, std::string::npos) << svg;
  const size_t text = svg.rfind("<text ", p50);
  EXPECT_NE(svg.substr(text, p50 - text).find("text-anchor=\"start\""), std::string::npos) << svg.substr(text, 200);
  const size_t p99 = svg.find("sans-serif\">p99 ");
  ASSERT_NE(p99, std::string::npos);
  const size_t text99 = svg.rfind("<text ", p99);
  EXPECT_NE(svg.substr(text99, p99 - text99).find("text-anchor=\"end\""), std::string::npos);
}

TEST(Format, PercentAndPValue) {
  EXPECT_EQ(FormatPercent(30), "+30.0%");
  EXPECT_EQ(FormatPercent(-0.029), "-0.029%");
  EXPECT_EQ(FormatPercent(0.0004), "+0.0004%");
  EXPECT_EQ(FormatPercent(0), "+0.0%");
  EXPECT_EQ(FormatPercent(-0.06), "-0.1%");
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

TEST(Attribution, WithoutBaselineRepetitionsListsOnlyKernelChecksThatClearlyGrew) {
  RunResults r = HostileResults();
  // runq p99 55 -> 57 in three noisy repetitions did not clearly grow;
  // workload.* are outcomes; sched.switches did not move; page_alloc has no baseline.
  EXPECT_TRUE(KernelShifts(r.scenarios[0]).empty());

  ScenarioResult s;
  s.checks.push_back(
      MakeCheck("sched.runq_latency", "p99", Verdict::kRegression, {50, 51, 52, 50, 51}, {80, 81, 82, 80, 81}, 60));
  s.checks.push_back(
      MakeCheck("mm.page_alloc", "per_op", Verdict::kImprovement, {50, 51, 52, 50, 51}, {20, 21, 22, 20, 21}, -60));
  s.checks.push_back(MakeCheck("host.other_cpus", "value", Verdict::kPass, {0.1, 0.1, 0.1, 0.1, 0.1},
                               {1.1, 1.1, 1.1, 1.1, 1.1}, 1000));
  std::vector<KernelShift> shifts = KernelShifts(s);
  ASSERT_EQ(shifts.size(), 1u);
  EXPECT_EQ(shifts[0].metric, "sched.runq_latency");
  EXPECT_EQ(shifts[0].statistic, "p99");
  EXPECT_EQ(shifts[0].pricing, Pricing::kUnpriced);  // one statistic is not a time
}

// Five repetitions a side: reclaim grows tenfold with little noise, run-queue
// latency by 20 % within wide noise, syscalls per op by 1 %, the wall time
// by 30 %. A million operations a repetition: the syscalls' extra 15 ns an
// operation are 5 % of its extra 0.3 us, enough to count as a cause.
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
      Metric syscalls = CounterMetric("syscalls.count", "count", syscalls_per_op * 1e6 * (1 + 0.001 * i), 1.0);
      syscalls.ops = 1e6;
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

TEST(Attribution, PricedMetricsLeadAndNoisyOnesAreLeftOut) {
  std::vector<KernelShift> shifts = KernelShifts(ScenarioWithBaselineRepetitions());
  ASSERT_EQ(shifts.size(), 2u);
  // Per operation, since the workload counted its operations: 0.03 more
  // syscalls per op at the default 0.5 us each.
  EXPECT_EQ(shifts[0].metric, "syscalls.count");
  EXPECT_EQ(shifts[0].statistic, "per_op");
  EXPECT_EQ(shifts[0].pricing, Pricing::kEvents);
  EXPECT_TRUE(shifts[0].per_op);
  EXPECT_NEAR(shifts[0].accounted_s, 0.03 * 0.5e-6, 0.005 * 0.5e-6);
  // Reclaims without their latency have no price: after the priced ones.
  EXPECT_EQ(shifts[1].metric, "mm.reclaim");
  EXPECT_EQ(shifts[1].statistic, "count");
  EXPECT_EQ(shifts[1].pricing, Pricing::kUnpriced);
  EXPECT_NEAR(shifts[1].change_pct, 900, 1e-6);
  // Run-queue latency's 20 % within +-60 % noise is not a clear growth.
  EXPECT_EQ(KernelShifts(ScenarioWithBaselineRepetitions(), 1).size(), 1u);
}

// Seven repetitions a side of a workload that reports 1000 operations; `fill`
// sets the metrics of repetition i (0..6) of a side. Counters get the ops.
template <typename Fill>
ScenarioResult Sides(Fill fill) {
  ScenarioResult s;
  s.name = "loop";
  for (int side = 0; side < 2; ++side) {
    for (int i = 0; i < 7; ++i) {
      Repetition rep;
      rep.index = i;
      fill(rep.metrics, side == 1, i);
      for (auto& [name, metric] : rep.metrics) {
        if (metric.kind == MetricKind::kCounter) metric.ops = 1000;
      }
      (side == 1 ? s.repetitions : s.baseline_repetitions).push_back(rep);
    }
  }
  return s;
}

double Jitter(int i) { return 1 + 0.01 * ((i * 3) % 7 - 3); }  // -3 % .. +3 %, a fixed order

LogLinearHistogram Latencies(std::vector<std::pair<uint64_t, uint64_t>> value_counts) {
  LogLinearHistogram hist;
  for (auto [value, count] : value_counts) hist.Record(value, count);
  return hist;
}

// A run measured on a shared host: 50 % more getppid calls per operation; the sampled
// syscall latency's p99 fell 94 % (the sleeps' share of the samples fell);
// another tenant's load rose on the host.
ScenarioResult MoreGetppidCalls() {
  return Sides([](MetricSet& m, bool candidate, int i) {
    const double getppid = (candidate ? 24 : 16) * 1000 * Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.110 : 0.100) * Jitter(i), "s");
    m["syscalls.count.getppid"] = CounterMetric("syscalls.count.getppid", "count", getppid, 0.1);
    m["syscalls.count"] = CounterMetric("syscalls.count", "count", getppid + 4000, 0.1);
    // 1 us calls, and 1 in 100 (baseline) or 1 in 200 (candidate) a 300 us sleep.
    m["syscalls.latency"] =
        HistogramMetric("syscalls.latency", "ns", Latencies({{1000, candidate ? 1990 : 990}, {300000, 10}}), 0.1);
    m["host.other_cpus"] = ScalarMetric("host.other_cpus", (candidate ? 1.2 : 0.4) * Jitter(i), "cpus", Better::kNone);
    m["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", Latencies({{5000 + 400 * i, 50}}), 0.1);
  });
}

TEST(Attribution, MoreCallsPerOperationLeadAnImprovedLatencyAndHostLoadAreNotCauses) {
  ScenarioResult s = MoreGetppidCalls();
  Explanation a = Attribute(s);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].metric, "syscalls.count.getppid");
  EXPECT_EQ(a.causes[0].statistic, "per_op");
  EXPECT_NEAR(a.causes[0].change_pct, 50, 1e-6);
  // 8 more calls per operation at the median sampled latency, about 1 us.
  EXPECT_NEAR(a.causes[0].event_cost_s, 1e-6, 0.05e-6);
  EXPECT_NEAR(a.causes[0].accounted_s, 8e-6, 0.6e-6);
  EXPECT_GT(a.causes[0].accounted_low_s, 0);
  EXPECT_LE(a.causes[0].accounted_low_s, a.causes[0].accounted_s);
  // The wall time grew 10 us per operation: the calls account for most of it.
  ASSERT_TRUE(a.per_op);
  ASSERT_TRUE(a.wall_change_s);
  EXPECT_NEAR(*a.wall_change_s, 10e-6, 1e-6);
  ASSERT_TRUE(a.causes[0].share);
  EXPECT_GT(*a.causes[0].share, 0.5);
  for (const KernelShift& shift : a.causes) {
    EXPECT_NE(shift.metric, "syscalls.latency");  // it prices the calls; its p99 improved
    EXPECT_NE(shift.metric, "host.other_cpus");
    EXPECT_NE(shift.metric, "sched.runq_latency");  // did not move
    // syscalls.count less its getppid calls did not grow.
    EXPECT_NE(shift.metric, "syscalls.count");
  }
  ASSERT_EQ(a.host.size(), 1u);
  EXPECT_EQ(a.host[0].metric, "host.other_cpus");
  EXPECT_NEAR(a.host[0].change_pct, 200, 1e-6);
}

TEST(Attribution, SlowerSyscallsOnABusierHostAreNotMoreSyscalls) {
  // As many calls per operation; the candidate's sampled calls took twice as long.
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.12 : 0.1) * Jitter(i), "s");
    m["syscalls.count"] = CounterMetric("syscalls.count", "count", 20000 * Jitter(i), 0.1);
    m["syscalls.latency"] =
        HistogramMetric("syscalls.latency", "ns", Latencies({{candidate ? 2000u : 1000u, 1000}}), 0.1);
  });
  EXPECT_TRUE(Attribute(s).causes.empty());
}

TEST(Attribution, MetricsThatImprovedAreNeverCauses) {
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.2 : 0.1) * Jitter(i), "s");
    m["mm.page_faults"] = CounterMetric("mm.page_faults", "count", (candidate ? 10 : 1000) * 1000 * Jitter(i), 1);
    m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", (candidate ? 1 : 50) * 1e6 * Jitter(i), 1);
  });
  EXPECT_TRUE(Attribute(s).causes.empty());
}

TEST(Attribution, EventsArePricedPerEventAndWaitsAsMeasured) {
  // Per operation: 64 more page faults (1 us each), 64 more pages (0.2 us
  // each), off-CPU waiting from 20 % of the run to 25.6 % (10 us of the
  // candidate's 180), 2000 more run-queue waits of 1 us per 1000 operations (2 us).
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.180 : 0.100) * j, "s");
    m["mm.page_faults"] = CounterMetric("mm.page_faults", "count", (candidate ? 128 : 64) * 1000 * j, 1);
    m["mm.page_alloc"] = CounterMetric("mm.page_alloc", "pages", (candidate ? 128 : 64) * 1000 * j, 1);
    m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", (candidate ? 46e6 : 20e6) * j, 1);
    m["sched.runq_latency"] =
        HistogramMetric("sched.runq_latency", "ns", Latencies({{1000, candidate ? 3000 : 1000}}), 1);
  });
  Explanation a = Attribute(s);
  ASSERT_EQ(a.causes.size(), 4u);
  EXPECT_EQ(a.causes[0].metric, "mm.page_faults");
  EXPECT_EQ(a.causes[0].pricing, Pricing::kEvents);
  EXPECT_NEAR(a.causes[0].accounted_s, 64e-6, 3e-6);
  EXPECT_EQ(a.causes[1].metric, "mm.page_alloc");
  EXPECT_NEAR(a.causes[1].accounted_s, 64 * 0.2e-6, 1e-6);
  EXPECT_EQ(a.causes[2].metric, "sched.offcpu_time");
  EXPECT_EQ(a.causes[2].pricing, Pricing::kWaitTime);
  EXPECT_EQ(a.causes[2].statistic, "per_op");
  EXPECT_NEAR(a.causes[2].accounted_s, 10e-6, 1e-6);
  EXPECT_EQ(a.causes[3].metric, "sched.runq_latency");
  EXPECT_EQ(a.causes[3].pricing, Pricing::kLatencySum);
  EXPECT_EQ(a.causes[3].statistic, "sum_per_op");
  EXPECT_NEAR(a.causes[3].accounted_s, 2e-6, 0.2e-6);
  for (size_t i = 1; i < a.causes.size(); ++i) EXPECT_GE(a.causes[i - 1].accounted_low_s, a.causes[i].accounted_low_s);
  // Shares of the 80 us per operation the wall time grew.
  ASSERT_TRUE(a.causes[0].share);
  EXPECT_NEAR(*a.causes[0].share, a.causes[0].accounted_low_s / 80e-6, 0.05);
}

TEST(Attribution, ALockWaitIsNotCountedAgainAsTheSleepItIsPartOf) {
  // Off CPU asleep 100 -> 150 us per op, all of the growth in futex waits.
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    const double futex_ns = (candidate ? 70e3 : 20e3) * 1000 * j;
    const double other_sleep_ns = 80e3 * 1000 * j;
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.25 : 0.2) * j, "s");
    m["lock.futex_wait_time"] = CounterMetric("lock.futex_wait_time", "ns", futex_ns, 1);
    m["lock.futex_wait"] = HistogramMetric("lock.futex_wait", "ns", Latencies({{1000, 1000}}), 1);
    m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", futex_ns + other_sleep_ns, 1);
    // The histogram's sum from bucket midpoints; 1 ms waits, their count the total / 1 ms.
    m["sched.offcpu.sleep"] = HistogramMetric(
        "sched.offcpu.sleep", "ns",
        Latencies({{1000000, static_cast<uint64_t>(std::llround((futex_ns + other_sleep_ns) / 1e6))}}), 1);
  });
  Explanation a = Attribute(s);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].metric, "lock.futex_wait_time");
  // Per second of the run, 10 % -> 28 %, of the candidate's 250 us per op.
  EXPECT_NEAR(a.causes[0].accounted_s, 45e-6, 3e-6);
  for (const KernelShift& shift : a.causes) {
    EXPECT_NE(shift.metric, "lock.futex_wait");  // the same waits as lock.futex_wait_time
    if (shift.metric == "sched.offcpu.sleep") {
      EXPECT_EQ(shift.excluding, std::vector<std::string>{"lock.futex_wait_time"});
      EXPECT_LT(shift.accounted_s, 0.1 * a.causes[0].accounted_s);  // bucket midpoints' error at most
    }
  }
}

// A start whose page cache reclaim took: it reads 20 MB, with
// the antagonist 40 MB of which 20 MB read back, and waits for the disk
// 0.2 s, then 0.45 s. Half its reads were read-back, so half its I/O waits
// are reclaim's cost; the rest of the waits did not grow beyond the run's.
TEST(Attribution, PagesReadBackAfterReclaimTakeTheirShareOfTheIoWaits) {
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.7 : 0.4) * j, "s");
    m["coldstart.disk_read_bytes"] = ScalarMetric("coldstart.disk_read_bytes", candidate ? 40e6 : 20e6, "bytes");
    m[kReclaimRefaultBytes] = CounterMetric(kReclaimRefaultBytes, "bytes", candidate ? 20e6 : 0, 1);
    const auto waits = static_cast<uint64_t>(std::llround((candidate ? 450 : 200) * j));
    m["sched.offcpu.io"] = HistogramMetric("sched.offcpu.io", "ns", Latencies({{1000000, waits}}), 1);
  });
  Explanation a = Attribute(s);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].metric, kReclaimRefaultBytes);
  EXPECT_EQ(a.causes[0].pricing, Pricing::kReadBack);
  EXPECT_NEAR(a.causes[0].accounted_s, 0.225 / 1000, 0.02 / 1000);  // per op: Sides counts 1000
  for (const KernelShift& shift : a.causes) EXPECT_NE(shift.metric, "sched.offcpu.io") << DescribeShift(shift);

  // Nothing read back: the I/O waits are the start's own, reclaim costs nothing.
  ScenarioResult own = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.7 : 0.4) * j, "s");
    m["coldstart.disk_read_bytes"] = ScalarMetric("coldstart.disk_read_bytes", candidate ? 40e6 : 20e6, "bytes");
    m[kReclaimRefaultBytes] = CounterMetric(kReclaimRefaultBytes, "bytes", 0, 1);
    const auto waits = static_cast<uint64_t>(std::llround((candidate ? 450 : 200) * j));
    m["sched.offcpu.io"] = HistogramMetric("sched.offcpu.io", "ns", Latencies({{1000000, waits}}), 1);
  });
  a = Attribute(own);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].metric, "sched.offcpu.io");
  for (const KernelShift& shift : a.causes) EXPECT_NE(shift.metric, kReclaimRefaultBytes);
}

TEST(Attribution, WaitsThatOnlyStretchWithTheRunAreNotCauses) {
  // Twice the page faults; an idle helper thread sleeps as long as the run
  // lasts, and the loop is preempted in proportion to its CPU time.
  auto run = [](double other_cpus) {
    return Sides([other_cpus](MetricSet& m, bool candidate, int i) {
      const double j = Jitter(i);
      const double wall = (candidate ? 0.2 : 0.1) * j, cpu = (candidate ? 0.16 : 0.08) * j;
      m["workload.wall_time"] = ScalarMetric("workload.wall_time", wall, "s");
      m["workload.cpu_time"] = ScalarMetric("workload.cpu_time", cpu, "s");
      m["host.other_cpus"] = ScalarMetric("host.other_cpus", other_cpus, "cpus", Better::kNone);
      m["mm.page_faults"] = CounterMetric("mm.page_faults", "count", (candidate ? 128 : 64) * 1000 * j, 1);
      m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", (wall + 0.01) * 1e9, 1);
      m["sched.runq_latency"] = HistogramMetric(
          "sched.runq_latency", "ns", Latencies({{10000, static_cast<uint64_t>(std::llround(cpu * 1e9 / 4e4))}}), 1);
    });
  };
  Explanation quiet = Attribute(run(0.1));
  ASSERT_EQ(quiet.causes.size(), 1u);
  EXPECT_EQ(quiet.causes[0].metric, "mm.page_faults");
  EXPECT_TRUE(quiet.cpu_waits.empty());

  // Waiting for a CPU more per CPU-second on a busy host: the host's noise.
  ScenarioResult busy = run(1.0);
  for (Repetition& rep : busy.repetitions) {
    rep.metrics["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", Latencies({{10000, 8000}}), 1);
  }
  Explanation a = Attribute(busy);
  ASSERT_EQ(a.causes.size(), 1u);
  EXPECT_EQ(a.causes[0].metric, "mm.page_faults");
  ASSERT_EQ(a.cpu_waits.size(), 1u);
  EXPECT_EQ(a.cpu_waits[0].metric, "sched.runq_latency");
  EXPECT_NE(DescribeHost(a, false).find("waits for a CPU on the busy host: sched.runq_latency +"), std::string::npos);
  // On a quiet host the same growth is a cause.
  for (auto* reps : {&busy.repetitions, &busy.baseline_repetitions}) {
    for (Repetition& rep : *reps) rep.metrics["host.other_cpus"].value = 0.1;
  }
  Explanation calm = Attribute(busy);
  ASSERT_EQ(calm.causes.size(), 2u);
  EXPECT_EQ(calm.causes[1].metric, "sched.runq_latency");
}

TEST(Attribution, ASleepIsNotChargedWithTheWaitForACpuAfterItsWakeUp) {
  // As many sleeps of 1 ms; on the candidate's side each wake-up waited
  // 1 ms more for a CPU, which sched.offcpu.sleep counts and runqlat sees.
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.15 : 0.1) * j, "s");
    m["host.other_cpus"] = ScalarMetric("host.other_cpus", 1.5, "cpus", Better::kNone);
    m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", (candidate ? 0.2 : 0.1) * j * 1e9, 1);
    m["sched.offcpu.sleep"] =
        HistogramMetric("sched.offcpu.sleep", "ns", Latencies({{candidate ? 2000000u : 1000000u, 100}}), 1);
    m["sched.runq_latency"] =
        HistogramMetric("sched.runq_latency", "ns", Latencies({{candidate ? 1000000u : 1000u, 100}}), 1);
  });
  Explanation a = Attribute(s);
  for (const KernelShift& shift : a.causes) EXPECT_NE(shift.metric, "sched.offcpu.sleep");
  ASSERT_EQ(a.cpu_waits.size(), 1u);  // the host was busy: its noise
  EXPECT_EQ(a.cpu_waits[0].metric, "sched.runq_latency");
}

TEST(Attribution, WithoutOperationsTimeIsPerRepetition) {
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.3 : 0.2) * Jitter(i), "s");
    m["lock.mmap_lock_wait_time"] =
        CounterMetric("lock.mmap_lock_wait_time", "ns", (candidate ? 90e6 : 10e6) * Jitter(i), 1);
  });
  for (auto* reps : {&s.repetitions, &s.baseline_repetitions}) {
    for (Repetition& rep : *reps) rep.metrics["lock.mmap_lock_wait_time"].ops.reset();
  }
  Explanation a = Attribute(s);
  EXPECT_FALSE(a.per_op);
  ASSERT_EQ(a.causes.size(), 1u);
  EXPECT_EQ(a.causes[0].statistic, "count");
  EXPECT_FALSE(a.causes[0].per_op);
  EXPECT_NEAR(a.causes[0].accounted_s, 0.080, 0.004);
  ASSERT_TRUE(a.causes[0].share);
  EXPECT_GT(*a.causes[0].share, 0.6);
  EXPECT_EQ(FormatAccounted(a.causes[0].accounted_s, false).substr(0, 1), "+");
  EXPECT_NE(FormatAccounted(a.causes[0].accounted_s, false).find("/rep"), std::string::npos);
}

TEST(Attribution, TimesPerOperationReadInSeconds) {
  EXPECT_EQ(FormatShiftValue(147000, "ns/op"), FormatQuantity(147e-6, "s") + "/op");
  EXPECT_EQ(FormatShiftValue(3, "count/op"), FormatQuantity(3, "count/op"));
  EXPECT_EQ(FormatShiftValue(2e6, "ns"), FormatQuantity(2e6, "ns"));
  EXPECT_EQ(FormatAccounted(-2e-3, false), "-" + FormatQuantity(2e-3, "s") + "/rep");
}

TEST(Attribution, HostLoadAndProcessCountsAreKernelSide) {
  EXPECT_FALSE(IsOutcomeMetric("host.other_cpus"));
  EXPECT_FALSE(IsOutcomeMetric("proc.forks"));
  EXPECT_FALSE(IsOutcomeMetric("workload.page_faults"));  // the kernel's count, read by the runner
  EXPECT_TRUE(IsHostMetric("host.other_cpus"));
  EXPECT_FALSE(IsHostMetric("sched.runq_latency"));
}

// The issue's run as every reporter shows it.
RunResults GetppidRegression() {
  RunResults r;
  r.suite = "smoke";
  r.scenarios.push_back(MoreGetppidCalls());
  r.scenarios[0].name = "loop " + kScript;
  r.scenarios[0].checks.push_back(
      MakeCheck("workload.wall_time", "value", Verdict::kRegression, {0.1, 0.1, 0.1}, {0.11, 0.11, 0.11}, 10));
  r.verdict = OverallVerdict(r);
  r.exit_code = ExitCodeFor(r, false);
  return r;
}

// An instrumented run: 1 % more instructions, Valgrind's own gettid calls
// grown with them, and 50 % more getppid calls of the workload's.
RunResults InstrumentedRegression() {
  RunResults r;
  r.suite = "counted";
  r.scenarios.push_back(Sides([](MetricSet& m, bool candidate, int i) {
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.110 : 0.100) * Jitter(i), "s");
    m[kInstrTotal] = CounterMetric(kInstrTotal, "instructions", candidate ? 1.01e9 : 1e9, 0.1);
    m["syscalls.count.gettid"] =
        CounterMetric("syscalls.count.gettid", "count", (candidate ? 2090 : 2000) * Jitter(i), 0.1);
    m["syscalls.count.getppid"] =
        CounterMetric("syscalls.count.getppid", "count", (candidate ? 24 : 16) * 1000 * Jitter(i), 0.1);
    m["syscalls.latency"] = HistogramMetric("syscalls.latency", "ns", Latencies({{1000, 1000}}), 0.1);
  }));
  r.scenarios[0].checks.push_back(
      MakeCheck(kInstrTotal, "count", Verdict::kRegression, {1e9, 1e9, 1e9}, {1.01e9, 1.01e9, 1.01e9}, 0.5));
  r.verdict = OverallVerdict(r);
  r.exit_code = ExitCodeFor(r, false);
  return r;
}

TEST(Why, UnderValgrindTheCountedGrowthLeadsAndValgrindsOwnCallsAreNotCauses) {
  RunResults r = Explained(InstrumentedRegression());
  ASSERT_TRUE(r.scenarios[0].explanation);
  Explanation& e = *r.scenarios[0].explanation;
  std::vector<std::string> causes;
  for (const KernelShift& shift : e.causes) causes.push_back(shift.metric);
  EXPECT_EQ(causes, std::vector<std::string>{"syscalls.count.getppid"});
  // What the evidence's counted profiles name (AddCountedEvidence), said first.
  e.user_code = UserCodeGrowth{.function = "LZ4_compress", .self_delta_pp = 0.76, .counted = true};
  const std::string md = MarkdownReporter().Render(r);
  const size_t user = md.find("LZ4\\_compress"), cause = md.find("syscalls.count.getppid");
  ASSERT_NE(user, std::string::npos) << md;
  EXPECT_LT(user, cause) << md;
  const std::string xml = JUnitReporter().Render(r);
  const size_t first = xml.find("why: ");
  ASSERT_NE(first, std::string::npos) << xml;
  EXPECT_EQ(xml.find("why: the extra instructions are in user code: LZ4_compress"), first) << xml;
  EXPECT_EQ(xml.find("gettid"), std::string::npos) << xml;
}

TEST(Why, EveryReportLeadsWithTheCauseAndKeepsHostNoiseOnItsOwnLine) {
  RunResults r = Explained(GetppidRegression());
  std::string md = MarkdownReporter().Render(r);
  size_t why = md.find("**Why it regressed**");
  ASSERT_NE(why, std::string::npos) << md;
  size_t item = md.find("\n- loop", why);
  ASSERT_NE(item, std::string::npos) << md;
  std::string line = md.substr(item + 1, md.find('\n', item + 1) - item - 1);
  EXPECT_NE(line.find("workload.wall\\_time.value +10.0%: syscalls.count.getppid.per\\_op +50.0%"), std::string::npos)
      << line;
  EXPECT_NE(line.find("at least +"), std::string::npos) << line;
  EXPECT_NE(line.find("host noise (not a cause): host.other\\_cpus"), std::string::npos) << line;
  EXPECT_EQ(line.find("syscalls.latency"), std::string::npos) << line;
  EXPECT_EQ(line.find(kScript), std::string::npos) << line;

  std::string html = HtmlReporter().Render(r);
  size_t section = html.find("id=\"why\"");
  ASSERT_NE(section, std::string::npos);
  size_t end = html.find("</section>", section);
  std::string part = html.substr(section, end - section);
  size_t first_row = part.find("<tbody>\n<tr><td class=\"name\">syscalls.count.getppid.per_op</td>");
  EXPECT_NE(first_row, std::string::npos) << part;
  EXPECT_NE(part.find("<p class=\"host-noise muted\">host noise (not a cause): host.other_cpus"), std::string::npos);
  EXPECT_EQ(part.find("<td class=\"name\">host."), std::string::npos);
  EXPECT_EQ(part.find(kScript), std::string::npos);
  EXPECT_NE(part.find("&lt;script&gt;"), std::string::npos);

  std::string xml = JUnitReporter().Render(r);
  size_t failure = xml.find("<failure type=\"PerfRegression\"");
  ASSERT_NE(failure, std::string::npos);
  std::string body = xml.substr(failure, xml.find("</failure>", failure) - failure);
  EXPECT_NE(body.find("why: syscalls.count.getppid.per_op +50.0%"), std::string::npos) << body;
  EXPECT_NE(body.find("host noise (not a cause): host.other_cpus"), std::string::npos) << body;
}

TEST(Why, ResultsJsonCarriesTheRankedCausesAndStillReadsBack) {
  RunResults r = Explained(GetppidRegression());
  std::string text = JsonReporter().Render(r);
  nlohmann::json j = nlohmann::json::parse(text);
  ASSERT_EQ(j["scenarios"].size(), 1u);
  ASSERT_TRUE(j["scenarios"][0].contains("explanation"));
  const nlohmann::json& why = j["scenarios"][0]["explanation"];
  EXPECT_EQ(j["scenarios"][0]["name"], "loop " + kScript);
  EXPECT_EQ(why["per"], "op");
  EXPECT_EQ(why["failing"], nlohmann::json::array({"workload.wall_time.value"}));
  EXPECT_EQ(why["causes"][0]["metric"], "syscalls.count.getppid");
  EXPECT_EQ(why["causes"][0]["pricing"], "events");
  EXPECT_GT(why["causes"][0]["accounted_at_least_s"].get<double>(), 0);
  EXPECT_EQ(why["host_noise"][0]["metric"], "host.other_cpus");
  EXPECT_EQ(text.find("<script>"), std::string::npos);
  RunResults back = ResultsFromJson(j, "results.json");
  ASSERT_EQ(back.scenarios.size(), 1u);
  ASSERT_TRUE(back.scenarios[0].explanation);
  // Read back, it renders as it was written: the reporters only render it.
  EXPECT_EQ(JsonReporter().Render(back), text);
  EXPECT_EQ(MarkdownReporter().Render(back), MarkdownReporter().Render(r));
  // A run that passed has no explanation.
  RunResults passed = Explained(HostileResults());
  for (ScenarioResult& s : passed.scenarios) {
    for (CheckResult& c : s.checks) c.verdict = Verdict::kPass;
  }
  ExplainFailures(passed, Vocabulary());
  const nlohmann::json passed_json = nlohmann::json::parse(JsonReporter().Render(passed));
  for (const auto& s : passed_json["scenarios"]) EXPECT_FALSE(s.contains("explanation"));
}

// Who held the workload's CPUs: host noise on the "why" and host-load lines
// of every report, never a cause, with the comms (other processes' names)
// escaped.
TEST(Why, CpuHoldersAreHostNoiseAndTheirCommsAreEscaped) {
  RunResults r = GetppidRegression();
  const std::string comm = "<b>burn|er*</b>";
  for (auto* reps : {&r.scenarios[0].repetitions, &r.scenarios[0].baseline_repetitions}) {
    for (Repetition& rep : *reps) {
      rep.metrics[kHostRunqWaitBehindOthers] = ScalarMetric(kHostRunqWaitBehindOthers, 0.05, "s", Better::kNone);
      rep.metrics[kHostRunqWaitBehindOthersShare] =
          ScalarMetric(kHostRunqWaitBehindOthersShare, 0.8, "fraction", Better::kNone);
      rep.cpu_holders = {{comm, 0.04}, {"cc1plus", 0.01}};
    }
  }
  r = Explained(std::move(r));
  const ScenarioResult& s = r.scenarios[0];
  Explanation a = Attribute(s);
  for (const KernelShift& cause : a.causes) EXPECT_FALSE(IsHostMetric(cause.metric)) << cause.metric;
  ASSERT_EQ(a.cpu_holders.size(), 2u);
  EXPECT_EQ(a.cpu_holders[0].comm, comm);
  const std::string host = DescribeHost(a);
  // The same on both sides: not noise worth a word. The busier host is.
  EXPECT_EQ(host.find("host.runq_wait_behind_others "), std::string::npos) << host;
  EXPECT_NE(host.find("host.other_cpus "), std::string::npos) << host;
  EXPECT_NE(host.find("; CPUs held by other tasks: " + comm + " "), std::string::npos) << host;
  const std::string held = FormatCpuHolders(s);
  EXPECT_NE(held.find("per repetition for CPUs running other tasks ("), std::string::npos) << held;
  EXPECT_NE(held.find("% of its run-queue wait), held by: " + comm + " "), std::string::npos) << held;

  const std::string md = MarkdownReporter().Render(r);
  EXPECT_EQ(md.find(comm), std::string::npos);
  EXPECT_EQ(md.find("<b>"), std::string::npos);
  const std::string md_comm = MarkdownEscape(comm);
  size_t load = md.find("Host load in ");
  ASSERT_NE(load, std::string::npos) << md;
  EXPECT_NE(md.find("held by: " + md_comm, load), std::string::npos) << md;
  size_t why = md.find("**Why it regressed**");
  ASSERT_NE(why, std::string::npos);
  EXPECT_NE(md.find("CPUs held by other tasks: " + md_comm, why), std::string::npos) << md;

  const std::string html = HtmlReporter().Render(r);
  EXPECT_EQ(html.find("<b>burn"), std::string::npos);
  EXPECT_NE(html.find("held by: &lt;b&gt;burn|er*&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("CPUs held by other tasks: &lt;b&gt;burn|er*&lt;/b&gt;"), std::string::npos);

  const std::string xml = JUnitReporter().Render(r);
  EXPECT_EQ(xml.find("<b>burn"), std::string::npos);
  EXPECT_NE(xml.find("CPUs held by other tasks: &lt;b&gt;burn|er*&lt;/b&gt;"), std::string::npos);

  const nlohmann::json j = nlohmann::json::parse(JsonReporter().Render(r));
  EXPECT_EQ(j["scenarios"][0]["explanation"]["cpu_holders"][0]["comm"], comm);
}

// A busy host's three effects on a scenario, each with a reason longer than
// a summary.md cell: every one is in the summary, none cut off by another
// (a busy-host `ab` summary once lost the pairs it extended that way).
TEST(Report, HostLoadGivesEveryPartItsOwnCellInTheSummary) {
  RunResults r = GetppidRegression();
  ScenarioResult& s = r.scenarios[0];
  const std::string reason = "other work kept 1.47 of 2 CPUs busy " + std::string(200, 'x') + " a fair pair";
  for (Repetition& rep : s.repetitions) rep.tainted = reason;
  Repetition retaken;
  retaken.tainted = reason;
  s.retaken = {retaken, retaken};
  s.adaptive = AdaptiveRepetitions{3, 12};
  s.adaptive->busy_host = true;
  const std::vector<std::string> parts = HostLoadParts(s);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(FormatHostLoad(s), parts[0] + "; " + parts[1] + "; " + parts[2]);
  const std::string md = MarkdownReporter().Render(r);
  const size_t load = md.find("Host load in ");
  ASSERT_NE(load, std::string::npos) << md;
  for (const char* part : {"2 repetitions measured again while the host was busy", "counted although the host was busy",
                           "pairs measured: the suite's 3 were extended"}) {
    EXPECT_NE(md.find(part, load), std::string::npos) << part << "\n" << md;
  }
  EXPECT_NE(HtmlReporter().Render(r).find("pairs measured: the suite&#39;s 3 were extended"), std::string::npos);
}

// A check on instructions where the host has no PMU: every report carries
// the probe's reason and what to do, summary.md too although the message is
// longer than a table cell, and the HTML probe table says what is not
// measured here, escaped like everything a host reports.
TEST(Report, EveryReportSaysWhyAMetricIsNotMeasuredHereAndWhatToDo) {
  const std::string reason =
      "no hardware PMU (perf_event_open(hardware instructions): No such file or directory (ENOENT)): a virtual "
      "machine without a virtual PMU, or a CPU without a PMU driver, so it counts <software> events";
  const std::string instead = "count instructions with --instrument (instr.total, under Valgrind)";
  RunResults r;
  r.suite = "pmu";
  ScenarioResult scenario;
  scenario.name = "a-scenario-with-a-rather-long-name";
  ProbeReport cpu;
  cpu.name = "cpu";
  cpu.unavailable.push_back({{"cpu.instructions", "cpu.instructions.user"}, reason, instead});
  scenario.probes.push_back(cpu);
  CheckResult check;
  check.spec.metric = "cpu.instructions.user";
  check.spec.name = "cpu.instructions.user.per_op";
  check.verdict = Verdict::kError;
  check.message = "metric cpu.instructions.user not measured in scenario " + scenario.name + ": probe cpu: " + reason +
                  "; " + instead;
  ASSERT_GT(check.message.size(), 300u);
  scenario.checks.push_back(check);
  r.scenarios.push_back(scenario);
  r.verdict = Verdict::kError;

  const std::string md = MarkdownReporter().Render(r);
  EXPECT_NE(md.find(MarkdownEscape(check.message)), std::string::npos) << md;
  const std::string xml = JUnitReporter().Render(r);
  EXPECT_NE(xml.find(XmlAttributeEscape("cpu.instructions.user.per_op: " + check.message)), std::string::npos) << xml;
  const std::string html = HtmlReporter().Render(r);
  EXPECT_NE(html.find(XmlEscape(check.message)), std::string::npos);
  EXPECT_NE(html.find("not measured here: cpu.instructions, cpu.instructions.user: " + XmlEscape(reason) + "; " +
                      XmlEscape(instead)),
            std::string::npos);
  EXPECT_EQ(html.find("<software>"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(JsonReporter().Render(r));
  EXPECT_EQ(j["scenarios"][0]["checks"][0]["message"], check.message);
  EXPECT_EQ(j["scenarios"][0]["probes"][0]["unavailable"][0]["reason"], reason);
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

// Readers that add the test cases' times up (mikepenz's action sums them)
// must get each scenario's time once, not once per check.
TEST_F(ReportTest, JUnitTestcaseTimesAddUpToTheirScenarios) {
  const auto seconds = [](const std::string& element) {
    const size_t at = element.find(" time=\"");
    return at == std::string::npos ? -1.0 : std::stod(element.substr(at + 7));
  };
  for (const std::string& suite : Testsuites(JUnitReporter().Render(results_))) {
    double cases = 0;
    for (size_t at = suite.find("<testcase "); at != std::string::npos; at = suite.find("<testcase ", at + 1))
      cases += seconds(suite.substr(at, suite.find('>', at) - at));
    EXPECT_NEAR(cases, seconds(suite.substr(0, suite.find('>'))), 0.01) << suite.substr(0, suite.find('>'));
  }
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

TEST_F(ReportTest, HtmlWhySaysWhenNoKernelMetricClearlyGrew) {
  std::string html = HtmlReporter().Render(results_);
  size_t why = html.find("id=\"why\"");
  ASSERT_NE(why, std::string::npos);
  size_t end = html.find("id=\"scenario-0\"");
  std::string part = html.substr(why, end - why);
  // runq p99 55 -> 57 in three noisy repetitions is no cause; max_rss is an outcome.
  EXPECT_NE(part.find("No kernel-side metric of this scenario clearly grew"), std::string::npos) << part;
  EXPECT_EQ(part.find("sched.runq_latency"), std::string::npos);
  EXPECT_EQ(part.find("workload.max_rss"), std::string::npos);
}

TEST(Html, ShowsBaselineAndCandidateDistributionsAndRanksKernelMetrics) {
  RunResults r;
  r.suite = "s";
  r.scenarios.push_back(ScenarioWithBaselineRepetitions());
  CheckResult wall = MakeCheck("workload.wall_time", "value", Verdict::kRegression, {1, 1, 1}, {1.3, 1.3, 1.3}, 30);
  r.scenarios[0].checks.push_back(wall);
  r = Explained(std::move(r));
  std::string html = HtmlReporter().Render(r);
  EXPECT_NE(html.find("sched.runq_latency: baseline vs candidate"), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"distribution of sched.runq_latency\""), std::string::npos);
  EXPECT_NE(html.find("<polygon points="), std::string::npos);          // the baseline's area
  EXPECT_NE(html.find("stroke-dasharray=\"5 3\""), std::string::npos);  // the baseline's CDF
  size_t why = html.find("id=\"why\"");
  ASSERT_NE(why, std::string::npos);
  // Priced first, then the unpriced reclaim count; the noisy run-queue latency is no cause.
  EXPECT_LT(html.find("syscalls.count.per_op", why), html.find("mm.reclaim.count", why));
  EXPECT_EQ(html.find("sched.runq_latency.sum", why), std::string::npos);
  std::string md = MarkdownReporter().Render(r);
  EXPECT_NE(md.find("- camera / workload.wall\\_time.value +30.0%: syscalls.count.per\\_op +1.0%"), std::string::npos)
      << md;
  EXPECT_NE(md.find("; mm.reclaim.count +900.0% (10.0 count \u2192 100 count), not priced"), std::string::npos) << md;
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
  std::string command = "xmllint --noout --schema '" + std::string(PERFGATE_FIXTURES) + "/junit/perfgate-junit.xsd' '" +
                        (out_ / "junit.xml").string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST_F(WrittenReports, JunitparserReadsConsistentCounts) {
  if (!ToolAvailable("/usr/bin/python3 -c 'import junitparser'")) GTEST_SKIP() << "junitparser not installed";
  std::string command = "/usr/bin/python3 '" + std::string(PERFGATE_SOURCE_DIR) + "/tests/unit/junit_check.py' '" +
                        (out_ / "junit.xml").string() + "' 9 2 2 1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

// Accepted and quarantined checks (gate/triage/) are passed testcases that
// every JUnit reader counts as passed, with who let them pass in properties;
// the Markdown and HTML say the same. PERFGATE_KEEP_REPORTS keeps the file
// in OUT/triaged/ for tests/ci/junit-consumers/check.sh.
TEST_F(WrittenReports, AcceptedAndQuarantinedChecksArePassedTestcasesSayingWhoAndWhy) {
  RunResults triaged = results_;
  int accepted = 0, quarantined = 0;
  for (ScenarioResult& s : triaged.scenarios) {
    for (CheckResult& c : s.checks) {
      if (c.verdict == Verdict::kRegression && c.spec.type == CheckSpec::Type::kRegression && accepted == 0) {
        c.triage = CheckResult::Triage{"accepted",
                                       Verdict::kRegression,
                                       15.0,
                                       "intended: integrity check",
                                       "1a2b3c4d5e6f",
                                       "",
                                       "accepted in 1a2b3c4d5e6f (intended: integrity check)"};
        c.verdict = Verdict::kAccepted;
        ++accepted;
      } else if (c.verdict == Verdict::kInconclusive && quarantined == 0) {
        c.triage = CheckResult::Triage{"quarantined",
                                       Verdict::kInconclusive,
                                       std::nullopt,
                                       "noisy",
                                       "alice",
                                       "2026-12-31",
                                       "quarantined until 2026-12-31 by alice (noisy)"};
        c.verdict = Verdict::kQuarantined;
        ++quarantined;
      }
    }
  }
  ASSERT_EQ(accepted, 1);
  ASSERT_EQ(quarantined, 1);
  triaged.verdict = OverallVerdict(triaged);
  const std::filesystem::path out = out_ / "triaged";
  WriteReports(triaged, out.string());

  const std::string junit = ReadFile(out / "junit.xml");
  EXPECT_NE(junit.find("name=\"accepted_by\" value=\"1a2b3c4d5e6f\""), std::string::npos);
  EXPECT_NE(junit.find("name=\"accepted_reason\" value=\"intended: integrity check\""), std::string::npos);
  EXPECT_NE(junit.find("name=\"quarantine_until\" value=\"2026-12-31\""), std::string::npos);
  EXPECT_NE(junit.find("name=\"quarantine_owner\" value=\"alice\""), std::string::npos);
  const std::string md = ReadFile(out / "summary.md");
  EXPECT_NE(md.find("1 accepted, 1 quarantined"), std::string::npos) << md.substr(0, 400);
  EXPECT_NE(md.find("accepted in 1a2b3c4d5e6f (intended: integrity check)"), std::string::npos);
  const std::string html = ReadFile(out / "report" / "index.html");
  EXPECT_NE(html.find("quarantined until 2026-12-31 by alice (noisy)"), std::string::npos);
  EXPECT_EQ(ReadResultsFile((out / "results.json").string()).scenarios[0].checks.size(),
            triaged.scenarios[0].checks.size());

  if (ToolAvailable("command -v xmllint")) {
    std::string command = "xmllint --noout --schema '" + std::string(PERFGATE_FIXTURES) +
                          "/junit/perfgate-junit.xsd' '" + (out / "junit.xml").string() + "'";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
  if (!ToolAvailable("/usr/bin/python3 -c 'import junitparser'")) GTEST_SKIP() << "junitparser not installed";
  // The fixture's 9 checks: one regression accepted, the inconclusive one quarantined.
  std::string command = "/usr/bin/python3 '" + std::string(PERFGATE_SOURCE_DIR) + "/tests/unit/junit_check.py' '" +
                        (out / "junit.xml").string() + "' 9 1 2 0";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

}  // namespace
}  // namespace perfgate
