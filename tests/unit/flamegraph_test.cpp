// Evidence in the reports: flame graphs (plain and differential) of folded
// stacks, the table of frames by growth, the folded files next to the
// reports, all over synthetic profiles with hostile frame and scenario names.
#include "report/flamegraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/quantity.h"
#include "explain/explain.h"
#include "explain/frame_growth.h"
#include "harness/environment.h"
#include "harness/files.h"
#include "harness/results.h"
#include "metrics/evidence.h"
#include "metrics/frames.h"
#include "metrics/results.h"
#include "metrics/results_json.h"
#include "pipeline/pipeline.h"
#include "report/evidence_files.h"
#include "report/html_reporter.h"
#include "report/json_reporter.h"
#include "report/junit_reporter.h"
#include "report/markdown_reporter.h"
#include "report/reporter.h"
#include "report/why_text.h"

namespace perfgate {
namespace {

// `results` with what the explain stage derives from the evidence for the
// reports to render (explain/frame_growth.h), as every flow has it.
RunResults WithGrowth(RunResults results) {
  for (ScenarioResult& scenario : results.scenarios) ExplainEvidenceGrowth(scenario);
  return results;
}

// The why's line for the user function whose own code grew, or "".
std::string UserCodeLine(const FoldedProfile& baseline, const FoldedProfile& candidate) {
  const std::optional<UserCodeGrowth> growth = UserCodeGrowthOf(baseline, candidate);
  return growth ? DescribeUserCode(*growth) : "";
}

namespace fs = std::filesystem;

using testing::Profile;

const FlameFrame* FindFrame(const FlameLayout& layout, const std::string& frame, int depth) {
  for (const FlameFrame& f : layout.frames) {
    if (f.frame == frame && f.depth == depth) return &f;
  }
  return nullptr;
}

struct Rgb {
  int r, g, b;
};
Rgb ParseFill(const std::string& hex) {
  Rgb c{};
  std::sscanf(hex.c_str(), "#%2x%2x%2x", &c.r, &c.g, &c.b);
  return c;
}

using testing::ReadFile;
using testing::ToolAvailable;

// xmllint's verdict on a standalone SVG document.
bool XmllintParses(const std::string& svg) {
  fs::path dir = testing::MakeTempDir("perfgate-flame");
  fs::path file = dir / "graph.svg";
  std::ofstream(file, std::ios::binary) << svg;
  int rc = std::system(("xmllint --noout '" + file.string() + "'").c_str());
  fs::remove_all(dir);
  return rc == 0;
}

// Baseline: main spends equal time in parse and hash. Candidate: hash takes
// three times as long, and the candidate ran twice as many samples overall.
FoldedProfile GrowthBaseline() {
  return Profile(
      {{"main;work;parse", 50}, {"main;work;hash", 50}, {"main;setup", 20}, {"main;work;hash;read_[k]", 10}});
}
FoldedProfile GrowthCandidate() {
  return Profile(
      {{"main;work;parse", 100}, {"main;work;hash", 300}, {"main;setup", 40}, {"main;work;hash;read_[k]", 20}});
}

TEST(Frames, KindFromFlameGraphConventions) {
  EXPECT_EQ(FrameKindOf("vfs_read_[k]"), FrameKind::kKernel);
  EXPECT_EQ(FrameKindOf("[unknown]"), FrameKind::kUnknown);
  EXPECT_EQ(FrameKindOf("libc.so.6+0x1a2b"), FrameKind::kUnknown);
  EXPECT_EQ(FrameKindOf("std::vector<int>::push_back(int const&)"), FrameKind::kUser);
  EXPECT_EQ(FrameKindOf("operator+0xzz"), FrameKind::kUser);
  EXPECT_EQ(FrameLabel("vfs_read_[k]"), "vfs_read");
  EXPECT_EQ(SplitStack("a;;b"), (std::vector<std::string_view>{"a", "", "b"}));
  EXPECT_EQ(FrameLabel(""), "[empty]");
}

TEST(TopFrameGrowth, NamesTheLeafThatTookTheExtraTimeFirstNotItsSharedParents) {
  std::vector<FrameGrowth> rows = TopFrameGrowth(GrowthBaseline(), GrowthCandidate(), 10);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().frame, "hash");
  // Normalised per side: hash self 50/130 -> 300/460.
  EXPECT_NEAR(rows.front().baseline_self, 50.0 / 130, 1e-9);
  EXPECT_NEAR(rows.front().candidate_self, 300.0 / 460, 1e-9);
  EXPECT_NEAR(rows.front().SelfDeltaPp(), 100 * (300.0 / 460 - 50.0 / 130), 1e-9);
  // main and work grew inclusively by the same amount but spend nothing themselves.
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_LT(rows[i].SelfDeltaPp(), rows.front().SelfDeltaPp());
  EXPECT_EQ(rows.back().frame, "parse") << "the most shrunk function comes last";
  EXPECT_LT(rows.back().SelfDeltaPp(), 0);
  // Sorted by self growth.
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_GE(rows[i - 1].SelfDeltaPp(), rows[i].SelfDeltaPp() - 1e-9);
  EXPECT_EQ(TopFrameGrowth(GrowthBaseline(), GrowthCandidate(), 2).size(), 2u);
}

// Two sides of `n` samples each: `hash` at `base_hash` and `cand_hash`
// samples, the rest in `parse`, and `noise` frames of 3 samples each on both.
std::pair<FoldedProfile, FoldedProfile> HashProfiles(uint64_t n, uint64_t base_hash, uint64_t cand_hash,
                                                     int noise = 0) {
  std::map<std::string, uint64_t> base, cand;
  for (int i = 0; i < noise; ++i) {
    base["main;noise" + std::to_string(i)] = 3;
    cand["main;noise" + std::to_string(i)] = 3;
  }
  const uint64_t rest = n - 3 * static_cast<uint64_t>(noise);
  base["main;hash"] = base_hash;
  base["main;parse"] = rest - base_hash;
  cand["main;hash"] = cand_hash;
  cand["main;parse"] = rest - cand_hash;
  return {Profile(base), Profile(cand)};
}

TEST(GrownFrames, NamesOnlyGrowthBeyondTheIntervalOfTwoProportions) {
  // 2,400 samples a side; hash 40 % -> 46.4 %: +6.4 pp.
  auto [base, cand] = HashProfiles(2400, 960, 1114);
  std::vector<FrameGrowth> grown = GrownFrames(base, cand, 5);
  ASSERT_EQ(grown.size(), 1u) << "parse shrank, main did not move";
  EXPECT_EQ(grown[0].frame, "hash");
  EXPECT_TRUE(grown[0].self_grew);
  EXPECT_EQ(grown[0].candidate_samples, 2400u);
  // Agresti-Caffo, one-sided 5 % over a family of at least 10 functions: z = 2.576.
  const double p1 = 961.0 / 2402, p2 = 1115.0 / 2402;
  const double se = std::sqrt(p1 * (1 - p1) / 2402 + p2 * (1 - p2) / 2402);
  EXPECT_NEAR(grown[0].self_margin_pp, 100 * 2.5758 * se, 0.01);
  EXPECT_EQ(FormatGrowth(grown[0].SelfDeltaPp(), 2400, grown[0].self_margin_pp),
            "+6.42 pp of 2,400 samples, \u00b1" + FormatNumber(grown[0].self_margin_pp));
  EXPECT_EQ(UserCodeLine(base, cand), "the extra cost is on-CPU in user code: hash self " +
                                          FormatGrowth(grown[0].SelfDeltaPp(), 2400, grown[0].self_margin_pp));
  // The same change in 240 samples a side is within noise: nothing is named.
  auto [small_base, small_cand] = HashProfiles(240, 96, 111);
  EXPECT_TRUE(GrownFrames(small_base, small_cand, 5).empty());
  EXPECT_EQ(UserCodeLine(small_base, small_cand), "");
  const std::vector<FrameGrowth> rows = TopFrameGrowth(small_base, small_cand, 5);
  ASSERT_FALSE(rows.empty());
  EXPECT_TRUE(rows[0].HasInterval());
  EXPECT_FALSE(rows[0].self_grew);
}

TEST(GrownFrames, NothingInAnAaPairEvenWithManyFunctions) {
  // Identical sides up to a few samples moved between 300 small functions.
  auto [base, cand] = HashProfiles(20000, 8000, 8040, 300);
  EXPECT_TRUE(GrownFrames(base, cand, 5).empty());
  EXPECT_EQ(FormatGrowth(0, 0, 0), "0 pp");
}

// Repetitions whose shares spread beyond sampling count as fewer samples:
// the growth that 24,000 independent samples a side would name (hash
// 40 % -> 41.7 %) is within the interval of repetitions spread four times
// as much, and named again when the spread is the binomial one.
TEST(GrownFrames, SharesThatSpreadBetweenRepetitionsWidenTheInterval) {
  auto [base, cand] = HashProfiles(24000, 9600, 10000);
  ASSERT_EQ(GrownFrames(base, cand, 5).size(), 1u);
  const double narrow = GrownFrames(base, cand, 5)[0].self_margin_pp;
  EXPECT_EQ(Dispersion(base, cand), 1.0) << "no repetitions: nothing to widen by";
  base.spread_chi_square = 4 * 3;
  base.spread_df = 3;
  cand.spread_chi_square = 4 * 3;
  cand.spread_df = 3;
  EXPECT_DOUBLE_EQ(Dispersion(base, cand), 4.0);
  EXPECT_TRUE(GrownFrames(base, cand, 5).empty());
  const std::vector<FrameGrowth> rows = TopFrameGrowth(base, cand, 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].candidate_samples, 24000u) << "the samples reported are the ones taken";
  EXPECT_NEAR(rows[0].self_margin_pp, 2 * narrow, 0.05 * narrow);
  // Less spread than sampling (chi-square below its df) is not read as more precision.
  base.spread_chi_square = cand.spread_chi_square = 1;
  EXPECT_EQ(Dispersion(base, cand), 1.0);
  EXPECT_EQ(GrownFrames(base, cand, 5).size(), 1u);
}

