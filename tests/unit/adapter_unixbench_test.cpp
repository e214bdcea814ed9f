// The unixbench adapter: the results text of a real byte-unixbench run
// (tests/fixtures/unixbench/partial-1copy.txt), the multi-copy report layout
// (partial-2copy.txt), malformed variants, and how Run is found and started.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "adapters/unixbench.h"
#include "base/error.h"
#include "harness/errors.h"
#include "harness/files.h"
#include "harness/paths.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;

const testing::FixtureDir UnixbenchFixture("unixbench");

std::string UnixbenchParseError(const std::string& text) {
  return testing::ErrorOf([&] { ParseUnixBenchText(text, "UnixBench output"); }, ExitCode::kInfra);
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(UnixBenchOutput, RealSingleCopyRunGivesScoresIndexesAndTheIndexScore) {
  WorkloadOutput out = ParseUnixBenchText(UnixbenchFixture("partial-1copy.txt"), "ub");
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.index").value, 734.8);
  EXPECT_EQ(out.metrics.at("unixbench.index").better, Better::kHigher);
  const Metric& syscall = out.metrics.at("unixbench.system_call_overhead");
  EXPECT_DOUBLE_EQ(syscall.value, 1564332.2);
  EXPECT_EQ(syscall.unit, "lps");
  EXPECT_EQ(syscall.better, Better::kHigher);
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.system_call_overhead.index").value, 1042.9);
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.dhrystone_2_using_register_variables").value, 71534266.7);
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.pipe_based_context_switching.index").value, 78.8);
  // Six tests, each a score and an index, and the index score; no 2-copy run.
  EXPECT_EQ(out.metrics.size(), 13u);
  EXPECT_FALSE(out.ops);
}

TEST(UnixBenchOutput, MultiCopyRunGetsItsOwnNames) {
  WorkloadOutput out = ParseUnixBenchText(UnixbenchFixture("partial-2copy.txt"), "ub");
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.index").value, 734.8);
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.2copy.index").value, 1385.0);
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.execl_throughput").value, 1920.1);
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.2copy.execl_throughput").value, 3511.6);
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.2copy.execl_throughput.index").value, 816.7);
  EXPECT_EQ(out.metrics.size(), 26u);
}

TEST(UnixBenchOutput, EveryMetricNameMatchesTheSuitePattern) {
  static const std::regex kName("^[a-z0-9_]+(\\.[A-Za-z0-9_:<>*/+-]+)+$");
  for (const auto& [name, m] : ParseUnixBenchText(UnixbenchFixture("partial-2copy.txt"), "ub").metrics) {
    EXPECT_TRUE(std::regex_match(name, kName)) << name;
  }
}

TEST(UnixBenchOutput, FullIndexRunAndOtherGroupsAreRead) {
  std::string text = UnixbenchFixture("partial-1copy.txt");
  text = Replace(text, "System Benchmarks Partial Index  ", "System Benchmarks Index Values   ");
  text = Replace(text, "System Benchmarks Index Score (Partial Only)          ",
                 "System Benchmarks Index Score                         ");
  text = Replace(text, "\ndone",
                 "\n2D Graphics Benchmarks Index Values          BASELINE       RESULT    INDEX\n"
                 "2D graphics: rectangles                          15.0        150.0    100.0\n"
                 "                                                                   ========\n"
                 "2D Graphics Benchmarks Index Score (Partial Only)                     100.0\n\ndone");
  WorkloadOutput out = ParseUnixBenchText(text, "ub");
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.index").value, 734.8);
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.2d_graphics_benchmarks_index").value, 100.0);
  EXPECT_DOUBLE_EQ(out.metrics.at("unixbench.2d_graphics_rectangles.index").value, 100.0);
}

TEST(UnixBenchOutput, TruncatedRunsAreInfraErrorsNamingTheRun) {
  const std::string text = UnixbenchFixture("partial-2copy.txt");
  // Cut inside the 2-copy index table.
  std::string cut = text.substr(0, text.rfind("Process Creation"));
  std::string e = UnixbenchParseError(cut);
  EXPECT_NE(e.find("2-copy run"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  // Cut right after the section header.
  cut = text.substr(0, text.find("Dhrystone 2 using register variables       71534266.7"));
  e = UnixbenchParseError(cut);
  EXPECT_NE(e.find("single-copy run"), std::string::npos) << e;
  EXPECT_NE(e.find("no test results"), std::string::npos) << e;
}

TEST(UnixBenchOutput, OutputOfSomethingElseSaysSo) {
  EXPECT_NE(
      UnixbenchParseError("make: *** No rule to make target 'all'.  Stop.\n").find("no \"Benchmark Run:\" section"),
      std::string::npos);
  EXPECT_NE(UnixbenchParseError("").find("no \"Benchmark Run:\" section"), std::string::npos);
}

TEST(UnixBenchOutput, GarbledScoreLinesAreNotResults) {
  std::string text = Replace(UnixbenchFixture("partial-1copy.txt"), "1564332.2 lps   (10.0 s, 1 samples)", "ERROR");
  WorkloadOutput out = ParseUnixBenchText(text, "ub");
  EXPECT_FALSE(out.metrics.count("unixbench.system_call_overhead"));
  EXPECT_TRUE(out.metrics.count("unixbench.system_call_overhead.index"));
}

// ---- launching --------------------------------------------------------------

class UnixBenchLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "perfgate-ub-test-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    spec_.kind = "unixbench";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // A stand-in Run that prints where it runs and its arguments, then the real results text.
  void WriteFakeRun() {
    std::ofstream(dir_ + "/Run") << "#!/bin/sh\necho \"cwd=$(pwd)\"\necho \"args=$*\"\ncat \"" << PERFGATE_FIXTURES
                                 << "/unixbench/partial-2copy.txt\"\n";
    fs::permissions(dir_ + "/Run", fs::perms::owner_all);
  }
  std::string LaunchError() {
    return testing::ErrorOf([&] { UnixBenchAdapter().LaunchArgv(spec_); }, ExitCode::kInfra);
  }
  std::string dir_;
  WorkloadSpec spec_;
};

TEST_F(UnixBenchLaunch, WithoutUnixBenchTheErrorSaysHowToProvideIt) {
  const char* saved = std::getenv("UNIXBENCH_DIR");
  std::string keep = saved ? saved : "";
  unsetenv("UNIXBENCH_DIR");
  std::string e = LaunchError();
  EXPECT_NE(e.find("UNIXBENCH_DIR"), std::string::npos) << e;
  EXPECT_NE(e.find("byte-unixbench"), std::string::npos) << e;
  spec_.options["dir"] = dir_;
  e = LaunchError();
  EXPECT_NE(e.find("no executable Run in " + dir_), std::string::npos) << e;
  if (saved) setenv("UNIXBENCH_DIR", keep.c_str(), 1);
}

TEST_F(UnixBenchLaunch, RunsRunInItsDirectoryWithIterationsCopiesAndTests) {
  WriteFakeRun();
  spec_.env["UNIXBENCH_DIR"] = dir_;
  spec_.options["iterations"] = "3";
  spec_.options["copies"] = "2";
  spec_.options["tests"] = "dhry2reg, syscall execl";
  std::vector<std::string> argv = UnixBenchAdapter().LaunchArgv(spec_);
  std::string cmd;
  for (const auto& a : argv) cmd += "'" + a + "' ";
  FILE* p = popen(("cd / && " + cmd).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << out;
  EXPECT_NE(out.find("cwd=" + fs::canonical(dir_).string() + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("args=-i 3 -c 1 -c 2 dhry2reg syscall execl\n"), std::string::npos) << out;
  WorkloadOutput parsed = UnixBenchAdapter().ParseOutput(out, spec_);
  EXPECT_TRUE(parsed.metrics.count("unixbench.2copy.index"));
}

TEST_F(UnixBenchLaunch, SingleCopyByDefault) {
  WriteFakeRun();
  spec_.options["dir"] = dir_;
  std::vector<std::string> argv = UnixBenchAdapter().LaunchArgv(spec_);
  EXPECT_EQ(std::vector<std::string>(argv.end() - 2, argv.end()), (std::vector<std::string>{"-c", "1"}));
}

}  // namespace
}  // namespace perfgate
