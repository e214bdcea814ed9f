// The capture side of evidence: kallsyms and maps parsing, user-frame
// symbolization, folding, truncated-stack detection, the suite's `evidence`
// key and when a scenario gets an evidence repetition.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>

#include <cstring>
#include <filesystem>
#include <sstream>

#include "base/error.h"
#include "config/suite.h"
#include "harness/files.h"
#include "harness/paths.h"
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
  EXPECT_EQ(maps.Find(0x55550800), nullptr);      // not executable
  EXPECT_EQ(maps.Find(0x7f0000002000), nullptr);  // end is exclusive
}

// A perf record of `type` with `body`, then the sample_id trailer {pid, tid, time}.
std::vector<uint8_t> PerfRecord(uint32_t type, uint16_t misc, const std::vector<uint8_t>& body, uint32_t pid,
                                uint64_t time) {
  const size_t padded = (body.size() + 7) / 8 * 8;
  std::vector<uint8_t> r(8 + padded + 16, 0);
  std::memcpy(r.data() + 8, body.data(), body.size());
  std::memcpy(r.data() + 8 + padded, &pid, 4);
  std::memcpy(r.data() + 8 + padded + 4, &pid, 4);
  std::memcpy(r.data() + 8 + padded + 8, &time, 8);
  const uint16_t size = static_cast<uint16_t>(r.size());
  std::memcpy(r.data(), &type, 4);
  std::memcpy(r.data() + 4, &misc, 2);
  std::memcpy(r.data() + 6, &size, 2);
  return r;
}

std::vector<uint8_t> Mmap2Body(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff, uint32_t prot,
                               const std::string& path, const std::vector<uint8_t>& build_id) {
  std::vector<uint8_t> b(64 + path.size() + 1, 0);
  std::memcpy(b.data(), &pid, 4);
  std::memcpy(b.data() + 4, &pid, 4);
  std::memcpy(b.data() + 8, &addr, 8);
  std::memcpy(b.data() + 16, &len, 8);
  std::memcpy(b.data() + 24, &pgoff, 8);
  b[32] = static_cast<uint8_t>(build_id.size());
  if (!build_id.empty()) std::memcpy(b.data() + 36, build_id.data(), build_id.size());
  std::memcpy(b.data() + 56, &prot, 4);
  std::memcpy(b.data() + 64, path.c_str(), path.size());
  return b;
}

TEST(MapRecords, ParseMmap2WithBuildIdExecAndLost) {
  const std::vector<uint8_t> id = {0xab, 0xcd, 0x01};
  auto mmap2 = PerfRecord(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID,
                          Mmap2Body(42, 0x400000, 0x2000, 0x1000, PROT_READ | PROT_EXEC, "/usr/bin/app", id), 42, 7);
  std::optional<MapRecord> r = ParseMapRecord(mmap2.data(), mmap2.size());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, MapRecord::Kind::kMap);
  EXPECT_EQ(r->pid, 42u);
  EXPECT_EQ(r->time, 7u);
  EXPECT_EQ(r->range.start, 0x400000u);
  EXPECT_EQ(r->range.end, 0x402000u);
  EXPECT_EQ(r->range.offset, 0x1000u);
  EXPECT_EQ(r->range.path, "/usr/bin/app");
  EXPECT_EQ(r->range.build_id, "abcd01");
  // Data mappings are not code; a record cut short is none.
  auto data =
      PerfRecord(PERF_RECORD_MMAP2, 0, Mmap2Body(42, 0x600000, 0x1000, 0, PROT_READ, "/usr/bin/app", {}), 42, 8);
  EXPECT_FALSE(ParseMapRecord(data.data(), data.size()));
  EXPECT_FALSE(ParseMapRecord(mmap2.data(), mmap2.size() - 8));
  // Without the build-ID flag the union holds device and inode: no build ID.
  auto plain = PerfRecord(PERF_RECORD_MMAP2, 0, Mmap2Body(42, 0x400000, 0x2000, 0, PROT_EXEC, "/x", id), 42, 9);
  ASSERT_TRUE(ParseMapRecord(plain.data(), plain.size()));
  EXPECT_EQ(ParseMapRecord(plain.data(), plain.size())->range.build_id, "");
  std::vector<uint8_t> comm_body(16, 0);
  const uint32_t pid = 42;
  std::memcpy(&comm_body[0], &pid, 4);
  auto exec = PerfRecord(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, comm_body, 42, 5);
  ASSERT_TRUE(ParseMapRecord(exec.data(), exec.size()));
  EXPECT_EQ(ParseMapRecord(exec.data(), exec.size())->kind, MapRecord::Kind::kExec);
  auto rename = PerfRecord(PERF_RECORD_COMM, 0, comm_body, 42, 5);  // prctl(PR_SET_NAME): not an exec
  EXPECT_FALSE(ParseMapRecord(rename.data(), rename.size()));
  std::vector<uint8_t> fork_body(24, 0);
  const uint32_t child = 43;
  std::memcpy(&fork_body[0], &child, 4);
  std::memcpy(&fork_body[4], &pid, 4);
  auto fork = PerfRecord(PERF_RECORD_FORK, 0, fork_body, 43, 6);
  ASSERT_TRUE(ParseMapRecord(fork.data(), fork.size()));
  EXPECT_EQ(ParseMapRecord(fork.data(), fork.size())->kind, MapRecord::Kind::kFork);
  EXPECT_EQ(ParseMapRecord(fork.data(), fork.size())->parent, 42u);
  std::memcpy(&fork_body[0], &pid, 4);  // a new thread of process 42: no new map
  auto thread = PerfRecord(PERF_RECORD_FORK, 0, fork_body, 42, 6);
  EXPECT_FALSE(ParseMapRecord(thread.data(), thread.size()));
  std::vector<uint8_t> lost_body(16, 0);
  const uint64_t lost = 3;
  std::memcpy(&lost_body[8], &lost, 8);
  auto lost_record = PerfRecord(PERF_RECORD_LOST, 0, lost_body, 0, 6);
  ASSERT_TRUE(ParseMapRecord(lost_record.data(), lost_record.size()));
  EXPECT_EQ(ParseMapRecord(lost_record.data(), lost_record.size())->lost, 3u);
}

