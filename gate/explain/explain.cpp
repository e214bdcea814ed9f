#include "explain/explain.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "base/quantity.h"
#include "explain/frame_growth.h"
#include "explain/host_summary.h"
#include "metrics/metric.h"
#include "stats/descriptive.h"
#include "stats/hodges_lehmann.h"

namespace perfgate {
namespace {

// How each kernel-side metric is priced is said by its declaration
// (metrics/metric_declaration.h); a syscall is priced at the median syscall
// latency the syscalls probe sampled, one price for both sides
// (SyscallPrice), so that only more calls per operation move its time, not
// a busier host's slower calls. Where the probe estimated a syscall's own
// time on the CPU (syscalls.time.<name>), that time stands for its calls
// instead (syscalls.count.<name>'s `unless`), so a syscall that got slower
// shows.

// What a repetition read from the disk, the whole of which its I/O waits
// (sched.offcpu.io) are for; the kinds that start in a memory cgroup, the
// only ones with read-back pages, record it (adapters/cold_start.h).
constexpr std::string_view kDiskReadBytes = "coldstart.disk_read_bytes";

using PriceRule = MetricPrice;

double SecondsPer(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  return 1;
}

// Operations the workload reported in a repetition (the runner sets them on every counter).
std::optional<double> OpsOf(const Repetition& rep) {
  for (const auto& [name, metric] : rep.metrics) {
    if (metric.kind == MetricKind::kCounter && metric.ops && *metric.ops > 0) return *metric.ops;
  }
  return std::nullopt;
}

// The I/O waits of `rep` (the histogram `io_waits`) in the share of its
// disk reads that were `read_back` bytes: reading a page back costs what
// reading it the first time did. Nothing read back costs nothing; bytes read
// back where the waits or the reads were not measured have no price.
std::optional<double> ReadBackSeconds(double read_back, const Repetition& rep, std::string_view io_waits) {
  if (!(read_back > 0)) return 0.0;
  auto io = rep.metrics.find(std::string(io_waits));
  auto reads = rep.metrics.find(std::string(kDiskReadBytes));
  if (io == rep.metrics.end() || reads == rep.metrics.end() || !(reads->second.value > 0) ||
      io->second.kind != MetricKind::kHistogram || !IsTimeUnit(io->second.unit)) {
    return std::nullopt;
  }
  const Metric& waits = io->second;
  const double waits_s = static_cast<double>(waits.hist.count()) * waits.hist.Mean() * SecondsPer(waits.unit);
  return waits_s * std::min(1.0, read_back / reads->second.value);
}

// One side's numbers of one metric, a value per repetition.
struct Series {
  std::string statistic;
  std::string unit;
  std::vector<double> shown;  // the statistic shown
  std::vector<double> cost;   // seconds per op (or repetition), less the contained metrics'
  std::vector<double> event_cost;
  std::vector<double> cpu;   // the workload's CPU seconds per op (or repetition), beside each cost
  std::vector<double> wall;  // its wall-clock seconds, likewise
};

struct MetricSamples {
  PriceRule rule;
  Better better = Better::kLower;
  std::set<std::string> excluding;
  Series sides[2];  // baseline, candidate
};

struct SideSamples {
  std::vector<double> wall;
  std::map<std::string, std::vector<double>> host;
  std::map<std::string, std::string> host_units;
};

// The median over both sides' repetitions of each one's median sampled
// syscall latency, in seconds; nullopt without the syscalls probe's latency.
std::optional<double> SyscallPrice(const ScenarioResult& scenario) {
  std::vector<double> medians;
  for (const auto* reps : {&scenario.baseline_repetitions, &scenario.repetitions}) {
    for (const Repetition& rep : *reps) {
      auto latency = rep.metrics.find(kSyscallsLatency);
      if (!rep.measured() || latency == rep.metrics.end() || latency->second.hist.empty()) continue;
      medians.push_back(latency->second.hist.Quantile(0.5) * SecondsPer(latency->second.unit));
    }
  }
  if (medians.empty()) return std::nullopt;
  return stats::Median(medians);
}

class Collector {
 public:
  Collector(const MetricVocabulary& vocabulary, bool per_op, std::optional<double> syscall_price)
      : vocabulary_(vocabulary), per_op_(per_op), syscall_price_(syscall_price) {}

