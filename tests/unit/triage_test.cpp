// Accepting a regression within a bound and quarantining a check until a
// date (gate/triage/): the trailer's grammar, the verdict rule, the
// quarantine list of a suite.
#include "triage/triage.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "base/error.h"
#include "config/suite.h"
#include "harness/errors.h"
#include "metrics/results_json.h"
#include "triage/acceptance.h"

namespace perfgate {
namespace {

const SuiteVocabulary kVocab{{"runqlat"}, {"command"}};
const SuiteVariables kVars{"/suites", "/opt/perfgate"};

const char kSuite[] = R"({"name": "s", "scenarios": [
  {"name": "start", "workload": {"argv": ["true"]},
   "checks": [{"metric": "workload.wall_time"},
              {"metric": "workload.max_rss", "name": "rss", "max": 100}]},
  {"name": "io", "workload": {"argv": ["true"]},
   "checks": [{"metric": "fio.job.read.iops", "statistic": "value", "name": "read/iops"}]}]})";

std::string SuiteTextWithQuarantine(const std::string& quarantine) {
  std::string text = kSuite;
  text.insert(text.rfind('}'), ", \"quarantine\": " + quarantine);
  return text;
}

Suite ParseWithQuarantine(const std::string& quarantine) {
  return ParseSuite(SuiteTextWithQuarantine(quarantine), "s.json", kVocab, kVars);
}

std::string AcceptError(const std::string& text) {
  return testing::ErrorOf([&] { ParseAcceptance(text, "--accept", "--accept"); }, ExitCode::kBadInput, text);
}

TEST(AcceptTrailer, ParsesTargetBoundAndReason) {
  Acceptance a = ParseAcceptance("start/workload.wall_time <= +15%: the new integrity check costs start-up", "1a2b3c",
                                 "trailers:1");
  EXPECT_EQ(a.target, "start/workload.wall_time");
  EXPECT_DOUBLE_EQ(a.bound_pct, 15);
  EXPECT_EQ(a.reason, "the new integrity check costs start-up");
  EXPECT_EQ(a.by, "1a2b3c");
  EXPECT_DOUBLE_EQ(ParseAcceptance("a/b<=7.5 %:why", "x", "y").bound_pct, 7.5);
}

TEST(AcceptTrailer, RejectsMalformedBoundsWithOneLine) {
  EXPECT_NE(AcceptError("start/workload.wall_time: too slow").find("no bound"), std::string::npos);
  EXPECT_NE(AcceptError("start/workload.wall_time <= 15: why").find("malformed bound \"15\""), std::string::npos);
  EXPECT_NE(AcceptError("start/workload.wall_time <= +ten%: why").find("malformed bound"), std::string::npos);
  EXPECT_NE(AcceptError("start/workload.wall_time <= +15%").find("no reason"), std::string::npos);
  EXPECT_NE(AcceptError("start/workload.wall_time <= +15%:   ").find("needs a reason"), std::string::npos);
  EXPECT_NE(AcceptError(" <= +15%: why").find("no check named"), std::string::npos);
  EXPECT_NE(AcceptError("x/y <= +1%%: z").find("malformed bound"), std::string::npos);
}

TEST(AcceptTrailer, RejectsABoundOnAnImprovement) {
  EXPECT_NE(AcceptError("start/workload.wall_time <= -5%: faster").find("a bound on an improvement"),
            std::string::npos);
  EXPECT_NE(AcceptError("start/workload.wall_time <= +0%: nothing").find("a bound on an improvement"),
            std::string::npos);
}

TEST(AcceptTrailer, ResolvesAgainstTheWholeSuite) {
  const Suite suite = ParseSuite(kSuite, "s.json", kVocab, kVars);
  std::vector<Acceptance> ok = {ParseAcceptance("io/read/iops <= +3%: slower disk", "c", "t:1")};
  ResolveAcceptances(ok, suite);
  EXPECT_EQ(ok[0].scenario, "io");
  EXPECT_EQ(ok[0].check, "read/iops");

  std::vector<Acceptance> missing = {ParseAcceptance("start/workload.cpu_time <= +3%: why", "c", "t:2")};
  std::string e = testing::ErrorOf([&] { ResolveAcceptances(missing, suite); }, ExitCode::kBadInput);
  EXPECT_NE(e.find("t:2: \"start/workload.cpu_time\" names no check of suite s.json"), std::string::npos) << e;

  std::vector<Acceptance> budget = {ParseAcceptance("start/rss <= +3%: why", "c", "t:3")};
  e = testing::ErrorOf([&] { ResolveAcceptances(budget, suite); }, ExitCode::kBadInput);
  EXPECT_NE(e.find("is a budget check"), std::string::npos) << e;
}

