// The fio adapter on real fio 3 JSON output (tests/fixtures/fio: the three
// job files of workloads/fio run on a virtio disk), the older microsecond
// format, malformed variants, and the scratch-directory wrapper it launches.
#include <gtest/gtest.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "adapters/fio.h"
#include "base/error.h"
#include "harness/errors.h"
#include "harness/files.h"
#include "harness/paths.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const testing::FixtureDir Fixture("fio");

// The InfraError message of parsing `text`; fails the test when it parses.
std::string ParseError(const std::string& text) {
  return testing::ErrorOf([&] { ParseFioJson(text, "fio output (job file t.fio)"); }, ExitCode::kInfra);
}

const json& Direction(const json& doc, const char* dir) { return doc["jobs"][0][dir]; }

TEST(FioOutput, RealRandomReadGivesIopsBandwidthAndLatencyPercentiles) {
  const std::string text = Fixture("randread.json");
  const json doc = json::parse(text);
  const json& read = Direction(doc, "read");
  WorkloadOutput out = ParseFioJson(text, "fio");

  EXPECT_DOUBLE_EQ(out.metrics.at("fio.randread.read.iops").value, read["iops"].get<double>());
  EXPECT_EQ(out.metrics.at("fio.randread.read.iops").better, Better::kHigher);
  EXPECT_DOUBLE_EQ(out.metrics.at("fio.randread.read.bw").value, read["bw_bytes"].get<double>());
  EXPECT_EQ(out.metrics.at("fio.randread.read.bw").unit, "bytes/s");
  const json& pct = read["clat_ns"]["percentile"];
  EXPECT_DOUBLE_EQ(out.metrics.at("fio.randread.read.clat_p50").value, pct["50.000000"].get<double>());
  EXPECT_DOUBLE_EQ(out.metrics.at("fio.randread.read.clat_p99").value, pct["99.000000"].get<double>());
  EXPECT_DOUBLE_EQ(out.metrics.at("fio.randread.read.clat_p99_9").value, pct["99.900000"].get<double>());
  EXPECT_DOUBLE_EQ(out.metrics.at("fio.randread.read.clat_p99_99").value, pct["99.990000"].get<double>());
  EXPECT_DOUBLE_EQ(out.metrics.at("fio.randread.read.clat_mean").value, read["clat_ns"]["mean"].get<double>());
  EXPECT_EQ(out.metrics.at("fio.randread.read.clat_p99").unit, "ns");
  EXPECT_EQ(out.metrics.at("fio.randread.read.clat_p99").better, Better::kLower);
  EXPECT_TRUE(out.metrics.count("fio.randread.read.lat_mean"));
  // No writes, trims or syncs in this job: no metrics for them.
  for (const auto& [name, m] : out.metrics) {
    EXPECT_EQ(name.rfind("fio.randread.read.", 0), 0u) << name;
  }
  ASSERT_TRUE(out.ops);
  EXPECT_DOUBLE_EQ(*out.ops, read["total_ios"].get<double>());
}

TEST(FioOutput, RealSequentialWriteReportsFsyncLatency) {
  const std::string text = Fixture("seqwrite-fsync.json");
  const json doc = json::parse(text);
  WorkloadOutput out = ParseFioJson(text, "fio");
  EXPECT_DOUBLE_EQ(out.metrics.at("fio.seqwrite-fsync.write.iops").value,
                   Direction(doc, "write")["iops"].get<double>());
  const json& sync = Direction(doc, "sync")["lat_ns"];
  EXPECT_DOUBLE_EQ(out.metrics.at("fio.seqwrite-fsync.sync.lat_p99").value,
                   sync["percentile"]["99.000000"].get<double>());
  EXPECT_DOUBLE_EQ(out.metrics.at("fio.seqwrite-fsync.sync.lat_mean").value, sync["mean"].get<double>());
  EXPECT_FALSE(out.metrics.count("fio.seqwrite-fsync.read.iops"));
  // Operations are the reads, writes and trims; fsyncs are not I/Os of their own.
  EXPECT_DOUBLE_EQ(*out.ops, Direction(doc, "write")["total_ios"].get<double>());
}