// Counted profiles (instructions per function under Valgrind) are exact: a
// growth of a few hundredths of a point is named, with no interval, and the
// why says the extra instructions are in that function.
TEST(GrownFrames, CountedProfilesNameTheFunctionWhoseInstructionsGrewWithoutAnInterval) {
  auto [base, cand] = HashProfiles(10'000'000, 4'000'000, 4'040'000);  // hash +1 % of its instructions
  base.kind = cand.kind = "counted";
  const std::vector<FrameGrowth> grown = GrownFrames(base, cand, 5);
  ASSERT_EQ(grown.size(), 1u);
  EXPECT_EQ(grown[0].frame, "hash");
  EXPECT_FALSE(grown[0].HasInterval());
  EXPECT_NEAR(grown[0].SelfDeltaPp(), 0.4, 1e-9);
  const std::optional<UserCodeGrowth> user = UserCodeGrowthOf(base, cand);
  ASSERT_TRUE(user.has_value());
  EXPECT_TRUE(user->counted);
  EXPECT_EQ(DescribeUserCode(*user),
            "the extra instructions are in user code: hash self +0.4 pp of the instructions (counted)");
  // Identical counts name nothing; so does a change below a hundredth of a point.
  auto [same_base, same_cand] = HashProfiles(10'000'000, 4'000'000, 4'000'500);
  same_base.kind = same_cand.kind = "counted";
  EXPECT_TRUE(GrownFrames(same_base, same_cand, 5).empty());
}

TEST(GrownFrames, AGrowthBelowOnePointIsNotNamedHoweverManySamples) {
  // 0.5 pp in 4 million samples is far outside the interval but could be a burst of interrupts.
  auto [base, cand] = HashProfiles(4000000, 1600000, 1620000);
  EXPECT_TRUE(GrownFrames(base, cand, 5).empty());
  auto [big_base, big_cand] = HashProfiles(4000000, 1600000, 1660000);
  EXPECT_EQ(GrownFrames(big_base, big_cand, 5).size(), 1u);
}

