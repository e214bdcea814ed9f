// Descriptive statistics of one sample (one value per repetition). Each is a
// few lines over a vector, in the spirit of Google Benchmark's statistics.cc.
// An empty sample yields NaN: there is no honest number to report.
#pragma once

#include <vector>

namespace perfgate::stats {

double Mean(const std::vector<double>& values);
// Sample standard deviation (n - 1 denominator); 0 for fewer than two values.
double StdDev(const std::vector<double>& values);
// StdDev / Mean; 0 for fewer than two values or no spread, +inf when the mean is 0.
double CoefficientOfVariation(const std::vector<double>& values);
// Quantile q in [0, 1], linear interpolation between order statistics
// (Hyndman & Fan type 7, the R and NumPy default).
double Quantile(std::vector<double> values, double q);
double Median(std::vector<double> values);
// Median absolute deviation from the median, unscaled (multiply by 1.4826 to
// estimate the standard deviation of normal data).
double MedianAbsoluteDeviation(const std::vector<double>& values);
// 1.4826 MAD / |median|: the CV of normal data, but one outlier repetition
// cannot inflate it. Falls back to CoefficientOfVariation when the MAD is 0
// (half the values tied), so a real spread is never reported as none.
double RobustCoefficientOfVariation(const std::vector<double>& values);
// How far `value` lies from the sample's median in robust standard
// deviations (1.4826 MAD; Iglewicz and Hoaglin's modified z-score). When the
// MAD is 0 (half the values tied) the spread is taken as 1 % of the median,
// so a value 5 % off reads as 5. NaN for an empty sample.
double RobustZ(const std::vector<double>& values, double value);

}  // namespace perfgate::stats
