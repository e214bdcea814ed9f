// --shard K/N and merging the shards' results back into one run.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/error.h"
#include "config/shard.h"
#include "metrics/merge.h"
#include "metrics/results_json.h"
#include "report/html_reporter.h"

namespace perfgate {
namespace {

Suite SuiteOf(const std::vector<std::string>& names) {
  Suite suite;
  suite.name = "nightly";
  suite.file = "suite.json";
  for (const auto& n : names) {
    ScenarioSpec spec;
    spec.name = n;
    suite.scenarios.push_back(spec);
  }
  return suite;
}

std::vector<std::string> Names(const Suite& suite) {
  std::vector<std::string> out;
  for (const auto& s : suite.scenarios) out.push_back(s.name);
  return out;
}

TEST(Shard, ParsesKOfN) {
  Shard s = ParseShard("2/3");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 3);
}

TEST(Shard, RefusesMalformedOrOutOfRange) {
  for (const char* bad : {"", "3", "0/2", "3/2", "1/0", "a/b", "1/2x", "-1/2", "1//2"}) {
    try {
      ParseShard(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_NE(std::string(e.what()).find("--shard"), std::string::npos);
    }
  }
}

TEST(Shard, RoundRobinInSuiteOrderCoversEveryScenarioOnce) {
  const std::vector<std::string> all = {"a", "b", "c", "d", "e", "f", "g"};
  std::multiset<std::string> seen;
  for (int k = 1; k <= 3; ++k) {
    Suite suite = SuiteOf(all);
    SelectShard(suite, {}, {k, 3});
    for (const auto& n : Names(suite)) seen.insert(n);
    if (k == 1) {
      EXPECT_EQ(Names(suite), (std::vector<std::string>{"a", "d", "g"}));
    }
    if (k == 3) {
      EXPECT_EQ(Names(suite), (std::vector<std::string>{"c", "f"}));
    }
  }
  EXPECT_EQ(seen, std::multiset<std::string>(all.begin(), all.end()));
}

TEST(Shard, SplitsOnlyTheNamedScenarios) {
  Suite suite = SuiteOf({"a", "b", "c", "d"});
  SelectShard(suite, {"b", "d"}, {2, 2});
  EXPECT_EQ(Names(suite), (std::vector<std::string>{"d"}));
}

TEST(Shard, UnknownScenarioNameIsBadInput) {
  Suite suite = SuiteOf({"a"});
  EXPECT_THROW(SelectShard(suite, {"zz"}, {1, 2}), Error);
}

TEST(Shard, MoreShardsThanScenariosLeavesSomeEmpty) {
  Suite suite = SuiteOf({"a"});
  SelectShard(suite, {}, {2, 4});
  EXPECT_TRUE(suite.scenarios.empty());
}

ScenarioResult ScenarioWith(const std::string& name, Verdict verdict) {
  ScenarioResult s;
  s.name = name;
  CheckResult c;
  c.verdict = verdict;
  s.checks.push_back(c);
  return s;
}

ShardResults ShardOf(const std::string& file, const std::string& suite, std::vector<ScenarioResult> scenarios) {
  ShardResults shard{file, {}};
  shard.results.suite = suite;
  shard.results.environment.hostname = file;
  shard.results.scenarios = std::move(scenarios);
  return shard;
}

TEST(MergeShards, ConcatenatesScenariosAndRecomputesTheVerdict) {
  RunResults merged = MergeShards({ShardOf("1.json", "s", {ScenarioWith("a", Verdict::kPass)}),
                                   ShardOf("2.json", "s", {ScenarioWith("b", Verdict::kRegression)})},
                                  false);
  ASSERT_EQ(merged.scenarios.size(), 2u);
  EXPECT_EQ(merged.scenarios[0].name, "a");
  EXPECT_EQ(merged.scenarios[1].name, "b");
  EXPECT_EQ(merged.verdict, Verdict::kRegression);
  EXPECT_EQ(merged.exit_code, 1);
  EXPECT_EQ(merged.environment.hostname, "1.json");
}

// Paired within a host, shards may run on hosts of their own: the merged
// results name each shard's, through results.json and in the report.
TEST(MergeShards, ShardsOnHostsOfTheirOwnAreEachNamed) {
  ShardResults one = ShardOf("1.json", "s", {ScenarioWith("a", Verdict::kPass)});
  ShardResults two = ShardOf("2.json", "s", {ScenarioWith("b", Verdict::kPass)});
  one.results.shard = "1/2";
  two.results.shard = "2/2";
  one.results.environment.hostname = "runner-a";
  two.results.environment.hostname = "runner-<b>";
  const RunResults merged = MergeShards({one, two}, false, 2);
  const std::vector<std::pair<std::string, std::string>> hosts = {{"1/2", "runner-a"}, {"2/2", "runner-<b>"}};
  EXPECT_EQ(merged.shard_hosts, hosts);
  EXPECT_EQ(ResultsFromJson(ToJson(merged), "merged.json").shard_hosts, hosts);
  const std::string html = HtmlReporter().Render(merged);
  EXPECT_NE(html.find("runner-a (shard 1/2), runner-&lt;b&gt; (shard 2/2)"), std::string::npos);

  two.results.environment.hostname = "runner-a";
  EXPECT_TRUE(MergeShards({one, two}, false, 2).shard_hosts.empty());
}

TEST(MergeShards, PartialShardMakesThePartialRun) {
  ShardResults two = ShardOf("2.json", "s", {ScenarioWith("b", Verdict::kPass)});
  two.results.partial = true;
  RunResults merged = MergeShards({ShardOf("1.json", "s", {ScenarioWith("a", Verdict::kPass)}), two}, false);
  EXPECT_TRUE(merged.partial);
  EXPECT_EQ(merged.exit_code, 3);
}

TEST(MergeShards, EachSkippedTrailerOnceThoughEveryShardSkippedIt) {
  ShardResults one = ShardOf("1.json", "s", {ScenarioWith("a", Verdict::kPass)});
  ShardResults two = ShardOf("2.json", "s", {ScenarioWith("b", Verdict::kPass)});
  one.results.skipped_trailers = {"t.txt:2: bad", "t.txt:3: worse"};
  two.results.skipped_trailers = {"t.txt:2: bad", "t.txt:3: worse"};
  EXPECT_EQ(MergeShards({one, two}, false).skipped_trailers, one.results.skipped_trailers);
}

TEST(MergeShards, StrictMakesInconclusiveFail) {
  auto shards = std::vector<ShardResults>{ShardOf("1.json", "s", {ScenarioWith("a", Verdict::kInconclusive)})};
  EXPECT_EQ(MergeShards(shards, false).exit_code, 0);
  EXPECT_EQ(MergeShards(shards, true).exit_code, 1);
}

TEST(MergeShards, RefusesMixedSuitesNamingBothFiles) {
  try {
    MergeShards({ShardOf("1.json", "s", {}), ShardOf("2.json", "t", {})}, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    std::string what = e.what();
    EXPECT_EQ(what.find("2.json"), 0u) << what;
    EXPECT_NE(what.find("1.json"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

TEST(MergeShards, RefusesADuplicatedScenario) {
  try {
    MergeShards({ShardOf("1.json", "s", {ScenarioWith("a", Verdict::kPass)}),
                 ShardOf("2.json", "s", {ScenarioWith("a", Verdict::kPass)})},
                false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("scenario \"a\" is also in 1.json"), std::string::npos) << e.what();
  }
}

TEST(MergeShards, RefusesNoInput) { EXPECT_THROW(MergeShards({}, false), Error); }

ShardResults NumberedShard(const std::string& shard, const std::string& scenario) {
  ShardResults out = ShardOf(shard + ".json", "s", {ScenarioWith(scenario, Verdict::kPass)});
  out.results.shard = shard;
  return out;
}

// The error MergeShards throws, or "" when it merged.
std::pair<ExitCode, std::string> MergeError(const std::vector<ShardResults>& shards, int expected = 0) {
  try {
    MergeShards(shards, false, expected);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {ExitCode::kPass, ""};
}

TEST(MergeShards, EveryShardOfTheSplitMerges) {
  const RunResults merged = MergeShards({NumberedShard("2/2", "b"), NumberedShard("1/2", "a")}, false, 2);
  EXPECT_EQ(merged.scenarios.size(), 2u);
  EXPECT_EQ(merged.exit_code, 0);
  EXPECT_EQ(merged.shard, "");
}

TEST(MergeShards, AMissingShardFailsTheGateAsInfrastructure) {
  // A shard that crashed left no results: never a pass with fewer checks.
  const auto [code, what] = MergeError({NumberedShard("1/3", "a"), NumberedShard("3/3", "c")});
  EXPECT_EQ(code, ExitCode::kInfra);
  EXPECT_NE(what.find("shard 2/3"), std::string::npos) << what;
  // The count given, though every file says less of it.
  const auto [given, said] = MergeError({NumberedShard("1/2", "a")}, 2);
  EXPECT_EQ(given, ExitCode::kInfra);
  EXPECT_NE(said.find("shard 2/2"), std::string::npos) << said;
}

TEST(MergeShards, AShardTwiceOrOfAnotherSplitIsBadInput) {
  auto [code, what] = MergeError({NumberedShard("1/2", "a"), NumberedShard("1/2", "b")});
  EXPECT_EQ(code, ExitCode::kBadInput);
  EXPECT_NE(what.find("is also 1/2.json"), std::string::npos) << what;
  std::tie(code, what) = MergeError({NumberedShard("1/2", "a"), NumberedShard("2/3", "b")});
  EXPECT_EQ(code, ExitCode::kBadInput);
  EXPECT_NE(what.find("split into 3"), std::string::npos) << what;
  // --shards N: a whole run is not one of them.
  std::tie(code, what) = MergeError({ShardOf("whole.json", "s", {ScenarioWith("a", Verdict::kPass)})}, 2);
  EXPECT_EQ(code, ExitCode::kBadInput);
  EXPECT_EQ(what.find("whole.json: not a shard"), 0u) << what;
}

}  // namespace
}  // namespace perfgate