TEST(FioOutput, RealMixedJobHasBothDirectionsAndCountsAllIos) {
  const std::string text = Fixture("mixed.json");
  const json doc = json::parse(text);
  WorkloadOutput out = ParseFioJson(text, "fio");
  EXPECT_TRUE(out.metrics.count("fio.mixed.read.clat_p99"));
  EXPECT_TRUE(out.metrics.count("fio.mixed.write.clat_p99"));
  EXPECT_DOUBLE_EQ(
      *out.ops, Direction(doc, "read")["total_ios"].get<double>() + Direction(doc, "write")["total_ios"].get<double>());
}

TEST(FioOutput, EveryMetricNameMatchesTheSuitePattern) {
  static const std::regex kName("^[a-z0-9_]+(\\.[A-Za-z0-9_:<>*/+-]+)+$");
  for (const char* file : {"randread.json", "seqwrite-fsync.json", "mixed.json"}) {
    for (const auto& [name, m] : ParseFioJson(Fixture(file), "fio").metrics) {
      EXPECT_TRUE(std::regex_match(name, kName)) << name;
    }
  }
}

TEST(FioOutput, SkipsNotesPrintedBeforeTheDocument) {
  const std::string text = Fixture("randread.json");
  const std::string noisy =
      "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n"
      "fio: {weird} line with braces\n" +
      text + "\nfio: some trailing line\n";
  EXPECT_EQ(ParseFioJson(noisy, "fio").metrics.size(), ParseFioJson(text, "fio").metrics.size());
}

// fio before 3.0 reported latencies in microseconds (clat, lat) and bandwidth
// in KiB/s only (bw).
TEST(FioOutput, ReadsOlderMicrosecondFields) {
  json doc = json::parse(Fixture("mixed.json"));
  for (const char* dir : {"read", "write", "trim"}) {
    json& d = doc["jobs"][0][dir];
    for (const char* base : {"clat", "lat", "slat"}) {
      json us = d[std::string(base) + "_ns"];
      for (const char* k : {"min", "max", "mean", "stddev"}) us[k] = us[k].get<double>() / 1000;
      if (us.contains("percentile")) {
        for (auto& [q, v] : us["percentile"].items()) v = v.get<double>() / 1000;
      }
      d.erase(std::string(base) + "_ns");
      d[base] = us;
    }
    d.erase("bw_bytes");
    d.erase("io_kbytes");
  }
  const json& read = Direction(doc, "read");
  WorkloadOutput old = ParseFioJson(doc.dump(2), "fio");
  WorkloadOutput now = ParseFioJson(Fixture("mixed.json"), "fio");
  EXPECT_DOUBLE_EQ(old.metrics.at("fio.mixed.read.bw").value, read["bw"].get<double>() * 1024);
  for (const char* name : {"fio.mixed.read.clat_p99", "fio.mixed.write.clat_p50", "fio.mixed.read.clat_mean",
                           "fio.mixed.write.lat_mean"}) {
    EXPECT_NEAR(old.metrics.at(name).value, now.metrics.at(name).value, 1e-6 * now.metrics.at(name).value) << name;
  }
}

