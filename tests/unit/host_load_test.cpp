#include "run/host_load.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace perfgate {
namespace {

TEST(HostLoad, ParsesTheAggregateCpuLineIncludingSteal) {
  const std::string stat =
      "cpu  100 5 50 1000 20 3 2 10 7 0\n"
      "cpu0 50 2 25 500 10 1 1 5 0 0\n"
      "intr 12345\n";
  std::optional<CpuTimes> t = ParseProcStat(stat);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->busy_ticks, 100u + 5 + 50 + 3 + 2 + 10);  // idle, iowait and guest excluded
  EXPECT_EQ(t->steal_ticks, 10u);
  EXPECT_FALSE(ParseProcStat("intr 1\n").has_value());
  EXPECT_FALSE(ParseProcStat("cpu  1 2\n").has_value());
}

TEST(HostLoad, OtherCpusSubtractsTheWorkloadAndNeverGoesNegative) {
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  CpuTimes before{1000, 0};
  CpuTimes after{1000 + static_cast<uint64_t>(3 * hz), 0};  // 3 CPU-seconds busy
  EXPECT_NEAR(OtherCpus(before, after, 1.0, 2.0), 1.0, 1e-9);  // 2 of them others', over 2 s
  EXPECT_EQ(OtherCpus(before, after, 5.0, 2.0), 0.0);
  EXPECT_EQ(OtherCpus(after, before, 0.0, 2.0), 0.0);
  EXPECT_EQ(OtherCpus(before, after, 0.0, 0.0), 0.0);
  EXPECT_TRUE(ReadCpuTimes().has_value());
}

}  // namespace
}  // namespace perfgate
