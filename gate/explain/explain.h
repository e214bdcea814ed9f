// The why, a stage of its own: when a check fails, the kernel-side metrics
// of the same scenario that grew are priced in time and ranked by how much
// of the change they can account for (docs/ARCHITECTURE.md, "Why it
// regressed"). The pipeline runs it once, after the verdicts and the
// evidence; its result is ScenarioResult::explanation, which the reporters
// and bisect render.
#pragma once

#include <cstddef>

#include "metrics/explanation.h"
#include "metrics/metric_declaration.h"
#include "metrics/results.h"

namespace perfgate {

// Other work on the host, in CPUs (host.other_cpus, either side's median),
// from which waits for a CPU are the host's noise rather than causes: on a
// busy host a workload that runs longer, or in longer bursts, is preempted
// more, whatever made it run longer.
inline constexpr double kBusyHostCpus = 0.5;

// A priced kernel-side metric that accounts for less than this share of the
// workload's wall-time change (its estimate, when the wall time grew) is not
// a cause, however clearly it moved.
inline constexpr double kNegligibleShare = 0.01;

// Scenarios with a failing check an explanation is computed for: a run
// explains the first few, not thousands.
inline constexpr size_t kMaxExplainedFailures = 20;

// Causes an explanation keeps.
inline constexpr size_t kMaxCauses = 5;

// The attribution of `scenario`: from every metric of the baseline's and the
// candidate's repetitions when the results carry the baseline's, else from
// the checks on kernel-side metrics (their values, unpriced). At most
// `limit` causes. `failing` is left empty. The user code that grew is read
// from the scenario's profile_growth: ExplainEvidenceGrowth first.
Explanation Attribute(const ScenarioResult& scenario, const MetricVocabulary& vocabulary, size_t limit = kMaxCauses);

// Kernel-side metrics whose 90 % interval of the shift between the sides
// excludes zero and that moved kKernelDifferencePct or more, either way,
// ranked by effect size; at most `limit`. What a kernel A/B names as the
// differences between its kernels, failing or not.
std::vector<KernelShift> KernelDifferences(const ScenarioResult& scenario, const MetricVocabulary& vocabulary,
                                           size_t limit = 10);

// Sets the explanation of every scenario with a failing check (regressed or
// over budget), most severe first, at most kMaxExplainedFailures of them;
// clears the others'. Sets every scenario's profile_growth from its
// evidence (explain/frame_growth.h) and its host_summary
// (explain/host_summary.h), which the reports render, and, when the two
// sides ran on different kernels, its kernel_differences.
void ExplainFailures(RunResults& results, const MetricVocabulary& vocabulary);

}  // namespace perfgate
