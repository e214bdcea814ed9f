// The capture side of evidence: kallsyms and maps parsing, user-frame
// symbolization, folding, truncated-stack detection, the suite's `evidence`
// key and when a scenario gets an evidence repetition.
#include <gtest/gtest.h>

#include <sstream>

#include "config/suite.h"
#include "metrics/error.h"
#include "probes/elf_symbols.h"
#include "probes/process_maps.h"
#include "run/evidence_run.h"
#include "symbolize/dwarf_lines.h"
#include "symbolize/symbolize.h"

namespace perfgate {
namespace {

TEST(KernelSymbols, FindsTheTextSymbolContainingAnAddress) {
  std::istringstream in(
      "ffffffff81000000 T _stext\n"
      "ffffffff81001000 t do_syscall_64\n"
      "ffffffff81002000 D some_data\n"
      "ffffffff81003000 W weak_function\n"
      "ffffffffc0a01000 t ext4_readpage\t[ext4]\n");
  KernelSymbols symbols = KernelSymbols::Parse(in);
  EXPECT_EQ(symbols.size(), 4u);  // data is not code
  EXPECT_EQ(symbols.Name(0xffffffff81001000), "do_syscall_64");
  EXPECT_EQ(symbols.Name(0xffffffff81002abc), "do_syscall_64");  // data symbols do not end a function here
  EXPECT_EQ(symbols.Name(0xffffffff81003010), "weak_function");
  EXPECT_EQ(symbols.Name(0xffffffffc0a01234), "ext4_readpage");
  EXPECT_EQ(symbols.Name(0xffffffff80000000), "");
}

TEST(KernelSymbols, HiddenAddressesGiveAnEmptyTable) {
  std::istringstream in("0000000000000000 T _stext\n0000000000000000 t do_syscall_64\n");
  KernelSymbols symbols = KernelSymbols::Parse(in);
  EXPECT_EQ(symbols.size(), 0u);
  EXPECT_EQ(symbols.Name(0x1234), "");
}

TEST(ProcessMaps, KeepsExecutableMappingsSortedWithTheirFileOffsets) {
  std::istringstream in(
      "7f0000001000-7f0000002000 r-xp 00001000 08:01 42    /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "55550000-55551000 r--p 00000000 08:01 7    /usr/bin/app\n"
      "55551000-55553000 r-xp 00001000 08:01 7    /usr/bin/app\n"
      "7ffd0000-7ffd2000 r-xp 00000000 00:00 0    [vdso]\n"
      "7ffe0000-7ffe2000 rw-p 00000000 00:00 0    [stack]\n");
  ProcessMaps maps = ParseProcessMaps(in);
  ASSERT_EQ(maps.ranges.size(), 3u);
  EXPECT_EQ(maps.ranges[0].path, "/usr/bin/app");
  EXPECT_EQ(maps.ranges[0].offset, 0x1000u);
  const MappedRange* libc = maps.Find(0x7f0000001800);
  ASSERT_NE(libc, nullptr);
  EXPECT_EQ(libc->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(maps.Find(0x55550800), nullptr);  // not executable
  EXPECT_EQ(maps.Find(0x7f0000002000), nullptr);  // end is exclusive
}

// A process that mapped the test binary at 0x10000000 with offset 0.
StackSymbolizer SymbolizerOfTestBinary(uint32_t tgid) {
  std::map<uint32_t, ProcessMaps> maps;
  maps[tgid].ranges.push_back({0x10000000, 0x20000000, 0, PERFGATE_UFUNC_TARGET, ""});
  return StackSymbolizer(KernelSymbols(), std::move(maps));
}

// The test binary's function named `part`, else the first whose demangled
// name contains it; a symbol of size 0 when there is none.
ElfFunction FunctionOfTestBinary(const std::string& part) {
  const std::vector<ElfFunction> functions = ReadElfObject(PERFGATE_UFUNC_TARGET).functions;
  for (const auto& f : functions) {
    if (f.symbol == part) return f;
  }
  for (const auto& f : functions) {
    if (Demangle(f.symbol).find(part) != std::string::npos) return f;
  }
  return {};
}

TEST(StackSymbolizer, NamesUserFunctionsDemangledWithoutParameters) {
  const ElfFunction found = FunctionOfTestBinary("Work(int)");
  ASSERT_GT(found.size, 0u);
  const ElfFunction* work = &found;
  StackSymbolizer symbolizer = SymbolizerOfTestBinary(7);
  const uint64_t inside = 0x10000000 + work->file_offset + work->size / 2;
  EXPECT_EQ(symbolizer.UserFrame(7, inside), FunctionBaseName(Demangle(work->symbol)));
  EXPECT_EQ(symbolizer.UserFrame(7, 0x30000000), "[unknown]");  // outside every mapping
  EXPECT_EQ(symbolizer.UserFrame(8, inside), "[unknown]");      // no map recorded for the process
  EXPECT_EQ(symbolizer.processes_without_maps(), 1u);
}

// The test binary is built with debug info (line tables at least): the
// lines of pgtest::Work (ufunc_target.cpp lines 15-18) come from its DWARF.
TEST(StackSymbolizer, GivesTheSourceLineFromTheLineTable) {
  const ElfFunction found = FunctionOfTestBinary("Work(int)");
  ASSERT_GT(found.size, 0u);
  const ElfFunction* work = &found;
  StackSymbolizer symbolizer = SymbolizerOfTestBinary(7);
  for (uint64_t at : {work->file_offset, work->file_offset + work->size - 1}) {
    const std::string source = symbolizer.UserSource(7, 0x10000000 + at);
    const size_t colon = source.rfind(':');
    ASSERT_NE(colon, std::string::npos) << source;
    EXPECT_NE(source.find("/ufunc_target.cpp:"), std::string::npos) << source;
    const int line = std::stoi(source.substr(colon + 1));
    EXPECT_GE(line, 15) << source;
    EXPECT_LE(line, 18) << source;
  }
  EXPECT_EQ(symbolizer.UserSource(7, 0x30000000), "");  // no mapping
  EXPECT_EQ(symbolizer.UserSource(8, 0x10000000 + work->file_offset), "");  // no map for the process
  // The line table of a file that does not exist is none; the frame is still named.
  std::map<uint32_t, ProcessMaps> maps;
  maps[1].ranges.push_back({0x10000000, 0x10001000, 0x2000, "/no/such/libfoo.so.1", ""});
  StackSymbolizer missing(KernelSymbols(), std::move(maps));
  EXPECT_EQ(missing.UserSource(1, 0x10000010), "");
  EXPECT_EQ(DwarfLines::Open("/no/such/file"), nullptr);
}

TEST(FoldProfile, KeepsEachFramesHeaviestSourceLine) {
  const ElfFunction found_work = FunctionOfTestBinary("Work(int)");
  const ElfFunction found_main = FunctionOfTestBinary("main");
  ASSERT_GT(found_work.size, 0u);
  ASSERT_EQ(found_main.symbol, "main");
  const ElfFunction* work = &found_work;
  const ElfFunction* main_fn = &found_main;
  StackSymbolizer symbolizer = SymbolizerOfTestBinary(7);
  // Innermost first: Work's first instruction, called from inside main.
  const uint64_t in_work = 0x10000000 + work->file_offset;
  const uint64_t in_main = 0x10000000 + main_fn->file_offset + main_fn->size / 2;
  FoldedProfile p = FoldProfile("on-cpu", "samples", {{7, 5, 5, {}, {in_work, in_main}}}, symbolizer);
  const std::string work_frame = FunctionBaseName(Demangle(work->symbol));
  ASSERT_EQ(p.sources.count(work_frame), 1u);
  EXPECT_EQ(p.sources.at(work_frame), symbolizer.UserSource(7, in_work));
  ASSERT_EQ(p.sources.count("main"), 1u);
  EXPECT_EQ(p.sources.at("main"), symbolizer.UserSource(7, in_main - 1)) << "the call's line, before the return address";
}

TEST(StackSymbolizer, NamesAnOffsetWithoutSymbolByModuleAndOffset) {
  std::map<uint32_t, ProcessMaps> maps;
  maps[1].ranges.push_back({0x10000000, 0x10001000, 0x2000, "/no/such/libfoo.so.1", ""});
  StackSymbolizer symbolizer(KernelSymbols(), std::move(maps));
  EXPECT_EQ(symbolizer.UserFrame(1, 0x10000010), "libfoo.so.1+0x2010");
  ASSERT_EQ(symbolizer.unreadable().size(), 1u);
  EXPECT_NE(symbolizer.unreadable()[0].find("/no/such/libfoo.so.1"), std::string::npos);
}

TEST(StackSymbolizer, SuffixesKernelFrames) {
  std::istringstream in("ffffffff81001000 T do_syscall_64\n");
  StackSymbolizer symbolizer(KernelSymbols::Parse(in), {});
  EXPECT_EQ(symbolizer.KernelFrame(0xffffffff81001010), "do_syscall_64_[k]");
  EXPECT_EQ(symbolizer.KernelFrame(0x10), "[unknown]_[k]");
}

TEST(TruncatedUserStack, NeedsAProcessOrThreadRootOutermost) {
  EXPECT_FALSE(IsTruncatedUserStack({}));  // a kernel thread has no user stack
  EXPECT_FALSE(IsTruncatedUserStack({"__libc_start_call_main", "main", "work"}));
  EXPECT_FALSE(IsTruncatedUserStack({"_start", "__libc_start_main", "main", "work"}));
  EXPECT_FALSE(IsTruncatedUserStack({"clone3", "start_thread", "worker", "work"}));
  EXPECT_TRUE(IsTruncatedUserStack({"main", "parse", "memcpy"}));  // stopped below main
  EXPECT_TRUE(IsTruncatedUserStack({"[unknown]", "parse", "memcpy"}));
  EXPECT_TRUE(IsTruncatedUserStack({"_start", "work"}));  // two frames: an unwinder that gave up
  // A stripped C library: its start routine has no name, but the walk reached it.
  EXPECT_FALSE(IsTruncatedUserStack({"libc.so.6+0x27249", "main", "work"}));
  EXPECT_FALSE(IsTruncatedUserStack({"libc.so.6+0x8a0c4", "libc.so.6+0x88f1a", "worker", "work"}));
  EXPECT_TRUE(IsTruncatedUserStack({"app+0x1234", "parse", "work"}));
}

TEST(FoldProfile, DropsTheTracepointGlueOfStacksTakenInABpfProgram) {
  std::istringstream in(
      "ffffffff81000000 T schedule\n"
      "ffffffff81000800 T __traceiter_sched_switch\n"
      "ffffffff81001000 T bpf_trace_run4\n"
      "ffffffff81002000 T _einittext\n");
  StackSymbolizer symbolizer(KernelSymbols::Parse(in), {});
  std::vector<RawStack> stacks = {
      {1, 5, 1, {0xffffffff81002010, 0xffffffff81001010, 0xffffffff81000810, 0xffffffff81000010}, {}}};
  FoldedProfile p = FoldProfile("off-cpu", "ns", stacks, symbolizer);
  ASSERT_EQ(p.stacks.size(), 1u);
  EXPECT_EQ(p.stacks.begin()->first, "schedule_[k]");
}

TEST(FoldFrames, PutsUserThenKernelFramesOutermostFirst) {
  EXPECT_EQ(FoldFrames({"leaf", "main", "_start"}, {"schedule_[k]", "do_syscall_64_[k]"}),
            "_start;main;leaf;do_syscall_64_[k];schedule_[k]");
  EXPECT_EQ(FoldFrames({}, {"worker_thread_[k]"}), "worker_thread_[k]");
  EXPECT_EQ(FoldFrames({}, {}), "[unknown]");
  EXPECT_EQ(FoldFrames({"a;b"}, {}), "a:b");  // ';' would split the frame
}

TEST(FoldProfile, SumsWeightsAndCountsTruncatedStacks) {
  std::map<uint32_t, ProcessMaps> none;
  StackSymbolizer symbolizer(KernelSymbols(), std::move(none));
  // Process 5 has no map: every user frame is [unknown], so its stacks are truncated.
  std::vector<RawStack> stacks = {{5, 30, 3, {}, {0x1000, 0x2000, 0x3000}},
                                  {5, 10, 1, {}, {0x1000, 0x2000, 0x3000}},
                                  {0, 4, 4, {0xffffffff81000000}, {}}};
  FoldedProfile p = FoldProfile("off-cpu", "ns", stacks, symbolizer);
  EXPECT_EQ(p.kind, "off-cpu");
  EXPECT_EQ(p.total, 44u);
  EXPECT_EQ(p.samples, 8u);
  EXPECT_EQ(p.truncated_user_stacks, 4u);
  EXPECT_EQ(p.stacks.at("[unknown];[unknown];[unknown]"), 40u);
  EXPECT_EQ(p.stacks.at("[unknown]_[k]"), 4u);
  EXPECT_EQ(TruncationNote(p),
            "off-cpu: user stacks truncated in 4 of 8 waits: rebuild with -fno-omit-frame-pointer for full stacks");
  p.truncated_user_stacks = 0;
  EXPECT_EQ(TruncationNote(p), "");
}

const SuiteVocabulary kVocab{{"runqlat"}, {"command"}};

Suite ParseEvidenceSuite(const std::string& suite_level, const std::string& scenario_level) {
  return ParseSuite(R"({"name": "s", )" + suite_level + R"( "scenarios": [
      {"name": "a", "workload": {"argv": ["true"]})" + scenario_level + R"(},
      {"name": "b", "workload": {"argv": ["true"]}}]})",
                    "s.json", kVocab, {"/suites", "/opt"});
}

