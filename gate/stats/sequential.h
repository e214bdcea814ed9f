// Error spending for adaptive repetitions: a group-sequential test that looks
// at the data after several repetition counts and may stop at any of them,
// yet rejects a true null hypothesis with probability at most alpha overall.
//
// Under the null, the standardized statistic at look k, Z_k, behaves like a
// Brownian motion observed at information fractions t_k (corr(Z_i, Z_j) =
// sqrt(t_i / t_j)); this holds for the rank test's normal approximation as it
// does for a t statistic. The error spent by look k follows Lan and DeMets'
// O'Brien–Fleming-type function
//     alpha(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t)),
// which spends almost nothing early: the last look keeps a level close to
// alpha, so a run that goes to the maximum loses little power, while an
// overwhelming change can still stop early. The boundaries come from the
// recursive numerical integration of Armitage, McPherson and Rowe (Jennison
// and Turnbull, "Group Sequential Methods", ch. 19).
#pragma once

#include <vector>

namespace perfgate::stats {

// Cumulative one-sided error spent by information fraction t in (0, 1].
double ObrienFlemingSpending(double t, double alpha);

// One-sided upper boundaries z_k for looks at increasing information
// fractions `t` (the last one is normally 1): the first crossing happens at
// look k with probability alpha(t_k) - alpha(t_{k-1}) under the null.
std::vector<double> SequentialBoundaries(const std::vector<double>& t, double alpha);

// The same boundaries as nominal one-sided levels: reject at look k when the
// test's one-sided p-value is below levels[k].
std::vector<double> SequentialLevels(const std::vector<double>& t, double alpha);

// Information of a two-sample comparison with n1 and n2 values: 1/(1/n1 + 1/n2).
double TwoSampleInformation(double n1, double n2);

}  // namespace perfgate::stats