TEST(MapRecords, AnExecEmptiesTheMapAndRecordsApplyInTimeOrder) {
  auto map = [](uint32_t pid, uint64_t time, uint64_t start, const std::string& path) {
    MapRecord r;
    r.pid = pid;
    r.time = time;
    r.range = {start, start + 0x1000, 0, path, ""};
    return r;
  };
  MapRecord exec;
  exec.kind = MapRecord::Kind::kExec;
  exec.pid = 9;
  exec.time = 20;
  MapRecord lost;
  lost.kind = MapRecord::Kind::kLost;
  lost.lost = 2;
  lost.time = 1;
  // Given out of order, as two CPUs' buffers give them: the shell before the exec, the program after.
  std::map<uint32_t, ProcessMaps> maps;
  EXPECT_EQ(ApplyMapRecords({map(9, 30, 0x5000, "/usr/bin/app"), exec, map(9, 10, 0x1000, "/bin/sh"), lost}, maps), 2u);
  ASSERT_EQ(maps[9].ranges.size(), 1u);
  EXPECT_EQ(maps[9].ranges[0].path, "/usr/bin/app");
  // A forked child runs its parent's code until it execs.
  MapRecord fork;
  fork.kind = MapRecord::Kind::kFork;
  fork.pid = 10;
  fork.parent = 9;
  fork.time = 40;
  ApplyMapRecords({map(9, 50, 0x9000, "/usr/lib/libdl.so"), fork}, maps);
  ASSERT_EQ(maps[10].ranges.size(), 1u);
  EXPECT_EQ(maps[10].ranges[0].path, "/usr/bin/app");
  EXPECT_EQ(maps[9].ranges.size(), 2u);
}

TEST(ProcessMaps, ALaterMappingReplacesWhatItOverlaps) {
  ProcessMaps maps;
  maps.Map({0x1000, 0x5000, 0, "/old", ""});
  maps.Map({0x2000, 0x3000, 0x10000, "/new", ""});
  ASSERT_EQ(maps.ranges.size(), 3u);
  EXPECT_EQ(maps.Find(0x1800)->path, "/old");
  EXPECT_EQ(maps.Find(0x2800)->path, "/new");
  const MappedRange* right = maps.Find(0x3800);
  ASSERT_NE(right, nullptr);
  EXPECT_EQ(right->path, "/old");
  EXPECT_EQ(right->offset, 0x2000u) << "the old file's offset where the right part starts";
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
  EXPECT_EQ(symbolizer.UserSource(7, 0x30000000), "");                      // no mapping
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
  EXPECT_EQ(p.sources.at("main"), symbolizer.UserSource(7, in_main - 1))
      << "the call's line, before the return address";
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
  FoldedProfile on_cpu;
  on_cpu.kind = "on-cpu";
  on_cpu.samples = 300;
  on_cpu.truncated_user_stacks = 12;
  EXPECT_EQ(TruncationNote({on_cpu, p}),
            "user stacks truncated in 12 of 300 on-cpu samples, 4 of 8 off-cpu waits: "
            "rebuild with -fno-omit-frame-pointer for full stacks");
  p.truncated_user_stacks = on_cpu.truncated_user_stacks = 0;
  EXPECT_EQ(TruncationNote({on_cpu, p}), "");
}

