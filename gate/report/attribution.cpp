#include "report/attribution.h"

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

#include "report/format.h"
#include "report/frame_growth.h"
#include "stats/descriptive.h"
#include "stats/hodges_lehmann.h"

namespace perfgate {
namespace {

// How each kernel-side metric is priced. Costs per event are orders of
// magnitude for a current x86-64 or arm64 server, not measurements: they
// rank an extra page fault (about a microsecond with the page's zeroing)
// above an extra page allocation and below a millisecond of waiting. A
// syscall is priced at the median syscall latency the syscalls probe sampled,
// one price for both sides (SyscallPrice), so that only more calls per
// operation move its time, not a busier host's slower calls.
// What a wait is compared per (see ScaledShift): waits for a CPU per
// CPU-second the workload ran, waits off the CPU per second of its run.
enum class Scale { kNone, kCpu, kWall };

struct PriceRule {
  std::string_view name;  // exact, or "<prefix>.*" for every metric below the prefix
  Pricing pricing;
  double event_s = 0;
  std::string_view within = {};  // the metric whose time includes this one's
  std::string_view unless = {};  // left out when this metric is there too (it says the same, better)
  bool hidden = false;           // never a cause (evidence-only or sampled numbers)
  Scale scale = Scale::kNone;
};

constexpr double kUs = 1e-6;

// What a repetition read from the disk, the whole of which its I/O waits
// (sched.offcpu.io) are for; the kinds that start in a memory cgroup, the
// only ones with read-back pages, record it (adapters/cold_start.h).
constexpr std::string_view kDiskReadBytes = "coldstart.disk_read_bytes";

constexpr std::array<PriceRule, 46> kPriceRules = {{
    {"sched.offcpu_time", Pricing::kWaitTime, 0, {}, {}, false, Scale::kWall},
    {"sched.offcpu", Pricing::kLatencySum, 0, {}, "sched.offcpu_time", false, Scale::kWall},
    {"sched.offcpu.preempted", Pricing::kLatencySum, 0, "sched.offcpu_time", {}, false, Scale::kCpu},
    {"sched.offcpu.*", Pricing::kLatencySum, 0, "sched.offcpu_time", {}, false, Scale::kWall},
    {"sched.runq_latency", Pricing::kLatencySum, 0, {}, {}, false, Scale::kCpu},
    {"sched.switches", Pricing::kEvents, 2 * kUs},
    {"sched.wakeups", Pricing::kEvents, 1 * kUs},
    {"sched.migrations", Pricing::kEvents, 2 * kUs},
    // Futex waits sleep (state S), mmap_lock waits do not (D).
    {"lock.futex_wait_time", Pricing::kWaitTime, 0, "sched.offcpu.sleep", {}, false, Scale::kWall},
    {"lock.futex_wait", Pricing::kLatencySum, 0, "sched.offcpu.sleep", "lock.futex_wait_time", false, Scale::kWall},
    {"lock.futex_waits", Pricing::kUnpriced, 0, {}, "lock.futex_wait_time"},
    {"lock.mmap_lock_wait_time", Pricing::kWaitTime, 0, "sched.offcpu.io"},
    {"lock.mmap_lock_wait", Pricing::kLatencySum, 0, "sched.offcpu.io", "lock.mmap_lock_wait_time"},
    {"lock.mmap_lock_waits", Pricing::kUnpriced, 0, {}, "lock.mmap_lock_wait_time"},
    {"syscalls.count", Pricing::kEvents, 0.5 * kUs},
    {"syscalls.count.*", Pricing::kEvents, 0.5 * kUs, "syscalls.count"},
    // Sampled, and blocking calls (sleeps, futex waits, reads) dominate its
    // mean: it prices syscalls.count instead.
    {"syscalls.latency", Pricing::kUnpriced, 0, {}, "syscalls.count"},
    {"mm.page_faults", Pricing::kEvents, 1 * kUs},
    {"mm.page_faults.major", Pricing::kEvents, 50 * kUs, "mm.page_faults"},
    {"mm.page_faults.*", Pricing::kEvents, 1 * kUs, "mm.page_faults"},
    {"workload.page_faults", Pricing::kEvents, 1 * kUs, {}, "mm.page_faults"},
    {"workload.context_switches", Pricing::kEvents, 2 * kUs, {}, "sched.switches"},
    {"mm.page_alloc", Pricing::kEvents, 0.2 * kUs},
    {"mm.page_free", Pricing::kEvents, 0.1 * kUs},
    {"mm.kmalloc", Pricing::kEvents, 0.05 * kUs},
    {"mm.kfree", Pricing::kEvents, 0.05 * kUs},
    {"mm.reclaim_latency", Pricing::kLatencySum},
    {"mm.memcg_reclaim_latency", Pricing::kLatencySum},
    // Reclaim's cost beyond its own run: the start's pages it evicted, read
    // back from the disk in the start's I/O waits, which it is subtracted from.
    {kReclaimRefaultBytes, Pricing::kReadBack, 0, "sched.offcpu.io"},
    {"mm.reclaim", Pricing::kUnpriced, 0, {}, "mm.reclaim_latency"},
    {"mm.memcg_reclaim", Pricing::kUnpriced, 0, {}, "mm.memcg_reclaim_latency"},
    {"block.io_latency", Pricing::kLatencySum},
    {"block.io", Pricing::kUnpriced},
    {"block.io_bytes", Pricing::kUnpriced},
    {"block.*", Pricing::kUnpriced, 0, {}, "block.io_latency"},  // per disk
    {"irq.hardirq_time", Pricing::kLatencySum},
    {"irq.softirq_time", Pricing::kLatencySum},
    {"irq.hardirqs", Pricing::kUnpriced, 0, {}, "irq.hardirq_time"},
    {"irq.softirqs", Pricing::kUnpriced, 0, {}, "irq.softirq_time"},
    {"proc.forks", Pricing::kEvents, 50 * kUs},
    {"proc.threads", Pricing::kEvents, 10 * kUs},
    {"proc.execs", Pricing::kEvents, 300 * kUs},
    {"proc.lifetime", Pricing::kUnpriced},
    {"tcp.connect_latency", Pricing::kLatencySum},
    {"tcp.rtt", Pricing::kUnpriced},
    {"profile.*", Pricing::kUnpriced, 0, {}, {}, true},
}};

bool Matches(std::string_view pattern, std::string_view name) {
  if (pattern.size() >= 2 && pattern.substr(pattern.size() - 2) == ".*") {
    std::string_view prefix = pattern.substr(0, pattern.size() - 1);  // keeps the dot
    return name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix;
  }
  return name == pattern;
}

// The rule of a metric; metrics no rule names are priced by their kind and unit.
PriceRule RuleFor(std::string_view name, const Metric& metric) {
  for (const PriceRule& rule : kPriceRules) {
    if (Matches(rule.name, name)) return rule;
  }
  PriceRule rule{{}, Pricing::kUnpriced};
  if (IsTimeUnit(metric.unit) && metric.kind == MetricKind::kCounter) rule.pricing = Pricing::kWaitTime;
  if (IsTimeUnit(metric.unit) && metric.kind == MetricKind::kHistogram) rule.pricing = Pricing::kLatencySum;
  return rule;
}

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
      auto latency = rep.metrics.find("syscalls.latency");
      if (!rep.measured() || latency == rep.metrics.end() || latency->second.hist.empty()) continue;
      medians.push_back(latency->second.hist.Quantile(0.5) * SecondsPer(latency->second.unit));
    }
  }
  if (medians.empty()) return std::nullopt;
  return stats::Median(medians);
}

