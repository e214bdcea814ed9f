// Evidence end to end: a baseline recorded with `evidence: always`, then
// candidates that spend extra CPU in one known function or block in one
// known place fail their check, and the evidence repetition's stacks name
// that function; a green run gets no evidence and attaches nothing extra.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "explain/frame_growth.h"
#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/paths.h"
#include "harness/probe.h"
#include "metrics/results_json.h"
#include "probes/profile_stacks.h"
#include "report/why_text.h"
#include "run/evidence_run.h"
#include "symbolize/dwarf_unwind.h"
#include "symbolize/symbolize.h"

namespace perfgate {
namespace {

using nlohmann::json;
using testing::ReadFile;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFile;

// Budgets, not regression checks: on a saturated host perfgate calls a
// wall-time regression inconclusive, while CPU time and the longest sleep
// do not depend on how busy the machine is. The normal variant spends
// 100 ms of CPU and naps 5 ms; "slow" spends 300 ms, "block" sleeps 300 ms.
std::string SuiteText(const std::string& evidence) {
  return R"({"name": "evidence", )" + evidence + R"( "scenarios": [{
      "name": "work", "workload": {"argv": [")" +
         std::string(PERFGATE_EVIDENCE_WORKLOAD) + R"(", "${VARIANT:-normal}", "100"]},
      "warmup": 0, "repetitions": 5, "timeout_s": 30, "probes": ["offcpu"],
      "checks": [{"metric": "workload.cpu_time", "max": 0.2},
                 {"metric": "sched.offcpu.sleep", "statistic": "max", "max": 100000000}]}]})";
}

// The evidence of one side, read back through perfgate's own results reader.
const FoldedProfile* Profile(const ScenarioResult& scenario, const std::string& side, const std::string& kind) {
  for (const Evidence& e : scenario.evidence) {
    if (e.side == side) return FindProfile(e, kind);
  }
  return nullptr;
}

const json* Profile(const json& evidence, const std::string& side, const std::string& kind) {
  for (const auto& e : evidence) {
    if (e["side"] != side) continue;
    for (const auto& p : e["profiles"]) {
      if (p["kind"] == kind) return &p;
    }
  }
  return nullptr;
}

// The function the report's growth table puts first (explain/frame_growth.h).
std::string TopGrowingFrame(const ScenarioResult& scenario) {
  const FoldedProfile* candidate = Profile(scenario, "candidate", "on-cpu");
  const FoldedProfile* baseline = Profile(scenario, "baseline", "on-cpu");
  if (candidate == nullptr || baseline == nullptr) return "(no on-cpu profile on both sides)";
  std::vector<FrameGrowth> rows = TopFrameGrowth(*baseline, *candidate, 1);
  return rows.empty() ? "(empty)" : rows[0].frame;
}

// Each frame's growth in percentage points, as the differential flame graph
// of `kind` in the report states it in its frames' titles ("name\n...\n
// baseline A % -> candidate B % (+X pp)"; a name's largest).
std::map<std::string, double> GrowthInDifferentialGraph(const std::string& html, const std::string& kind) {
  std::map<std::string, double> growth;
  const size_t start = html.find("aria-label=\"differential " + kind + " flame graph");
  if (start == std::string::npos) return growth;
  const size_t end = html.find("</svg>", start);
  for (size_t at = html.find("<g><title>", start); at < end; at = html.find("<g><title>", at + 1)) {
    const size_t text = at + 10;
    const std::string title = html.substr(text, html.find("</title>", text) - text);
    const size_t open = title.rfind(" ("), pp = title.rfind(" pp)");
    if (open == std::string::npos || pp == std::string::npos || pp < open) continue;
    const std::string name = title.substr(0, title.find('\n'));
    const double delta = std::stod(title.substr(open + 2, pp - open - 2));
    auto [it, added] = growth.emplace(name, delta);
    if (!added) it->second = std::max(it->second, delta);
  }
  return growth;
}

ScenarioResult ReadScenario(const std::string& results_file) {
  return ResultsFromJson(json::parse(ReadFile(results_file)), results_file).scenarios.at(0);
}

void Spin(std::chrono::milliseconds how_long) {
  auto end = std::chrono::steady_clock::now() + how_long;
  volatile unsigned long x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
}

