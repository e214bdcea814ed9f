// Faults, through the perfgate binary: workloads that ignore SIGTERM, leave
// processes behind or flood stdout; perfgate killed with SIGKILL; tracefs and
// BTF missing; a full disk; two perfgate processes on one directory. Each
// asserts the exit code and message, that what was written survives, that
// baselines are untouched and that no BPF program, link or map is left.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/fault.h"
#include "harness/paths.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json Scenario(const std::string& name, const json& argv, double timeout_s = 30, int repetitions = 2) {
  return {{"name", name},
          {"workload", {{"kind", "command"}, {"argv", argv}}},
          {"warmup", 0},
          {"repetitions", repetitions},
          {"timeout_s", timeout_s},
          {"probes", {"syscalls", "runqlat", "kmem"}},
          {"checks", {{{"metric", "workload.wall_time"}}}}};
}

std::string Suite(const std::vector<json>& scenarios) { return json{{"name", "t"}, {"scenarios", scenarios}}.dump(2); }

json Sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PERFGATE_REQUIRE_ROOT();
    // Let objects of an earlier test finish their deferred release first.
    usleep(200 * 1000);
    before_ = LoadedBpfObjects();
    pinned_before_ = PinnedBpfPaths();
  }
  void TearDown() override {
    if (IsSkipped()) return;
    EXPECT_EQ(NewBpfObjects(before_), std::set<std::string>{}) << "a BPF object outlived perfgate";
    EXPECT_EQ(PinnedBpfPaths(), pinned_before_) << "perfgate pinned something under /sys/fs/bpf";
  }
  // A baseline for suite t, scenario s, recorded from a quick good run; its bytes.
  std::string RecordBaseline(const std::string& baselines) {
    WriteFile(dir_ / "good.json", Suite({Scenario("s", {"/bin/true"})}));
    CliRun record = RunCli(
        {"baseline", "record", dir_ / "good.json", "--baseline-dir", baselines, "--out", dir_ / "rec", "--quiet"});
    EXPECT_EQ(record.exit_code, 0) << record.output;
    return ReadFile(baselines + "/t/s.json");
  }
  ScratchDir dir_;
  std::set<std::string> before_;
  std::set<std::string> pinned_before_;
};

TEST_F(FaultTest, WorkloadIgnoringSigtermIsKilledAfterTheGracePeriod) {
  const std::string baselines = dir_ / "baselines";
  const std::string old_baseline = RecordBaseline(baselines);
  const std::string pid_file = dir_ / "workload.pid";
  WriteFile(dir_ / "suite.json",
            Suite({Scenario("s", Sh("trap '' TERM; echo $$ > " + pid_file + "; while :; do sleep 0.05; done"), 1.0)}));
  const auto start = std::chrono::steady_clock::now();
  CliRun run =
      RunCli({"run", dir_ / "suite.json", "--baseline-dir", baselines, "--out", dir_ / "o", "--update-baseline"});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_NE(run.output.find("scenario \"s\": repetition 1: workload timed out after 1 s (process group killed)"),
            std::string::npos)
      << run.output;
  // The timeout, then SIGTERM ignored for the 2 s grace period, then SIGKILL.
  EXPECT_LT(took, std::chrono::seconds(12));
  EXPECT_TRUE(ProcessGone(ReadPid(pid_file))) << "the workload survived";
  const json results = json::parse(ReadFile(dir_ / "o/results.json"));
  EXPECT_NE(results["scenarios"][0]["error"].get<std::string>().find("timed out"), std::string::npos);
  EXPECT_NE(ReadFile(dir_ / "o/junit.xml").find("<error"), std::string::npos);
  EXPECT_EQ(ReadFile(baselines + "/t/s.json"), old_baseline) << "a failed run changed the baseline";
}