TEST(AcceptTrailer, ReadsTheGatesTrailerFileNamingTheLineOfABadOne) {
  const std::string file = ::testing::TempDir() + "/accept-trailers.txt";
  {
    std::ofstream out(file);
    out << "# collected by the gate\n1a2b3c start/workload.wall_time <= +15%: intended\n\n4d5e6f start/x <= -2%: bad\n";
  }
  std::string e = testing::ErrorOf([&] { ReadAcceptanceFile(file); }, ExitCode::kBadInput);
  EXPECT_NE(e.find(file + ":4: "), std::string::npos) << e;
  EXPECT_NE(e.find("a bound on an improvement"), std::string::npos) << e;
  {
    std::ofstream out(file);
    out << "1a2b3c start/workload.wall_time <= +15%: intended\n";
  }
  std::vector<Acceptance> read = ReadAcceptanceFile(file);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].by, "1a2b3c");
  EXPECT_EQ(read[0].source, file + ":1");
  std::remove(file.c_str());
}

TEST(AcceptTrailer, TheNightlySkipsBadTrailersOfAFileWithALineEachAndKeepsTheGoodOnes) {
  const std::string file = ::testing::TempDir() + "/nightly-trailers.txt";
  {
    std::ofstream out(file);
    out << "# the commits since the last night\n"
           "1a2b3c start/workload.wall_time <= +15%: intended\n"
           "4d5e6f start/x <= 15: no percent sign\n"
           "778899 start/workload.cpu_time <= +3%: a check the suite lost\n"
           "aabbcc start/rss <= +3%: a budget\n";
  }
  std::vector<std::string> skipped;
  std::vector<Acceptance> read = ReadAcceptanceFile(file, &skipped);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find(file + ":3: \"start/x <= 15: no percent sign\": malformed bound"), std::string::npos)
      << skipped[0];
  ASSERT_EQ(read.size(), 3u);
  // --accept is typed for this run: never skipped.
  read.push_back(ParseAcceptance("io/gone <= +3%: typed", "--accept", "--accept"));
  const Suite suite = ParseSuite(kSuite, "s.json", kVocab, kVars);
  std::vector<Acceptance> strict = read;
  std::string e = testing::ErrorOf([&] { ResolveAcceptances(strict, suite, &skipped); }, ExitCode::kBadInput);
  EXPECT_NE(e.find("--accept: \"io/gone\" names no check"), std::string::npos) << e;
  read.pop_back();
  skipped.clear();
  ResolveAcceptances(read, suite, &skipped);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].by, "1a2b3c");
  EXPECT_EQ(read[0].check, "workload.wall_time");
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_NE(skipped[0].find(file + ":4: \"start/workload.cpu_time\" names no check of suite s.json"), std::string::npos)
      << skipped[0];
  EXPECT_NE(skipped[1].find(file + ":5: \"start/rss\" is a budget check"), std::string::npos) << skipped[1];
  std::remove(file.c_str());
}

// A regression check of scenario "start" with the given change and interval.
RunResults RunWith(double change, double low, double high, Verdict verdict = Verdict::kRegression,
                   Better better = Better::kLower) {
  CheckResult c;
  c.spec.metric = "workload.wall_time";
  c.spec.name = "workload.wall_time";
  c.statistic = "value";
  c.unit = "s";
  c.better = better;
  c.verdict = verdict;
  c.baseline_values = {1, 1, 1};
  c.candidate_values = {1 + change / 100, 1 + change / 100, 1 + change / 100};
  c.baseline_median = 1;
  c.candidate_median = 1 + change / 100;
  c.change_pct = change;
  c.change_ci_low_pct = low;
  c.change_ci_high_pct = high;
  ScenarioResult s;
  s.name = "start";
  s.checks.push_back(c);
  RunResults r;
  r.scenarios.push_back(s);
  return r;
}