TEST(ProfileProbe, SamplesOnlyTheWorkloadWithItsUserStacks) {
  PERFGATE_REQUIRE_ROOT();
  WorkloadTracker tracker;
  tracker.Attach({});
  auto probe = CreateProbe("profile");
  ASSERT_NE(probe, nullptr);
  ProbeOptions options;
  options.params = {{"frequency_hz", 199}};
  probe->Attach(options, &tracker);
  HeldChild child([] { Spin(std::chrono::milliseconds(300)); });
  tracker.Clear();
  tracker.Track(child.pid());
  probe->Reset();
  Spin(std::chrono::milliseconds(100));  // the test's own CPU time is not the workload's
  ASSERT_TRUE(child.RunToCompletion());
  MetricSet metrics;
  probe->Collect(0.3, metrics);
  // 300 ms at 199 Hz is about 60 samples; a loaded machine runs it less.
  EXPECT_GE(metrics.at("profile.samples").value, 10);
  auto* source = dynamic_cast<ProfileStackSource*>(probe.get());
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->frequency_hz(), 199);
  uint64_t with_user_stack = 0;
  for (const SampledStack& s : source->SampledStacks()) {
    EXPECT_EQ(s.tgid, static_cast<uint32_t>(child.pid()));
    with_user_stack += s.user_ips.empty() ? 0 : s.samples;
  }
  EXPECT_GE(with_user_stack, 5u);
  ProbeReport report = probe->Report();
  ASSERT_EQ(report.hooks.size(), 1u);
  EXPECT_EQ(report.hooks[0].attach_type, "perf_event");
  const std::string event = source->sampled_event();
  EXPECT_TRUE(event == "cycles" || event == "cpu-clock") << event;
  EXPECT_EQ(report.hooks[0].target.rfind(event + " at 199 Hz on ", 0), 0u) << report.hooks[0].target;
  // Where cycles are refused (virtual machines), the refusal is said.
  if (event == "cpu-clock") {
    ASSERT_EQ(report.hooks[0].rejected.size(), 1u);
    EXPECT_EQ(report.hooks[0].rejected[0].rfind("cycles: ", 0), 0u);
  }
}

// CPU work counted in iterations, not time: the samples it gets do not
// depend on the machine's load, and no sample lands in the vDSO's clock,
// whose frames the unwinder has no file for.
__attribute__((noinline)) void SpinIterations(uint64_t iterations) {
  volatile uint64_t x = 0;
  for (uint64_t i = 0; i < iterations; ++i) x = x + 1;
}

TEST(ProfileProbe, CopiesUserStacksThatUnwindToMain) {
  PERFGATE_REQUIRE_ROOT();
  WorkloadTracker tracker;
  tracker.Attach({});
  auto probe = CreateProbe("profile");
  ProbeOptions options;
  options.params = {{"frequency_hz", 499}, {"user_stack_bytes", 8192}};
  probe->Attach(options, &tracker);
  // About 200 ms of CPU (1 to 2 ns an iteration).
  HeldChild child([] { SpinIterations(150'000'000); });
  tracker.Clear();
  tracker.Track(child.pid());
  probe->Reset();
  ASSERT_TRUE(child.RunToCompletion());
  MetricSet metrics;
  probe->Collect(0.3, metrics);
  auto* source = dynamic_cast<ProfileStackSource*>(probe.get());
  ASSERT_NE(source, nullptr);
  // The child is a fork of this process: its code is mapped where ours is.
  std::optional<ProcessMaps> maps = ReadProcessMaps(getpid());
  ASSERT_TRUE(maps.has_value());
  UserStackUnwinder unwinder(*maps);
  StackSymbolizer symbolizer(KernelSymbols(), {{1, *maps}});
  uint64_t samples = 0, copies = 0, to_main = 0;
  for (const SampledStack& s : source->SampledStacks()) {
    samples += s.samples;
    copies += s.copies.size();
    EXPECT_LE(s.copies.size(), s.samples);
    for (const UserStackCopy& copy : s.copies) {
      EXPECT_GT(copy.stack.size(), 0u);
      EXPECT_LE(copy.stack.size(), 8192u);
      EXPECT_EQ(copy.stack.size() % 8, 0u);
      const std::vector<uint64_t> ips = unwinder.Unwind(copy);
      for (size_t i = 0; i < ips.size(); ++i) {
        if (symbolizer.UserFrame(1, ips[i] - (i > 0 ? 1 : 0)) == "main") {
          ++to_main;
          break;
        }
      }
    }
  }
  // 200 ms of CPU at 499 Hz is about 100 samples, however long it waited for a CPU.
  EXPECT_GE(samples, 20u);
  // Every sample of a thread in user code is copied, bar a page the stack does not reach.
  EXPECT_GE(copies, samples * 9 / 10);
  // Unwound through the test's frames up to its main (gtest's are deep: 8 KiB hold them).
  EXPECT_GE(to_main, copies * 9 / 10) << "of " << copies << " copies";
  const std::string target = probe->Report().hooks.at(0).target;
  EXPECT_NE(target.find("8192 bytes of user stack copied per sample"), std::string::npos) << target;
}

