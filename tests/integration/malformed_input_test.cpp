// Every malformed input of tests/fixtures/malformed/ through the real CLI:
// suites through `run`, baselines through `compare`, results through
// `report`, a quarantine file beside a valid suite through `run`, the
// arguments of `alerts set` against a history holding alert 1, tool output
// through `run` of a scenario of that kind whose tool (a stand-in script)
// prints the file, so the adapter's real path parses it.
// Each must end within a time limit with the exit code of INDEX.tsv, exactly
// one line on stderr naming the file and the path, line or problem, and the
// baseline directory exactly as it was.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/cli.h"
#include "harness/paths.h"
#include "history/alerts.h"
#include "history/history_db.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(PERFGATE_FIXTURES) / "malformed";

struct MalformedCase {
  std::string file;    // name in the corpus
  std::string input;   // suite, baseline, results, trailers, or a workload kind
  int exit_code = 2;
  std::string phrase;  // the message must hold it
};

// How test listings and failures name a case (not as a dump of its bytes).
void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.file; }

std::vector<MalformedCase> ReadIndex() {
  std::vector<MalformedCase> cases;
  std::ifstream in(kCorpus / "INDEX.tsv");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    MalformedCase c;
    std::string code;
    std::getline(fields, c.file, '\t');
    std::getline(fields, c.input, '\t');
    std::getline(fields, code, '\t');
    std::getline(fields, c.phrase);
    c.exit_code = std::atoi(code.c_str());
    cases.push_back(c);
  }
  return cases;
}

struct Outcome {
  int exit_code = -1;
  bool timed_out = false;
  std::string out, err;
};

// Runs perfgate with stdout and stderr apart, killing it (and what it
// started) after `limit`.
Outcome RunPerfgate(const std::vector<std::string>& args, const fs::path& scratch, const std::string& path_prefix,
                    std::chrono::seconds limit = std::chrono::seconds(60)) {
  const std::string out_file = (scratch / "stdout.txt").string(), err_file = (scratch / "stderr.txt").string();
  std::vector<std::string> argv = {PERFGATE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    if (!freopen(out_file.c_str(), "w", stdout) || !freopen(err_file.c_str(), "w", stderr)) _exit(126);
    if (!path_prefix.empty()) setenv("PATH", (path_prefix + ":" + std::getenv("PATH")).c_str(), 1);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  Outcome o;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      o.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = ReadFile(out_file);
  o.err = ReadFile(err_file);
  return o;
}

// Every file under `dir` with its content: a baseline directory's state.
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = ReadFile(e.path());
  }
  return files;
}

