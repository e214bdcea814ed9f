// What probes cost a workload, in many short interleaved pairs: the workload
// alone, and under the probes (attached once, in workload scope), launched
// the same way by the runner's HeldProcess, alternating which goes first. The
// workload times itself and prints one number (or a `{"metric": NAME,
// "value": V}` line, picked with --metric). On a busy host a run's time
// swings with the neighbours; pairs a few milliseconds apart see nearly the
// same neighbours, and many pairs pin the median of their ratios down.
//
//   probe_ab_driver PROBE[,PROBE...] PAIRS [--metric NAME] -- CMD ARGS...
//
// --metric cpu_time takes the workload's CPU time (user and system, from its
// rusage) instead of a number it prints. PROBE `none` attaches no probe: the
// probed runs are then only tracked (the tracker's own cost).
//
// Prints the median of each arm, the median of the pairs' probed/bare ratios
// with its 95 % interval and the ratios' quartiles, and the probes' hooks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "probes/probe.h"
#include "probes/tracker.h"
#include "run/process.h"
#include "run/runner.h"

namespace {

// The number the workload printed: its `metric` line's value, or its first line.
std::optional<double> PrintedValue(const std::string& text, const std::string& metric) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (metric.empty()) {
      char* end = nullptr;
      const double v = std::strtod(line.c_str(), &end);
      return end != line.c_str() ? std::optional<double>(v) : std::nullopt;
    }
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("metric", "") == metric && j.contains("value") && j["value"].is_number())
      return j["value"].get<double>();
  }
  return std::nullopt;
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

int main(int argc, char** argv) {
  int dash = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      dash = i;
      break;
    }
  }
  std::string metric;
  if (dash == 5 && std::strcmp(argv[3], "--metric") == 0) metric = argv[4];
  const long pairs = argc > 2 ? std::atol(argv[2]) : 0;
  if ((dash != 3 && dash != 5) || dash + 1 >= argc || pairs < 3) {
    std::fprintf(stderr, "usage: %s PROBE[,PROBE...] PAIRS>=3 [--metric NAME] -- CMD ARGS...\n", argv[0]);
    return 2;
  }
  const std::vector<std::string> command(argv + dash + 1, argv + argc);
  try {
    perfgate::PrepareProcessForWorkloads();
    perfgate::WorkloadTracker tracker;
    tracker.Attach({});
    std::vector<std::unique_ptr<perfgate::Probe>> probes;
    std::stringstream names(argv[1]);
    for (std::string name; std::getline(names, name, ',');) {
      if (name == "none") continue;
      probes.push_back(perfgate::CreateProbe(name));
      if (!probes.back()) {
        std::fprintf(stderr, "unknown probe: %s\n", name.c_str());
        return 2;
      }
      probes.back()->Attach({}, &tracker);
    }
    // One run of the workload, probed or bare; its printed number.
    auto run = [&](bool probed) {
      perfgate::HeldProcess process(command, {}, "");
      if (probed) {
        tracker.Clear();
        tracker.Track(process.pid());
        for (auto& probe : probes) probe->Reset();
      }
      process.Release();
      const perfgate::ProcessOutcome outcome = process.Wait(600, nullptr);
      if (!outcome.succeeded())
        throw perfgate::InfraError(command[0] + " failed with status " + std::to_string(outcome.status()));
      if (probed) {
        perfgate::MetricSet metrics;
        for (auto& probe : probes) probe->Collect(outcome.wall_s, metrics);
      }
      if (metric == "cpu_time") {
        perfgate::MetricSet usage;
        perfgate::AddRusageMetrics(outcome.usage, outcome.wall_s, usage);
        return usage.at("workload.cpu_time").value;
      }
      const std::optional<double> value = PrintedValue(outcome.stdout_text, metric);
      if (!value) throw perfgate::InfraError(command[0] + " printed no " + (metric.empty() ? "number" : metric));
      return *value;
    };
    std::vector<double> bare, probed, ratios;
    for (long i = 0; i < pairs; ++i) {
      double b, p;
      if (i % 2 == 0) {
        b = run(false);
        p = run(true);
      } else {
        p = run(true);
        b = run(false);
      }
      bare.push_back(b);
      probed.push_back(p);
      ratios.push_back(p / b);
    }
    // A 95 % interval of the median ratio from order statistics (the count
    // of ratios below the median is Binomial(n, 1/2)).
    std::vector<double> sorted = ratios;
    std::sort(sorted.begin(), sorted.end());
    const double n = static_cast<double>(sorted.size());
    const double half_width = 1.96 * std::sqrt(n) / 2;
    const auto lo = static_cast<size_t>(std::max(0.0, std::floor(n / 2 - half_width)));
    const auto hi = static_cast<size_t>(std::min(n - 1, std::ceil(n / 2 + half_width)));
    std::printf("bare %.6g probed %.6g ratio %.4f [95%% CI %.4f-%.4f] (pairs' Q1-Q3 %.4f-%.4f) over %ld pairs\n",
                Quantile(bare, 0.5), Quantile(probed, 0.5), Quantile(ratios, 0.5), sorted[lo], sorted[hi],
                Quantile(ratios, 0.25), Quantile(ratios, 0.75), pairs);
    for (const auto& probe : probes) {
      for (const auto& hook : probe->Report().hooks)
        std::fprintf(stderr, "hook %s: %s (%s)\n", hook.hook.c_str(), hook.attach_type.c_str(), hook.target.c_str());
    }
  } catch (const perfgate::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return static_cast<int>(e.code());
  }
  return 0;
}
