// Seeded random draws for the statistics' and verdicts' simulations.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace perfgate::testing {

// Reproducible everywhere: mt19937_64 is fully specified, the std
// distributions are not, so uniforms and normals are derived by hand.
class Sampler {
 public:
  explicit Sampler(uint64_t seed) : engine_(seed) {}
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double Normal() {
    const double u = 1 - Uniform();  // (0, 1]
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * 3.141592653589793 * Uniform());
  }
  // Lognormal around `median` with coefficient of variation ~cv.
  double LogNormal(double median, double cv) { return median * std::exp(cv * Normal()); }
  std::vector<double> LogNormal(size_t n, double median, double cv) {
    std::vector<double> values(n);
    for (double& v : values) v = LogNormal(median, cv);
    return values;
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace perfgate::testing