const SuiteVocabulary kVocab{{"runqlat"}, {"command"}};

Suite ParseEvidenceSuite(const std::string& suite_level, const std::string& scenario_level) {
  return ParseSuite(R"({"name": "s", )" + suite_level + R"( "scenarios": [
      {"name": "a", "workload": {"argv": ["true"]})" +
                        scenario_level + R"(},
      {"name": "b", "workload": {"argv": ["true"]}}]})",
                    "s.json", kVocab, {"/suites", "/opt"});
}

// Two repetitions with the same shares spread by nothing; two whose shares
// differ spread by Pearson's chi-square of their leaf counts, frames under
// 1 % of the weight pooled into one column.
TEST(RepetitionSpread, IsTheChiSquareOfTheRepetitionsLeafCountsAgainstThePooledShares) {
  auto profile = [](std::map<std::string, uint64_t> stacks) {
    FoldedProfile p;
    p.kind = "on-cpu";
    for (const auto& [stack, weight] : stacks) {
      p.stacks[stack] = weight;
      p.total += weight;
    }
    return p;
  };
  FoldedProfile pooled;
  SetRepetitionSpread(
      pooled, {profile({{"main;hash", 60}, {"main;sum", 40}}), profile({{"main;hash", 120}, {"main;sum", 80}})});
  EXPECT_EQ(pooled.spread_df, 1u);
  EXPECT_NEAR(pooled.spread_chi_square, 0, 1e-9);
  // hash 50 of 100 and 70 of 100 against 60 %: (10² / 60 + 10² / 40) * 2 = 8.33.
  SetRepetitionSpread(pooled, {profile({{"main;hash", 50}, {"a;sum", 25}, {"b;sum", 25}}),
                               profile({{"main;hash", 70}, {"main;sum", 30}})});
  EXPECT_EQ(pooled.spread_df, 1u);
  EXPECT_NEAR(pooled.spread_chi_square, 2 * (100.0 / 60 + 100.0 / 40), 1e-9);
  // Rare frames are one column; a third repetition adds its row.
  SetRepetitionSpread(pooled, {profile({{"main;hash", 500}, {"main;sum", 495}, {"x", 2}, {"y", 3}}),
                               profile({{"main;hash", 500}, {"main;sum", 500}}),
                               profile({{"main;hash", 500}, {"main;sum", 497}, {"x", 3}})});
  EXPECT_EQ(pooled.spread_df, 4u) << "(3 - 1) repetitions x (hash, sum, the rest - 1)";
  // One repetition, or an empty one beside it: nothing to tell.
  SetRepetitionSpread(pooled, {profile({{"main;hash", 50}}), profile({})});
  EXPECT_EQ(pooled.spread_df, 0u);
  EXPECT_EQ(pooled.spread_chi_square, 0);
}

FoldedProfile OnCpuProfile(const std::map<std::string, uint64_t>& stacks) {
  FoldedProfile p;
  p.kind = "on-cpu";
  p.unit = "samples";
  for (const auto& [stack, weight] : stacks) {
    p.stacks[stack] = weight;
    p.total += weight;
    p.samples += weight;
  }
  return p;
}

TEST(RepetitionDispersion, PoolsTheSidesChiSquaresOverTheirDegreesOfFreedom) {
  const std::vector<FoldedProfile> steady = {OnCpuProfile({{"main;hash", 60}, {"main;sum", 40}}),
                                             OnCpuProfile({{"main;hash", 120}, {"main;sum", 80}})};
  // hash 50 of 100 and 70 of 100: chi-square 8.33 on 1 degree of freedom.
  const std::vector<FoldedProfile> moving = {OnCpuProfile({{"main;hash", 50}, {"main;sum", 50}}),
                                             OnCpuProfile({{"main;hash", 70}, {"main;sum", 30}})};
  EXPECT_NEAR(RepetitionDispersion({moving}), 2 * (100.0 / 60 + 100.0 / 40), 1e-9);
  EXPECT_NEAR(RepetitionDispersion({steady, moving}), (2 * (100.0 / 60 + 100.0 / 40)) / 2, 1e-9);
  // Never below the binomial spread; nothing to tell from single repetitions.
  EXPECT_EQ(RepetitionDispersion({steady, steady}), 1);
  EXPECT_EQ(RepetitionDispersion({{moving[0]}, {moving[1]}}), 1);
  EXPECT_EQ(RepetitionDispersion({}), 1);
}

