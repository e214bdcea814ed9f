// An adapter's PrepareLaunch runs before every launch of its workload: what
// it does is in place when the process starts, and when it fails, nothing
// is launched. Bare repetitions (no probes), so no root is needed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "adapters/adapter.h"
#include "adapters/command.h"
#include "base/error.h"
#include "run/repetition.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;

// Counts its launches in a file that the workload prints as a metric.
class CountingAdapter : public WorkloadAdapter {
 public:
  explicit CountingAdapter(fs::path counter) : counter_(std::move(counter)) {}
  std::string kind() const override { return "counting"; }
  std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const override { return spec.argv; }
  void PrepareLaunch(const WorkloadSpec& /*spec*/) const override {
    if (fail_) throw InfraError("counting workload: cannot prepare");
    std::ofstream(counter_) << "{\"metric\": \"test.prepared\", \"value\": " << ++prepared_ << "}\n";
  }
  WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& /*spec*/) const override {
    return ParseCommandJsonLines(stdout_text, "counting workload");
  }
  bool fail_ = false;

 private:
  fs::path counter_;
  mutable int prepared_ = 0;
};

class PrepareLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "perfgate-prepare-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    spec_.name = "prepared";
    spec_.timeout_s = 30;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  ScenarioSpec spec_;
  RunOptions options_;
};

TEST_F(PrepareLaunch, RunsBeforeEveryLaunchOfTheWorkload) {
  const fs::path counter = dir_ / "counter";
  CountingAdapter adapter(counter);
  spec_.workload.argv = {"/bin/cat", counter.string()};
  ScenarioProbes probes(spec_, {}, spec_.workload.argv, options_);
  for (int launch = 1; launch <= 3; ++launch) {
    Repetition rep = RunRepetition(spec_, adapter, adapter.LaunchArgv(spec_.workload), probes, options_);
    ASSERT_EQ(rep.failure, "");
    // The workload printed what the hook wrote for its own launch.
    EXPECT_EQ(rep.metrics.at("test.prepared").value, launch);
  }
}

TEST_F(PrepareLaunch, AFailingHookLaunchesNothing) {
  CountingAdapter adapter(dir_ / "counter");
  adapter.fail_ = true;
  const fs::path launched = dir_ / "launched";
  spec_.workload.argv = {"/usr/bin/touch", launched.string()};
  ScenarioProbes probes(spec_, {}, spec_.workload.argv, options_);
  try {
    RunRepetition(spec_, adapter, adapter.LaunchArgv(spec_.workload), probes, options_);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    EXPECT_STREQ(e.what(), "counting workload: cannot prepare");
  }
  EXPECT_FALSE(fs::exists(launched));
}

TEST(PrepareLaunchDefault, DoesNothing) {
  WorkloadSpec spec;
  spec.argv = {"/bin/true"};
  for (const auto& kind : AdapterKinds()) EXPECT_NO_THROW(FindAdapter(kind)->PrepareLaunch(spec)) << kind;
}

}  // namespace
}  // namespace perfgate
