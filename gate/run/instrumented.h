// Instrumented runs: the workload under Valgrind's Cachegrind with its cache
// simulation off, which counts every instruction the workload executes in
// user space, exactly, and attributes them to functions. Counts do not move
// with the host's load, the CPU's frequency or a neighbour's cache traffic,
// so a change of a fraction of a percent is measurable on a busy shared
// runner without a PMU. The launch is wrapped whatever the adapter; the
// kernel probes stay attached (Valgrind runs the workload in its own process,
// so the tracker follows it from exec as usual). A workload whose adapter
// names functions to pause in (InstrumentedPauses) runs under Callgrind,
// which counts the same instructions and can leave those functions out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/scratch_dir.h"
#include "config/credentials.h"
#include "config/suite.h"
#include "metrics/evidence.h"
#include "metrics/metric.h"
#include "metrics/metric_declaration.h"
#include "metrics/results.h"

namespace perfgate {

// Instructions executed, in all and per function (Valgrind's "fn=" names,
// which are demangled C++ names or C symbols).
struct InstructionCounts {
  uint64_t total = 0;
  std::map<std::string, uint64_t> by_function;
};

// One Cachegrind or Callgrind output file's counts ("events: Ir" first; the
// "summary:" line is the total; a function's own instructions are its cost
// lines, less Callgrind's inclusive cost of each call it makes). nullopt when
// the text is not such a file.
std::optional<InstructionCounts> ParseValgrindCounts(const std::string& text);

// The workload kinds whose launch can be wrapped: a program perfgate starts
// and waits for (not a service it only observes).
bool CanInstrument(const std::string& workload_kind);

// Valgrind's launcher as found in PATH: Debian's valgrind.bin beside its
// wrapper script when there is one; "valgrind" when none is found (the
// launch then fails as a missing program would).
std::string ValgrindExecutable();

// `argv` under Cachegrind, one output file per process in `out_dir`
// (children followed through exec, so a shell's workload is counted). With
// `paused_in` (Valgrind function patterns, '*' and '?' wildcards: the
// adapter's InstrumentedPauses), under Callgrind instead, counting nothing
// while one of those functions runs.
std::vector<std::string> InstrumentedArgv(const std::vector<std::string>& argv, const std::string& out_dir,
                                          const std::vector<std::string>& paused_in = {});

// One repetition's launch under Valgrind: a fresh directory for its counts
// (writable by the workload's user `as`, when given), removed with this.
class InstrumentedLaunch {
 public:
  InstrumentedLaunch(const std::vector<std::string>& argv, const std::vector<std::string>& paused_in,
                     const Credentials* as);
  const std::vector<std::string>& argv() const { return argv_; }
  const std::string& dir() const { return dir_.path(); }

 private:
  ::perfgate::ScratchDir dir_;  // qualified: the tests have a ScratchDir of their own
  std::vector<std::string> argv_;
};

// The counts of every process of one repetition (every output file in
// `out_dir`, summed). InfraError when there is none: the workload did not run
// under Valgrind (not installed, or a program it cannot run).
InstructionCounts ReadInstructionCounts(const std::string& out_dir);

// A function's metric name: "instr." and the name with every character a
// metric name cannot hold replaced by '_' ("instr.std::vector<int>::push_back",
// "instr.operator_new_unsigned_long_"); "" when nothing is left of it.
std::string FunctionMetricName(const std::string& function);

// Functions below this share of a repetition's instructions get no metric of
// their own: a program executes thousands, most of them a few hundred
// instructions of start-up. Low enough that a function near it on one side
// is named on the other too (0.1 % left the C library's start-up named on
// one side of an A/A pair only), high enough to keep a repetition to a few
// hundred metrics.
inline constexpr double kFunctionMetricShare = 0.0001;

// instr.total and instr.<function> (for every function of at least
// kFunctionMetricShare) as counters over `wall_s`.
void AddInstructionMetrics(const InstructionCounts& counts, double wall_s, MetricSet& out);
// Their declarations: the workload's own counts, decided by their interval.
std::vector<MetricDeclaration> InstructionMetricDeclarations();

// Adds, to every instrumented scenario of `suite` (ScenarioSpec::instrument)
// that has no check on instr.total, a regression check of its count per
// repetition at the threshold of every instruction count,
// kInstructionCountThresholdPct (metrics/results.h): counts repeat to a few
// parts per million, so a threshold this small is decided by two or three
// repetitions a side (compare/deterministic.h).
void AddInstructionChecks(Suite& suite);

// The exact differential profile's kind of FoldedProfile: instructions per
// function, counted (not sampled), each function a stack of one frame.
inline constexpr const char* kCountedProfileKind = "counted";
// The stack that holds what functions below kFunctionMetricShare executed.
inline constexpr const char* kOtherFunctionsFrame = "(other functions)";

// One side's counted profile from its repetitions: each instr.<function>
// metric's median instructions, and instr.total's median less their sum as
// kOtherFunctionsFrame. nullopt without instr.total.
std::optional<FoldedProfile> CountedProfile(const std::vector<Repetition>& repetitions);

// Adds the counted profiles of the candidate (`scenario.repetitions`) and of
// the baseline (`scenario.baseline_repetitions`) to the scenario's evidence,
// into each side's entry (made, with `reason`, when the side has none), so
// the reports' growth tables and flame graphs name the functions whose
// instructions grew, with their exact share. Nothing without instr.total.
void AddCountedEvidence(ScenarioResult& scenario, const std::string& reason);

}  // namespace perfgate
