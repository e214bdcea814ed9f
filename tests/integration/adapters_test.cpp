// The workload suites perfgate ships, through the perfgate binary: the camera
// cold start and fio (small sizes) run and pass without a baseline, the OS
// micro-benchmarks give one value per benchmark, the camera with a memory
// antagonist fails against the camera baseline with reclaim as the kernel
// metric that moved most, and a missing UnixBench exits 3 saying how to get it.
#include <sys/stat.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/paths.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kWorkloads = std::string(PERFGATE_SOURCE_DIR) + "/workloads";

// Metrics and kinds of a repetition in results.json.
const json& FirstRepetitionMetrics(const json& results, const std::string& scenario) {
  for (const auto& s : results["scenarios"]) {
    if (s["name"] == scenario) return s["repetitions"].at(0)["metrics"];
  }
  throw std::runtime_error("no scenario " + scenario + " in results.json");
}

std::vector<std::string> Leftovers(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
  }
  return out;
}

// A directory on a disk file system: fio and fsync need one, and the system
// temp dir may be tmpfs.
class FioScratchDir {
 public:
  FioScratchDir() {
    std::string tmpl = "/var/tmp/perfgate-adapters-test-XXXXXX";
    path_ = mkdtemp(tmpl.data());
    // The shipped suites run their workloads as nobody: like /var/tmp, the
    // scratch directory is writable by everyone, sticky.
    chmod(path_.c_str(), 01777);
  }
  ~FioScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

class AdaptersTest : public ::testing::Test {
 protected:
  void SetUp() override { PERFGATE_REQUIRE_ROOT(); }
  ScratchDir dir_;
};

// A benchmark that reports an error is left out, and the run says so once
// per scenario (on stderr and in results.json), not once per repetition.
TEST_F(AdaptersTest, AdapterWarningsAreSaidOnceAndKeptInTheResults) {
  fs::path binary = dir_ / "fake-benchmark";
  WriteFile(binary, "#!/bin/sh\ncat '" + std::string(PERFGATE_FIXTURES) + "/gbench/odd-repetitions.json'\n");
  fs::permissions(binary, fs::perms::owner_all);
  fs::path suite = dir_ / "suite.json";
  WriteFile(suite, R"({"name": "w", "scenarios": [{"name": "bench", "workload": {"kind": "gbench", "binary": ")" +
                       binary.string() + R"("}, "warmup": 0, "repetitions": 2, "checks": []}]})");
  CliRun run = RunCli({"run", suite, "--baseline-dir", dir_ / "none", "--out", dir_ / "out", "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::regex warning("perfgate: warning: bench: repetition 1: [^\n]*BM_Fails");
  EXPECT_TRUE(std::regex_search(run.output, warning)) << run.output;
  EXPECT_EQ(run.output.find("repetition 2: "), std::string::npos) << run.output;
  json results = json::parse(ReadFile(dir_ / "out/results.json"));
  for (const json& rep : results["scenarios"][0]["repetitions"]) {
    ASSERT_TRUE(rep.contains("warnings")) << rep.dump();
    EXPECT_NE(rep["warnings"].dump().find("BM_Fails"), std::string::npos) << rep.dump();
    EXPECT_FALSE(rep["metrics"].contains("gbench.BM_Fails.real_time")) << rep.dump();
  }
  EXPECT_NE(ReadFile(dir_ / "out/report/index.html").find("class=\"warnings\""), std::string::npos);
}

TEST_F(AdaptersTest, CameraSuiteRunsInItsMemoryCgroupAndLeavesNoCgroup) {
  CliRun run = RunCli({"run", kWorkloads + "/camera-startup/camera.json", "--reps", "2", "--baseline-dir",
                       dir_ / "none", "--out", dir_ / "out", "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  json results = json::parse(ReadFile(dir_ / "out/results.json"));
  const json& m = FirstRepetitionMetrics(results, "cold-start");
  EXPECT_GT(m["camera.time_to_first_frame"]["value"].get<double>(), 0);
  EXPECT_TRUE(m.contains("camera.phase.allocate_buffers"));
  EXPECT_TRUE(m.contains("camera.frame_interval_p99"));
  // The start needs a little more than the 80 MiB limit: reclaim happens in
  // the workload's own cgroup.
  EXPECT_GT(m["mm.memcg_reclaim"]["count"].get<double>(), 0) << m["mm.memcg_reclaim"].dump();
  EXPECT_GT(m["mm.page_alloc"]["count"].get<double>(), 10000);
  for (const char* root : {"/sys/fs/cgroup/memory", "/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    EXPECT_EQ(Leftovers(root, "perfgate-camera-"), std::vector<std::string>{}) << root;
  }
}

TEST_F(AdaptersTest, FioSuiteWithSmallSizesReportsEveryJobAndRemovesItsFiles) {
  FioScratchDir scratch;
  CliRun run = RunCli({"run", kWorkloads + "/fio/fio.json", "--reps", "2", "--baseline-dir", dir_ / "none", "--out",
                       dir_ / "out", "--quiet"},
                      {"FIO_SIZE=4m", "FIO_RUNTIME=1", "FIO_SCRATCH_DIR=" + scratch.path().string()});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  json results = json::parse(ReadFile(dir_ / "out/results.json"));
  const json& randread = FirstRepetitionMetrics(results, "randread");
  EXPECT_GT(randread["fio.randread.read.iops"]["value"].get<double>(), 0);
  EXPECT_GT(randread["fio.randread.read.clat_p99"]["value"].get<double>(), 0);
  EXPECT_EQ(randread["fio.randread.read.clat_p99"]["unit"], "ns");
  // O_DIRECT reads reach the block layer, and the workload's process tree is fio's.
  EXPECT_GT(randread["block.io"]["count"].get<double>(), 0);
  EXPECT_GT(randread["syscalls.count"]["ops"].get<double>(), 0) << "fio's I/O count is the operation count";
  EXPECT_TRUE(FirstRepetitionMetrics(results, "seqwrite-fsync").contains("fio.seqwrite-fsync.sync.lat_p99"));
  EXPECT_TRUE(FirstRepetitionMetrics(results, "mixed").contains("fio.mixed.write.iops"));
  EXPECT_EQ(Leftovers(scratch.path(), "perfgate-fio."), std::vector<std::string>{});
}

TEST_F(AdaptersTest, MicroSuiteGivesOneValuePerBenchmark) {
  FioScratchDir scratch;
  CliRun run = RunCli({"run", kWorkloads + "/micro/micro.json", "--reps", "2", "--baseline-dir", dir_ / "none", "--out",
                       dir_ / "out", "--quiet"},
                      {"MICRO_MIN_TIME=0.05", "MICRO_SCRATCH_DIR=" + scratch.path().string()});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  json results = json::parse(ReadFile(dir_ / "out/results.json"));
  const json& m = FirstRepetitionMetrics(results, "os-ops");
  for (const char* name : {"gbench.BM_SyscallGetppid.cpu_time", "gbench.BM_PipePingPong/real_time.real_time",
                           "gbench.BM_ForkWait/real_time.real_time", "gbench.BM_PageFaultTouch.cpu_time",
                           "gbench.BM_PageFaultTouch.items_per_second", "gbench.BM_MmapMunmap.real_time",
                           "gbench.BM_WriteFsync/real_time.real_time"}) {
    ASSERT_TRUE(m.contains(name)) << name;
    EXPECT_GT(m[name]["value"].get<double>(), 0) << name;
  }
  // The getppid loop runs under the syscalls probe: about a million calls
  // per CPU second, and 0.05 s of CPU at least (the benchmark's minimum time).
  EXPECT_GT(m["syscalls.count"]["count"].get<double>(), 20000);
  EXPECT_EQ(Leftovers(scratch.path(), "pg-micro-"), std::vector<std::string>{});
}

// The field regression: a background app allocating in the camera's memory
// cgroup puts reclaim on the camera's critical path.
TEST_F(AdaptersTest, CameraWithMemoryAntagonistFailsWithReclaimAsTheKernelMetricThatMovedMost) {
  std::string baselines = dir_ / "baselines";
  CliRun record = RunCli({"baseline", "record", kWorkloads + "/camera-startup/camera.json", "--baseline-dir", baselines,
                          "--out", dir_ / "rec", "--quiet"});
  ASSERT_EQ(record.exit_code, 0) << record.output;
  ASSERT_TRUE(fs::exists(baselines + "/camera/cold-start.json"));

  CliRun run = RunCli({"run", kWorkloads + "/camera-startup/camera-antagonist.json", "--baseline-dir", baselines,
                       "--out", dir_ / "antagonist", "--quiet"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  std::string summary;
  for (char c : ReadFile(dir_ / "antagonist/summary.md")) {
    if (c != '\\') summary += c;  // Markdown escapes the '_' of metric names
  }
  EXPECT_NE(summary.find("| cold-start | mm.reclaim_pages.count | regression"), std::string::npos) << summary;
  // The rate budget is crossed; a gate holds a crossed budget against the
  // workload only when other work left most repetitions alone (compare.cpp).
  {
    const json results = json::parse(ReadFile(dir_ / "antagonist/results.json"));
    bool judged = false;
    for (const auto& check : results["scenarios"][0]["checks"]) {
      if (check["spec"].value("name", "") != "reclaim-rate-budget") continue;
      judged = true;
      const std::string message = check.value("message", "");
      EXPECT_TRUE(
          check["verdict"] == "regression" ||
          (check["verdict"] == "inconclusive" && message.find("other work kept the host busy") != std::string::npos))
          << check.dump(2);
    }
    EXPECT_TRUE(judged) << summary;
  }
  // Each failing outcome the report explains (time to first frame, the
  // allocation phase; unless the host got busier, which makes timing
  // verdicts inconclusive) leads with reclaim or with what reclaim cost the
  // camera: reading back the files it evicted (I/O waits, page faults).
  const std::regex why(R"(\n- cold-start / camera\.[a-z_.]+ [^:]*: ([a-z_.]+))");
  for (std::sregex_iterator it(summary.begin(), summary.end(), why), end; it != end; ++it) {
    const std::string first = (*it)[1];
    EXPECT_TRUE(std::regex_search(first, std::regex("^(mm\\.(memcg_)?reclaim|sched\\.offcpu\\.io|mm\\.page_faults)")))
        << first << " leads: " << summary;
  }

  // Of the kernel metrics compared with the baseline, reclaim changed most.
  // Not the run-queue waits: a neighbour on the host stretches those (beside
  // a CPU burner the antagonist's own CPU use doubled them), and the
  // antagonist planted here is one of memory.
  json results = json::parse(ReadFile(dir_ / "antagonist/results.json"));
  std::string top;
  double top_change = -1;
  for (const auto& check : results["scenarios"][0]["checks"]) {
    const std::string metric = check["spec"]["metric"];
    if (metric.rfind("mm.", 0) != 0 && metric.rfind("sched.", 0) != 0) continue;
    if (metric.rfind("sched.runq", 0) == 0) continue;
    if (!check.contains("change_pct") || !check["change_pct"].is_number()) continue;
    const double change = std::fabs(check["change_pct"].get<double>());
    if (change > top_change) {
      top_change = change;
      top = metric;
    }
  }
  EXPECT_TRUE(top == "mm.reclaim_pages" || top == "mm.memcg_reclaim") << top << " moved most: " << summary;
  EXPECT_GT(top_change, 100) << summary;
}

TEST(UnixBenchSuite, WithoutUnixBenchExitsThreeSayingHowToProvideIt) {
  ScratchDir dir;
  const std::string suite = dir / "ub.json";
  WriteFile(suite, R"({"name": "ub", "scenarios": [{"name": "index", "workload": {"kind": "unixbench",
      "dir": ")" + (dir / "no-unixbench") +
                       R"(", "tests": "syscall"}, "repetitions": 2,
      "checks": [{"metric": "unixbench.index", "max_regression_pct": 5}]}]})");
  CliRun run = RunCli({"run", suite, "--baseline-dir", dir / "none", "--out", dir / "out"});
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_NE(run.output.find("no executable Run in"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("UNIXBENCH_DIR"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace perfgate::testing
