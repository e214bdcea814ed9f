// Evidence: when a scenario's check fails (suite `evidence: on-failure`, the
// default) or always (`evidence: always`), extra repetitions after the
// measured ones with the profile probe (on-CPU samples) and the offcpu probe
// with stacks attached on top of the scenario's own probes; their stacks,
// symbolized and folded, say which code the failing check points at. Off-CPU
// time is split: "off-cpu" where the workload blocked, "preempted" where it
// was runnable and waited for a CPU (CPU contention, the host's as much as
// its own).
//
// Extra repetitions, like the traced one (run/trace_run.h), rather than
// sampling the measured ones: green runs stay exactly as fast as without
// evidence (nothing extra attached), and the sampling cost never reaches the
// numbers the verdicts rest on.
//
// Enough samples to tell a real difference from sampling noise: on-CPU
// sampling at kEvidenceFrequencyHz, or faster (up to kEvidenceMaxFrequencyHz)
// when the measured repetitions' CPU time would take more than
// kEvidenceRoundsWanted repetitions to reach the target (EvidenceFrequencyHz;
// unless the suite's profile probe sets its own), and evidence repetitions
// until every side has the on-CPU
// samples that resolve the regression being explained
// (EvidenceTargetSamples: at least kEvidenceTargetSamples) or
// kEvidenceTargetSamples off-CPU waits (a workload that mostly blocks), at
// most kEvidenceMaxRepetitions per side and no new round once
// kEvidenceBudgetS have passed. Samples count as the reports' intervals
// count them: divided by how far the shares spread between repetitions
// (RepetitionDispersion), which a busy host multiplies. With both sides
// sampled, the rounds go on while the growth of the user function that grew
// most is undecided (LeadingUserGrowth), within the same limits. Each on-CPU sample also copies the user
// registers and the top of the user stack (kEvidenceUserStackBytes): unwound
// after each repetition, used where frame pointers end early
// (symbolize/dwarf_unwind.h). The sides of an A/B run
// alternate (AB, BA, ...) under one set of probes, as the measured
// repetitions do, so what the host does meanwhile falls on both alike.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/suite.h"
#include "metrics/evidence.h"
#include "metrics/results.h"
#include "run/runner.h"