std::vector<Acceptance> AcceptStart(double bound) {
  Acceptance a =
      ParseAcceptance("start/workload.wall_time <= +" + std::to_string(bound) + "%: intended", "1a2b3c", "t:1");
  a.scenario = "start";
  a.check = "workload.wall_time";
  return {a};
}

TEST(AcceptRule, ARegressionWhoseIntervalIsWithinTheBoundIsAcceptedAndPasses) {
  RunResults r = RunWith(10, 8, 12);
  ApplyTriage(r, AcceptStart(15), {}, "2026-11-27");
  const CheckResult& c = r.scenarios[0].checks[0];
  EXPECT_EQ(c.verdict, Verdict::kAccepted);
  ASSERT_TRUE(c.triage);
  EXPECT_EQ(c.triage->state, "accepted");
  EXPECT_EQ(c.triage->measured, Verdict::kRegression);
  EXPECT_EQ(c.triage->by, "1a2b3c");
  EXPECT_NE(c.triage->note.find("accepted in 1a2b3c (intended)"), std::string::npos) << c.triage->note;
  EXPECT_EQ(OverallVerdict(r), Verdict::kPass);
  EXPECT_EQ(ExitCodeFor(r, true), 0);
}

TEST(AcceptRule, AnEstimateBeyondTheBoundFailsSayingByHowMuch) {
  RunResults r = RunWith(30, 27, 33);
  ApplyTriage(r, AcceptStart(15), {}, "2026-11-27");
  const CheckResult& c = r.scenarios[0].checks[0];
  EXPECT_EQ(c.verdict, Verdict::kRegression);
  ASSERT_TRUE(c.triage);
  EXPECT_EQ(c.triage->state, "exceeded");
  EXPECT_NE(c.triage->note.find("exceeds the accepted <= +15.0% by 15.0 points"), std::string::npos) << c.triage->note;
  EXPECT_EQ(ExitCodeFor(r, false), 1);
}

TEST(AcceptRule, AnIntervalReachingBeyondTheBoundIsNotAccepted) {
  // The estimate is within the bound but the data do not rule out +17 %.
  RunResults r = RunWith(13, 9, 17);
  ApplyTriage(r, AcceptStart(15), {}, "2026-11-27");
  const CheckResult& c = r.scenarios[0].checks[0];
  EXPECT_EQ(c.verdict, Verdict::kRegression);
  EXPECT_NE(c.triage->note.find("interval's high end +17.0% exceeds the accepted <= +15.0% by 2.0 points"),
            std::string::npos)
      << c.triage->note;
}

TEST(AcceptRule, HigherIsBetterMetricsBoundTheirDrop) {
  // Throughput down 10 % [-12, -8]: 12 % worse at most, within <= +15%.
  RunResults r = RunWith(-10, -12, -8, Verdict::kRegression, Better::kHigher);
  ApplyTriage(r, AcceptStart(15), {}, "2026-11-27");
  EXPECT_EQ(r.scenarios[0].checks[0].verdict, Verdict::kAccepted);
  RunResults worse = RunWith(-10, -16, -8, Verdict::kRegression, Better::kHigher);
  ApplyTriage(worse, AcceptStart(15), {}, "2026-11-27");
  EXPECT_EQ(worse.scenarios[0].checks[0].verdict, Verdict::kRegression);
}

TEST(AcceptRule, ACheckThatDidNotRegressIsLeftAlone) {
  RunResults r = RunWith(1, -1, 3, Verdict::kPass);
  ApplyTriage(r, AcceptStart(15), {}, "2026-11-27");
  EXPECT_EQ(r.scenarios[0].checks[0].verdict, Verdict::kPass);
  EXPECT_FALSE(r.scenarios[0].checks[0].triage);
}