TEST(FioOutput, TruncatedDocumentIsAnInfraErrorNamingTheOutput) {
  const std::string text = Fixture("randread.json");
  std::string e = ParseError(text.substr(0, text.size() / 2));
  EXPECT_NE(e.find("fio output (job file t.fio)"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
}

TEST(FioOutput, OutputWithoutDocumentSaysSo) {
  std::string e = ParseError("fio: failed parsing size=${FIO_SIZE}\nfio: job global dropped\n");
  EXPECT_NE(e.find("no JSON document"), std::string::npos) << e;
  EXPECT_NE(ParseError("").find("no JSON document"), std::string::npos);
}

TEST(FioOutput, InvalidJsonNamesTheLine) {
  std::string e = ParseError("starting\n{\"jobs\": [ {\"jobname\": \"x\", } ]}\n");
  EXPECT_NE(e.find("starting at line 2"), std::string::npos) << e;
  EXPECT_NE(e.find("invalid JSON"), std::string::npos) << e;
}

TEST(FioOutput, MissingFieldsNameTheJobAndDirection) {
  json doc = json::parse(Fixture("randread.json"));
  doc["jobs"][0]["read"].erase("iops");
  std::string e = ParseError(doc.dump());
  EXPECT_NE(e.find("jobs[0] (randread).read: missing \"iops\""), std::string::npos) << e;

  doc = json::parse(Fixture("randread.json"));
  doc["jobs"][0]["read"].erase("clat_ns");
  e = ParseError(doc.dump());
  EXPECT_NE(e.find("missing \"clat_ns\""), std::string::npos) << e;

  doc = json::parse(Fixture("randread.json"));
  doc.erase("jobs");
  EXPECT_NE(ParseError(doc.dump()).find("no \"jobs\" array"), std::string::npos);
}

TEST(FioOutput, NanOrTextWhereANumberBelongsIsRejected) {
  std::string text = Fixture("randread.json");
  json doc = json::parse(text);
  const std::string iops = "\"iops\" : " + doc["jobs"][0]["read"]["iops"].dump();
  ASSERT_NE(text.find(iops), std::string::npos);
  std::string nan = text;
  nan.replace(nan.find(iops), iops.size(), "\"iops\" : NaN");
  EXPECT_NE(ParseError(nan).find("read.iops: expected a finite number"), std::string::npos);
  std::string word = text;
  word.replace(word.find(iops), iops.size(), "\"iops\" : \"fast\"");
  EXPECT_NE(ParseError(word).find("read.iops: expected a finite number"), std::string::npos);
}

TEST(FioOutput, JobErrorAndDuplicateJobNamesAreErrors) {
  json doc = json::parse(Fixture("randread.json"));
  doc["jobs"][0]["error"] = 5;
  EXPECT_NE(ParseError(doc.dump()).find("fio reported error 5"), std::string::npos);

  doc = json::parse(Fixture("randread.json"));
  doc["jobs"].push_back(doc["jobs"][0]);
  EXPECT_NE(ParseError(doc.dump()).find("group_reporting"), std::string::npos);
}

TEST(FioOutput, JobNamesAreMadeIntoMetricNameSegments) {
  json doc = json::parse(Fixture("randread.json"));
  doc["jobs"][0]["jobname"] = "rand read.4k";
  WorkloadOutput out = ParseFioJson(doc.dump(), "fio");
  EXPECT_TRUE(out.metrics.count("fio.rand_read_4k.read.iops"));
}

TEST(FioOutput, PercentileKeysBecomeNameSuffixes) {
  EXPECT_EQ(FioPercentileName("50.000000"), "p50");
  EXPECT_EQ(FioPercentileName("99.900000"), "p99_9");
  EXPECT_EQ(FioPercentileName("99.990000"), "p99_99");
  EXPECT_EQ(FioPercentileName("5.000000"), "p5");
  EXPECT_EQ(FioPercentileName("100"), "p100");
  EXPECT_EQ(FioPercentileName("9.9.9"), "");
  EXPECT_EQ(FioPercentileName("p99"), "");
}

// ---- launching --------------------------------------------------------------

WorkloadSpec FioSpec(const std::string& scratch) {
  WorkloadSpec spec;
  spec.kind = "fio";
  spec.options["job"] = std::string(PERFGATE_SOURCE_DIR) + "/workloads/fio/randread.fio";
  if (!scratch.empty()) spec.options["scratch_dir"] = scratch;
  return spec;
}

bool HaveFio() { return system("command -v fio >/dev/null 2>&1") == 0; }

// Runs argv and returns its exit status; stdout goes to `out`.
int RunArgv(const std::vector<std::string>& argv, std::string& out) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class FioLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveFio()) GTEST_SKIP() << "fio is not installed (ci/install-deps.sh installs it)";
    std::string tmpl = (fs::temp_directory_path() / "perfgate-fio-test-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_F(FioLaunch, RunsFioWithJsonOutputInAFreshDirectoryThatIsRemovedAfterwards) {
  std::vector<std::string> argv = FioAdapter().LaunchArgv(FioSpec(dir_));
  ASSERT_EQ(argv.size(), 8u);
  EXPECT_EQ(argv[0], "/bin/sh");
  // The job file's name and text: the wrapper writes it into the scratch
  // directory, where a workload run as another user can read it.
  const std::string job = FioSpec(dir_).options["job"];
  EXPECT_EQ(argv[6], fs::path(job).filename().string());
  std::ifstream job_in(job);
  EXPECT_EQ(argv[7], std::string(std::istreambuf_iterator<char>(job_in), std::istreambuf_iterator<char>()));
  // Stand in for fio: print the arguments and leave a file in --directory.
  const std::string fake = dir_ + "/fake-fio";
  std::ofstream(fake)
      << "#!/bin/sh\nfor a; do echo \"$a\"; case $a in --directory=*) touch \"${a#--directory=}/data\";; "
         "esac; done\nexit 3\n";
  fs::permissions(fake, fs::perms::owner_all);
  argv[5] = fake;
  std::string out;
  EXPECT_EQ(RunArgv(argv, out), 3) << "fio's exit status is the workload's";
  EXPECT_NE(out.find("--output-format=json\n"), std::string::npos) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("--directory=(" + dir_ + "/perfgate-fio\\.[A-Za-z0-9]+)"))) << out;
  EXPECT_FALSE(fs::exists(m[1].str())) << "the scratch directory outlived the run";
  EXPECT_NE(out.find(m[1].str() + "/" + fs::path(job).filename().string() + "\n"), std::string::npos)
      << "fio reads the job from the scratch directory: " << out;
}

