// Security, through the perfgate binary: hostile names and workload output
// through every reporter, nothing perfgate creates is group- or
// world-writable under umask 000, baselines never land outside the baseline
// directory, and workloads run as nobody from a checkout nobody can reach.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/fault.h"
#include "harness/paths.h"
#include "harness/text.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Valid UTF-8 (no overlongs, surrogates or code points past U+10FFFF)?
bool ValidUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (n < 0 || i + n >= s.size() + (n == 0 ? 1 : 0)) return false;
    uint32_t cp = n == 0 ? c : c & (0x3F >> n);
    for (int k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n + 1;
  }
  return true;
}

// C0 controls other than tab, newline and carriage return.
bool HasRawControl(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 && u != '\t' && u != '\n' && u != '\r';
  });
}

int UnescapedPipes(const std::string& line) {
  int n = 0;
  for (size_t i = 0; i < line.size(); ++i) n += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
  return n;
}

// Every check one report format must pass, whatever the names and output held.
void ExpectReportsSafe(const std::string& out) {
  SCOPED_TRACE(out);
  const std::string junit = ReadFile(out + "/junit.xml");
  const std::string html = ReadFile(out + "/report/index.html");
  const std::string md = ReadFile(out + "/summary.md");
  const std::string results = ReadFile(out + "/results.json");
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"junit.xml", junit},
                                   {"index.html", html},
                                   {"summary.md", md},
                                   {"results.json", results}}) {
    EXPECT_FALSE(text.empty()) << name;
    EXPECT_TRUE(ValidUtf8(text)) << name << " is not valid UTF-8";
    EXPECT_FALSE(HasRawControl(text)) << name << " holds a raw control character";
    EXPECT_EQ(Lower(text).find("<script"), std::string::npos) << name;
  }
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"junit.xml", junit}, {"summary.md", md}}) {
    EXPECT_EQ(text.find(std::string(1000, 'x')), std::string::npos) << name << " kept a runaway name whole";
  }
  // JUnit and the (XHTML) report parse as XML; nothing closed the style early.
  EXPECT_EQ(std::system(("xmllint --noout " + ShellQuote(out + "/junit.xml")).c_str()), 0);
  EXPECT_EQ(std::system(("xmllint --noout " + ShellQuote(out + "/report/index.html")).c_str()), 0);
  EXPECT_EQ(Lower(html).find("</style"), std::string::npos);
  EXPECT_EQ(Lower(md).find("</style"), std::string::npos);
  EXPECT_NO_THROW(json::parse(results));
  // Each Markdown table keeps its header's shape: no cell broke out of its row.
  std::istringstream lines(md);
  std::string line;
  int header_pipes = -1;
  while (std::getline(lines, line)) {
    if (line.rfind("|", 0) != 0) {
      header_pipes = -1;
      continue;
    }
    if (header_pipes < 0) header_pipes = UnescapedPipes(line);
    EXPECT_EQ(UnescapedPipes(line), header_pipes) << line;
  }
}

const std::string kHostile = "<script>alert(1)</script> ]]> </style> \" ' & \x01\x1b[31m\x7f";

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override { PERFGATE_REQUIRE_ROOT(); }
  ScratchDir dir_;
};

