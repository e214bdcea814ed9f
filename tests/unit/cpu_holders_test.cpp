#include "metrics/cpu_holders.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "metrics/results.h"
#include "metrics/results_json.h"

namespace perfgate {
namespace {

TEST(CpuHolders, TopFiveByTimeLargestFirstTiesInCommOrder) {
  std::map<std::string, double> by_comm = {{"a", 1},   {"b", 5}, {"c", 3}, {"d", 3},
                                           {"e", 0.5}, {"f", 2}, {"g", 0}, {"h", 0.1}};
  std::vector<CpuHolder> top = TopCpuHolders(by_comm, kTopCpuHolders);
  ASSERT_EQ(top.size(), 5u);
  const std::vector<std::string> order = {"b", "c", "d", "f", "a"};
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(top[i].comm, order[i]) << i;
  EXPECT_EQ(top[0].seconds, 5);
  // Zero times are no holders at all.
  EXPECT_TRUE(TopCpuHolders({{"idle", 0}}, 5).empty());
}

TEST(CpuHolders, ScenarioSumsEachCommOverItsMeasuredRepetitionsOnly) {
  Repetition warmup;
  warmup.warmup = true;
  warmup.cpu_holders = {{"warm", 100}};
  Repetition failed;
  failed.failure = "exited with status 1";
  failed.cpu_holders = {{"failed", 100}};
  Repetition one, two;
  one.cpu_holders = {{"burner", 0.3}, {"cc1plus", 0.2}};
  two.cpu_holders = {{"cc1plus", 0.25}, {"make", 0.01}};
  std::vector<CpuHolder> top = TopCpuHolders(std::vector<Repetition>{warmup, one, failed, two}, 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].comm, "cc1plus");
  EXPECT_DOUBLE_EQ(top[0].seconds, 0.45);
  EXPECT_EQ(top[1].comm, "burner");
  EXPECT_EQ(DescribeCpuHolders(top), "cc1plus 450 ms, burner 300 ms");
}

TEST(CpuHolders, CommsFromOtherProcessesAreMadePrintable) {
  const char raw[16] = {'a', '\n', 'b', '\x1b', '<', 'c', '>', '\xc3', '\xa9', '\0', 'x'};
  EXPECT_EQ(PrintableComm(raw, sizeof raw), "a?b?<c>??");
  const char full[4] = {'w', 'x', 'y', 'z'};  // no NUL: the size bounds it
  EXPECT_EQ(PrintableComm(full, sizeof full), "wxyz");
}

TEST(CpuHolders, RepetitionsCarryTheirHoldersThroughResultsJson) {
  RunResults r;
  r.suite = "s";
  ScenarioResult s;
  s.name = "busy";
  Repetition rep;
  rep.metrics[kHostRunqWaitBehindOthers] = ScalarMetric(kHostRunqWaitBehindOthers, 0.12, "s", Better::kNone);
  rep.cpu_holders = {{"<b>burn|er</b>", 0.1}, {"kworker/0:1", 0.02}};
  s.repetitions.push_back(rep);
  s.repetitions.push_back(Repetition{});  // none: no key written
  r.scenarios.push_back(s);
  const nlohmann::json j = ToJson(r);
  const nlohmann::json& reps = j["scenarios"][0]["repetitions"];
  EXPECT_EQ(reps[0]["cpu_holders"][0]["comm"], "<b>burn|er</b>");
  EXPECT_FALSE(reps[1].contains("cpu_holders"));
  RunResults back = ResultsFromJson(j, "results.json");
  ASSERT_EQ(back.scenarios[0].repetitions[0].cpu_holders.size(), 2u);
  EXPECT_EQ(back.scenarios[0].repetitions[0].cpu_holders[1].comm, "kworker/0:1");
  EXPECT_DOUBLE_EQ(back.scenarios[0].repetitions[0].cpu_holders[1].seconds, 0.02);
  EXPECT_TRUE(back.scenarios[0].repetitions[1].cpu_holders.empty());
}

}  // namespace
}  // namespace perfgate