TEST_F(FioLaunch, ExtraArgsGoBeforeTheJobFile) {
  WorkloadSpec spec = FioSpec(dir_);
  spec.argv = {"--eta=never"};
  std::vector<std::string> argv = FioAdapter().LaunchArgv(spec);
  ASSERT_EQ(argv.size(), 9u);
  EXPECT_EQ(argv[6], fs::path(spec.options["job"]).filename().string());
  EXPECT_EQ(argv[8], "--eta=never");
  // The wrapper passes them on before the job file, where they are global defaults.
  EXPECT_NE(argv[2].find("\"$@\" \"$job\""), std::string::npos) << argv[2];
}

TEST_F(FioLaunch, MissingJobFileIsABadSuite) {
  WorkloadSpec spec = FioSpec(dir_);
  spec.options["job"] = dir_ + "/nope.fio";
  try {
    FioAdapter().LaunchArgv(spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("nope.fio not found"), std::string::npos) << e.what();
  }
}

TEST_F(FioLaunch, ScratchDirOnTmpfsIsRefused) {
  struct statfs st {};
  if (statfs("/dev/shm", &st) != 0 || st.f_type != 0x01021994) GTEST_SKIP() << "/dev/shm is not tmpfs here";
  try {
    FioAdapter().LaunchArgv(FioSpec("/dev/shm"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra);
    EXPECT_NE(std::string(e.what()).find("tmpfs"), std::string::npos) << e.what();
  }
}

TEST(FioAdapter, OptionsOfOtherKindsAreRefused) {
  WorkloadSpec spec = FioSpec("");
  spec.options["binary"] = "x";
  try {
    FioAdapter().LaunchArgv(spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("\"binary\" does not apply"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace perfgate
