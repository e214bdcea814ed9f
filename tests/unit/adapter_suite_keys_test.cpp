// How a suite's workload keys reach the tool adapters: "args" become the
// extra arguments (WorkloadSpec::argv) of the tool's command line, while
// "argv" stays the whole command line of command workloads.
#include <gtest/gtest.h>

#include "adapters/adapter.h"
#include "config/suite.h"
#include "harness/errors.h"
#include "metrics/error.h"

namespace perfgate {
namespace {

SuiteVocabulary Vocabulary() { return {{"runqlat"}, AdapterKinds()}; }

Suite Parse(const std::string& workload) {
  return ParseSuite(R"({"name": "s", "scenarios": [{"name": "a", "workload": )" + workload + "}]}", "s.json",
                    Vocabulary(), {"/suites", "/opt/perfgate"});
}

std::string ErrorOf(const std::string& workload) {
  return testing::ErrorOf([&] { Parse(workload); }, ExitCode::kBadInput, workload);
}

TEST(WorkloadKeys, ArgsOfAToolWorkloadAreExpandedIntoItsExtraArguments) {
  Suite s = Parse(R"({"kind": "gbench", "binary": "${perfgate_dir}/pg-micro", "filter": "BM_.*",
                      "args": ["--benchmark_min_time=0.2", "--scratch-dir", "${suite_dir}"]})");
  const WorkloadSpec& w = s.scenarios[0].workload;
  EXPECT_EQ(w.options.at("binary"), "/opt/perfgate/pg-micro");
  EXPECT_EQ(w.argv, (std::vector<std::string>{"--benchmark_min_time=0.2", "--scratch-dir", "/suites"}));
}

TEST(WorkloadKeys, ArgvBelongsToCommandsAndArgsToTools) {
  EXPECT_NE(ErrorOf(R"({"kind": "fio", "job": "j.fio", "argv": ["x"]})").find("$.scenarios[0].workload.argv: argv is"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"argv": ["/bin/true"], "args": ["x"]})").find("$.scenarios[0].workload.args"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"kind": "fio", "job": "j.fio", "args": [1]})").find("$.scenarios[0].workload.args[0]"),
            std::string::npos);
}

TEST(WorkloadKeys, CameraKeysAreTypedAndKept) {
  Suite s = Parse(R"({"kind": "camera-startup", "memory_limit_mb": 80, "antagonist": true, "scratch_dir": "/d"})");
  const WorkloadSpec& w = s.scenarios[0].workload;
  EXPECT_EQ(w.options.at("memory_limit_mb"), "80");
  EXPECT_EQ(w.options.at("antagonist"), "true");
  EXPECT_NE(ErrorOf(R"({"kind": "camera-startup", "antagonist": "yes"})").find("expected true or false"),
            std::string::npos);
}

}  // namespace
}  // namespace perfgate