class Collector {
 public:
  Collector(bool per_op, std::optional<double> syscall_price) : per_op_(per_op), syscall_price_(syscall_price) {}

  void Add(const Repetition& rep, int side) {
    const double ops = per_op_ ? OpsOf(rep).value_or(1) : 1;
    auto seconds_of = [&](const char* outcome) -> std::optional<double> {
      auto m = rep.metrics.find(outcome);
      if (m == rep.metrics.end() || !(m->second.value > 0)) return std::nullopt;
      return m->second.value * SecondsPer(m->second.unit) / ops;
    };
    const std::optional<double> cpu = seconds_of("workload.cpu_time"), wall = seconds_of("workload.wall_time");
    std::map<std::string, double> cost;
    for (const auto& [name, metric] : rep.metrics) {
      if (IsHostMetric(name) && metric.kind == MetricKind::kScalar) {
        sides_[side].host[name].push_back(metric.value);
        sides_[side].host_units[name] = metric.unit;
        continue;
      }
      if (IsOutcomeMetric(name)) continue;
      PriceRule rule = RuleFor(name, metric);
      if (rule.hidden || (!rule.unless.empty() && rep.metrics.count(std::string(rule.unless)))) continue;
      if (metric.better == Better::kHigher) rule.pricing = Pricing::kUnpriced;
      std::optional<double> event_cost;
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
    if (cost.count("sched.runq_latency") && cost.count("sched.offcpu.sleep")) {
      const double preempted = cost.count("sched.offcpu.preempted") ? cost.at("sched.offcpu.preempted") : 0;
      const double wakeup_waits = cost.at("sched.runq_latency") - preempted;
      if (wakeup_waits > 0) {
        MetricSamples& sleep = metrics_["sched.offcpu.sleep"];
        sleep.sides[side].cost.back() -= wakeup_waits;
        sleep.excluding.insert("sched.runq_latency");
      }
    }
    // A metric's time less the time of the more specific metrics it includes,
    // so that a lock wait is not also counted as a sleep.
    std::map<std::string, double> contained;
    for (const auto& [name, seconds] : cost) {
      const std::string within(metrics_[name].rule.within);
      if (within.empty() || !cost.count(within)) continue;
      contained[within] += seconds;
      metrics_[within].excluding.insert(name);
    }
    for (const auto& [name, seconds] : contained) metrics_[name].sides[side].cost.back() -= seconds;
  }

  std::map<std::string, MetricSamples>& metrics() { return metrics_; }
  SideSamples& side(int i) { return sides_[i]; }

 private:
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
        event_cost = name.rfind("syscalls.count", 0) == 0 && syscall_price_ ? *syscall_price_ : rule.event_s;
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
stats::ShiftEstimate ScaledShift(const Series& b, const Series& c, Scale scale) {
  auto per = [scale](const Series& s) -> const std::vector<double>& { return scale == Scale::kCpu ? s.cpu : s.wall; };
  if (scale == Scale::kNone || per(b).size() != b.cost.size() || per(c).size() != c.cost.size() || c.cost.empty()) {
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

KernelAttribution FromRepetitions(const ScenarioResult& scenario) {
  KernelAttribution out;
  out.per_op = AllHaveOps(scenario.baseline_repetitions) && AllHaveOps(scenario.repetitions);
  Collector collector(out.per_op, SyscallPrice(scenario));
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
      if (busy_host && samples.rule.scale == Scale::kCpu) {
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
KernelAttribution FromChecks(const ScenarioResult& scenario) {
  KernelAttribution out;
  for (const CheckResult& check : scenario.checks) {
    if (IsOutcomeMetric(check.spec.metric) || IsHostMetric(check.spec.metric) || !HasBaseline(check)) continue;
    if (!ClearlyCostlier(check.baseline_values, check.candidate_values, check.better)) continue;
    auto shift = ShiftOf(check.spec.metric, check.statistic, check.unit, check.baseline_values, check.candidate_values);
    if (shift) out.causes.push_back(std::move(*shift));
  }
  return out;
}

}  // namespace

bool IsOutcomeMetric(const std::string& metric) {
  if (metric == "workload.page_faults" || metric == "workload.context_switches") return false;
  // Sources the probes own (docs/ARCHITECTURE.md, "Metric names") and the host's load;
  // everything else comes from the workload or its adapter.
  static constexpr std::array<std::string_view, 11> kKernelSources = {
      "sched", "syscalls", "mm", "block", "irq", "ufunc", "proc", "host", "lock", "tcp", "profile"};
  std::string_view source = std::string_view(metric).substr(0, metric.find('.'));
  return std::find(kKernelSources.begin(), kKernelSources.end(), source) == kKernelSources.end();
}

bool IsHostMetric(const std::string& metric) { return metric.rfind("host.", 0) == 0; }

KernelAttribution Attribute(const ScenarioResult& scenario, size_t limit) {
  KernelAttribution out = scenario.baseline_repetitions.empty() ? FromChecks(scenario) : FromRepetitions(scenario);
  out.cpu_holders = TopCpuHolders(scenario.repetitions, kTopCpuHolders);
  Rank(out.causes);
  Rank(out.cpu_waits);
  if (out.causes.size() > limit) out.causes.resize(limit);
  return out;
}

std::vector<KernelShift> KernelShifts(const ScenarioResult& scenario, size_t limit) {
  return Attribute(scenario, limit).causes;
}

std::vector<Explanation> Explain(const std::vector<Finding>& findings) {
  std::vector<Explanation> out;
  for (const Finding& f : findings) {
    if (!f.check || !IsFailure(f.outcome) || !IsOutcomeMetric(f.check->spec.metric)) continue;
    auto same = std::find_if(out.begin(), out.end(), [&](const Explanation& e) { return e.scenario == f.scenario; });
    if (same != out.end()) {
      same->failing.push_back(f.check);
      continue;
    }
    if (out.size() == kMaxExplainedFailures) continue;
    KernelAttribution a = Attribute(*f.scenario);
    // Nothing the kernel did explains it: the samples say whose code ran longer.
    std::string user_code = a.causes.empty() ? UserCodeWhy(*f.scenario) : "";
    out.push_back({f.scenario,
                   f.scenario_index,
                   {f.check},
                   std::move(a.causes),
                   std::move(a.host),
                   std::move(a.cpu_waits),
                   a.wall_change_s,
                   a.per_op,
                   std::move(user_code),
                   std::move(a.cpu_holders)});
  }
  return out;
}

std::string UserCodeWhy(const ScenarioResult& scenario) {
  const FoldedProfile* candidate = nullptr;
  const FoldedProfile* baseline = nullptr;
  for (const Evidence& e : scenario.evidence) (e.side == "baseline" ? baseline : candidate) = FindProfile(e, "on-cpu");
  if (candidate == nullptr || baseline == nullptr) return "";
  return UserCodeGrowthLine(*baseline, *candidate);
}

std::string FormatShiftValue(double value, const std::string& unit) {
  const std::string suffix = "/op";
  if (unit.size() > suffix.size() && unit.compare(unit.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string base = unit.substr(0, unit.size() - suffix.size());
    if (IsTimeUnit(base)) return FormatQuantity(value * SecondsPer(base), "s") + suffix;
  }
  return FormatQuantity(value, unit);
}

std::string FormatAccounted(double seconds, bool per_op) {
  if (!std::isfinite(seconds)) return "n/a";
  return (seconds >= 0 ? "+" : "-") + FormatQuantity(std::fabs(seconds), "s") + (per_op ? "/op" : "/rep");
}

std::string DescribeShift(const KernelShift& shift) {
  std::string text = shift.metric + "." + shift.statistic + " " + FormatPercent(shift.change_pct) + " (" +
                     FormatShiftValue(shift.baseline_median, shift.unit) + " \u2192 " +
                     FormatShiftValue(shift.candidate_median, shift.unit) + ")";
  if (shift.pricing == Pricing::kUnpriced) return text + ", not priced";
  text += ", at least " + FormatAccounted(shift.accounted_low_s, shift.per_op);
  if (shift.share) text += " (" + FormatNumber(100 * *shift.share) + " % of the wall-time change)";
  if (!shift.excluding.empty()) {
    text += " beyond ";
    for (size_t i = 0; i < shift.excluding.size(); ++i) text += (i ? ", " : "") + shift.excluding[i];
  }
  return text;
}

std::string DescribeHost(const std::vector<HostShift>& host, const std::vector<KernelShift>& cpu_waits,
                         const std::vector<CpuHolder>& cpu_holders) {
  std::string text;
  for (const HostShift& h : host) {
    text += (text.empty() ? "host noise (not a cause): " : "; ") + h.metric + " " +
            FormatQuantity(h.baseline_median, h.unit) + " \u2192 " + FormatQuantity(h.candidate_median, h.unit) + " (" +
            FormatPercent(h.change_pct) + ")";
  }
  for (size_t i = 0; i < cpu_waits.size(); ++i) {
    if (i == 0)
      text += (text.empty() ? "host noise (not a cause): " : "; ") + std::string("waits for a CPU on the busy host: ");
    text +=
        (i ? ", " : "") + cpu_waits[i].metric + " " + FormatAccounted(cpu_waits[i].accounted_s, cpu_waits[i].per_op);
  }
  if (!cpu_holders.empty()) {
    text += (text.empty() ? "host noise (not a cause): " : "; ") + std::string("CPUs held by other tasks: ") +
            DescribeCpuHolders(cpu_holders);
  }
  return text;
}

}  // namespace perfgate
