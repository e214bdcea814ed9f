// The suites in workloads/ load with the probe catalog and adapter table the
// CLI uses, and every baseline in baselines/ parses and belongs to a shipped
// suite's scenario, with the metrics that scenario's checks read.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "base/error.h"
#include "baseline/store.h"
#include "config/suite.h"
#include "harness/paths.h"
#include "pipeline/pipeline.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> JsonFilesUnder(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  }
  return files;
}

TEST(ShippedSuites, EverySuiteInWorkloadsLoadsAndEveryBaselineMatchesOne) {
  const fs::path source = PERFGATE_SOURCE_DIR;
  std::map<std::string, std::map<std::string, std::set<std::string>>> checked;  // suite -> scenario -> metrics
  size_t suites = 0;
  for (const fs::path& file : JsonFilesUnder(source / "workloads")) {
    try {
      Suite suite = LoadSuite(file.string(), GateVocabulary(),
                              {.suite_dir = file.parent_path().string(), .perfgate_dir = "/nonexistent"});
      ++suites;
      for (const auto& scenario : suite.scenarios) {
        auto& metrics = checked[suite.name][scenario.name];
        for (const auto& check : scenario.checks) metrics.insert(check.metric);
      }
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(suites, 6u);
  size_t baselines = 0;
  for (const fs::path& file : JsonFilesUnder(source / "baselines")) {
    std::optional<Baseline> baseline;
    try {
      baseline = LoadBaseline(file.string());
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ASSERT_TRUE(baseline.has_value()) << file;
    ++baselines;
    auto suite = checked.find(baseline->suite);
    ASSERT_NE(suite, checked.end()) << file << ": no shipped suite " << baseline->suite;
    auto scenario = suite->second.find(baseline->scenario.name);
    ASSERT_NE(scenario, suite->second.end()) << file << ": no scenario " << baseline->scenario.name;
    EXPECT_EQ(file.filename().string(), baseline->scenario.name + ".json");
    EXPECT_EQ(file.parent_path().filename().string(), baseline->suite);
    ASSERT_FALSE(baseline->scenario.repetitions.empty()) << file;
    for (const auto& metric : scenario->second) {
      EXPECT_TRUE(baseline->scenario.repetitions.front().metrics.count(metric))
          << file << ": no " << metric << " for a check of its scenario";
    }
  }
  EXPECT_GE(baselines, 11u);
}

}  // namespace
}  // namespace perfgate