TEST(GrownFrames, KernelGrowthMeansNoUserCodeLine) {
  FoldedProfile base = Profile({{"main;hash", 1000}, {"main;parse", 1000}, {"main;read_[k]", 400}});
  FoldedProfile cand = Profile({{"main;hash", 1200}, {"main;parse", 700}, {"main;read_[k]", 500}});
  std::vector<FrameGrowth> grown = GrownFrames(base, cand, 5);
  ASSERT_EQ(grown.size(), 2u);
  EXPECT_EQ(grown[0].frame, "hash");
  EXPECT_EQ(grown[1].frame, "read_[k]");
  EXPECT_EQ(UserCodeLine(base, cand), "");
}

TEST(GrownFrames, NeverNamesInterruptWorkOrUnmappedFrames) {
  // A burst of softirq work and of unsymbolizable frames on the candidate's side only.
  FoldedProfile base = Profile({{"main;hash", 1000}, {"main;parse", 1000}});
  FoldedProfile cand = Profile({{"main;hash", 1000},
                                {"main;parse", 700},
                                {"main;hash;asm_sysvec_apic_timer_interrupt_[k];handle_softirqs_[k];rcu_core_[k]", 150},
                                {"[unknown];[unknown]", 150},
                                {"libc.so.6+0x27249;main;parse", 300}});
  for (const FrameGrowth& r : GrownFrames(base, cand, 10)) ADD_FAILURE() << r.frame;
  const std::vector<FrameGrowth> rows = TopFrameGrowth(base, cand, 10);
  auto row = [&](const std::string& frame) {
    return *std::find_if(rows.begin(), rows.end(), [&](const FrameGrowth& r) { return r.frame == frame; });
  };
  EXPECT_TRUE(row("rcu_core_[k]").interrupt);
  EXPECT_TRUE(row("rcu_core_[k]").self_grew) << "grown, but not named";
  EXPECT_FALSE(row("hash").interrupt);
  EXPECT_FALSE(row("main").interrupt);
}

// A process's start and teardown come in clusters: once per process, as
// long as one exec or one address space's teardown takes. More of them on
// one side must not name exec or exit, nor, through the denominator, the
// workload's own frames on the other side as grown.
TEST(GrownFrames, AProcessesStartAndTeardownAreNotTheWorkloadsCode) {
  FoldedProfile base = Profile({{"main;hash", 1000},
                                {"main;parse", 1000},
                                {"execve_[k];bprm_execve_[k];begin_new_exec_[k];exit_mmap_[k]", 400},
                                {"exit_[k];do_exit_[k];exit_mmap_[k];unmap_vmas_[k]", 400}});
  FoldedProfile cand = Profile({{"main;hash", 1000}, {"main;parse", 1000}});
  for (const FrameGrowth& r : GrownFrames(base, cand, 10)) ADD_FAILURE() << r.frame;
  for (const FrameGrowth& r : GrownFrames(cand, base, 10)) ADD_FAILURE() << r.frame;
  const std::vector<FrameGrowth> rows = TopFrameGrowth(base, cand, 10);
  for (const FrameGrowth& r : rows) {
    EXPECT_NE(r.frame, "exit_mmap_[k]");
    if (r.frame == "main") {
      EXPECT_DOUBLE_EQ(r.baseline_inclusive, 1.0) << "main is all the running code";
    }
  }
}

TEST(GrownFrames, AKernelFunctionGrowsOnlyByItsSharesOutsideInterrupts) {
  // On a busy host the candidate, running longer, takes more reschedule IPIs
  // and timer ticks on its way back to user mode; irqentry_exit_to_user_mode
  // also ends page faults, so it is no interrupt-only frame.
  FoldedProfile base = Profile({{"main;hash", 10000},
                                {"main;parse", 10000},
                                {"main;asm_exc_page_fault_[k];irqentry_exit_to_user_mode_[k]", 200},
                                {"main;hash;asm_sysvec_reschedule_ipi_[k];irqentry_exit_to_user_mode_[k]", 50}});
  FoldedProfile cand = Profile({{"main;hash", 11500},
                                {"main;parse", 10000},
                                {"main;asm_exc_page_fault_[k];irqentry_exit_to_user_mode_[k]", 200},
                                {"main;hash;asm_sysvec_reschedule_ipi_[k];irqentry_exit_to_user_mode_[k]", 600}});
  const std::vector<FrameGrowth> grown = GrownFrames(base, cand, 10);
  ASSERT_FALSE(grown.empty());
  EXPECT_EQ(grown[0].frame, "hash");
  for (const FrameGrowth& r : grown) EXPECT_FALSE(r.frame == "irqentry_exit_to_user_mode_[k]" && r.self_grew);
  EXPECT_EQ(UserCodeLine(base, cand).rfind("the extra cost is on-CPU in user code: hash self +", 0), 0u)
      << UserCodeLine(base, cand);
}

TEST(GrownFrames, BlockedTimeHasNoInterval) {
  FoldedProfile base = Profile({{"main;read_[k]", 1000}}, "off-cpu");
  FoldedProfile cand = Profile({{"main;read_[k]", 1000}, {"main;sleep_[k]", 9000}}, "off-cpu");
  EXPECT_TRUE(GrownFrames(base, cand, 5).empty());
  for (const FrameGrowth& r : TopFrameGrowth(base, cand, 5)) EXPECT_FALSE(r.HasInterval());
}

TEST(GrowthZ, CountsOnlyFunctionsThatCouldBeNamed) {
  const double z10 = GrowthZ({});
  EXPECT_NEAR(z10, 2.5758, 1e-3);  // 5 % over at least 10
  // 1,000 functions with too few samples to be named: the family stays 10.
  EXPECT_NEAR(GrowthZ(std::vector<double>(1000, 1.0)), z10, 1e-9);
  // 1,000 that could all be named: Bonferroni over 1,000.
  EXPECT_NEAR(GrowthZ(std::vector<double>(1000, 50.0)), 3.8906, 1e-3);
  // 20 that could be and 980 that could not: 20.
  std::vector<double> mixed(980, 1.0);
  mixed.insert(mixed.end(), 20, 50.0);
  EXPECT_NEAR(GrowthZ(mixed), 2.8070, 1e-3);
}