TEST(LeadingUserGrowth, NamesRulesOutOrLeavesOpenTheFunctionThatGrewMost) {
  // hash 50 % -> 56 % of 4,000 samples a side: beyond the interval.
  auto side = [](uint64_t hash, uint64_t sum, uint64_t scheduler) {
    return OnCpuProfile(
        {{"_start;main;hash", hash},
         {"_start;main;sum", sum},
         {"_start;main;sum;asm_sysvec_apic_timer_interrupt_[k];irqentry_exit_to_user_mode_[k]", scheduler}});
  };
  const FoldedProfile baseline = side(2000, 1900, 100), candidate = side(2240, 1660, 100);
  EXPECT_EQ(LeadingUserGrowth(baseline, candidate, 1, 0.14), GrowthDecision::kNamed);
  // The same shares spread 8 times the binomial between repetitions: open while
  // the growth +14 % implies (7 pp of a share of 1/2) is within the interval.
  EXPECT_EQ(LeadingUserGrowth(baseline, candidate, 8, 0.14), GrowthDecision::kOpen);
  // Unless the interval ends short of that growth: not this function.
  EXPECT_EQ(LeadingUserGrowth(baseline, side(2020, 1880, 100), 1, 0.14), GrowthDecision::kRuledOut);
  // No user function grew: kernel frames (an interrupt's, here) are not the user code's.
  EXPECT_EQ(LeadingUserGrowth(baseline, side(2000, 1800, 200), 1, 0.14), GrowthDecision::kRuledOut);
  // The same small growth stays open while the samples cannot rule out the change.
  EXPECT_EQ(LeadingUserGrowth(side(50, 48, 2), side(51, 47, 2), 1, 0.14), GrowthDecision::kOpen);
  // Nothing sampled on a side: nothing decided yet.
  EXPECT_EQ(LeadingUserGrowth(OnCpuProfile({}), candidate, 1, 0.14), GrowthDecision::kOpen);
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

TEST(MedianCpuTime, OfTheMeasuredRepetitions) {
  std::vector<Repetition> reps(3);
  double cpus[] = {0.2, 0.1, 0.3};
  for (size_t i = 0; i < reps.size(); ++i) reps[i].metrics["workload.cpu_time"].value = cpus[i];
  EXPECT_DOUBLE_EQ(MedianCpuTime(reps), 0.2);
  EXPECT_DOUBLE_EQ(MedianCpuTime({}), 0);
}

TEST(EvidenceFrequencyHz, RisesSoThatTheTargetTakesAboutEightRepetitions) {
  // 0.2 s of CPU a repetition: 27,545 samples in 8 repetitions need 17.2 kHz.
  EXPECT_EQ(EvidenceFrequencyHz(27545, 0.2), 17216);
  // Enough at the usual rate, or CPU time unknown: the usual rate.
  EXPECT_EQ(EvidenceFrequencyHz(kEvidenceTargetSamples, 0.2), kEvidenceFrequencyHz);
  EXPECT_EQ(EvidenceFrequencyHz(50000, 5), kEvidenceFrequencyHz);
  EXPECT_EQ(EvidenceFrequencyHz(50000, 0), kEvidenceFrequencyHz);
  // A short workload gets the most, and more repetitions.
  EXPECT_EQ(EvidenceFrequencyHz(50000, 0.01), kEvidenceMaxFrequencyHz);
}

TEST(StackSymbolizer, SymbolizesByBuildIdFromTheDebugFileWhenTheFileIsGone) {
  const std::string id = ReadBuildId(PERFGATE_UFUNC_TARGET);
  // 20 bytes from GNU ld (SHA-1), 8 from lld (its default, a fast hash).
  ASSERT_TRUE(id.size() == 40u || id.size() == 16u) << "the test binary has a GNU build ID: " << id;
  EXPECT_EQ(DebugFileOfBuildId(id), "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
  EXPECT_EQ(ReadBuildId("/no/such/file"), "");
  const ElfFunction work = FunctionOfTestBinary("Work(int)");
  ASSERT_GT(work.size, 0u);
  const uint64_t inside = 0x10000000 + work.file_offset + work.size / 2;
  // The process ran a file since deleted; its debug file is found by build ID.
  testing::ScratchDir root;
  std::filesystem::create_directories(root.path() / ".build-id" / id.substr(0, 2));
  std::filesystem::copy_file(PERFGATE_UFUNC_TARGET,
                             root / (".build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug"));
  std::map<uint32_t, ProcessMaps> maps;
  maps[3].ranges.push_back({0x10000000, 0x20000000, 0, "/gone/pg-ufunc-target", id});
  StackSymbolizer by_id(KernelSymbols(), maps);
  by_id.set_debug_root(root.path().string());
  EXPECT_EQ(by_id.UserFrame(3, inside), FunctionBaseName(Demangle(work.symbol)));
  EXPECT_TRUE(by_id.unreadable().empty());
  // Without a debug file, a file with another build ID is not the one that ran.
  maps[3].ranges[0].path = PERFGATE_UFUNC_LIB;
  StackSymbolizer replaced(KernelSymbols(), maps);
  replaced.set_debug_root(root.path().string() + "/none");
  EXPECT_EQ(replaced.UserFrame(3, inside).rfind("libpg_ufunc_lib.so+0x", 0), 0u) << replaced.UserFrame(3, inside);
  ASSERT_EQ(replaced.unreadable().size(), 1u);
  EXPECT_NE(replaced.unreadable()[0].find("replaced (build ID "), std::string::npos) << replaced.unreadable()[0];
  // The file itself when its build ID matches.
  maps[3].ranges[0].path = PERFGATE_UFUNC_TARGET;
  StackSymbolizer same(KernelSymbols(), maps);
  same.set_debug_root(root.path().string() + "/none");
  EXPECT_EQ(same.UserFrame(3, inside), FunctionBaseName(Demangle(work.symbol)));
}

TEST(EvidenceTarget, ResolvesTheGrowthTheRegressionImplies) {
  ScenarioResult s;
  EXPECT_EQ(EvidenceTargetSamples(s), kEvidenceTargetSamples);  // nothing regressed: `always`
  CheckResult c;
  c.verdict = Verdict::kRegression;
  c.change_pct = 10;
  s.checks.push_back(c);
  // R = 10 %: growth 4.5 pp at p = 1/2; 0.5 * ((3.29 + 1.28) / 0.0455)^2.
  EXPECT_NEAR(static_cast<double>(EvidenceTargetSamples(s)), 5040, 60);
  s.checks[0].change_pct = 5;
  EXPECT_NEAR(static_cast<double>(EvidenceTargetSamples(s)), 18400, 200);
  s.checks[0].change_pct = 10;
  s.checks[0].change_ci_low_pct = 5;  // measured +10 %, but +5 % is within its interval
  s.checks[0].change_ci_high_pct = 15;
  EXPECT_NEAR(static_cast<double>(EvidenceTargetSamples(s)), 18400, 200);
  s.checks[0].change_pct = 5;
  s.checks[0].change_ci_low_pct.reset();
  s.checks[0].change_ci_high_pct.reset();
  s.checks[0].change_pct = 50;
  EXPECT_EQ(EvidenceTargetSamples(s), kEvidenceTargetSamples);
  s.checks[0].change_pct = 0.5;
  EXPECT_EQ(EvidenceTargetSamples(s), kEvidenceMaxTargetSamples);
  s.checks[0].spec.type = CheckSpec::Type::kBudget;  // no relative change to resolve
  EXPECT_EQ(EvidenceTargetSamples(s), kEvidenceTargetSamples);
}

TEST(EvidenceChange, IsTheRegressionsChangeNearestToNone) {
  ScenarioResult s;
  EXPECT_EQ(EvidenceChange(s), 0);
  CheckResult c;
  c.verdict = Verdict::kRegression;
  c.change_pct = 14;
  s.checks.push_back(c);
  EXPECT_DOUBLE_EQ(EvidenceChange(s), 0.14);
  s.checks[0].change_ci_low_pct = 13.5;
  s.checks[0].change_ci_high_pct = 15;
  EXPECT_DOUBLE_EQ(EvidenceChange(s), 0.135);
  s.checks[0].change_pct = -20;  // lower is worse: the end nearer to none is the high one
  s.checks[0].change_ci_low_pct = -25;
  s.checks[0].change_ci_high_pct = -12;
  EXPECT_DOUBLE_EQ(EvidenceChange(s), 0.12);
  s.checks[0].spec.type = CheckSpec::Type::kBudget;
  EXPECT_EQ(EvidenceChange(s), 0);
}

}  // namespace
}  // namespace perfgate