TEST_F(SecurityTest, HostileNamesAndWorkloadOutputAreEscapedInEveryReport) {
  // Metric names and units from the workload's JSON lines (a suite's checks
  // may only name well-formed metrics), and a second scenario whose last stderr line (in its error message) is
  // markup, control characters, invalid UTF-8 and 100 KB long.
  const std::string printer =
      R"sh(printf '%s\n' '{"metric": "app.<script>x</script>", "value": 5, "unit": "</style><script>x</script>]]>\"&\u0001\u007f"}' )sh"
      R"sh('{"metric": "app.</style>", "value": 1, "unit": "]]>"}')sh";
  // A 100 KB metric name: refused (a scenario error), not a crash.
  const std::string long_name =
      R"sh(printf '{"metric": "app.%s", "value": 1}\n' "$(head -c 100000 /dev/zero | tr '\0' x)")sh";
  const std::string stderr_bomb =
      R"sh(head -c 100000 /dev/zero | tr '\0' x >&2; )sh"
      R"sh(printf '\n<script>alert(2)</script> ]]> </style> | * _ [x](javascript:y) \001\002\033[31m \177 \377\376\300\257 ' >&2; exit 1)sh";
  const json suite = {{"name", "hostile"},
                      {"scenarios",
                       {{{"name", "printer"},
                         {"workload", {{"kind", "command"}, {"argv", {printer}}, {"shell", true}}},
                         {"warmup", 0},
                         {"repetitions", 2},
                         {"probes", {"syscalls"}},
                         {"checks", {{{"metric", "workload.wall_time"}, {"type", "budget"}, {"max", 0}}}}},
                        {{"name", "long-name"},
                         {"workload", {{"kind", "command"}, {"argv", {long_name}}, {"shell", true}}},
                         {"warmup", 0},
                         {"repetitions", 2},
                         {"probes", json::array()},
                         {"checks", {{{"metric", "workload.wall_time"}}}}},
                        {{"name", "crasher"},
                         {"workload", {{"kind", "command"}, {"argv", {stderr_bomb}}, {"shell", true}}},
                         {"warmup", 0},
                         {"repetitions", 2},
                         {"probes", json::array()},
                         {"checks", {{{"metric", "workload.wall_time"}}}}}}}};
  WriteFile(dir_ / "suite.json", suite.dump(2));
  CliRun run = RunCli({"run", dir_ / "suite.json", "--baseline-dir", dir_ / "b", "--out", dir_ / "o"});
  ASSERT_EQ(run.exit_code, 3) << run.output;
  EXPECT_EQ(run.output.find("internal error"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\"metric\" must be a name like \"app.request_time\", at most 256 characters"),
            std::string::npos)
      << run.output;
  const json measured = json::parse(ReadFile(dir_ / "o/results.json"));
  ASSERT_FALSE(measured["scenarios"][0]["repetitions"].empty()) << measured["scenarios"][0].dump().substr(0, 2000);
  EXPECT_TRUE(measured["scenarios"][0]["repetitions"][0]["metrics"].contains("app.<script>x</script>"))
      << "the hostile metric must reach the reporters";
  ExpectReportsSafe(dir_ / "o");

  // Names a suite may not hold reach the reporters through a results file
  // (a shard's, hand-edited): suite, scenario, check names and messages.
  json results = json::parse(ReadFile(dir_ / "o/results.json"));
  results["suite"] = kHostile + " suite";
  for (auto& s : results["scenarios"]) {
    s["name"] = kHostile + " " + s["name"].get<std::string>() + std::string(5000, 'y');
    for (auto& c : s["checks"]) {
      c["name"] = kHostile;
      c["message"] = kHostile + "\n" + kHostile;
    }
  }
  WriteFile(dir_ / "hostile-results.json", results.dump(2));
  CliRun report = RunCli({"report", dir_ / "hostile-results.json", "--out", dir_ / "r"});
  EXPECT_EQ(report.exit_code, 3) << report.output;
  EXPECT_EQ(report.output.find("internal error"), std::string::npos) << report.output;
  ExpectReportsSafe(dir_ / "r");
}

// Every path under `root` that a group or other user could write.
std::vector<std::string> GroupOrWorldWritable(const fs::path& root) {
  std::vector<std::string> found;
  auto check = [&](const fs::path& p) {
    struct stat st {};
    if (lstat(p.c_str(), &st) == 0 && !S_ISLNK(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH)))
      found.push_back(p.string());
  };
  check(root);
  for (const auto& e : fs::recursive_directory_iterator(root)) check(e.path());
  return found;
}