TEST(TopFrameGrowth, CallerWhoseExtraTimeSpreadsOverCalleesOutranksUnchangedFrames) {
  FoldedProfile base = Profile({{"main;render;a", 10}, {"main;render;b", 10}, {"main;idle", 80}});
  FoldedProfile cand = Profile(
      {{"main;render;a", 12}, {"main;render;b", 12}, {"main;render;c", 12}, {"main;render;d", 12}, {"main;idle", 52}});
  std::vector<FrameGrowth> rows = TopFrameGrowth(base, cand, 10);
  // Each callee grew by 2-12 pp of self; render by 28 pp inclusive and leads
  // those with equal self growth (0): main and render.
  auto pos = [&](const std::string& f) {
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].frame == f) return i;
    return rows.size();
  };
  EXPECT_LT(pos("render"), pos("main"));
  EXPECT_EQ(rows.back().frame, "idle");
}

TEST(TopFrameGrowth, RecursionCountsOnceForInclusive) {
  std::vector<FrameGrowth> rows = TopFramesBySelf(Profile({{"a;a;a", 10}, {"a;b", 30}}), 10);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].frame, "b");
  EXPECT_NEAR(rows[0].candidate_self, 0.75, 1e-12);
  EXPECT_EQ(rows[1].frame, "a");
  EXPECT_NEAR(rows[1].candidate_inclusive, 1.0, 1e-12);
  EXPECT_NEAR(rows[1].candidate_self, 0.25, 1e-12);
}

TEST(TopFrameGrowth, SharesAreOfTheTotalIncludingDroppedStacks) {
  FoldedProfile p = Profile({{"a", 10}});
  p.total = 40;  // 30 dropped for room
  EXPECT_NEAR(TopFramesBySelf(p, 1).front().candidate_self, 0.25, 1e-12);
}

// A blocking place: the wait's self time is the scheduler's in every stack,
// so frames cannot name it; the user stack that grew does.
TEST(TopStackGrowth, NamesTheUserStackWhoseWaitGrewWithKernelFramesFolded) {
  FoldedProfile base = Profile({{"main;nap;nanosleep;do_nanosleep_[k];schedule_[k]", 50},
                                {"main;spin;irq_exit_[k];schedule_[k]", 40},
                                {"main;spin;preempt_[k];schedule_[k]", 10}},
                               "off-cpu");
  FoldedProfile cand = Profile({{"main;nap;nanosleep;do_nanosleep_[k];schedule_[k]", 50},
                                {"main;spin;irq_exit_[k];schedule_[k]", 40},
                                {"main;block_here;nanosleep;do_nanosleep_[k];schedule_[k]", 300},
                                {"kworker_[k];schedule_[k]", 10}},
                               "off-cpu");
  EXPECT_TRUE(IsBlockedTimeProfile(cand));
  EXPECT_FALSE(IsBlockedTimeProfile(Profile({{"main", 1}})));
  std::vector<StackGrowth> rows = TopStackGrowth(&base, cand, 10);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].frames, (std::vector<std::string>{"main", "block_here", "nanosleep"}));
  EXPECT_DOUBLE_EQ(rows[0].baseline_share, 0);
  EXPECT_DOUBLE_EQ(rows[0].candidate_share, 0.75);
  EXPECT_DOUBLE_EQ(rows[0].DeltaPp(), 75);
  // A stack with only kernel frames has no user frames; the two spin stacks are one.
  EXPECT_TRUE(rows[1].frames.empty());
  EXPECT_DOUBLE_EQ(rows[1].candidate_share, 0.025);
  EXPECT_EQ(rows[3].frames, (std::vector<std::string>{"main", "spin"}));
  EXPECT_DOUBLE_EQ(rows[3].baseline_share, 0.5);
  EXPECT_DOUBLE_EQ(rows[3].candidate_share, 0.1);
  EXPECT_EQ(TopStackGrowth(&base, cand, 2).size(), 2u);
  // Without a baseline: the heaviest stacks.
  rows = TopStackGrowth(nullptr, cand, 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].frames.at(1), "block_here");
}

TEST(FlameGraph, WidthsSumToTheParentsAndTheRootFillsTheGraph) {
  FlameGraphOptions options;
  options.width = 1000;
  FoldedProfile p = GrowthCandidate();
  FlameLayout layout = LayoutFlameGraph(p, nullptr, options);
  ASSERT_FALSE(layout.frames.empty());
  EXPECT_EQ(layout.frames.front().frame, "all");
  EXPECT_DOUBLE_EQ(layout.frames.front().width, 1000);
  EXPECT_EQ(layout.depth, 4);
  EXPECT_EQ(layout.pruned, 0u);
  const FlameFrame* work = FindFrame(layout, "work", 2);
  const FlameFrame* hash = FindFrame(layout, "hash", 3);
  const FlameFrame* parse = FindFrame(layout, "parse", 3);
  const FlameFrame* main_frame = FindFrame(layout, "main", 1);
  ASSERT_TRUE(work && hash && parse && main_frame);
  EXPECT_NEAR(main_frame->width, 1000, 1e-9);
  EXPECT_NEAR(work->width, 1000.0 * 420 / 460, 1e-9);
  EXPECT_NEAR(hash->width + parse->width, work->width, 1e-9);
  // Siblings in name order, side by side from the parent's left edge.
  EXPECT_NEAR(hash->x, work->x, 1e-9);
  EXPECT_NEAR(parse->x, hash->x + hash->width, 1e-9);
  // Every child lies inside its parent's span.
  for (const FlameFrame& f : layout.frames) {
    EXPECT_GE(f.x, -1e-9);
    EXPECT_LE(f.x + f.width, 1000 + 1e-9);
  }
  EXPECT_EQ(FindFrame(layout, "read_[k]", 4)->kind, FrameKind::kKernel);
}