TEST(AcceptRule, AnInconclusiveCheckWithinTheBoundIsAcceptedAndBeyondItIsLeftAlone) {
  RunResults r = RunWith(6, 1, 11, Verdict::kInconclusive);
  ApplyTriage(r, AcceptStart(15), {}, "2026-11-27");
  EXPECT_EQ(r.scenarios[0].checks[0].verdict, Verdict::kAccepted);
  RunResults wide = RunWith(6, -3, 19, Verdict::kInconclusive);
  ApplyTriage(wide, AcceptStart(15), {}, "2026-11-27");
  EXPECT_EQ(wide.scenarios[0].checks[0].verdict, Verdict::kInconclusive);
  EXPECT_FALSE(wide.scenarios[0].checks[0].triage);
}

QuarantineEntry QuarantineStart(const std::string& until) {
  return {"start", "workload.wall_time", "alice", "noisy on shared runners", until, "s.json: $.quarantine[0]"};
}

TEST(Quarantine, AFailingCheckIsQuarantinedUntilItsLastDayInclusive) {
  RunResults r = RunWith(12, 9, 15);
  ApplyTriage(r, {}, {QuarantineStart("2026-12-31")}, "2026-12-31");
  const CheckResult& c = r.scenarios[0].checks[0];
  EXPECT_EQ(c.verdict, Verdict::kQuarantined);
  EXPECT_EQ(c.triage->measured, Verdict::kRegression);
  EXPECT_NE(c.triage->note.find("quarantined until 2026-12-31 by alice (noisy on shared runners): would have "
                                "failed: +12.0%"),
            std::string::npos)
      << c.triage->note;
  EXPECT_EQ(ExitCodeFor(r, true), 0);
}

TEST(Quarantine, TheDayAfterItsExpiryTheCheckFailsAgainAndSaysSo) {
  RunResults r = RunWith(12, 9, 15);
  ApplyTriage(r, {}, {QuarantineStart("2026-12-31")}, "2027-01-01");
  const CheckResult& c = r.scenarios[0].checks[0];
  EXPECT_EQ(c.verdict, Verdict::kRegression);
  EXPECT_EQ(c.triage->state, "expired");
  EXPECT_NE(c.triage->note.find("expired on 2026-12-31: live again"), std::string::npos) << c.triage->note;
  EXPECT_EQ(ExitCodeFor(r, false), 1);
}

TEST(Triage, RoundTripsThroughResultsJson) {
  RunResults r = RunWith(10, 8, 12);
  ApplyTriage(r, AcceptStart(15), {}, "2026-11-27");
  r.verdict = OverallVerdict(r);
  RunResults back = ResultsFromJson(ToJson(r), "results.json");
  const CheckResult& c = back.scenarios[0].checks[0];
  EXPECT_EQ(c.verdict, Verdict::kAccepted);
  ASSERT_TRUE(c.triage);
  EXPECT_EQ(c.triage->state, "accepted");
  EXPECT_EQ(c.triage->measured, Verdict::kRegression);
  EXPECT_EQ(c.triage->by, "1a2b3c");
  EXPECT_EQ(c.triage->reason, "intended");
  EXPECT_DOUBLE_EQ(*c.triage->bound_pct, 15);
  EXPECT_EQ(c.triage->note, r.scenarios[0].checks[0].triage->note);
  EXPECT_FALSE(ToJson(r).contains("skipped_trailers"));  // only when there are some

  r.skipped_trailers = {"t.txt:3: \"start/x <= 15: no percent sign\": malformed bound \"15\""};
  EXPECT_EQ(ResultsFromJson(ToJson(r), "results.json").skipped_trailers, r.skipped_trailers);
}

TEST(QuarantineList, ParsesEntriesOfTheSuite) {
  Suite s = ParseWithQuarantine(
      R"([{"check": "start/workload.wall_time", "owner": "alice", "reason": "noisy", "until": "2026-12-31"}])");
  ASSERT_EQ(s.quarantine.size(), 1u);
  EXPECT_EQ(s.quarantine[0].scenario, "start");
  EXPECT_EQ(s.quarantine[0].check, "workload.wall_time");
  EXPECT_EQ(s.quarantine[0].until, "2026-12-31");
}

std::string QuarantineError(const std::string& list) {
  return testing::ErrorOf([&] { ParseWithQuarantine(list); }, ExitCode::kBadInput, list);
}

