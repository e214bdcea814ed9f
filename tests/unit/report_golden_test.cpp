// The reports of one fixed results.json, byte for byte: every file
// WriteReports writes from tests/fixtures/report/results.json must equal
// the one kept under tests/fixtures/report/expected/, and the results.json
// it writes must be the one it read. A change that moves
// code between rooms must leave them as they are; a change that means to
// alter a report regenerates them and shows the difference in review:
//
//   PERFGATE_UPDATE_GOLDEN=1 build/tests/perfgate_report_tests --gtest_filter='ReportGolden.*'
//
// The fixture is an `ab` run of the smoke suite (workloads/examples/smoke.json,
// SMOKE_ITERATIONS=300, the candidate at SMOKE_SLOWDOWN=1.4): five checks
// failed and confirmed, the why, both sides' evidence (each profile cut to
// its 25 heaviest stacks), the host's load and canaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "explain/explain.h"
#include "harness/files.h"
#include "harness/paths.h"
#include "metrics/results_json.h"
#include "pipeline/pipeline.h"
#include "report/reporter.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::ScratchDir;
using testing::WriteFile;

constexpr const char* kResults = "results.json";
// The stylesheet verbatim (report/html_stylesheet.cpp): not kept twice.
constexpr const char* kStylesheet = "report/report.css";

// Every regular file under `dir` but results.json and the stylesheet, as
// paths relative to it, sorted.
std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> files;
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string file = fs::relative(entry.path(), dir).string();
    if (entry.is_regular_file() && file != kResults && file != kStylesheet) files.push_back(file);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The first line on which `a` and `b` differ, for the failure message.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t line = 1, start = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) {
      const size_t end_a = a.find('\n', start), end_b = b.find('\n', start);
      return "line " + std::to_string(line) + ":\n  kept:     " + a.substr(start, end_a - start).substr(0, 300) +
             "\n  rendered: " + b.substr(start, end_b - start).substr(0, 300);
    }
    if (a[i] == '\n') ++line, start = i + 1;
  }
  return "one is a prefix of the other (" + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " bytes)";
}

TEST(ReportGolden, EveryReportOfTheFixtureIsTheOneKept) {
  const fs::path fixture = fs::path(PERFGATE_FIXTURES) / "report";
  const fs::path expected = fixture / "expected";
  RunResults results = ReadResultsFile((fixture / kResults).string());
  ScratchDir out("perfgate-golden");
  // As `perfgate report` renders a results.json: the why and what grew in
  // the evidence derived again (explain), then every report.
  ExplainFailures(results, GateMetricVocabulary());
  WriteReports(results, out.path().string());
  const std::vector<std::string> rendered = FilesUnder(out.path());
  ASSERT_FALSE(rendered.empty());

  if (const char* update = std::getenv("PERFGATE_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    fs::remove_all(expected);
    WriteFile(fixture / kResults, ReadFile(out.path() / kResults));
    for (const std::string& file : rendered) {
      fs::create_directories((expected / file).parent_path());
      WriteFile(expected / file, ReadFile(out.path() / file));
    }
    GTEST_SKIP() << "wrote " << rendered.size() << " files under " << expected.string();
  }

  const std::string read = ReadFile(fixture / kResults), written = ReadFile(out.path() / kResults);
  EXPECT_TRUE(read == written) << "results.json written is not the one read, at " << FirstDifference(read, written);
  EXPECT_EQ(FilesUnder(expected), rendered) << "the reports written are not the files kept";
  for (const std::string& file : rendered) {
    if (!fs::exists(expected / file)) continue;
    const std::string kept = ReadFile(expected / file), now = ReadFile(out.path() / file);
    EXPECT_TRUE(kept == now) << file << " differs from the one kept, at " << FirstDifference(kept, now);
  }
}

}  // namespace
}  // namespace perfgate
