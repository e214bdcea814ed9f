// The JUnit reporter (report/junit_reporter.h) over the hand-built results
// of report_fixtures.h: counts, classification, escaping, one-line fields.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "harness/text.h"
#include "report/junit_reporter.h"
#include "report_fixtures.h"

namespace perfgate {
namespace {

using testing::Count;
using testing::ReportTest;

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

}  // namespace
}  // namespace perfgate