TEST_F(SecurityTest, UnderUmaskZeroNothingPerfgateCreatesIsGroupOrWorldWritable) {
  const json suite = {{"name", "u"},
                      {"scenarios",
                       {{{"name", "s"},
                         {"workload",
                          {{"kind", "command"},
                           {"argv", {R"(echo "{\"metric\": \"who.umask\", \"value\": $(( $(umask) ))}")"}},
                           {"shell", true}}},
                         {"warmup", 0},
                         {"repetitions", 2},
                         {"probes", {"syscalls"}},
                         {"checks", {{{"metric", "workload.wall_time"}, {"type", "budget"}, {"max", 1000}}}}}}}};
  WriteFile(dir_ / "suite.json", suite.dump());
  const std::string perfgate = ShellQuote(PERFGATE_BIN);
  const std::string out = dir_ / "made";  // does not exist yet: perfgate creates every level
  const std::string script = "umask 000\n" + perfgate + " run " + (dir_ / "suite.json") + " --out " + out +
                             "/out --baseline-dir " + out + "/baselines --update-baseline --trace --quiet && " +
                             perfgate + " baseline record " + (dir_ / "suite.json") + " --out " + out +
                             "/rec --baseline-dir " + out + "/deep/er/baselines --quiet && " + perfgate + " report " +
                             out + "/out/results.json --out " + out + "/report && " + perfgate + " merge " + out +
                             "/out/results.json -o " + out + "/merged/merged.json";
  const int status = std::system(("(" + script + ") > " + (dir_ / "log") + " 2>&1").c_str());
  ASSERT_EQ(WEXITSTATUS(status), 0) << ReadFile(dir_ / "log");
  EXPECT_TRUE(fs::exists(out + "/out/trace.perfetto-trace"));
  EXPECT_TRUE(fs::exists(out + "/baselines/u/s.json"));
  EXPECT_TRUE(fs::exists(out + "/deep/er/baselines/u/s.json"));
  EXPECT_TRUE(fs::exists(out + "/merged/merged.json"));
  EXPECT_EQ(GroupOrWorldWritable(out), std::vector<std::string>{});
  // The workload itself gets the caller's umask back.
  const json results = json::parse(ReadFile(out + "/out/results.json"));
  EXPECT_EQ(results["scenarios"][0]["repetitions"][0]["metrics"]["who.umask"]["value"].get<double>(), 0);
}

TEST_F(SecurityTest, NamesThatWouldPutABaselineOutsideTheBaselineDirAreRefused) {
  const std::string baselines = dir_ / "baselines";
  const std::vector<std::string> names = {
      "../escape", "../../escape",       "/tmp/escape", "a/b", "..", ".", std::string("a\0b", 3),
      "a\\b",      std::string(200, 'n')};
  for (const std::string& name : names) {
    for (const bool as_suite : {false, true}) {
      const json suite = {{"name", as_suite ? name : "t"},
                          {"scenarios",
                           {{{"name", as_suite ? "s" : name},
                             {"workload", {{"kind", "command"}, {"argv", {"/bin/true"}}}},
                             {"repetitions", 2},
                             {"checks", json::array()}}}}};
      WriteFile(dir_ / "suite.json", suite.dump());
      CliRun run =
          RunCli({"baseline", "record", dir_ / "suite.json", "--baseline-dir", baselines, "--out", dir_ / "o"});
      const std::string shown = json(name).dump();
      EXPECT_EQ(run.exit_code, 2) << shown << run.output;
      const std::string where = as_suite ? ": $.name: suite name " : ": $.scenarios[0].name: scenario name ";
      EXPECT_NE(run.output.find((dir_ / "suite.json") + where + shown + " is not allowed"), std::string::npos)
          << run.output;
    }
  }
  // A results file is not checked like a suite: merge refuses to look a
  // baseline up for a scenario whose name leaves the directory.
  WriteFile(dir_ / "ok.json", json{{"name", "t"},
                                   {"scenarios",
                                    {{{"name", "s"},
                                      {"workload", {{"kind", "command"}, {"argv", {"/bin/true"}}}},
                                      {"repetitions", 2},
                                      {"checks", json::array()}}}}}
                                  .dump());
  ASSERT_EQ(RunCli({"run", dir_ / "ok.json", "--out", dir_ / "ok", "--baseline-dir", baselines}).exit_code, 0);
  json results = json::parse(ReadFile(dir_ / "ok/results.json"));
  results["scenarios"][0]["name"] = "../../../escape";
  WriteFile(dir_ / "evil/results.json", results.dump());
  CliRun merge =
      RunCli({"merge", dir_ / "evil/results.json", "-o", dir_ / "merged/m.json", "--baseline-dir", baselines});
  EXPECT_EQ(merge.exit_code, 2) << merge.output;
  EXPECT_NE(merge.output.find("scenario name \"../../../escape\" cannot name a baseline file"), std::string::npos)
      << merge.output;
  EXPECT_FALSE(fs::exists(dir_ / "escape.json"));
  EXPECT_FALSE(fs::exists("/tmp/escape.json"));
  EXPECT_FALSE(fs::exists(baselines)) << "nothing may be created for refused names";
}

// A checkout nobody can traverse (the scratch dir is 0700, root's): the
// workload still runs as nobody, binaries, scripts and fio job files alike.
TEST_F(SecurityTest, WorkloadsRunAsNobodyFromACheckoutNobodyCanTraverse) {
  ASSERT_EQ(fs::status(dir_.path()).permissions() & fs::perms::others_exec, fs::perms::none);
  const fs::path clone = dir_ / "clone";
  fs::create_directories(clone / "fio");
  fs::copy_file(PERFGATE_BIN, clone / "perfgate");
  fs::copy_file(PERFGATE_SMOKE_BIN, clone / "pg-smoke");
  fs::copy_file(std::string(PERFGATE_SOURCE_DIR) + "/workloads/examples/smoke.json", clone / "smoke.json");
  fs::copy_file(std::string(PERFGATE_SOURCE_DIR) + "/workloads/fio/randread.fio", clone / "fio/randread.fio");
  WriteFile(clone / "who.sh", "#!/bin/sh\necho \"{\\\"metric\\\": \\\"who.uid\\\", \\\"value\\\": $(id -u)}\"\n");
  fs::permissions(clone / "who.sh", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                        fs::perms::others_read | fs::perms::others_exec);
  const json extra = {
      {"name", "clone"},
      {"scenarios",
       {{{"name", "script"},
         {"workload", {{"kind", "command"}, {"argv", {"./who.sh"}}, {"cwd", clone.string()}}},
         {"run_as", "nobody"},
         {"repetitions", 2},
         {"probes", {"syscalls"}},
         {"checks", json::array()}},
        {{"name", "randread"},
         {"workload",
          {{"kind", "fio"}, {"job", "${suite_dir}/randread.fio"}, {"env", {{"FIO_SIZE", "4m"}, {"FIO_RUNTIME", "1"}}}}},
         {"run_as", "nobody"},
         {"repetitions", 2},
         {"timeout_s", 60},
         {"probes", {"syscalls"}},
         {"checks", json::array()}}}}};
  WriteFile(clone / "fio/clone.json", extra.dump(2));

  const std::string perfgate = (clone / "perfgate").string();
  // The default suite, as shipped (run_as nobody), from the clone.
  const int smoke = std::system(("cd / && SMOKE_ITERATIONS=50 " + perfgate + " run " + (clone / "smoke.json").string() +
                                 " --reps 2 --quiet --out " + (dir_ / "smoke") + " --baseline-dir " + (dir_ / "b") +
                                 " > " + (dir_ / "smoke.log") + " 2>&1")
                                    .c_str());
  EXPECT_EQ(WEXITSTATUS(smoke), 0) << ReadFile(dir_ / "smoke.log");
  const json smoke_results = json::parse(ReadFile(dir_ / "smoke/results.json"));
  const json& smoke_metrics = smoke_results["scenarios"][0]["repetitions"][0]["metrics"];
  EXPECT_TRUE(smoke_metrics.contains("smoke.loop_time")) << smoke_metrics.dump();
  EXPECT_GT(smoke_metrics["syscalls.count"]["count"].get<double>(), 50) << "the probes must still see the workload";

  const int other =
      std::system(("cd / && " + perfgate + " run " + (clone / "fio/clone.json").string() + " --quiet --out " +
                   (dir_ / "clone") + " --baseline-dir " + (dir_ / "b") + " > " + (dir_ / "clone.log") + " 2>&1")
                      .c_str());
  EXPECT_EQ(WEXITSTATUS(other), 0) << ReadFile(dir_ / "clone.log");
  const json results = json::parse(ReadFile(dir_ / "clone/results.json"));
  EXPECT_EQ(results["scenarios"][0]["repetitions"][0]["metrics"]["who.uid"]["value"].get<double>(), 65534);
  EXPECT_GT(results["scenarios"][1]["repetitions"][0]["metrics"]["fio.randread.read.iops"]["value"].get<double>(), 0);
}

}  // namespace
}  // namespace perfgate::testing
