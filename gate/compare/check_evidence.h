// The evidence of one regression check before the family-wise adjustment:
// its baseline values, the change and its interval, and the one-sided p of
// each direction, from the two sides as independent samples or, when they
// ran interleaved, from their pairs as well (compare.h decides on it).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compare/adaptive.h"
#include "compare/check_values.h"

namespace perfgate {

// Evidence of one regression check, before the family-wise adjustment.
struct CheckEvidence {
  CheckResult* check = nullptr;
  double p_worse = 1;   // one-sided towards the bad direction (two-sided without one)
  double p_better = 1;  // one-sided towards the good direction (1 without one)
  double cv = 0;        // pooled robust coefficient of variation
  // Median CPUs of other work on the host, candidate and baseline, when both
  // recorded it.
  std::optional<std::pair<double, double>> host_other_cpus;
  // Median idle CPUs while the candidate ran (CPU count minus other work minus
  // the workload's own use), when known.
  std::optional<double> candidate_spare_cpus;
  Repetitions candidate;                          // the candidate's measured repetitions, for the outlier note
  const AdaptiveRepetitions* adaptive = nullptr;  // the scenario's plan, when adaptive
  // The level of the look where the scenario stopped, over alpha (1: a fixed count).
  double level_scale = 1;
  bool interleaved = false;  // CompareOptions::interleaved
  // The host's speed now against the stored baseline's (canary), when both
  // sides timed it and the sides did not run interleaved.
  const HostSpeed* host_speed = nullptr;
  // Pairs of an interleaved run the verdict rests on (0: the two sides as
  // independent samples), and the robust standard deviation of their log ratios.
  size_t pairs = 0;
  double pair_sd = 0;
  int tests = 1;                             // tests whose smallest p the check's p is (Bonferroni): 2 for pairs
  const ScenarioResult* baseline = nullptr;  // for gathering it again unpaired
  std::string scenario;
  std::string test;  // "rank+KS, " when KS gave a second opinion (tails), "paired signed-rank, " for pairs
  // Why a near-deterministic metric is decided by the rank tests after all
  // (compare/deterministic.h), for the end of the message.
  std::string deterministic_fallback;
};

// log(candidate / baseline) of every round both sides measured, when the
// two sides ran interleaved (CompareOptions::interleaved); empty when they
// cannot be paired: too few common rounds, or a value <= 0 (no log).
std::vector<double> PairedLogRatios(const CheckResult& check, const ScenarioResult& candidate,
                                    const ScenarioResult& baseline);

// The check's baseline values, change, interval and p values against
// `baseline`'s scenario, paired when `paired_log_ratios` are given; nullopt
// (and the check inconclusive, saying why) without a baseline to compare.
std::optional<CheckEvidence> GatherEvidence(CheckResult& check, const std::string& scenario,
                                            const ScenarioResult* baseline, double confidence,
                                            const std::vector<double>& paired_log_ratios = {});

}  // namespace perfgate