TEST(FlameGraph, ColoursFramesByKind) {
  FlameLayout layout = LayoutFlameGraph(Profile({{"main;read_[k]", 10}, {"main;[unknown]", 10}, {"main;work", 10}}),
                                        nullptr, FlameGraphOptions{});
  Rgb kernel = ParseFill(FindFrame(layout, "read_[k]", 2)->fill);
  Rgb unknown = ParseFill(FindFrame(layout, "[unknown]", 2)->fill);
  Rgb user = ParseFill(FindFrame(layout, "work", 2)->fill);
  EXPECT_GT(user.r, user.b + 100) << "user code is warm";
  EXPECT_GT(kernel.b, kernel.r + 50) << "kernel code is aqua";
  EXPECT_EQ(unknown.r, unknown.b) << "unknown is grey";
}

TEST(FlameGraph, PrunesTinyFramesAndBoundsTheFrameCount) {
  std::map<std::string, uint64_t> stacks;
  stacks["main;hot;loop"] = 1000000;
  for (int i = 0; i < 300; ++i) {
    for (int j = 0; j < 100; ++j) stacks["main;f" + std::to_string(i) + ";g" + std::to_string(j)] = 100 + i;
  }
  stacks["main;rare"] = 1;  // far below 0.1 %
  FoldedProfile p = Profile(stacks);
  FlameGraphOptions options;
  FlameLayout layout = LayoutFlameGraph(p, nullptr, options);
  EXPECT_LE(layout.frames.size(), options.max_frames);
  EXPECT_EQ(layout.frames.size() + layout.pruned, 3 + 300 * 101 + 2u) << "every frame drawn or counted";
  EXPECT_EQ(FindFrame(layout, "rare", 2), nullptr);
  EXPECT_NE(FindFrame(layout, "loop", 3), nullptr);
  // Only frames of at least 0.1 % of the width are drawn.
  for (const FlameFrame& f : layout.frames) EXPECT_GE(f.width, options.min_width_share * options.width - 1e-9);

  options.max_frames = 50;
  layout = LayoutFlameGraph(p, nullptr, options);
  EXPECT_EQ(layout.frames.size(), 50u);
  // The frames kept hang together: each lies on a drawn frame one level down.
  for (const FlameFrame& f : layout.frames) {
    if (f.depth == 0) continue;
    bool on_parent = std::any_of(layout.frames.begin(), layout.frames.end(), [&](const FlameFrame& parent) {
      return parent.depth == f.depth - 1 && parent.x <= f.x + 1e-9 && f.x + f.width <= parent.x + parent.width + 1e-9;
    });
    EXPECT_TRUE(on_parent) << f.frame;
  }
  std::string svg = FlameGraphSvg(p, options);
  EXPECT_NE(svg.find("not drawn"), std::string::npos);

  std::string full = FlameGraphSvg(p, FlameGraphOptions{});
  EXPECT_LT(full.size(), 2000u * 400) << "bounded size";
  if (ToolAvailable("command -v xmllint")) {
    EXPECT_TRUE(XmllintParses(full));
  }
}

TEST(FlameGraph, EscapesHostileFrameNames) {
  const std::string long_name(20000, 'x');
  FoldedProfile p = Profile({{"main;<script>alert(1)</script>", 10},
                             {"main;]]><!--", 10},
                             {"main;\"quoted\" 'single' & amp", 10},
                             {"main;ctl\x01\x1b[31mred\x7f", 10},
                             {"main;bad\xff\xfe\xc3utf8", 10},
                             {"main;" + long_name, 10},
                             {"main;\xe2\x9c\x93 check", 10}});
  FlameGraphOptions options;
  options.label = "graph of <b>scenario</b> ]]>";
  for (const std::string& svg : {FlameGraphSvg(p, options), DifferentialFlameGraphSvg(GrowthBaseline(), p, options)}) {
    ASSERT_FALSE(svg.empty());
    EXPECT_EQ(svg.find("<script"), std::string::npos);
    EXPECT_EQ(svg.find("<b>"), std::string::npos);
    EXPECT_EQ(svg.find("]]>"), std::string::npos);
    EXPECT_EQ(svg.find("<!--"), std::string::npos);
    EXPECT_EQ(svg.find('\x01'), std::string::npos);
    EXPECT_EQ(svg.find("style="), std::string::npos) << "the report's CSP forbids style attributes";
    EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
    EXPECT_EQ(svg.find(long_name.substr(0, 1000)), std::string::npos) << "a huge name is cut";
    EXPECT_LT(svg.size(), 20000u);
    if (ToolAvailable("command -v xmllint")) {
      EXPECT_TRUE(XmllintParses(svg)) << svg;
    }
  }
}

TEST(FlameGraph, LabelsAreCutToFitTheirFrame) {
  FlameGraphOptions options;
  options.width = 200;
  FoldedProfile p = Profile({{"main;a_rather_long_function_name_that_cannot_fit", 10}, {"main;b", 10}});
  std::string svg = FlameGraphSvg(p, options);
  EXPECT_EQ(svg.find(">a_rather_long_function_name_that_cannot_fit<"), std::string::npos);
  EXPECT_NE(svg.find(">a_rather_lo"), std::string::npos);
  EXPECT_NE(svg.find("..</text>"), std::string::npos);
  // The full name is in the tooltip.
  EXPECT_NE(svg.find("<title>a_rather_long_function_name_that_cannot_fit\n"), std::string::npos);
}

TEST(DifferentialFlameGraph, GrownFramesRedShrunkBlueByShareOfEachTotal) {
  FoldedProfile baseline = GrowthBaseline();
  FlameLayout layout = LayoutFlameGraph(GrowthCandidate(), &baseline, FlameGraphOptions{});
  ASSERT_TRUE(layout.differential);
  const FlameFrame* hash = FindFrame(layout, "hash", 3);
  const FlameFrame* parse = FindFrame(layout, "parse", 3);
  const FlameFrame* main_frame = FindFrame(layout, "main", 1);
  ASSERT_TRUE(hash && parse && main_frame);
  EXPECT_NEAR(hash->delta_pp, 100 * (320.0 / 460 - 60.0 / 130), 1e-9);
  EXPECT_NEAR(main_frame->delta_pp, 0, 1e-9) << "main is the whole of both sides";
  Rgb grew = ParseFill(hash->fill), shrank = ParseFill(parse->fill), same = ParseFill(main_frame->fill);
  EXPECT_EQ(grew.r, 255);
  EXPECT_LT(grew.b, 100) << "the largest change is drawn at (near) full colour";
  EXPECT_EQ(shrank.b, 255);
  EXPECT_LT(shrank.r, 255);
  EXPECT_EQ(same.r, same.b);
  EXPECT_DOUBLE_EQ(layout.max_abs_delta_pp, std::fabs(hash->delta_pp));
}