TEST(ProfileProbe, RejectsAUserStackSizeOutOfRangeNamingTheProbe) {
  PERFGATE_REQUIRE_ROOT();
  for (const nlohmann::json& bytes : {nlohmann::json(16392), nlohmann::json(100), nlohmann::json(-8)}) {
    auto probe = CreateProbe("profile");
    ProbeOptions options;
    options.scope = ProbeScope::kSystem;
    options.params = {{"user_stack_bytes", bytes}};
    try {
      probe->Attach(options, nullptr);
      ADD_FAILURE() << "no error for " << bytes;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_NE(std::string(e.what()).find("probe profile: parameter \"user_stack_bytes\" must be a multiple of 8"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ProfileProbe, RejectsAFrequencyOutOfRangeNamingTheProbe) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("profile");
  ProbeOptions options;
  options.scope = ProbeScope::kSystem;
  options.params = {{"frequency_hz", 0}};
  try {
    probe->Attach(options, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("probe profile: parameter \"frequency_hz\""), std::string::npos);
  }
}

class EvidenceRun : public ::testing::Test {
 protected:
  // One baseline of the normal variant, recorded with `evidence: always`.
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    dir_ = new ScratchDir();
    WriteFile(*dir_ / "always.json", SuiteText(R"("evidence": "always",)"));
    WriteFile(*dir_ / "suite.json", SuiteText(""));
    record_ = RunCli({"baseline", "record", *dir_ / "always.json", "--baseline-dir", *dir_ / "b", "--out",
                      *dir_ / "recorded", "--quiet"},
                     {"VARIANT=normal"});
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    PERFGATE_REQUIRE_ROOT();
    ASSERT_EQ(record_.exit_code, 0) << record_.output;
  }

  // Runs `variant` against the recorded baseline; results.json.
  static json RunVariant(const std::string& variant, int expected_exit, std::string* output = nullptr) {
    const std::string out = *dir_ / ("out-" + variant);
    testing::CliRun run =
        RunCli({"run", *dir_ / "suite.json", "--baseline-dir", *dir_ / "b", "--out", out}, {"VARIANT=" + variant});
    EXPECT_EQ(run.exit_code, expected_exit) << run.output;
    if (output != nullptr) *output = run.output;
    return json::parse(ReadFile(out + "/results.json"));
  }

  static ScratchDir* dir_;
  static testing::CliRun record_;
};

ScratchDir* EvidenceRun::dir_ = nullptr;
testing::CliRun EvidenceRun::record_;

TEST_F(EvidenceRun, BaselineRecordedWithEvidenceAlwaysKeepsItsStacks) {
  const json baseline = json::parse(ReadFile(*dir_ / "b/evidence/work.json"));
  const json& evidence = baseline["scenario"]["evidence"];
  ASSERT_EQ(evidence.size(), 1u) << baseline["scenario"].dump();
  EXPECT_EQ(evidence[0]["reason"], "always");
  const json* on_cpu = Profile(evidence, "candidate", "on-cpu");
  ASSERT_NE(on_cpu, nullptr);
  EXPECT_GT((*on_cpu)["samples"].get<uint64_t>(), 0u);
  // The spin loop is sampled (its heaviest leaf is usually the loop itself,
  // sometimes the vDSO clock it reads).
  bool spin_sampled = false;
  for (const auto& [stack, weight] : (*on_cpu)["stacks"].items())
    spin_sampled |= stack.find("perfgate_test_spin") != std::string::npos;
  EXPECT_TRUE(spin_sampled) << on_cpu->dump(1);
}

TEST_F(EvidenceRun, SlowerFunctionFailsTheCheckAndLeadsTheOnCpuGrowth) {
  std::string output;
  const json results = RunVariant("slow", 1, &output);
  const json& scenario = results["scenarios"][0];
  ASSERT_TRUE(scenario.contains("evidence")) << output;
  const json& evidence = scenario["evidence"];
  const json* candidate = Profile(evidence, "candidate", "on-cpu");
  const json* baseline = Profile(evidence, "baseline", "on-cpu");
  ASSERT_NE(candidate, nullptr) << evidence.dump();
  ASSERT_NE(baseline, nullptr) << "the stored baseline's evidence is the baseline side";
  EXPECT_EQ(TopGrowingFrame(ReadScenario(*dir_ / "out-slow/results.json")), "perfgate_test_hot_loop")
      << candidate->dump(1);
  // The report's first growth table (on-CPU) names it in its first row.
  const std::string html = ReadFile(*dir_ / "out-slow/report/index.html");
  const size_t table = html.find("Function (top by growth)");
  ASSERT_NE(table, std::string::npos) << "no growth table against the baseline";
  const size_t first_row = html.find("<tbody>", table);
  const size_t code = html.find("<code>", first_row);
  ASSERT_NE(code, std::string::npos);
  EXPECT_EQ(html.substr(code + 6, html.find("</code>", code) - code - 6), "perfgate_test_hot_loop");
  // In the differential graph the function grew, and no frame off its
  // callers' path grew as much. Its callers (main, the C library's start)
  // are left out: a caller's frame holds the function and all else below
  // it, whose share moves from run to run (on a loaded host, more of it), so
  // it may come out a few points above the function or below it.
  const std::map<std::string, double> growth = GrowthInDifferentialGraph(html, "on-cpu");
  ASSERT_EQ(growth.count("perfgate_test_hot_loop"), 1u) << ::testing::PrintToString(growth);
  const double hot_growth = growth.at("perfgate_test_hot_loop");
  EXPECT_GT(hot_growth, 10) << ::testing::PrintToString(growth);
  std::set<std::string> callers;
  for (const auto& [stack, weight] : (*candidate)["stacks"].items()) {
    const size_t at = stack.find(";perfgate_test_hot_loop");
    if (at == std::string::npos) continue;
    std::stringstream frames(stack.substr(0, at));
    for (std::string frame; std::getline(frames, frame, ';');) callers.insert(frame);
  }
  EXPECT_FALSE(callers.empty()) << candidate->dump(1);
  for (const auto& [name, delta] : growth) {
    // The graph names a frame that is not user code with its kind: "libc.so.6+0x27249 (unknown)".
    if (name == "perfgate_test_hot_loop" || callers.count(name.substr(0, name.find(" ("))) != 0) continue;
    EXPECT_LE(delta, hot_growth + 0.1) << name << " " << ::testing::PrintToString(growth);
  }
  // The function's own (self) share grew beyond sampling noise, and no
  // function off its path grew more by its own share.
  const ScenarioResult read = ReadScenario(*dir_ / "out-slow/results.json");
  const std::vector<FrameGrowth> rows =
      TopFrameGrowth(*Profile(read, "baseline", "on-cpu"), *Profile(read, "candidate", "on-cpu"), SIZE_MAX);
  const auto hot_row =
      std::find_if(rows.begin(), rows.end(), [](const FrameGrowth& r) { return r.frame == "perfgate_test_hot_loop"; });
  ASSERT_NE(hot_row, rows.end());
  EXPECT_TRUE(hot_row->self_grew) << FormatGrowth(hot_row->SelfDeltaPp(), hot_row->candidate_samples,
                                                  hot_row->self_margin_pp);
  EXPECT_GT(hot_row->SelfDeltaPp(), 10);
  for (const FrameGrowth& r : rows) {
    if (r.frame == hot_row->frame || callers.count(r.frame) != 0) continue;
    EXPECT_LT(r.SelfDeltaPp(), hot_row->SelfDeltaPp()) << r.frame;
  }
  const std::vector<FrameGrowth> grown =
      GrownFrames(*Profile(read, "baseline", "on-cpu"), *Profile(read, "candidate", "on-cpu"), 1);
  ASSERT_FALSE(grown.empty());
  EXPECT_EQ(grown[0].frame, "perfgate_test_hot_loop");
  const std::string summary = ReadFile(*dir_ / "out-slow/summary.md");
  EXPECT_NE(summary.find("grew beyond sampling noise: perfgate\\_test\\_hot\\_loop"), std::string::npos) << summary;
  // Built with line tables: the row names the line the samples fell on,
  // inside the function's loop (evidence_workload.cpp lines 29-40).
  const size_t row_end = html.find("</tr>", code);
  EXPECT_NE(html.substr(code, row_end - code).find("evidence_workload.cpp:"), std::string::npos)
      << html.substr(code, row_end - code);
  const json& sources = (*candidate)["sources"];
  ASSERT_TRUE(sources.contains("perfgate_test_hot_loop")) << candidate->dump(1);
  const std::string line = sources["perfgate_test_hot_loop"].get<std::string>();
  EXPECT_NE(line.find("/evidence_workload.cpp:"), std::string::npos) << line;
  const int number = std::stoi(line.substr(line.rfind(':') + 1));
  EXPECT_GE(number, 29) << line;
  EXPECT_LE(number, 40) << line;
  // Built with frame pointers: its stacks reach main and the C library's start.
  const json& hot = *candidate;
  EXPECT_LT(hot["truncated_user_stacks"].get<double>(), 0.5 * hot["samples"].get<double>()) << hot.dump(1);
  bool through_main = false;
  for (const auto& [stack, weight] : hot["stacks"].items())
    through_main |= stack.find("main;perfgate_test_hot_loop") != std::string::npos;
  EXPECT_TRUE(through_main) << hot.dump(1);
  for (const auto& e : evidence) {
    if (e["side"] != "candidate") continue;
    EXPECT_NE(e["reason"].get<std::string>().find("workload.cpu_time"), std::string::npos) << e["reason"];
    EXPECT_EQ(e["frequency_hz"], kEvidenceFrequencyHz);
    EXPECT_GT(e["slowdown"].get<double>(), 0.5);
  }
}

TEST_F(EvidenceRun, BlockingPlaceLeadsTheOffCpuGrowth) {
  const json results = RunVariant("block", 1);
  const json& evidence = results["scenarios"][0]["evidence"];
  const json* off_cpu = Profile(evidence, "candidate", "off-cpu");
  ASSERT_NE(off_cpu, nullptr) << results["scenarios"][0].dump();
  // Off-CPU time also holds preemption of the CPU work on a busy machine,
  // which the baseline has as much of: the stack that grew most is the sleep.
  const ScenarioResult scenario = ReadScenario(*dir_ / "out-block/results.json");
  const FoldedProfile* baseline = Profile(scenario, "baseline", "off-cpu");
  ASSERT_NE(baseline, nullptr) << "the stored baseline's evidence is the baseline side";
  std::vector<StackGrowth> top = TopStackGrowth(baseline, *Profile(scenario, "candidate", "off-cpu"), 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_NE(std::find(top[0].frames.begin(), top[0].frames.end(), "perfgate_test_block_here"), top[0].frames.end())
      << off_cpu->dump(1);
  EXPECT_GT(top[0].DeltaPp(), 20) << off_cpu->dump(1);
  bool kernel_side = false;
  for (const auto& [stack, weight] : (*off_cpu)["stacks"].items())
    kernel_side |=
        stack.find("perfgate_test_block_here") != std::string::npos && stack.find("_[k]") != std::string::npos;
  EXPECT_TRUE(kernel_side) << "the folded stacks keep the kernel side of the wait";
  // The report's off-CPU table names that stack in its first row.
  const std::string html = ReadFile(*dir_ / "out-block/report/index.html");
  const size_t table = html.find("Blocking stack (user frames, innermost last; top by growth)");
  ASSERT_NE(table, std::string::npos);
  const size_t first_row = html.find("<tbody>", table);
  const std::string row = html.substr(first_row, html.find("</tr>", first_row) - first_row);
  EXPECT_NE(row.find("<code>perfgate_test_block_here</code>"), std::string::npos) << row;
  // In the differential graph every frame of that wait grew alike (the
  // blocking function, the C library's sleep, the kernel's path to the
  // scheduler), and no frame off its path grew as much: not the common nap.
  // Its callers (main, the C library's start) are left out: a caller's
  // frame holds the wait and all else below it, such as preemption of the
  // CPU work, whose share moves from run to run, so it may come out a few
  // points above the wait or below it.
  const std::map<std::string, double> growth = GrowthInDifferentialGraph(html, "off-cpu");
  ASSERT_EQ(growth.count("perfgate_test_block_here"), 1u) << ::testing::PrintToString(growth);
  const double wait = growth.at("perfgate_test_block_here");
  EXPECT_GT(wait, 20) << ::testing::PrintToString(growth);
  const auto block = std::find(top[0].frames.begin(), top[0].frames.end(), "perfgate_test_block_here");
  const std::set<std::string> callers(top[0].frames.begin(), block);
  for (const auto& [name, delta] : growth) {
    // The graph names a frame that is not user code with its kind: "libc.so.6+0x27249 (unknown)".
    if (callers.count(name.substr(0, name.find(" ("))) != 0) continue;
    EXPECT_LE(delta, wait + 0.1) << name << " " << ::testing::PrintToString(growth);
  }
  if (growth.count("perfgate_test_nap") != 0) {
    EXPECT_LT(growth.at("perfgate_test_nap"), wait - 20) << ::testing::PrintToString(growth);
  }
}

TEST_F(EvidenceRun, GreenRunOnFailureHasNoEvidenceAndNoProfileProbe) {
  std::string output;
  const json results = RunVariant("normal", 0, &output);
  const json& scenario = results["scenarios"][0];
  EXPECT_FALSE(scenario.contains("evidence")) << scenario.dump();
  for (const auto& probe : scenario["probes"]) EXPECT_NE(probe["name"], "profile");
  EXPECT_EQ(output.find("evidence repetition"), std::string::npos) << output;
}

TEST_F(EvidenceRun, AbRunsAnEvidenceRepetitionOfEachVariant) {
  const std::string out = *dir_ / "out-ab";
  testing::CliRun run = RunCli({"ab", *dir_ / "suite.json", "--baseline-set", "VARIANT=normal", "--candidate-set",
                                "VARIANT=slow", "--out", out, "--quiet"});
  ASSERT_EQ(run.exit_code, 1) << run.output;
  const json results = json::parse(ReadFile(out + "/results.json"));
  const json& evidence = results["scenarios"][0]["evidence"];
  const json* candidate = Profile(evidence, "candidate", "on-cpu");
  const json* baseline = Profile(evidence, "baseline", "on-cpu");
  ASSERT_NE(candidate, nullptr) << evidence.dump();
  ASSERT_NE(baseline, nullptr) << evidence.dump();
  EXPECT_EQ(TopGrowingFrame(ReadScenario(out + "/results.json")), "perfgate_test_hot_loop");
}

// ---- a C program built without frame pointers, run as short processes -----

// Two builds of tests/integration/fixtures/nofp_workload.c with the compiler's
// default optimisation (-O2 -g, as distributions build: no frame pointers),
// "b" with pg_hash_block doing more work (30 %, about a sixth more CPU time);
// a scenario runs one of them as 8 processes of about 25 ms each. Evidence
// is captured always, so an A/A pair has evidence to name nothing in. The
// A/B's evidence samples at up to 19,997 Hz (EvidenceFrequencyHz). The
// check's repetitions are adaptive (8 to 24 pairs).
//
// How often a smaller change is named (10 % more hash work, about 4 % of
// the CPU time, over 10 runs) is measured by bench/evidence_naming.sh,
// which sets PERFGATE_EVIDENCE_RUNS and PERFGATE_EVIDENCE_EXTRA_PERCENT: a
// rate over repeated runs is a benchmark's claim, and on a loaded host a 4 %
// change of a 1 % check is rightly left inconclusive.
int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

class EvidenceWithoutFramePointers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    dir_ = new ScratchDir();
    const std::string source = std::string(PERFGATE_SOURCE_DIR) + "/tests/integration/fixtures/nofp_workload.c";
    for (const auto& [name, flags] : std::map<std::string, std::string>{
             {"a", ""}, {"b", " -DPG_HASH_EXTRA_PERCENT=" + std::to_string(ExtraPercent())}}) {
      const std::string command =
          std::string(PERFGATE_C_COMPILER) + " -O2 -g" + flags + " -o " + std::string(*dir_ / name) + " " + source;
      build_ok_ = build_ok_ && std::system(command.c_str()) == 0;
    }
    WriteFile(*dir_ / "suite.json", R"({"name": "nofp", "evidence": "always", "scenarios": [{
        "name": "encode",
        "workload": {"argv": ["/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8; do \"$0\" >/dev/null; done", ")" +
                                        dir_->path().string() + R"(/${BUILD}"]},
        "warmup": 1, "repetitions": {"min": 8, "max": 24}, "timeout_s": 60,
        "checks": [{"metric": "workload.cpu_time", "type": "regression", "max_regression_pct": 1}]}]})");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    PERFGATE_REQUIRE_ROOT();
    ASSERT_TRUE(build_ok_) << "cannot build nofp_workload.c with " << PERFGATE_C_COMPILER;
  }

  // `perfgate ab` of build `baseline` against build `candidate` into out dir `out`.
  static testing::CliRun Ab(const std::string& baseline, const std::string& candidate, const std::string& out) {
    return RunCli({"ab", *dir_ / "suite.json", "--baseline-set", "BUILD=" + baseline, "--candidate-set",
                   "BUILD=" + candidate, "--out", *dir_ / out, "--quiet"});
  }

  static int ExtraPercent() { return EnvInt("PERFGATE_EVIDENCE_EXTRA_PERCENT", 30); }
  static int Runs() { return std::max(1, EnvInt("PERFGATE_EVIDENCE_RUNS", 1)); }

  static ScratchDir* dir_;
  static bool build_ok_;
};