  void Add(const Repetition& rep, int side) {
    const double ops = per_op_ ? OpsOf(rep).value_or(1) : 1;
    // Each priced metric's time and the metric whose time includes it.
    struct Part {
      std::string name, within;
      double seconds;
    };
    std::vector<Part> parts;
    auto seconds_of = [&](const char* outcome) -> std::optional<double> {
      auto m = rep.metrics.find(outcome);
      if (m == rep.metrics.end() || !(m->second.value > 0)) return std::nullopt;
      return m->second.value * SecondsPer(m->second.unit) / ops;
    };
    const std::optional<double> cpu = seconds_of(kWorkloadCpuTime), wall = seconds_of(kWorkloadWallTime);
    std::map<std::string, double> cost;
    for (const auto& [name, metric] : rep.metrics) {
      const MetricRole role = vocabulary_.RoleOf(name);
      if (role == MetricRole::kHost && metric.kind == MetricKind::kScalar) {
        sides_[side].host[name].push_back(metric.value);
        sides_[side].host_units[name] = metric.unit;
        continue;
      }
      const MetricDeclaration* declared = vocabulary_.Find(name);
      if (role != MetricRole::kKernel || declared == nullptr) continue;
      PriceRule rule = RuleOf(*declared, name);
      if (rule.hidden) continue;
      std::optional<double> event_cost;
      if (!rule.unless.empty() && rep.metrics.count(rule.unless)) {
        // Not a cause beside the metric that says it better. Its time still
        // leaves the metric it is within unless that one leaves it too:
        // syscalls.count less the calls of the syscalls whose time is kept.
        const MetricDeclaration* replacement = vocabulary_.Find(rule.unless);
        if (rule.within.empty() || (replacement != nullptr && RuleOf(*replacement, rule.unless).within == rule.within))
          continue;
        if (auto seconds = Cost(name, metric, rule, ops, event_cost, rep))
          parts.push_back({name, rule.within, *seconds});
        continue;
      }
      if (metric.better == Better::kHigher) rule.pricing = Pricing::kUnpriced;
      std::optional<double> seconds = Cost(name, metric, rule, ops, event_cost, rep);
      if (rule.pricing != Pricing::kUnpriced && !seconds) continue;
      const std::string statistic = ShownStatistic(metric, rule);
      std::optional<double> shown = Shown(metric, statistic, ops);
      if (!shown || !std::isfinite(*shown)) continue;
      MetricSamples& samples = metrics_[name];
      samples.rule = rule;
      samples.better = metric.better;
      Series& series = samples.sides[side];
      series.statistic = statistic;
      series.unit = statistic == "sum_per_op" ? metric.unit + "/op" : StatisticUnit(metric, statistic);
      series.shown.push_back(*shown);
      if (seconds) {
        cost[name] = *seconds;
        parts.push_back({name, rule.within, *seconds});
        series.cost.push_back(*seconds);
        if (cpu) series.cpu.push_back(*cpu);
        if (wall) series.wall.push_back(*wall);
      }
      if (event_cost) series.event_cost.push_back(*event_cost);
    }
    if (wall) sides_[side].wall.push_back(*wall);
    // After a wake-up a thread may wait for a CPU, and that wait counts as
    // off-CPU time in the state it slept in; sched.runq_latency has it (all
    // its waits less the preempted threads', sched.offcpu.preempted's), so a
    // sleep is not charged with a busy host's waits for a CPU.
    if (cost.count(kSchedRunqLatency) && cost.count(kSchedOffcpuSleep)) {
      const double preempted = cost.count(kSchedOffcpuPreempted) ? cost.at(kSchedOffcpuPreempted) : 0;
      const double wakeup_waits = cost.at(kSchedRunqLatency) - preempted;
      if (wakeup_waits > 0) {
        MetricSamples& sleep = metrics_[kSchedOffcpuSleep];
        sleep.sides[side].cost.back() -= wakeup_waits;
        sleep.excluding.insert(kSchedRunqLatency);
      }
    }
    // A metric's time less the time of the more specific metrics it includes,
    // so that a lock wait is not also counted as a sleep.
    std::map<std::string, double> contained;
    for (const Part& part : parts) {
      if (part.within.empty() || !cost.count(part.within)) continue;
      contained[part.within] += part.seconds;
      metrics_[part.within].excluding.insert(part.name);
    }
    for (const auto& [name, seconds] : contained) metrics_[name].sides[side].cost.back() -= seconds;
  }