TEST(DifferentialFlameGraph, SaysWhatOnlyTheBaselineHad) {
  FoldedProfile base = Profile({{"main;gone", 25}, {"main;kept", 75}});
  FoldedProfile cand = Profile({{"main;kept", 100}});
  FlameLayout layout = LayoutFlameGraph(cand, &base, FlameGraphOptions{});
  EXPECT_NEAR(layout.baseline_only_share, 0.25, 1e-12);
  std::string svg = DifferentialFlameGraphSvg(base, cand, FlameGraphOptions{});
  EXPECT_NE(svg.find("25.0 % of the baseline on stacks the candidate lacks"), std::string::npos) << svg;
  EXPECT_NE(svg.find("share grew"), std::string::npos);
  if (ToolAvailable("command -v xmllint")) {
    EXPECT_TRUE(XmllintParses(svg));
  }
}

TEST(FlameGraph, EmptyProfileDrawsNothing) {
  EXPECT_EQ(FlameGraphSvg(Profile({}), FlameGraphOptions{}), "");
  EXPECT_EQ(DifferentialFlameGraphSvg(GrowthBaseline(), Profile({}), FlameGraphOptions{}), "");
}

TEST(EvidenceFiles, StemsCannotLeaveTheDirectoryOrHideOrBreakLines) {
  for (const std::string& name :
       {std::string("../../etc/passwd"), std::string(".."), std::string("."), std::string("a/b\\c"),
        std::string("ctl\x01\n\r\tname"), std::string(""), std::string("\xff\xfe"), std::string(500, '/')}) {
    std::string stem = FileStem(name);
    EXPECT_FALSE(stem.empty());
    EXPECT_NE(stem.front(), '.') << stem;
    EXPECT_LE(stem.size(), 80u);
    EXPECT_TRUE(std::regex_match(stem, std::regex("[A-Za-z0-9._-]+"))) << stem;
  }
  EXPECT_EQ(FileStem("camera-cold_start.v2"), "camera-cold_start.v2");
}

TEST(EvidenceFiles, NamesAreUniqueAcrossScenariosThatLookAlike) {
  RunResults r;
  for (const char* name : {"a/b", "a_b", "a?b", "a_b-2"}) {
    ScenarioResult s;
    s.name = name;
    Evidence e;
    e.side = "candidate";
    e.profiles = {Profile({{"x", 1}}, "on-cpu"), Profile({{"x", 1}}, "off-cpu")};
    s.evidence.push_back(e);
    e.side = "baseline";
    s.evidence.push_back(e);
    r.scenarios.push_back(s);
  }
  AssignFoldedFiles(r);
  std::set<std::string> files;
  for (const ScenarioResult& s : r.scenarios) {
    for (const Evidence& e : s.evidence) {
      for (const FoldedProfile& p : e.profiles) {
        EXPECT_TRUE(files.insert(p.file).second) << p.file;
        EXPECT_EQ(p.file.rfind("evidence/", 0), 0u) << p.file;
        EXPECT_EQ(p.file.find("..", 0), std::string::npos) << p.file;
      }
    }
  }
  EXPECT_EQ(files.size(), 16u);
  EXPECT_EQ(r.scenarios[0].evidence[0].profiles[0].file, "evidence/a_b.candidate.on-cpu.folded");
  EXPECT_EQ(r.scenarios[1].evidence[1].profiles[1].file, "evidence/a_b-2.baseline.off-cpu.folded");
}

TEST(EvidenceFiles, FoldedTextIsOneLinePerStack) {
  FoldedProfile p = Profile({{"main;evil\nframe 999", 3}, {"main;ok", 5}});
  EXPECT_EQ(FoldedText(p), "main;evil?frame 999 3\nmain;ok 5\n");
}

// A run whose one scenario regressed, with stacks on both sides, a note and
// hostile names: the reports written to disk.
RunResults EvidenceResults() {
  RunResults r;
  r.suite = "evidence";
  ScenarioResult s;
  s.name = "../hostile <script>alert(1)</script>\x01";
  s.workload_kind = "command";
  CheckResult c;
  c.spec.metric = "workload.wall_time";
  c.statistic = "value";
  c.unit = "ns";
  c.verdict = Verdict::kRegression;
  c.baseline_values = {100, 101, 99};
  c.candidate_values = {130, 131, 129};
  c.baseline_median = 100;
  c.candidate_median = 130;
  c.change_pct = 30;
  s.checks.push_back(c);
  Evidence cand;
  cand.side = "candidate";
  cand.reason = "workload.wall_time.value: regression (+30.0 %)";
  cand.frequency_hz = 99;
  cand.slowdown = 1.04;
  cand.notes = {"user stacks truncated in 12 of 460 samples <b>: rebuild with -fno-omit-frame-pointer"};
  cand.profiles = {
      GrowthCandidate(),
      Profile({{"main;read_file;vfs_read_[k];schedule_[k]", 5000000}, {"main;<script>x", 100}}, "off-cpu")};
  cand.profiles[0].truncated_user_stacks = 12;
  Evidence base = cand;
  base.side = "baseline";
  base.notes.clear();
  base.profiles = {GrowthBaseline(), Profile({{"main;read_file;vfs_read_[k];schedule_[k]", 1000000}}, "off-cpu")};
  s.evidence = {cand, base};
  r.scenarios.push_back(s);
  return r;
}