ScratchDir* EvidenceWithoutFramePointers::dir_ = nullptr;
bool EvidenceWithoutFramePointers::build_ok_ = true;

// The first name in the HTML report's on-CPU growth table.
std::string FirstGrowthRow(const std::string& html) {
  const size_t table = html.find("Function (top by growth)");
  if (table == std::string::npos) return "(no growth table)";
  const size_t code = html.find("<code>", html.find("<tbody>", table));
  if (code == std::string::npos) return "(empty table)";
  return html.substr(code + 6, html.find("</code>", code) - code - 6);
}

// The share of the samples in `function` whose stack holds `path` ("caller;function").
double CallerShare(const FoldedProfile& profile, const std::string& function, const std::string& path) {
  uint64_t in_function = 0, on_path = 0;
  for (const auto& [stack, weight] : profile.stacks) {
    const auto frames = SplitStack(stack);
    if (std::find(frames.begin(), frames.end(), function) == frames.end()) continue;
    in_function += weight;
    if (stack.find(path) != std::string::npos) on_path += weight;
  }
  return in_function == 0 ? 0 : static_cast<double>(on_path) / static_cast<double>(in_function);
}

// The slower build fails the check with pg_hash_block named first by self
// growth in results, summary and report, under its real callers, with the
// user-code why: in every run, or in 9 of 10 of bench/evidence_naming.sh's.
TEST_F(EvidenceWithoutFramePointers, SlowerFunctionIsNamedFirstBySelfGrowth) {
  const int runs = Runs();
  int named = 0;
  std::string misses;
  for (int run = 0; run < runs; ++run) {
    const std::string out = "ab-" + std::to_string(run);
    const testing::CliRun ab = Ab("a", "b", out);
    ASSERT_TRUE(ab.exit_code == 0 || ab.exit_code == 1) << ab.output;
    const ScenarioResult scenario = ReadScenario(*dir_ / (out + "/results.json"));
    const FoldedProfile* candidate = Profile(scenario, "candidate", "on-cpu");
    const FoldedProfile* baseline = Profile(scenario, "baseline", "on-cpu");
    ASSERT_NE(candidate, nullptr);
    ASSERT_NE(baseline, nullptr);
    // Short processes are symbolized: hardly a captured stack ends in
    // [unknown]. (A sample whose stacks were not captured at all, a
    // collision in the stack map that the probe counts as a drop, folds to
    // "[unknown]" alone: that is not symbolization.)
    uint64_t unknown = 0;
    for (const auto& [stack, weight] : candidate->stacks) {
      if (stack != "[unknown]" && SplitStack(stack).back() == "[unknown]") unknown += weight;
    }
    EXPECT_LT(unknown, candidate->total / 100) << "leaf [unknown] in " << unknown << " of " << candidate->total;
    EXPECT_GE(candidate->samples, kEvidenceTargetSamples);
    const std::vector<FrameGrowth> grown = GrownFrames(*baseline, *candidate, 3);
    const std::string summary = ReadFile(*dir_ / (out + "/summary.md"));
    const std::string html = ReadFile(*dir_ / (out + "/report/index.html"));
    const bool first = !grown.empty() && grown[0].frame == "pg_hash_block" && grown[0].self_grew;
    const bool in_summary = summary.find("grew beyond sampling noise: pg\\_hash\\_block") != std::string::npos;
    const bool in_report = FirstGrowthRow(html) == "pg_hash_block";
    // Its callers are right: unwound without frame pointers, the hash's
    // samples sit under its real caller and main.
    const double with_callers = CallerShare(*candidate, "pg_hash_block", "main;pg_encode_block;pg_hash_block");
    const bool callers = with_callers >= 0.9;
    // No kernel-side metric explains a hash doing more work: the why says so and names it.
    const bool why =
        summary.find("the extra cost is on-CPU in user code: pg\\_hash\\_block self +") != std::string::npos;
    if (ab.exit_code == 1 && first && in_summary && in_report && callers && why) {
      ++named;
      continue;
    }
    // The samples each side took, and what the shares' spread between
    // repetitions made them worth, say whether the evidence reached its target.
    std::string took;
    for (const Evidence& e : scenario.evidence) {
      for (const std::string& note : e.notes) {
        if (e.side == "candidate" && note.rfind("evidence: ", 0) == 0) took = note;
      }
    }
    misses += "run " + std::to_string(run) + ": exit " + std::to_string(ab.exit_code) + ", samples " +
              std::to_string(baseline->samples) + " -> " + std::to_string(candidate->samples) + ", dispersion " +
              std::to_string(Dispersion(*baseline, *candidate)) + " (" + took +
              "), under its callers: " + std::to_string(with_callers) + ", why names it: " + (why ? "yes" : "no") +
              ", grown:";
    for (const FrameGrowth& r : grown)
      misses += " " + r.frame + " " + FormatGrowth(r.SelfDeltaPp(), r.candidate_samples, r.self_margin_pp);
    misses += ", report first: " + FirstGrowthRow(html) + "\n";
  }
  RecordProperty("named_first", named);
  RecordProperty("misses", misses);
  std::printf("pg_hash_block with %d %% more work named first in %d of %d A/B runs\n", ExtraPercent(), named, runs);
  EXPECT_GE(named, runs - runs / 10) << misses;
}

