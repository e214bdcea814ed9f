#include "symbolize/dwarf_unwind.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "symbolize/symbolize.h"

namespace perfgate {
namespace {

constexpr size_t kCopiedBytes = 4096;

// Copies stack bytes the way the probe does, byte by byte: the frames above
// hold other functions' locals, which the address sanitizer would report.
__attribute__((no_sanitize("address"), noinline)) void CopyStack(const uint8_t* from, std::vector<uint8_t>& to) {
  const volatile uint8_t* source = from;
  for (size_t i = 0; i < to.size(); ++i) to[i] = source[i];
}

// The bytes from `address` to the end of its mapping (the main thread's
// stack): a copy stops there, as the probe's read does. Near the top of a
// shallow stack, whose place varies with the randomized layout, 4096 bytes
// would run past it (a crash in about 2 % of runs).
size_t BytesToMappingEnd(uint64_t address) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &start, &end) == 2 && address >= start && address < end)
      return static_cast<size_t>(end - address);
  }
  return 0;
}

}  // namespace
}  // namespace perfgate

// What the profile probe copies at a sample, taken here in this function:
// the callee-saved registers, the stack and instruction pointers, and the
// stack above.
extern "C" __attribute__((noinline)) void pg_unwind_test_capture(perfgate::UserStackCopy* copy) {
  uint64_t* regs = copy->regs.data();
  __asm__ volatile(
      "mov %%rbx, 24(%0)\n\t"
      "mov %%rbp, 48(%0)\n\t"
      "mov %%rsp, 56(%0)\n\t"
      "mov %%r12, 96(%0)\n\t"
      "mov %%r13, 104(%0)\n\t"
      "mov %%r14, 112(%0)\n\t"
      "mov %%r15, 120(%0)\n\t"
      "lea 0(%%rip), %%rax\n\t"
      "mov %%rax, 128(%0)\n\t"
      :
      : "r"(regs)
      : "rax", "memory");
  copy->stack.resize(std::min(perfgate::kCopiedBytes,
                              perfgate::BytesToMappingEnd(copy->regs[perfgate::UserStackCopy::kStackPointer])));
  perfgate::CopyStack(reinterpret_cast<const uint8_t*>(copy->regs[perfgate::UserStackCopy::kStackPointer]),
                      copy->stack);
}

// Callers that stay on the stack (no tail calls): each does work after the call.
extern "C" __attribute__((noinline)) int pg_unwind_test_middle(perfgate::UserStackCopy* copy) {
  pg_unwind_test_capture(copy);
  __asm__ volatile("" ::: "memory");
  return static_cast<int>(copy->stack.size() & 1);
}

extern "C" __attribute__((noinline)) int pg_unwind_test_outer(perfgate::UserStackCopy* copy) {
  const int odd = pg_unwind_test_middle(copy);
  __asm__ volatile("" ::: "memory");
  return odd + 1;
}

