// Pieces of a results model built by hand, for the reporters' tests.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "metrics/evidence.h"
#include "metrics/results.h"

namespace perfgate::testing {

// A check of `metric`'s `statistic` in ns with its verdict and
// per-repetition values; medians and test statistics are the caller's.
inline CheckResult CheckWithValues(const std::string& metric, const std::string& statistic, Verdict verdict,
                                   std::vector<double> baseline, std::vector<double> candidate) {
  CheckResult c;
  c.spec.metric = metric;
  c.spec.statistic = statistic;
  c.statistic = statistic;
  c.unit = "ns";
  c.verdict = verdict;
  c.baseline_values = std::move(baseline);
  c.candidate_values = std::move(candidate);
  return c;
}

// A folded-stack profile with its totals: on-CPU stacks count samples, the
// other kinds nanoseconds.
inline FoldedProfile Profile(std::map<std::string, uint64_t> stacks, const std::string& kind = "on-cpu") {
  FoldedProfile p;
  p.kind = kind;
  p.unit = kind == "on-cpu" ? "samples" : "ns";
  p.stacks = std::move(stacks);
  for (const auto& [stack, weight] : p.stacks) p.total += weight;
  p.samples = p.stacks.size();
  return p;
}

}  // namespace perfgate::testing
