// Evidence of which code a failing check points at: stacks captured in an
// extra "evidence" repetition (suite `evidence: always|on-failure|never`),
// stored folded, root first, the way FlameGraph, inferno and speedscope read
// them ("main;parse;memcpy 42").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace perfgate {

// One kind of stack profile of one side of a comparison.
struct FoldedProfile {
  // "on-cpu" (profile probe) | "off-cpu" (offcpu probe: blocked) |
  // "preempted" (offcpu probe: runnable, waiting for a CPU) | "futex" (user
  // lock waits, futex probe, when the scenario has it)
  std::string kind;
  std::string unit;  // "samples" for on-cpu, "ns" of blocked or waiting time otherwise
  // Folded stack -> weight. Frames are joined by ';', outermost first. Kernel
  // frames end in "_[k]" (FlameGraph's convention); frames that could not be
  // symbolized read "module+0xOFFSET" or "[unknown]".
  std::map<std::string, uint64_t> stacks;
  uint64_t total = 0;    // all weight seen, including stacks dropped for room
  uint64_t samples = 0;  // stacks (samples or waits) behind `total`
  // Samples whose user stack stopped early (a binary without frame
  // pointers): the report says so and how to get full stacks.
  uint64_t truncated_user_stacks = 0;
  // User frame (as in `stacks`) -> the source line most of its weight fell
  // on ("src/parse.cpp:42"): for a leaf, the line that ran; further out, the
  // line of the call. From DWARF line tables; frames of objects without
  // debug info have none.
  std::map<std::string, std::string> sources;
  std::string file;  // the folded file next to the reports, relative to the out dir; empty until written
  // How far the repetitions' shares spread beyond the samples' binomial
  // spread: Pearson's chi-square of each repetition's samples per leaf frame
  // against the pooled shares, and its degrees of freedom (0: a single
  // repetition, nothing to tell). Host activity moves a function's share
  // from one repetition to the next; growth intervals widen by it.
  double spread_chi_square = 0;
  uint32_t spread_df = 0;
};

// Stacks of one side ("baseline" or "candidate") of one scenario.
struct Evidence {
  std::string side;      // "baseline" | "candidate"
  std::string reason;    // why it was captured: "always", or the failing check
  int frequency_hz = 0;  // on-CPU sampling frequency; 0 when not sampled
  std::vector<FoldedProfile> profiles;
  std::vector<std::string> notes;  // one line each: truncation, symbolization gaps, overhead
  // The evidence repetition's own cost: its wall time against the median of
  // the measured repetitions (1.03 = 3 % slower); 0 when unknown.
  double slowdown = 0;
};

// The profile of `kind` in `evidence`, or nullptr.
const FoldedProfile* FindProfile(const Evidence& evidence, const std::string& kind);
// The first evidence of `side` ("baseline" | "candidate"), or nullptr.
const Evidence* FindEvidence(const std::vector<Evidence>& evidence, const std::string& side);

// "2,400": a sample or wait count as the evidence notes and reports print it.
std::string FormatCount(uint64_t count);

}  // namespace perfgate