TEST(SuiteEvidence, DefaultsToOnFailureWithSuiteLevelAndScenarioOverride) {
  Suite plain = ParseEvidenceSuite("", "");
  EXPECT_EQ(plain.scenarios[0].evidence, EvidenceMode::kOnFailure);
  Suite mixed = ParseEvidenceSuite(R"("evidence": "always",)", R"(, "evidence": "never")");
  EXPECT_EQ(mixed.scenarios[0].evidence, EvidenceMode::kNever);
  EXPECT_EQ(mixed.scenarios[1].evidence, EvidenceMode::kAlways);
}

TEST(SuiteEvidence, RejectsUnknownValuesNamingTheJsonPath) {
  try {
    ParseEvidenceSuite("", R"(, "evidence": "allways")");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    const std::string what = e.what();
    EXPECT_NE(what.find("s.json: $.scenarios[0].evidence: expected \"always\""), std::string::npos) << what;
    EXPECT_NE(what.find("did you mean \"always\""), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  try {
    ParseEvidenceSuite(R"("evidence": true,)", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("$.evidence: expected a string"), std::string::npos) << e.what();
  }
}

ScenarioResult ScenarioWith(Verdict verdict) {
  ScenarioResult s;
  s.name = "a";
  s.repetitions.resize(3);
  CheckResult c;
  c.spec.name = "workload.wall_time.value";
  c.verdict = verdict;
  c.change_pct = 12.34;
  s.checks.push_back(c);
  return s;
}

TEST(EvidenceReason, OnlyFailedScenariosUnderOnFailure) {
  EXPECT_EQ(EvidenceReason(EvidenceMode::kOnFailure, ScenarioWith(Verdict::kPass)), std::nullopt);
  EXPECT_EQ(EvidenceReason(EvidenceMode::kOnFailure, ScenarioWith(Verdict::kInconclusive)), std::nullopt);
  EXPECT_EQ(EvidenceReason(EvidenceMode::kOnFailure, ScenarioWith(Verdict::kRegression)),
            "workload.wall_time.value: regression (+12.3 %)");
  EXPECT_EQ(EvidenceReason(EvidenceMode::kAlways, ScenarioWith(Verdict::kPass)), "always");
  EXPECT_EQ(EvidenceReason(EvidenceMode::kNever, ScenarioWith(Verdict::kRegression)), std::nullopt);
  ScenarioResult failed = ScenarioWith(Verdict::kRegression);
  failed.error = "workload crashed";
  EXPECT_EQ(EvidenceReason(EvidenceMode::kAlways, failed), std::nullopt);
}

TEST(BaselineEvidence, StoredEvidenceBecomesTheBaselineSideOfFailingScenarios) {
  ScenarioResult stored = ScenarioWith(Verdict::kPass);
  Evidence recorded;
  recorded.side = "candidate";
  recorded.reason = "always";
  stored.evidence.push_back(recorded);
  std::map<std::string, ScenarioResult> baselines = {{"a", stored}};

  RunResults green;
  green.scenarios.push_back(ScenarioWith(Verdict::kPass));
  AddBaselineEvidence(green, baselines);
  EXPECT_TRUE(green.scenarios[0].evidence.empty());  // nothing to explain

  RunResults red;
  red.scenarios.push_back(ScenarioWith(Verdict::kRegression));
  Evidence captured;
  captured.side = "candidate";
  captured.reason = "workload.wall_time.value: regression (+12.3 %)";
  red.scenarios[0].evidence.push_back(captured);
  AddBaselineEvidence(red, baselines);
  AddBaselineEvidence(red, baselines);  // once only
  ASSERT_EQ(red.scenarios[0].evidence.size(), 2u);
  EXPECT_EQ(red.scenarios[0].evidence[1].side, "baseline");
  EXPECT_EQ(red.scenarios[0].evidence[1].reason, "always");
}

TEST(MedianWallTime, OfTheMeasuredRepetitions) {
  std::vector<Repetition> reps(4);
  double walls[] = {1.0, 4.0, 2.0, 3.0};
  for (size_t i = 0; i < reps.size(); ++i) reps[i].metrics["workload.wall_time"].value = walls[i];
  EXPECT_DOUBLE_EQ(MedianWallTime(reps), 2.5);
  EXPECT_DOUBLE_EQ(MedianWallTime({}), 0);
}

}  // namespace
}  // namespace perfgate