  std::map<std::string, MetricSamples>& metrics() { return metrics_; }
  SideSamples& side(int i) { return sides_[i]; }

 private:
  // The declared price of `name`, its `within` and `unless` named for it.
  static PriceRule RuleOf(const MetricDeclaration& declared, const std::string& name) {
    PriceRule rule = declared.price;
    rule.within = FillPlaceholders(declared.name, name, rule.within);
    rule.unless = FillPlaceholders(declared.name, name, rule.unless);
    return rule;
  }

  // Per operation when every repetition counted its operations (histograms
  // carry no count of their own; the repetition's counters do).
  std::string ShownStatistic(const Metric& metric, const PriceRule& rule) const {
    switch (metric.kind) {
      case MetricKind::kScalar:
        return "value";
      case MetricKind::kCounter:
        return per_op_ && metric.ops && *metric.ops > 0 ? "per_op" : "count";
      case MetricKind::kHistogram:
        if (rule.pricing == Pricing::kLatencySum) return per_op_ ? "sum_per_op" : "sum";
        return "p50";
    }
    return "value";
  }

  std::optional<double> Shown(const Metric& metric, const std::string& statistic, double ops) const {
    if (statistic == "sum" || statistic == "sum_per_op") {
      return static_cast<double>(metric.hist.count()) * metric.hist.Mean() / (statistic == "sum" ? 1 : ops);
    }
    return StatisticValue(metric, statistic);
  }

  std::optional<double> Cost(const std::string& name, const Metric& metric, const PriceRule& rule, double ops,
                             std::optional<double>& event_cost, const Repetition& rep) const {
    switch (rule.pricing) {
      case Pricing::kReadBack:
        if (metric.kind != MetricKind::kCounter) return std::nullopt;
        if (auto seconds = ReadBackSeconds(metric.value, rep, rule.within)) return *seconds / ops;
        return std::nullopt;
      case Pricing::kWaitTime:
        if (metric.kind != MetricKind::kCounter) return std::nullopt;
        return metric.value * SecondsPer(metric.unit) / ops;
      case Pricing::kEvents: {
        if (metric.kind != MetricKind::kCounter) return std::nullopt;
        event_cost = name.rfind(kSyscallsCount, 0) == 0 && syscall_price_ ? *syscall_price_ : rule.event_s;
        return metric.value * *event_cost / ops;
      }
      case Pricing::kLatencySum:
        if (metric.kind != MetricKind::kHistogram || !IsTimeUnit(metric.unit)) return std::nullopt;
        return static_cast<double>(metric.hist.count()) * metric.hist.Mean() * SecondsPer(metric.unit) / ops;
      case Pricing::kUnpriced:
        return std::nullopt;
    }
    return std::nullopt;
  }

