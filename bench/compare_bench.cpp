// EvaluateChecks on a large run: 1,000 regression checks (half scalar values,
// half per-repetition p99 of latency histograms), 30 repetitions a side.
// Target: <= 200 ms per evaluation.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "compare/compare.h"
#include "metrics/metric.h"

namespace perfgate {
namespace {

constexpr int kChecks = 1000;
constexpr int kRepetitions = 30;
constexpr int kScenarios = 10;

class Sampler {
 public:
  explicit Sampler(uint64_t seed) : engine_(seed) {}
  double LogNormal(double median, double cv) {
    const double u1 = 1 - static_cast<double>(engine_() >> 11) * 0x1.0p-53;
    const double u2 = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
    return median * std::exp(cv * std::sqrt(-2 * std::log(u1)) * std::cos(2 * 3.141592653589793 * u2));
  }

 private:
  std::mt19937_64 engine_;
};

Metric LatencyMetric(const std::string& name, double scale, Sampler& sampler) {
  Metric m;
  m.name = name;
  m.kind = MetricKind::kHistogram;
  m.unit = "ns";
  for (int i = 0; i < 200; ++i) m.hist.Record(static_cast<uint64_t>(sampler.LogNormal(2000 * scale, 0.4)));
  return m;
}

// kScenarios scenarios sharing the checks; every 50th metric regressed by 20 %.
ScenarioResult MakeScenario(int index, bool candidate, Sampler& sampler) {
  ScenarioResult scenario;
  scenario.name = "scenario" + std::to_string(index);
  const int checks = kChecks / kScenarios;
  for (int r = 0; r < kRepetitions; ++r) {
    Repetition rep;
    rep.index = r;
    for (int c = 0; c < checks; ++c) {
      const std::string name = "metric" + std::to_string(c);
      const double scale = candidate && c % 50 == 0 ? 1.2 : 1.0;
      rep.metrics[name] =
          c % 2 == 0 ? ScalarMetric(name, sampler.LogNormal(scale, 0.03), "s") : LatencyMetric(name, scale, sampler);
    }
    scenario.repetitions.push_back(std::move(rep));
  }
  for (int c = 0; c < checks; ++c) {
    CheckResult check;
    check.spec.metric = "metric" + std::to_string(c);
    check.spec.statistic = c % 2 == 0 ? "value" : "p99";
    check.spec.max_regression_pct = 5;
    check.spec.name = check.spec.metric;
    scenario.checks.push_back(check);
  }
  return scenario;
}

void BM_EvaluateChecks(benchmark::State& state) {
  Sampler sampler(42);
  RunResults run;
  std::map<std::string, ScenarioResult> baseline;
  for (int s = 0; s < kScenarios; ++s) {
    run.scenarios.push_back(MakeScenario(s, true, sampler));
    ScenarioResult recorded = MakeScenario(s, false, sampler);
    baseline[recorded.name] = std::move(recorded);
  }
  for (auto _ : state) {
    EvaluateChecks(run, baseline, {});
    benchmark::DoNotOptimize(run);
  }
  int regressions = 0;
  for (const auto& s : run.scenarios) {
    for (const auto& c : s.checks) regressions += c.verdict == Verdict::kRegression;
  }
  state.counters["checks"] = kChecks;
  state.counters["regressions"] = regressions;
}
BENCHMARK(BM_EvaluateChecks)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace perfgate
