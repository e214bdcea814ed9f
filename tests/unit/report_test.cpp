// Reporters: what they share (escaping, numbers, charts, outcomes), the why
// as every report shows it, and WriteReports with the validators CI tools
// read, over the hand-built results of report_fixtures.h. One file per
// reporter holds its own tests (report_junit_test.cpp,
// report_markdown_test.cpp, report_html_test.cpp).
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
#include "report_fixtures.h"

namespace perfgate {
namespace {

using testing::Attribute;
using testing::CheckWithValues;
using testing::Explained;
using testing::HostileResults;
using testing::IsHostMetric;
using testing::Jitter;
using testing::kScript;
using testing::Latencies;
using testing::MakeCheck;
using testing::MakeRepetition;
using testing::MoreGetppidCalls;
using testing::ReportTest;
using testing::Sides;
using testing::Vocabulary;

using testing::Count;
using testing::Lower;
using testing::ReadFile;
using testing::ToolAvailable;

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

// The run as every reporter shows it.
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