namespace perfgate {

// Why `scenario` gets an evidence repetition under `mode`: "always", the
// first failing check ("workload.wall_time: regression (+12.3 %)"), or
// nullopt for none (a green scenario under on-failure, `never`, a scenario
// that did not run).
std::optional<std::string> EvidenceReason(EvidenceMode mode, const ScenarioResult& scenario);

inline constexpr int kEvidenceFrequencyHz = 4999;
// The samples come from the workload's CPU time, which a busy host does not
// stretch; its wall time, and so each repetition's cost, it does. The rate
// rises so that the target takes about this many repetitions a side, at most
// to kEvidenceMaxFrequencyHz (a few hundred ns of BPF per sample, 1-2 % of
// the CPU there).
inline constexpr int kEvidenceMaxFrequencyHz = 19997;
inline constexpr int kEvidenceRoundsWanted = 8;
inline constexpr uint64_t kEvidenceTargetSamples = 2000;
inline constexpr uint64_t kEvidenceMaxTargetSamples = 50000;
inline constexpr int kEvidenceMaxRepetitions = 30;
inline constexpr double kEvidenceBudgetS = 60;
// User stack bytes the profile probe copies per evidence sample, for stacks
// without frame pointers (symbolize/dwarf_unwind.h), unless the suite's
// profile probe sets its own user_stack_bytes; perf's default for
// --call-graph dwarf.
inline constexpr uint32_t kEvidenceUserStackBytes = 8192;

// One side of the evidence: its scenario, "baseline" | "candidate", the
// median wall time of its measured repetitions (0 when unknown), which gives
// Evidence::slowdown, and their median CPU time (0 when unknown), which sets
// the sampling frequency.
struct EvidenceSide {
  const ScenarioSpec* spec = nullptr;
  std::string side;
  double measured_wall_s = 0;
  double measured_cpu_s = 0;
};

// The on-CPU sampling frequency that reaches `target_samples` in
// kEvidenceRoundsWanted repetitions of `cpu_s` CPU seconds each: between
// kEvidenceFrequencyHz and kEvidenceMaxFrequencyHz; kEvidenceFrequencyHz when
// the CPU time is unknown (0).
int EvidenceFrequencyHz(uint64_t target_samples, double cpu_s);

// On-CPU samples per side that resolve the growth of the function behind
// the scenario's first regression, R its change (the end of its interval
// nearer to no change, when the interval is known): a function with share p
// whose own cost makes the whole R slower grows by R(1-p)/(1+R) of the samples, R/(2(1+R))
// at p = 1/2, where the noise of a share is largest; the count gives that
// growth 90 % power against the reports' interval (two proportions,
// one-sided 5 % over 100 functions). Between kEvidenceTargetSamples (no
// regression with a relative change: `always`, a budget) and
// kEvidenceMaxTargetSamples. A 10 % regression needs about 5,000, 5 % about
// 18,000.
uint64_t EvidenceTargetSamples(const ScenarioResult& scenario);

// R of EvidenceTargetSamples as a fraction (0.1 for +10 %): the change of
// the scenario's first regression, the end of its interval nearer to no
// change; 0 when nothing regressed by a relative change (`always`, a budget).
double EvidenceChange(const ScenarioResult& scenario);

// How many times the binomial variance the sides' on-CPU shares spread by
// from one evidence repetition to the next: every side's chi-square
// (SetRepetitionSpread of its repetitions' profiles) pooled over their
// degrees of freedom, at least 1; 1 while no side has two repetitions. The
// reports divide each side's samples by it (explain/frame_growth.h), so the
// evidence needs that many times the samples for the same interval.
double RepetitionDispersion(const std::vector<std::vector<FoldedProfile>>& sides);

// Where the growth of the user function whose own share grew most stands,
// `baseline` to `candidate`, each side's samples divided by `dispersion`:
// named (beyond its interval, Bonferroni over every frame of the two
// profiles and at least 100, and at least 1 pp: never looser than the
// reports' interval), ruled out (its interval ends below R(1-p)/(1+R), the
// growth of a function of share p whose own cost makes the whole `change`
// slower), or open.
enum class GrowthDecision { kNamed, kRuledOut, kOpen };
GrowthDecision LeadingUserGrowth(const FoldedProfile& baseline, const FoldedProfile& candidate, double dispersion,
                                 double change);

// Runs the evidence repetitions of every side, interleaved, until each has
// `target_samples` on-CPU samples as the reports count them and, with a
// "baseline" and a "candidate" side and a `change` (EvidenceChange), the
// leading user function's growth is decided (or the limits above), and
// returns each side's stacks in `sides` order. Throws InfraError when the
// probes cannot attach or the workload fails.
std::vector<Evidence> EvidenceRepetitions(const std::vector<EvidenceSide>& sides, const RunOptions& options,
                                          const std::string& reason, uint64_t target_samples = kEvidenceTargetSamples,
                                          double change = 0);

// The median workload.wall_time of `repetitions`, 0 when there is none.
double MedianWallTime(const std::vector<Repetition>& repetitions);
// The median workload.cpu_time of `repetitions` in seconds, 0 when there is none.
double MedianCpuTime(const std::vector<Repetition>& repetitions);

// Adds the evidence a stored baseline was recorded with (`evidence: always`)
// to every scenario of `results` that has candidate evidence, as its
// "baseline" side; a scenario that already has a baseline side keeps it.
void AddBaselineEvidence(RunResults& results, const std::map<std::string, ScenarioResult>& baselines);

}  // namespace perfgate