TEST_F(FaultTest, ProcessesTheWorkloadLeavesBehindAreKilledAndReaped) {
  const std::string pids = dir_ / "pids";
  fs::create_directories(pids);
  // A child in the workload's process group and a daemon in a session of its
  // own (out of the group's reach), both still running when the workload exits.
  WriteFile(dir_ / "suite.json",
            Suite({Scenario("s", Sh("sleep 300 & echo $! > " + pids + "/child; (setsid sleep 300 & echo $! > " + pids +
                                    "/daemon); sleep 0.2"))}));
  CliRun run = RunCli({"run", dir_ / "suite.json", "--baseline-dir", dir_ / "b", "--out", dir_ / "o"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(
      run.output.find("warning: s: repetition 1: left 2 process(es) running when it exited; perfgate killed them"),
      std::string::npos)
      << run.output;
  for (const char* which : {"child", "daemon"}) {
    const pid_t pid = ReadPid(pids + "/" + which);
    ASSERT_GT(pid, 0) << which;
    // perfgate has exited: gone means killed and reaped (no zombie left either).
    EXPECT_TRUE(ProcessGone(pid)) << which << " " << pid << " outlived the run";
  }
}

TEST_F(FaultTest, StdoutFloodIsCappedWithANoteAndMemoryStaysBounded) {
  // 256 MiB of output; perfgate keeps the first 16 MiB.
  WriteFile(dir_ / "suite.json", Suite({Scenario("s", Sh("head -c 268435456 /dev/zero; echo"))}));
  const pid_t pid =
      StartPerfgate({"run", dir_ / "suite.json", "--baseline-dir", dir_ / "b", "--out", dir_ / "o"}, dir_ / "log");
  const Exited exited = WaitForPerfgate(pid);
  const std::string log = ReadFile(dir_ / "log");
  EXPECT_EQ(exited.code, 0) << log;
  EXPECT_NE(log.find("warning: s: repetition 1: wrote more than 16 MiB to stdout; the last 251658241 bytes were not "
                     "kept or parsed"),
            std::string::npos)
      << log;
  // Not under AddressSanitizer: its quarantine keeps up to 256 MiB of freed
  // buffers, so perfgate's peak RSS there says nothing about its own memory.
  if (!kAddressSanitizer) {
    EXPECT_LT(exited.max_rss_kib, 128 * 1024) << "perfgate's memory grew with the workload's output";
  }
  EXPECT_TRUE(fs::exists(dir_ / "o/results.json"));
}

TEST_F(FaultTest, SigkillMidRepetitionLeavesNothingBehindAndTheNextRunWorks) {
  const std::string baselines = dir_ / "baselines";
  const std::string old_baseline = RecordBaseline(baselines);
  const std::string started = dir_ / "started";
  WriteFile(dir_ / "suite.json",
            Suite({Scenario("quick", {"/bin/true"}), Scenario("s", Sh("echo $$ > " + started + "; sleep 60"))}));
  const pid_t pid =
      StartPerfgate({"run", dir_ / "suite.json", "--baseline-dir", baselines, "--out", dir_ / "o", "--update-baseline"},
                    dir_ / "log");
  ASSERT_TRUE(WaitForFile(started)) << ReadFile(dir_ / "log");
  usleep(100 * 1000);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_EQ(WaitForPerfgate(pid).code, 128 + SIGKILL);
  // The workload dies with perfgate (parent-death signal).
  EXPECT_TRUE(ProcessGone(ReadPid(started))) << "the workload outlived perfgate";
  // The scenario finished before the kill is on disk, marked partial.
  const json partial = json::parse(ReadFile(dir_ / "o/results.json"));
  EXPECT_TRUE(partial["partial"].get<bool>());
  ASSERT_EQ(partial["scenarios"].size(), 1u);
  EXPECT_EQ(partial["scenarios"][0]["name"], "quick");
  EXPECT_EQ(ReadFile(baselines + "/t/s.json"), old_baseline);
  // Every program, link and map went with the process (TearDown checks the
  // object ids and /sys/fs/bpf); the next run on the same directories works.
  EXPECT_EQ(NewBpfObjects(before_), std::set<std::string>{});
  WriteFile(dir_ / "next.json", Suite({Scenario("s", {"/bin/true"})}));
  CliRun next = RunCli({"run", dir_ / "next.json", "--baseline-dir", baselines, "--out", dir_ / "o", "--quiet"});
  EXPECT_EQ(next.exit_code, 0) << next.output;
  EXPECT_FALSE(json::parse(ReadFile(dir_ / "o/results.json"))["partial"].get<bool>());
}

// ---- a machine without tracefs or BTF ----------------------------------------

// Runs perfgate `args` in a private mount namespace where tracefs is not
// mounted and, with `hide_btf`, the kernel's BTF file is empty; returns its
// exit code and output.
CliRun WithoutTracefs(const ScratchDir& dir, bool hide_btf, const std::string& args) {
  const std::string out = dir / "ns.log";
  const std::string code = dir / "ns.code";
  std::string script =
      "for m in /sys/kernel/tracing /sys/kernel/debug/tracing /sys/kernel/debug; do umount -l $m 2>/dev/null; done\n"
      "[ -e /sys/kernel/tracing/events ] && exit 97\n";
  if (hide_btf) {
    script += ": > " + (dir / "empty") + " && mount --bind " + (dir / "empty") +
              " /sys/kernel/btf/vmlinux || exit 99\n[ -s /sys/kernel/btf/vmlinux ] && exit 98\n";
  }
  script += ShellQuote(PERFGATE_BIN) + " " + args + " > " + out + " 2>&1; echo $? > " + code + "\n";
  const int status = InPrivateMountNamespace(script);
  CliRun run;
  if (status != 0) {
    run.output = "could not set up the mount namespace (status " + std::to_string(status) + ")";
    return run;
  }
  run.exit_code = std::stoi(ReadFile(code));
  run.output = ReadFile(out);
  return run;
}

TEST_F(FaultTest, WithoutTracefsDoctorSaysWhatIsMissingAndRunFallsBackToRawTracepoints) {
  CliRun doctor = WithoutTracefs(dir_, false, "doctor");
  EXPECT_EQ(doctor.exit_code, 0) << doctor.output;
  EXPECT_NE(doctor.output.find("missing  tracefs                not mounted at /sys/kernel/tracing: run `perfgate "
                               "doctor --fix`"),
            std::string::npos)
      << doctor.output;
  EXPECT_NE(doctor.output.find("missing  attach tracepoint      tracefs is not mounted"), std::string::npos)
      << doctor.output;
  EXPECT_NE(doctor.output.find("ok       attach raw_tp          works"), std::string::npos) << doctor.output;
  EXPECT_NE(doctor.output.find("perfgate can run here: hooks attach as raw tracepoints; without tracefs only the "
                               "tracepoint fallback is unavailable"),
            std::string::npos)
      << doctor.output;

  WriteFile(dir_ / "suite.json", Suite({Scenario("s", {"/bin/true"})}));
  CliRun run = WithoutTracefs(
      dir_, false, "run " + (dir_ / "suite.json") + " --out " + (dir_ / "o") + " --baseline-dir " + (dir_ / "b"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const json results = json::parse(ReadFile(dir_ / "o/results.json"));
  std::set<std::string> attach_types;
  for (const auto& probe : results["scenarios"][0]["probes"]) {
    for (const auto& hook : probe["hooks"]) attach_types.insert(hook["attach_type"].get<std::string>());
  }
  // Every hook attached as a raw tracepoint (BTF-typed or not), none needed tracefs.
  attach_types.erase("tp_btf");
  attach_types.erase("raw_tp");
  EXPECT_EQ(attach_types, std::set<std::string>{}) << results["scenarios"][0]["probes"].dump();
}

TEST_F(FaultTest, WithoutBtfDoctorAndRunSayNoProbeCanLoadAndWhy) {
  CliRun doctor = WithoutTracefs(dir_, true, "doctor");
  EXPECT_EQ(doctor.exit_code, 3) << doctor.output;
  EXPECT_NE(doctor.output.find("missing  BTF                    no kernel BTF: /sys/kernel/btf/vmlinux is empty"),
            std::string::npos)
      << doctor.output;
  EXPECT_NE(doctor.output.find("no probe can load without it"), std::string::npos) << doctor.output;
  EXPECT_NE(doctor.output.find("missing  tracefs"), std::string::npos) << doctor.output;
  EXPECT_NE(doctor.output.find("perfgate cannot run probes here: fix what is missing (compare, report, merge, trend "
                               "and export still work)"),
            std::string::npos)
      << doctor.output;
  EXPECT_EQ(doctor.output.find("libbpf:"), std::string::npos) << "libbpf's own noise: " << doctor.output;

  WriteFile(dir_ / "suite.json", Suite({Scenario("s", {"/bin/true"})}));
  CliRun run = WithoutTracefs(
      dir_, true, "run " + (dir_ / "suite.json") + " --out " + (dir_ / "o") + " --baseline-dir " + (dir_ / "b"));
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_NE(run.output.find("perfgate: error: scenario \"s\": probe tracker: cannot load: no kernel BTF: "
                            "/sys/kernel/btf/vmlinux is empty"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("internal error"), std::string::npos) << run.output;
  EXPECT_NE(ReadFile(dir_ / "o/junit.xml").find("<error"), std::string::npos);
}

// ---- a full disk --------------------------------------------------------------

TEST_F(FaultTest, FullDiskWhileWritingBaselinesKeepsTheOldOnesIntact) {
  const std::string baselines = dir_ / "baselines";
  const std::string old_baseline = RecordBaseline(baselines);
  WriteFile(dir_ / "two.json", Suite({Scenario("r", {"/bin/true"}), Scenario("s", {"/bin/true"})}));
  // The baseline directory on a 1 MiB tmpfs that is full; the reports elsewhere.
  const std::string script =
      "set -e\n"
      "mkdir -p " +
      (dir_ / "full") +
      "\n"
      "mount -t tmpfs -o size=1m,mode=0755 perfgate-test " +
      (dir_ / "full") +
      "\n"
      "cp -a " +
      baselines + " " + (dir_ / "full/baselines") +
      "\n"
      "dd if=/dev/zero of=" +
      (dir_ / "full/filler") +
      " bs=4k 2>/dev/null || true\n"
      "set +e\n" +
      ShellQuote(PERFGATE_BIN) + " baseline record " + (dir_ / "two.json") + " --baseline-dir " +
      (dir_ / "full/baselines") + " --out " + (dir_ / "o") + " --quiet > " + (dir_ / "log") +
      " 2>&1\n"
      "echo $? > " +
      (dir_ / "code") +
      "\n"
      "cp -a " +
      (dir_ / "full/baselines") + " " + (dir_ / "after") + "\n";
  ASSERT_EQ(InPrivateMountNamespace(script), 0);
  const std::string log = ReadFile(dir_ / "log");
  EXPECT_EQ(std::stoi(ReadFile(dir_ / "code")), 3) << log;
  EXPECT_NE(log.find("No space left on device (no baseline was changed)"), std::string::npos) << log;
  // All or none: s keeps its old bytes, r was not added, no temporary file is left.
  EXPECT_EQ(ReadFile(dir_ / "after/t/s.json"), old_baseline);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir_ / "after/t")) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"s.json"});
  // The run's own results are written (to a disk with room).
  EXPECT_TRUE(fs::exists(dir_ / "o/results.json"));
}

TEST_F(FaultTest, FullDiskWhileWritingResultsExitsThreeAndKeepsTheOldResults) {
  WriteFile(dir_ / "suite.json", Suite({Scenario("s", {"/bin/true"})}));
  const std::string old_results = R"({"old": "results"})";
  const std::string script =
      "set -e\n"
      "mkdir -p " +
      (dir_ / "full") +
      "\n"
      "mount -t tmpfs -o size=1m,mode=0755 perfgate-test " +
      (dir_ / "full") +
      "\n"
      "printf '%s' " +
      ShellQuote(old_results) + " > " + (dir_ / "full/results.json") +
      "\n"
      "dd if=/dev/zero of=" +
      (dir_ / "full/filler") +
      " bs=4k 2>/dev/null || true\n"
      "set +e\n" +
      ShellQuote(PERFGATE_BIN) + " run " + (dir_ / "suite.json") + " --baseline-dir " + (dir_ / "b") + " --out " +
      (dir_ / "full") + " --quiet > " + (dir_ / "log") +
      " 2>&1\n"
      "echo $? > " +
      (dir_ / "code") +
      "\n"
      "cp " +
      (dir_ / "full/results.json") + " " + (dir_ / "results-after.json") +
      "\n"
      "ls -a " +
      (dir_ / "full") + " > " + (dir_ / "listing") + "\n";
  ASSERT_EQ(InPrivateMountNamespace(script), 0);
  const std::string log = ReadFile(dir_ / "log");
  EXPECT_EQ(std::stoi(ReadFile(dir_ / "code")), 3) << log;
  EXPECT_NE(log.find("perfgate: error: " + (dir_ / "full/results.json") + ": write failed: No space left on device"),
            std::string::npos)
      << log;
  EXPECT_EQ(ReadFile(dir_ / "results-after.json"), old_results);
  EXPECT_EQ(ReadFile(dir_ / "listing"), ".\n..\nfiller\nresults.json\n");
}

// ---- two perfgate processes on one directory ----------------------------------

TEST_F(FaultTest, SecondRunOnTheSameOutDirFailsAtOnceNamingTheFirst) {
  const std::string release = dir_ / "release";
  const std::string started = dir_ / "started";
  WriteFile(
      dir_ / "first.json",
      Suite({Scenario("s", Sh("touch " + started + "; while [ ! -e " + release + " ]; do sleep 0.05; done"), 30, 2)}));
  const pid_t first = StartPerfgate({"run", dir_ / "first.json", "--baseline-dir", dir_ / "b", "--out", dir_ / "o"},
                                    dir_ / "first.log");
  ASSERT_TRUE(WaitForFile(started)) << ReadFile(dir_ / "first.log");
  WriteFile(dir_ / "second.json", json{{"name", "second"}, {"scenarios", {Scenario("s", {"/bin/true"})}}}.dump());
  const auto start = std::chrono::steady_clock::now();
  CliRun second = RunCli({"run", dir_ / "second.json", "--baseline-dir", dir_ / "b", "--out", dir_ / "o"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(second.exit_code, 3) << second.output;
  EXPECT_NE(second.output.find("perfgate: error: --out " + (dir_ / "o") + ": another perfgate (pid " +
                               std::to_string(first) + ") is writing its results there"),
            std::string::npos)
      << second.output;
  WriteFile(release, "");
  EXPECT_EQ(WaitForPerfgate(first).code, 0) << ReadFile(dir_ / "first.log");
  // Only the first run's results are there.
  EXPECT_EQ(json::parse(ReadFile(dir_ / "o/results.json"))["suite"], "t");
}

// Holds a lock on `dir` as another perfgate would, until destroyed.
class HeldLock {
 public:
  // CLOEXEC: a perfgate started later must not inherit (and so share) the lock.
  HeldLock(const std::string& dir, int op) : fd_(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    EXPECT_EQ(flock(fd_, op), 0);
  }
  ~HeldLock() { Release(); }
  void Release() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

TEST_F(FaultTest, RunWaitsWhileBaselinesAreBeingWrittenAndRecordWaitsForReaders) {
  const std::string baselines = dir_ / "baselines";
  const std::string old_baseline = RecordBaseline(baselines);
  WriteFile(dir_ / "suite.json", Suite({Scenario("s", {"/bin/true"})}));

  // A writer holds the directory: run waits before reading any baseline.
  HeldLock writer(baselines, LOCK_EX);
  const pid_t run =
      StartPerfgate({"run", dir_ / "suite.json", "--baseline-dir", baselines, "--out", dir_ / "o"}, dir_ / "run.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_NE(ReadFile(dir_ / "run.log")
                .find("--baseline-dir " + baselines + ": waiting for another perfgate (pid " +
                      std::to_string(getpid()) + ") to finish writing the baselines"),
            std::string::npos)
      << ReadFile(dir_ / "run.log");
  EXPECT_FALSE(fs::exists(dir_ / "o/results.json")) << "run went on while baselines were being written";
  writer.Release();
  EXPECT_EQ(WaitForPerfgate(run).code, 0) << ReadFile(dir_ / "run.log");

  // A reader holds it: record measures, then waits before replacing anything.
  HeldLock reader(baselines, LOCK_SH);
  const pid_t record = StartPerfgate(
      {"baseline", "record", dir_ / "suite.json", "--baseline-dir", baselines, "--out", dir_ / "rec2", "--quiet"},
      dir_ / "record.log");
  EXPECT_TRUE(WaitForFile(dir_ / "rec2/junit.xml")) << ReadFile(dir_ / "record.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_NE(ReadFile(dir_ / "record.log").find("waiting for another perfgate"), std::string::npos)
      << ReadFile(dir_ / "record.log");
  EXPECT_EQ(ReadFile(baselines + "/t/s.json"), old_baseline) << "record replaced a baseline being read";
  reader.Release();
  EXPECT_EQ(WaitForPerfgate(record).code, 0) << ReadFile(dir_ / "record.log");
  EXPECT_NE(ReadFile(baselines + "/t/s.json"), old_baseline);
}

TEST_F(FaultTest, TwoRecordsAtOnceOnOneBaselineDirLeaveOneWholeBaseline) {
  const std::string baselines = dir_ / "baselines";
  WriteFile(dir_ / "suite.json", Suite({Scenario("r", {"/bin/true"}), Scenario("s", {"/bin/true"})}));
  const pid_t a = StartPerfgate({"baseline", "record", dir_ / "suite.json", "--baseline-dir", baselines, "--out",
                                 dir_ / "a", "--quiet", "--reps", "2"},
                                dir_ / "a.log");
  const pid_t b = StartPerfgate({"baseline", "record", dir_ / "suite.json", "--baseline-dir", baselines, "--out",
                                 dir_ / "b", "--quiet", "--reps", "3"},
                                dir_ / "b.log");
  EXPECT_EQ(WaitForPerfgate(a).code, 0) << ReadFile(dir_ / "a.log");
  EXPECT_EQ(WaitForPerfgate(b).code, 0) << ReadFile(dir_ / "b.log");
  // Both baselines of the suite come from the same run (2 or 3 repetitions),
  // the one that wrote last.
  const json r = json::parse(ReadFile(baselines + "/t/r.json"));
  const json s = json::parse(ReadFile(baselines + "/t/s.json"));
  EXPECT_EQ(r["scenario"]["repetitions"].size(), s["scenario"]["repetitions"].size());
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(baselines + "/t")) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"r.json", "s.json"}));
}

}  // namespace
}  // namespace perfgate::testing