void WriteScript(const fs::path& file, const std::string& body) {
  WriteFile(file, "#!/bin/sh\n" + body + "\n");
  fs::permissions(file, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
}

// A fio case's job file: a small one named after the case.
fs::path FioJob(const fs::path& tool_dir, const std::string& stem) { return tool_dir / (stem + ".fio"); }

// The suite of a tool-output case: one scenario of that kind, no probes
// (no privilege needed), named like the baseline the test keeps.
std::string ToolSuite(const MalformedCase& c, const fs::path& tool_dir) {
  const std::string stem = fs::path(c.file).stem().string();
  std::string workload;
  if (c.input == "fio") {
    // The stand-in fio ignores the job and prints the case.
    workload = "\"kind\": \"fio\", \"job\": \"" + FioJob(tool_dir, stem).string() + "\"";
  } else if (c.input == "gbench") {
    workload = "\"kind\": \"gbench\", \"binary\": \"" + (tool_dir / stem).string() + "\"";
  } else if (c.input == "unixbench") {
    workload = "\"kind\": \"unixbench\", \"dir\": \"" + tool_dir.string() + "\"";
  } else {
    workload = "\"kind\": \"command\", \"argv\": [\"" + (tool_dir / stem).string() + "\"]";
  }
  return "{\"name\": \"malformed\", \"scenarios\": [{\"name\": \"tool-output\", \"warmup\": 0, \"repetitions\": 2,"
         " \"timeout_s\": 30, \"workload\": {" +
         workload + "}}]}\n";
}

class MalformedInput : public ::testing::TestWithParam<MalformedCase> {
 protected:
  // A baseline recorded here, on this machine (so no environment warning),
  // that every case's baseline directory starts with and must keep.
  static void SetUpTestSuite() {
    recorded_ = new ScratchDir();
    const std::string suite = *recorded_ / "suite.json";
    WriteFile(suite,
              "{\"name\": \"malformed\", \"scenarios\": [{\"name\": \"tool-output\", \"warmup\": 0, "
              "\"repetitions\": 2, \"workload\": {\"argv\": [\"true\"]}}]}\n");
    Outcome o = RunPerfgate({"baseline", "record", suite, "--baseline-dir", *recorded_ / "baselines", "--out",
                             *recorded_ / "out", "--quiet"},
                            recorded_->path(), "");
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  }
  static void TearDownTestSuite() {
    delete recorded_;
    recorded_ = nullptr;
  }
  static ScratchDir* recorded_;
};

ScratchDir* MalformedInput::recorded_ = nullptr;

TEST_P(MalformedInput, RejectedWithOneLineNamingFileAndPath) {
  const MalformedCase& c = GetParam();
  ASSERT_NE(recorded_, nullptr);
  const fs::path file = kCorpus / c.file;
  ASSERT_TRUE(fs::exists(file)) << file;
  ScratchDir scratch;
  const fs::path baselines = scratch.path() / "baselines";
  fs::copy(recorded_->path() / "baselines", baselines, fs::copy_options::recursive);
  const std::string out = scratch / "out";
  const std::string stem = fs::path(c.file).stem().string();

  std::vector<std::string> args;
  std::string path_prefix;
  std::string names_file = file.string();
  if (c.input == "suite") {
    args = {"run", file.string(), "--out", out, "--baseline-dir", baselines.string(), "--quiet", "--update-baseline"};
  } else if (c.input == "baseline") {
    args = {"compare", file.string(), (kCorpus / "valid" / "results.json").string(), "--out", out};
  } else if (c.input == "results") {
    args = {"report", file.string(), "--out", out};
  } else if (c.input == "trailers") {
    // The accept trailers the pull-request gate collects, with a valid suite.
    args = {"run",
            (kCorpus / "valid" / "suite.json").string(),
            "--accept-trailers",
            file.string(),
            "--out",
            out,
            "--baseline-dir",
            baselines.string(),
            "--quiet"};
  } else if (c.input == "quarantine-file") {
    // The file beside a valid suite, where LoadSuite looks for it.
    fs::copy_file(kCorpus / "valid" / "suite.json", scratch / "suite.json");
    fs::copy_file(file, scratch / "suite.quarantine.json");
    names_file = "suite.quarantine.json";
    args = {"run", scratch / "suite.json", "--out", out, "--baseline-dir", baselines.string(), "--quiet",
            "--update-baseline"};
  } else if (c.input == "alerts") {
    // A history holding alert 1, and the case's lines as the arguments of `alerts set`.
    const std::string db = scratch / "history.sqlite";
    AlertGroup group;
    group.suite = "malformed";
    group.branch = "main";
    group.commit_before = "c1";
    group.commit_after = "c2";
    group.timestamp_before = "2026-10-01T02:00:00Z";
    group.timestamp_after = "2026-10-02T02:00:00Z";
    group.metrics.push_back({"s1", "workload.wall_time", "value", "s", 1.0, 1.2, 20, 1e-6, true});
    ASSERT_EQ(HistoryDb::Open(db).RecordAlerts({group}).added, std::vector<int64_t>{1});
    args = {"alerts", "set"};
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) args.push_back(line);
    args.insert(args.end(), {"--db", db, "--by", "malformed-test"});
    names_file = "";  // the message names the option or the alert (the phrase)
  } else {
    // The stand-in tool, in a directory named after the case so the message,
    // which names the tool's output, names the case.
    const fs::path tool_dir = scratch.path() / stem;
    const std::string print = "exec cat '" + file.string() + "'";
    if (c.input == "fio") {
      WriteScript(tool_dir / "fio", print);
      WriteFile(FioJob(tool_dir, stem), "[stand-in]\nrw=read\n");
      path_prefix = tool_dir.string();
    } else if (c.input == "unixbench") {
      WriteScript(tool_dir / "Run", print);
    } else {
      WriteScript(tool_dir / stem, print);
    }
    names_file = stem;
    WriteFile(scratch / "suite.json", ToolSuite(c, tool_dir));
    args = {"run", scratch / "suite.json", "--out", out, "--baseline-dir", baselines.string(), "--quiet",
            "--update-baseline"};
  }
  const auto before = Snapshot(baselines);
  ASSERT_FALSE(before.empty());

  Outcome o = RunPerfgate(args, scratch.path(), path_prefix);
  ASSERT_FALSE(o.timed_out) << c.file << ": perfgate did not finish";
  EXPECT_EQ(o.exit_code, c.exit_code) << c.file << "\nstdout: " << o.out << "\nstderr: " << o.err;
  std::string err = o.err;
  ASSERT_FALSE(err.empty()) << c.file << ": nothing on stderr";
  ASSERT_EQ(err.back(), '\n') << err;
  err.pop_back();
  EXPECT_EQ(err.find('\n'), std::string::npos) << c.file << ": more than one line on stderr:\n" << o.err;
  EXPECT_EQ(err.rfind("perfgate: error: ", 0), 0u) << err;
  EXPECT_NE(err.find(names_file), std::string::npos) << c.file << ": the message does not name the file:\n" << err;
  EXPECT_NE(err.find(c.phrase), std::string::npos)
      << c.file << ": the message does not say \"" << c.phrase << "\":\n" << err.substr(0, 2000);
  EXPECT_EQ(Snapshot(baselines), before) << c.file << ": the baseline directory changed";
}

std::string CaseName(const ::testing::TestParamInfo<MalformedCase>& info) {
  std::string name;
  for (char ch : fs::path(info.param.file).stem().string()) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, MalformedInput, ::testing::ValuesIn(ReadIndex()), CaseName);

TEST(MalformedCorpus, HasFortyCasesOrMoreAndEveryFileIsListed) {
  const auto cases = ReadIndex();
  EXPECT_GE(cases.size(), 40u);
  std::set<std::string> listed;
  for (const auto& c : cases) listed.insert(c.file);
  for (const auto& e : fs::directory_iterator(kCorpus)) {
    if (!e.is_regular_file() || e.path().filename() == "INDEX.tsv") continue;
    EXPECT_TRUE(listed.count(e.path().filename().string())) << e.path().filename() << " is not in INDEX.tsv";
  }
}

}  // namespace
}  // namespace perfgate::testing