  const MetricVocabulary& vocabulary_;
  bool per_op_;
  std::optional<double> syscall_price_;
  std::map<std::string, MetricSamples> metrics_;
  SideSamples sides_[2];
};

// Two-sided: the low end is a one-sided 95 % bound.
constexpr double kConfidence = 0.90;

// The shift of a wait, as time per op (or repetition). A wait that only
// stretches with the run is a consequence, not a cause: on a busy host a
// workload that runs longer waits longer for its CPU, and its idle threads
// (a pool's workers, a helper blocked on a pipe) sleep as long as it runs.
// So waits for a CPU are compared per CPU-second the workload ran and waits
// off the CPU per second of its run, and the shift is priced at the
// candidate's CPU or wall time. A wait on the critical path that grows takes
// a larger share of the run, so this hides no such cause.
stats::ShiftEstimate ScaledShift(const Series& b, const Series& c, PriceScale scale) {
  auto per = [scale](const Series& s) -> const std::vector<double>& {
    return scale == PriceScale::kCpu ? s.cpu : s.wall;
  };
  if (scale == PriceScale::kNone || per(b).size() != b.cost.size() || per(c).size() != c.cost.size() ||
      c.cost.empty()) {
    return stats::HodgesLehmannShift(b.cost, c.cost, kConfidence);
  }
  auto ratios = [&](const Series& s) {
    std::vector<double> out;
    for (size_t i = 0; i < s.cost.size(); ++i) out.push_back(s.cost[i] / per(s)[i]);
    return out;
  };
  stats::ShiftEstimate shift = stats::HodgesLehmannShift(ratios(b), ratios(c), kConfidence);
  const double time = stats::Median(per(c));
  shift.estimate *= time;
  shift.low *= time;
  shift.high *= time;
  return shift;
}

// Robust standard deviations beyond which a metric has clearly moved.
constexpr double kClearEffect = 10;

// How large a change is as a ratio, either way: |log(candidate / baseline)|.
double RelativeSize(const KernelShift& shift) {
  if (shift.baseline_median > 0 && shift.candidate_median > 0)
    return std::fabs(std::log(shift.candidate_median / shift.baseline_median));
  return std::isfinite(shift.change_pct) ? std::fabs(shift.change_pct) / 100 : HUGE_VAL;
}

double RobustSd(const std::vector<double>& values) { return 1.4826 * stats::MedianAbsoluteDeviation(values); }

std::optional<KernelShift> ShiftOf(const std::string& metric, const std::string& statistic, const std::string& unit,
                                   const std::vector<double>& baseline, const std::vector<double>& candidate) {
  if (baseline.empty() || candidate.empty()) return std::nullopt;
  KernelShift shift{.metric = metric, .statistic = statistic, .unit = unit};
  shift.baseline_median = stats::Median(baseline);
  shift.candidate_median = stats::Median(candidate);
  double moved = shift.candidate_median - shift.baseline_median;
  if (!std::isfinite(moved)) return std::nullopt;
  double sb = RobustSd(baseline), sc = RobustSd(candidate);
  double floor = 0.01 * std::max(std::fabs(shift.baseline_median), std::fabs(shift.candidate_median));
  double spread = std::max(std::sqrt((sb * sb + sc * sc) / 2), floor);
  shift.effect_size = spread > 0 ? moved / spread : 0;
  if (moved != 0) {
    shift.change_pct = shift.baseline_median != 0 ? 100 * moved / std::fabs(shift.baseline_median)
                                                  : std::copysign(std::numeric_limits<double>::infinity(), moved);
  }
  return shift;
}

// Whether the candidate's values are clearly on the costly side of the
// baseline's: the 90 % interval of the shift excludes zero.
bool ClearlyCostlier(const std::vector<double>& baseline, const std::vector<double>& candidate, Better better) {
  stats::ShiftEstimate shift = stats::HodgesLehmannShift(baseline, candidate, kConfidence);
  return better == Better::kHigher ? shift.high < 0 : shift.low > 0;
}

// Priced causes by the time they account for at least; unpriced ones after
// them, by relative change. Stable: ties keep name order.
void Rank(std::vector<KernelShift>& causes) {
  std::stable_sort(causes.begin(), causes.end(), [](const KernelShift& a, const KernelShift& b) {
    const bool pa = a.pricing != Pricing::kUnpriced, pb = b.pricing != Pricing::kUnpriced;
    if (pa != pb) return pa;
    if (pa) return a.accounted_low_s > b.accounted_low_s;
    const double ea = std::min(std::fabs(a.effect_size), kClearEffect);
    const double eb = std::min(std::fabs(b.effect_size), kClearEffect);
    if (ea != eb) return ea > eb;
    return RelativeSize(a) > RelativeSize(b);
  });
}

bool AllHaveOps(const std::vector<Repetition>& reps) {
  return std::all_of(reps.begin(), reps.end(), [](const Repetition& r) { return !r.measured() || OpsOf(r); });
}

Explanation FromRepetitions(const ScenarioResult& scenario, const MetricVocabulary& vocabulary) {
  Explanation out;
  out.per_op = AllHaveOps(scenario.baseline_repetitions) && AllHaveOps(scenario.repetitions);
  Collector collector(vocabulary, out.per_op, SyscallPrice(scenario));
  for (const Repetition& rep : scenario.baseline_repetitions) {
    if (rep.measured()) collector.Add(rep, 0);
  }
  for (const Repetition& rep : scenario.repetitions) {
    if (rep.measured()) collector.Add(rep, 1);
  }
  const SideSamples &base = collector.side(0), &cand = collector.side(1);
  if (!base.wall.empty() && !cand.wall.empty()) {
    out.wall_change_s = stats::HodgesLehmannShift(base.wall, cand.wall, kConfidence).estimate;
  }
  for (const auto& [name, values] : cand.host) {
    auto b = base.host.find(name);
    if (b == base.host.end()) continue;
    HostShift host{.metric = name, .unit = cand.host_units.at(name)};
    host.baseline_median = stats::Median(b->second);
    host.candidate_median = stats::Median(values);
    host.change_pct = host.baseline_median != 0
                          ? 100 * (host.candidate_median - host.baseline_median) / std::fabs(host.baseline_median)
                          : 0;
    const stats::ShiftEstimate shift = stats::HodgesLehmannShift(b->second, values, kConfidence);
    host.moved = shift.low > 0 || shift.high < 0;
    out.host.push_back(host);
  }
  const bool busy_host = std::any_of(out.host.begin(), out.host.end(), [](const HostShift& h) {
    return h.metric == kHostOtherCpus && std::max(h.baseline_median, h.candidate_median) >= kBusyHostCpus;
  });
  for (auto& [name, samples] : collector.metrics()) {
    const Series &b = samples.sides[0], &c = samples.sides[1];
    if (b.shown.empty() || c.shown.empty() || b.statistic != c.statistic) continue;
    std::optional<KernelShift> shift = ShiftOf(name, c.statistic, c.unit, b.shown, c.shown);
    if (!shift) continue;
    shift->pricing = samples.rule.pricing;
    shift->per_op = out.per_op;
    if (shift->pricing == Pricing::kUnpriced || b.cost.size() != b.shown.size() || c.cost.size() != c.shown.size()) {
      shift->pricing = Pricing::kUnpriced;
      if (!ClearlyCostlier(b.shown, c.shown, samples.better)) continue;
    } else {
      stats::ShiftEstimate time = ScaledShift(b, c, samples.rule.scale);
      if (!(time.low > 0)) continue;
      // A steady difference too small to matter (3 more page faults in a
      // start 20 ms slower: 1 us) clears its interval but explains nothing.
      if (out.wall_change_s && *out.wall_change_s > 0 && time.estimate < kNegligibleShare * *out.wall_change_s) {
        continue;
      }
      shift->accounted_s = time.estimate;
      shift->accounted_low_s = time.low;
      if (!c.event_cost.empty()) shift->event_cost_s = stats::Median(c.event_cost);
      if (out.wall_change_s && *out.wall_change_s > 0) shift->share = time.low / *out.wall_change_s;
      shift->excluding.assign(samples.excluding.begin(), samples.excluding.end());
      if (busy_host && samples.rule.scale == PriceScale::kCpu) {
        out.cpu_waits.push_back(std::move(*shift));
        continue;
      }
    }
    out.causes.push_back(std::move(*shift));
  }
  return out;
}

// A stored baseline without repetitions: the checks on kernel-side metrics,
// unpriced (a check holds one statistic, not the counts a price needs).
Explanation FromChecks(const ScenarioResult& scenario, const MetricVocabulary& vocabulary) {
  Explanation out;
  for (const CheckResult& check : scenario.checks) {
    if (vocabulary.RoleOf(check.spec.metric) != MetricRole::kKernel || !HasBaseline(check)) continue;
    if (!ClearlyCostlier(check.baseline_values, check.candidate_values, check.better)) continue;
    auto shift = ShiftOf(check.spec.metric, check.statistic, check.unit, check.baseline_values, check.candidate_values);
    if (shift) out.causes.push_back(std::move(*shift));
  }
  return out;
}

// Whether both sides ran under Valgrind (instr.total in their repetitions).
bool Instrumented(const ScenarioResult& scenario) {
  const auto counted = [](const std::vector<Repetition>& reps) {
    return std::any_of(reps.begin(), reps.end(),
                       [](const Repetition& r) { return r.measured() && r.metrics.count(kInstrTotal) != 0; });
  };
  return counted(scenario.repetitions) && counted(scenario.baseline_repetitions);
}

// The system calls Valgrind's scheduler makes on its own between the
// workload's timeslices, more of them the longer the workload runs under it:
// a loop without one system call of its own, under Cachegrind, with ten
// times the instructions made gettid 57 -> 237, rt_sigtimedwait 0 -> 50 and
// rt_sigprocmask 1046 -> 1136 calls (getpid stayed 57, but is Valgrind's as
// well). Their counts and latencies, and the total count that holds them,
// are Valgrind's as much as the workload's.
bool IsValgrindsOwn(const std::string& metric) {
  static const std::set<std::string, std::less<>> kOwn = {"gettid", "getpid", "rt_sigprocmask", "rt_sigtimedwait"};
  if (!metric.starts_with("syscalls.")) return false;
  if (metric == kSyscallsCount) return true;
  return kOwn.count(std::string_view(metric).substr(metric.rfind('.') + 1)) != 0;
}

bool HasCountedProfiles(const ScenarioResult& scenario) {
  return std::any_of(scenario.evidence.begin(), scenario.evidence.end(),
                     [](const Evidence& e) { return FindProfile(e, "counted") != nullptr; });
}

// The user function whose share grew most, as the evidence's growth
// (ExplainEvidenceGrowth) found it: in the counted profiles (instructions
// per function, exact) where both sides have them, else in the on-CPU ones.
std::optional<UserCodeGrowth> UserCodeOf(const ScenarioResult& scenario) {
  for (const char* kind : {"counted", "on-cpu"}) {
    const ProfileGrowth* growth = FindProfileGrowth(scenario.profile_growth, kind);
    if (growth != nullptr && growth->against_baseline) return growth->user_code;
  }
  return std::nullopt;
}

}  // namespace

std::vector<KernelShift> KernelDifferences(const ScenarioResult& scenario, const MetricVocabulary& vocabulary,
                                           size_t limit) {
  const bool per_op = AllHaveOps(scenario.baseline_repetitions) && AllHaveOps(scenario.repetitions);
  Collector collector(vocabulary, per_op, SyscallPrice(scenario));
  for (const Repetition& rep : scenario.baseline_repetitions) {
    if (rep.measured()) collector.Add(rep, 0);
  }
  for (const Repetition& rep : scenario.repetitions) {
    if (rep.measured()) collector.Add(rep, 1);
  }
  std::vector<KernelShift> out;
  for (auto& [name, samples] : collector.metrics()) {
    const Series &b = samples.sides[0], &c = samples.sides[1];
    if (b.shown.empty() || c.shown.empty() || b.statistic != c.statistic) continue;
    std::optional<KernelShift> shift = ShiftOf(name, c.statistic, c.unit, b.shown, c.shown);
    if (!shift || !(std::fabs(shift->change_pct) >= kKernelDifferencePct)) continue;
    const stats::ShiftEstimate moved = stats::HodgesLehmannShift(b.shown, c.shown, kConfidence);
    if (!(moved.low > 0 || moved.high < 0)) continue;
    shift->pricing = Pricing::kUnpriced;
    shift->per_op = per_op;
    out.push_back(std::move(*shift));
  }
  Rank(out);
  if (out.size() > limit) out.resize(limit);
  return out;
}

Explanation Attribute(const ScenarioResult& scenario, const MetricVocabulary& vocabulary, size_t limit) {
  Explanation out =
      scenario.baseline_repetitions.empty() ? FromChecks(scenario, vocabulary) : FromRepetitions(scenario, vocabulary);
  out.cpu_holders = TopCpuHolders(scenario.repetitions, kTopCpuHolders);
  // Under Valgrind, what its scheduler adds is not the workload's.
  if (Instrumented(scenario)) {
    std::erase_if(out.causes, [](const KernelShift& shift) { return IsValgrindsOwn(shift.metric); });
  }
  Rank(out.causes);
  Rank(out.cpu_waits);
  if (out.causes.size() > limit) out.causes.resize(limit);
  // Nothing the kernel did explains it: the samples say whose code ran
  // longer. Counted instructions per function are exact, and are said
  // whatever else moved (under Valgrind its own system calls grow with the
  // instructions it runs).
  if (out.causes.empty() || HasCountedProfiles(scenario)) out.user_code = UserCodeOf(scenario);
  return out;
}

void ExplainFailures(RunResults& results, const MetricVocabulary& vocabulary) {
  // The failing checks, regressions before budgets, then in suite order.
  struct Failing {
    size_t scenario;
    const CheckResult* check;
  };
  std::vector<Failing> failing;
  const bool other_kernel =
      results.baseline_environment && results.baseline_environment->kernel != results.environment.kernel;
  for (size_t i = 0; i < results.scenarios.size(); ++i) {
    results.scenarios[i].kernel_differences.clear();
    if (other_kernel && !results.scenarios[i].baseline_repetitions.empty())
      results.scenarios[i].kernel_differences = KernelDifferences(results.scenarios[i], vocabulary);
    // What grew in the evidence and the host line's figures, for every
    // scenario: the reports render them.
    ExplainEvidenceGrowth(results.scenarios[i]);
    results.scenarios[i].host_summary = SummarizeHost(results.scenarios[i]);
    results.scenarios[i].explanation.reset();
    for (const CheckResult& check : results.scenarios[i].checks) {
      if (check.verdict == Verdict::kRegression) failing.push_back({i, &check});
    }
  }
  std::stable_sort(failing.begin(), failing.end(), [](const Failing& a, const Failing& b) {
    return a.check->spec.type == CheckSpec::Type::kRegression && b.check->spec.type == CheckSpec::Type::kBudget;
  });
  size_t explained = 0;
  for (const Failing& f : failing) {
    ScenarioResult& scenario = results.scenarios[f.scenario];
    if (!scenario.explanation) {
      if (explained == kMaxExplainedFailures) continue;
      ++explained;
      scenario.explanation = Attribute(scenario, vocabulary);
    }
    if (vocabulary.RoleOf(f.check->spec.metric) == MetricRole::kOutcome)
      scenario.explanation->failing.push_back(CheckName(*f.check));
  }
}

}  // namespace perfgate