TEST(EvidenceReports, WritesFoldedFilesInsideTheOutDirAndLinksThem) {
  fs::path dir = testing::MakeTempDir("perfgate-flame");
  fs::path out = dir / "out";
  WriteReports(WithGrowth(EvidenceResults()), out.string());
  std::vector<fs::path> folded;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".folded") folded.push_back(entry.path());
  }
  ASSERT_EQ(folded.size(), 4u);
  for (const fs::path& f : folded) EXPECT_EQ(f.parent_path(), out / "evidence") << f;
  const std::string stem = FileStem(EvidenceResults().scenarios[0].name);
  EXPECT_EQ(ReadFile(out / "evidence" / (stem + ".candidate.on-cpu.folded")).find("main;work;hash 300\n") !=
                std::string::npos,
            true);
  std::string html = ReadFile(out / "report" / "index.html");
  EXPECT_NE(html.find("href=\"../evidence/" + stem + ".candidate.on-cpu.folded\""), std::string::npos);
  EXPECT_NE(html.find("results.json"), std::string::npos);
  std::string json = ReadFile(out / "results.json");
  EXPECT_NE(json.find("\"file\": \"evidence/" + stem + ".baseline.off-cpu.folded\""), std::string::npos);
  if (ToolAvailable("command -v xmllint")) {
    std::string command = "xmllint --noout '" + (out / "report" / "index.html").string() + "'";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
  fs::remove_all(dir);
}