TEST_F(EvidenceWithoutFramePointers, AnAaPairNamesNoFrameAsGrown) {
  const testing::CliRun ab = Ab("a", "a", "aa");
  ASSERT_TRUE(ab.exit_code == 0 || ab.exit_code == 1) << ab.output;
  const ScenarioResult scenario = ReadScenario(*dir_ / "aa/results.json");
  const FoldedProfile* candidate = Profile(scenario, "candidate", "on-cpu");
  const FoldedProfile* baseline = Profile(scenario, "baseline", "on-cpu");
  ASSERT_NE(candidate, nullptr);
  ASSERT_NE(baseline, nullptr);
  EXPECT_GE(candidate->samples, kEvidenceTargetSamples);
  EXPECT_GE(baseline->samples, kEvidenceTargetSamples);
  std::string named;
  for (const FrameGrowth& r : GrownFrames(*baseline, *candidate, 5)) {
    named += r.frame + " self " + FormatGrowth(r.SelfDeltaPp(), r.candidate_samples, r.self_margin_pp) + " inclusive " +
             FormatGrowth(r.InclusiveDeltaPp(), r.candidate_samples, r.inclusive_margin_pp) + "; ";
  }
  EXPECT_EQ(named, "");
  const std::string html = ReadFile(*dir_ / "aa/report/index.html");
  EXPECT_NE(html.find("No function's share grew beyond sampling noise"), std::string::npos);
}

}  // namespace
}  // namespace perfgate