TEST(QuarantineList, BadEntriesNameTheFileAndJsonPath) {
  std::string e =
      QuarantineError(R"([{"check": "start/nope", "owner": "alice", "reason": "noisy", "until": "2026-12-31"}])");
  EXPECT_NE(e.find("s.json: $.quarantine[0].check"), std::string::npos) << e;
  e = QuarantineError(R"([{"check": "start/workload.wall_time", "owner": "a", "reason": "n", "until": "2026-02-30"}])");
  EXPECT_NE(e.find("$.quarantine[0].until"), std::string::npos) << e;
  e = QuarantineError(R"([{"check": "start/workload.wall_time", "owner": "a", "reason": "n", "until": "31.12.2026"}])");
  EXPECT_NE(e.find("is not a date"), std::string::npos) << e;
  e = QuarantineError(R"([{"check": "start/workload.wall_time", "reason": "n", "until": "2026-12-31"}])");
  EXPECT_NE(e.find("$.quarantine[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("owner"), std::string::npos) << e;
  e = QuarantineError(R"([{"check": "start/workload.wall_time", "owner": " ", "reason": "n", "until": "2026-12-31"}])");
  EXPECT_NE(e.find("needs an owner"), std::string::npos) << e;
}

TEST(QuarantineList, TheFileBesideTheSuiteJoinsItsEntries) {
  char dir_template[] = "/tmp/perfgate-quarantine-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, suite = dir + "/suite.json", beside = dir + "/suite.quarantine.json";
  EXPECT_EQ(QuarantineFileOf(suite), beside);
  EXPECT_EQ(QuarantineFileOf(dir + "/suite"), dir + "/suite.quarantine.json");
  std::ofstream(suite) << SuiteTextWithQuarantine(
      R"([{"check": "start/workload.wall_time", "owner": "alice", "reason": "noisy", "until": "2026-12-31"}])");
  EXPECT_EQ(LoadSuite(suite, kVocab, kVars).quarantine.size(), 1u);  // no file beside: the suite's own
  std::ofstream(beside)
      << R"({"quarantine": [{"check": "io/read/iops", "owner": "bob", "reason": "shared disk", "until": "2027-01-31"}]})";
  Suite s = LoadSuite(suite, kVocab, kVars);
  ASSERT_EQ(s.quarantine.size(), 2u);
  EXPECT_EQ(s.quarantine[1].scenario, "io");
  EXPECT_EQ(s.quarantine[1].owner, "bob");
  EXPECT_EQ(s.quarantine[1].where, beside + ": $.quarantine[0]");
  std::ofstream(beside)
      << R"({"quarantine": [{"check": "io/nope", "owner": "b", "reason": "r", "until": "2027-01-31"}]})";
  const std::string e = testing::ErrorOf([&] { LoadSuite(suite, kVocab, kVars); }, ExitCode::kBadInput, "beside");
  EXPECT_NE(e.find(beside + ": $.quarantine[0].check"), std::string::npos) << e;
  std::remove(beside.c_str());
  std::remove(suite.c_str());
  std::remove(dir.c_str());
}

TEST(QuarantineList, CalendarDatesAreReal) {
  EXPECT_TRUE(IsCalendarDate("2028-02-29"));
  EXPECT_FALSE(IsCalendarDate("2027-02-29"));
  EXPECT_FALSE(IsCalendarDate("2027-13-01"));
  EXPECT_FALSE(IsCalendarDate("2027-1-01"));
}

TEST(TriageToday, TheOptionWinsOverTheEnvironmentAndBadDatesAreBadInput) {
  setenv("PERFGATE_TODAY", "2027-01-01", 1);
  EXPECT_EQ(TriageToday(""), "2027-01-01");
  EXPECT_EQ(TriageToday("2026-05-05"), "2026-05-05");
  setenv("PERFGATE_TODAY", "tomorrow", 1);
  std::string e = testing::ErrorOf([] { TriageToday(""); }, ExitCode::kBadInput);
  EXPECT_NE(e.find("PERFGATE_TODAY: \"tomorrow\" is not a date"), std::string::npos) << e;
  unsetenv("PERFGATE_TODAY");
  EXPECT_TRUE(IsCalendarDate(TriageToday("")));
}

}  // namespace
}  // namespace perfgate