// Each fact once: a note both sides give alike is one line naming both; the
// same note with each side's figures is one line with both; a side's
// repeats (one per profile) go.
TEST(EvidenceReports, HtmlSaysEachNoteOnceWithBothSidesFigures) {
  RunResults r = EvidenceResults();
  ASSERT_EQ(r.scenarios[0].evidence.size(), 2u);
  const std::string truncated = "on-cpu: 12 of 300 user stacks end early: rebuild with -fno-omit-frame-pointer";
  for (Evidence& e : r.scenarios[0].evidence) {
    const bool candidate = e.side == "candidate";
    e.notes = {"no symbols: /opt/app (stripped)",
               candidate ? "on-cpu: 15 of 310 user stacks end early: rebuild with -fno-omit-frame-pointer" : truncated,
               candidate ? "on-cpu: 15 of 310 user stacks end early: rebuild with -fno-omit-frame-pointer" : truncated};
  }
  const std::string html = HtmlReporter().Render(WithGrowth(r));
  size_t said = 0;
  for (size_t at = html.find("-fno-omit-frame-pointer"); at != std::string::npos;
       at = html.find("-fno-omit-frame-pointer", at + 1))
    ++said;
  EXPECT_EQ(said, 2u) << "one line, each side's figures";
  // (The sides in the evidence's order: the candidate's first.)
  EXPECT_NE(html.find("candidate: on-cpu: 15 of 310 user stacks end early: rebuild with -fno-omit-frame-pointer; "
                      "baseline: on-cpu: 12 of 300"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<li>candidate and baseline: no symbols: /opt/app (stripped)</li>"), std::string::npos) << html;
}

TEST(EvidenceReports, HtmlShowsGraphsTableNotesAndRepetitionCost) {
  RunResults r = EvidenceResults();
  AssignFoldedFiles(r);
  std::string html = HtmlReporter().Render(WithGrowth(r));
  EXPECT_NE(html.find("Evidence: which code"), std::string::npos);
  EXPECT_NE(html.find("rebuild with -fno-omit-frame-pointer"), std::string::npos);
  EXPECT_EQ(html.find("samples <b>"), std::string::npos);
  EXPECT_NE(html.find("99 Hz"), std::string::npos);
  EXPECT_NE(html.find("1.04\u00d7"), std::string::npos);
  EXPECT_EQ(html.find("style="), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Differential and plain graphs for both kinds.
  size_t graphs = 0;
  for (size_t at = html.find("class=\"flame\" width="); at != std::string::npos;
       at = html.find("class=\"flame\" width=", at + 1))
    ++graphs;
  EXPECT_EQ(graphs, 4u);
  // The growth table names hash before anything else.
  size_t table = html.find("<table class=\"growth\">");
  ASSERT_NE(table, std::string::npos);
  EXPECT_NE(html.find("<code>hash</code>", table), std::string::npos);
  EXPECT_EQ(html.find("<code>", table), html.find("<code>hash</code>", table));
  // The off-CPU profile's table is by blocking stack: read_file grew.
  size_t stacks = html.find("Blocking stack (user frames, innermost last; top by growth)");
  ASSERT_NE(stacks, std::string::npos);
  EXPECT_NE(html.find("<code>main</code> \u2192 <code>read_file</code></td>", stacks), std::string::npos);
  EXPECT_NE(html.find("<code>&lt;script&gt;x</code>", stacks), std::string::npos);
  EXPECT_EQ(html.find("<code>schedule</code>", stacks), std::string::npos) << "kernel frames stay in the graph";
  // Without a baseline side: top frames by self share.
  r.scenarios[0].evidence.pop_back();
  html = HtmlReporter().Render(WithGrowth(r));
  EXPECT_NE(html.find("top by self share"), std::string::npos);
  EXPECT_EQ(html.find("differential"), std::string::npos);
}

TEST(EvidenceReports, MarkdownNamesTheGrownFunctionsEscaped) {
  RunResults r = EvidenceResults();
  std::string md = MarkdownReporter().Render(WithGrowth(r));
  size_t at = md.find("**Where the time went**");
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_NE(md.find("on-cpu vs baseline: the extra cost is on-CPU in user code: hash self +", at), std::string::npos)
      << md;
  EXPECT_NE(
      md.find("grew beyond sampling noise: hash self +26.8 pp of 460 samples, \u00b112.3 (38.5 % \u2192 65.2 %)", at),
      std::string::npos)
      << md;
  // Blocked time by stack: the new (hostile) stack grew by 0.002 pp, read_file
  // kept its share: moves that small are a run's jitter, not named.
  EXPECT_NE(md.find("off-cpu, blocking stacks vs baseline: no stack's share grew by a point or more", at),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("read\\_file -0.002 pp", at), std::string::npos) << md;
  EXPECT_EQ(md.find("e-1"), std::string::npos) << "rounding noise shows as 0: " << md;
  EXPECT_EQ(md.find("<script"), std::string::npos);
  // Bounded like the rest of the summary.
  std::string small = MarkdownReporter(2000).Render(WithGrowth(r));
  EXPECT_LE(small.size(), 2000u);
}

// The "why" of a failing scenario (the Markdown item, the HTML section,
// results.json's "why").
std::string WhyLine(const std::string& md) {
  const size_t why = md.find("**Why it regressed**");
  if (why == std::string::npos) return "(no why)";
  const size_t item = md.find("\n- ", why);
  return md.substr(item + 1, md.find('\n', item + 1) - item - 1);
}

TEST(EvidenceReports, TheWhyNamesTheGrowingUserFunctionWhenNoKernelMetricGrew) {
  RunResults r = EvidenceResults();
  ExplainFailures(r, GateMetricVocabulary());
  const std::string growth = UserCodeLine(GrowthBaseline(), GrowthCandidate());
  ASSERT_EQ(growth.rfind("the extra cost is on-CPU in user code: hash self +26.8 pp of 460 samples, \u00b1", 0), 0u)
      << growth;
  const std::string line = WhyLine(MarkdownReporter().Render(WithGrowth(r)));
  EXPECT_NE(line.find(": no kernel-side metric clearly grew; the extra cost is on-CPU in user code: hash self +26.8 pp "
                      "of 460 samples, \u00b1"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("<script"), std::string::npos) << line;
  const std::string html = HtmlReporter().Render(WithGrowth(r));
  const size_t why = html.find("id=\"why\"");
  ASSERT_NE(why, std::string::npos);
  const std::string section = html.substr(why, html.find("</section>", why) - why);
  EXPECT_NE(section.find("<p class=\"user-code\">The extra cost is on-CPU in user code: hash self +26.8 pp"),
            std::string::npos)
      << section;
  const nlohmann::json json = nlohmann::json::parse(JsonReporter().Render(r));
  const nlohmann::json& user_code = json["scenarios"][0]["explanation"]["user_code"];
  EXPECT_EQ(user_code["function"], "hash");
  EXPECT_NEAR(user_code["self_delta_pp"].get<double>(), 26.8, 0.05);
  EXPECT_EQ(user_code["samples"], 460);
  const std::string xml = JUnitReporter().Render(r);
  EXPECT_NE(xml.find("why: no kernel-side metric clearly grew; the extra cost is on-CPU in user code: hash self +26.8"),
            std::string::npos)
      << xml;

  // Without the baseline's samples there is no growth to name.
  RunResults one_side = r;
  one_side.scenarios[0].evidence.pop_back();
  ExplainFailures(one_side, GateMetricVocabulary());
  EXPECT_EQ(WhyLine(MarkdownReporter().Render(WithGrowth(one_side))).find("user code"), std::string::npos);
  // Nor when the growth is within sampling noise.
  RunResults noise = r;
  noise.scenarios[0].evidence[0].profiles[0] = GrowthBaseline();
  ExplainFailures(noise, GateMetricVocabulary());
  EXPECT_EQ(WhyLine(MarkdownReporter().Render(WithGrowth(noise))).find("user code"), std::string::npos);
  // Nor when a kernel-side metric grew: that leads the why.
  RunResults kernel = r;
  CheckResult syscalls = testing::CheckWithValues("syscalls.count", "per_op", Verdict::kRegression,
                                                  {16, 16, 15, 16, 17}, {48, 48, 47, 48, 49});
  syscalls.unit = "count/op";
  syscalls.baseline_median = 16;
  syscalls.candidate_median = 48;
  syscalls.change_pct = 200;
  kernel.scenarios[0].checks.push_back(syscalls);
  ExplainFailures(kernel, GateMetricVocabulary());
  const std::string kernel_line = WhyLine(MarkdownReporter().Render(WithGrowth(kernel)));
  EXPECT_NE(kernel_line.find("syscalls.count"), std::string::npos) << kernel_line;
  EXPECT_EQ(kernel_line.find("user code"), std::string::npos) << kernel_line;
}

// Evidence with a preempted profile on both sides: the stacks that waited
// for a CPU.
RunResults PreemptedEvidence() {
  RunResults r = EvidenceResults();
  r.scenarios[0].evidence[0].profiles.push_back(Profile(
      {{"main;work;hash;asm_sysvec_apic_timer_interrupt_[k]", 9000000}, {"main;read_file", 1000000}}, "preempted"));
  r.scenarios[0].evidence[1].profiles.push_back(Profile(
      {{"main;work;hash;asm_sysvec_apic_timer_interrupt_[k]", 1000000}, {"main;read_file", 1000000}}, "preempted"));
  return r;
}

TEST(EvidenceReports, MarkdownSaysPreemptedStacksWaitedForACpu) {
  const std::string md = MarkdownReporter().Render(WithGrowth(PreemptedEvidence()));
  const size_t at = md.find("**Where the time went**");
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_NE(md.find("/ preempted, stacks waiting for a CPU vs baseline: main \u2192 work \u2192 hash +40.0 pp (50.0 % "
                    "\u2192 90.0 %)",
                    at),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("preempted, blocking"), std::string::npos) << md;
}

TEST(EvidenceReports, PreemptedProfileRoundTripsThroughResultsJson) {
  const RunResults r = PreemptedEvidence();
  const RunResults back = ResultsFromJson(nlohmann::json::parse(JsonReporter().Render(r)), "results.json");
  ASSERT_EQ(back.scenarios.size(), 1u);
  ASSERT_EQ(back.scenarios[0].evidence.size(), 2u);
  for (size_t side = 0; side < 2; ++side) {
    const FoldedProfile* original = FindProfile(r.scenarios[0].evidence[side], "preempted");
    const FoldedProfile* read = FindProfile(back.scenarios[0].evidence[side], "preempted");
    ASSERT_NE(read, nullptr) << side;
    EXPECT_EQ(read->unit, "ns");
    EXPECT_EQ(read->stacks, original->stacks);
    EXPECT_EQ(read->total, original->total);
    EXPECT_EQ(read->samples, original->samples);
  }
}

}  // namespace
}  // namespace perfgate