namespace perfgate {
namespace {

struct Captured {
  UserStackCopy copy;
  ProcessMaps maps;
};

Captured CaptureHere() {
  Captured captured;
  EXPECT_EQ(pg_unwind_test_outer(&captured.copy), 1);
  auto maps = ReadProcessMaps(getpid());
  EXPECT_TRUE(maps.has_value());
  if (maps) captured.maps = std::move(*maps);
  return captured;
}

// The user frames of `ips` (innermost first) by name, innermost first.
std::vector<std::string> Names(const ProcessMaps& maps, const std::vector<uint64_t>& ips) {
  StackSymbolizer symbolizer(KernelSymbols(), {{1, maps}});
  std::vector<std::string> names;
  for (size_t i = 0; i < ips.size(); ++i) names.push_back(symbolizer.UserFrame(1, ips[i] - (i > 0 ? 1 : 0)));
  return names;
}

TEST(UserStackUnwinder, UnwindsCopiedRegistersAndStackToTheCallers) {
  const Captured captured = CaptureHere();
  UserStackUnwinder unwinder(captured.maps);
  const std::vector<uint64_t> ips = unwinder.Unwind(captured.copy);
  const std::vector<std::string> names = Names(captured.maps, ips);
  ASSERT_GE(names.size(), 4u) << ::testing::PrintToString(names) << ::testing::PrintToString(unwinder.unreadable());
  EXPECT_EQ(names[0], "pg_unwind_test_capture") << ::testing::PrintToString(names);
  EXPECT_EQ(names[1], "pg_unwind_test_middle") << ::testing::PrintToString(names);
  EXPECT_EQ(names[2], "pg_unwind_test_outer") << ::testing::PrintToString(names);
  EXPECT_NE(names[3].find("CaptureHere"), std::string::npos) << ::testing::PrintToString(names);
  // Through the test framework and the C library (no frame pointers there) to the process's root.
  EXPECT_EQ(names.back(), "_start") << ::testing::PrintToString(names);
  EXPECT_EQ(ips[0], captured.copy.regs[UserStackCopy::kInstructionPointer]);
}

TEST(UserStackUnwinder, StopsWhereTheCopiedBytesEnd) {
  Captured captured = CaptureHere();
  UserStackUnwinder unwinder(captured.maps);
  const size_t full = unwinder.Unwind(captured.copy).size();
  // Too few bytes to hold the capturing function's return address.
  captured.copy.stack.resize(8);
  const std::vector<uint64_t> ips = unwinder.Unwind(captured.copy);
  ASSERT_FALSE(ips.empty());
  EXPECT_EQ(ips[0], captured.copy.regs[UserStackCopy::kInstructionPointer]);
  EXPECT_LT(ips.size(), full);
}

TEST(UserStackUnwinder, WithoutReadableFilesUnwindsNothing) {
  const Captured captured = CaptureHere();
  ProcessMaps gone;
  gone.Map({0x400000, 0x500000, 0, "/nonexistent/pg-unwind-test", ""});
  UserStackUnwinder unwinder(gone);
  EXPECT_TRUE(unwinder.Unwind(captured.copy).empty());
  EXPECT_FALSE(unwinder.unreadable().empty());
}

// A stack captured here, unwound from its copy, and a symbolizer that knows
// this process as pid 1: what FoldProfile folds.
struct UnwoundHere {
  Captured captured = CaptureHere();
  std::vector<uint64_t> unwound = UserStackUnwinder(captured.maps).Unwind(captured.copy);
  StackSymbolizer symbolizer{KernelSymbols(), {{1, captured.maps}}};
};

TEST(FoldProfile, UsesTheUnwoundStackWhereTheFramePointerWalkStoppedShort) {
  UnwoundHere here;
  const std::vector<uint64_t>& unwound = here.unwound;
  ASSERT_GE(unwound.size(), 3u);
  StackSymbolizer& symbolizer = here.symbolizer;
  // The walk of code without frame pointers: the sampled function alone.
  const std::vector<uint64_t> walked = {unwound[0]};
  FoldedProfile profile = FoldProfile("on-cpu", "samples", {{1, 5, 5, {}, walked, unwound}}, symbolizer);
  ASSERT_EQ(profile.stacks.size(), 1u);
  const std::string folded = profile.stacks.begin()->first;
  EXPECT_NE(folded.find("pg_unwind_test_outer;pg_unwind_test_middle;pg_unwind_test_capture"), std::string::npos)
      << folded;
  EXPECT_EQ(profile.samples, 5u);
  // A complete walk is kept as it is, whatever was unwound.
  FoldedProfile kept = FoldProfile("on-cpu", "samples", {{1, 5, 5, {}, unwound, walked}}, symbolizer);
  EXPECT_EQ(kept.stacks.begin()->first, folded);
}

TEST(FoldProfile, UsesTheUnwoundStackWhereTheWalkWasLostInTheStackMap) {
  UnwoundHere here;
  const std::vector<uint64_t>& unwound = here.unwound;
  ASSERT_GE(unwound.size(), 3u);
  StackSymbolizer& symbolizer = here.symbolizer;
  // No walk at all (a collision in the stack map), no kernel stack (a sample
  // in user mode): the copy names the function, not "[unknown]".
  FoldedProfile profile = FoldProfile("on-cpu", "samples", {{1, 5, 5, {}, {}, unwound}}, symbolizer);
  ASSERT_EQ(profile.stacks.size(), 1u);
  EXPECT_NE(profile.stacks.begin()->first.find("pg_unwind_test_middle;pg_unwind_test_capture"), std::string::npos)
      << profile.stacks.begin()->first;
}

}  // namespace
}  // namespace perfgate
