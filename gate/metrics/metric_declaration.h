// What a metric is, said once by whatever emits it (a probe, an adapter,
// the runner): its name, kind, unit, better direction, whether it is a
// kernel behaviour, the workload's outcome or the host's noise, and how the
// why prices it (docs/ARCHITECTURE.md, "Why it regressed"). The catalog,
// `perfgate probes`, `perfgate metrics`, the reference page and the why
// read these declarations; a test runs every probe against its own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/metric.h"

namespace perfgate {

// Who a metric speaks for. The why ranks kernel behaviour as causes of an
// outcome that got worse; host metrics are noise beside it, never a cause.
enum class MetricRole {
  kOutcome,  // what the user feels: wall time, time to first frame, IOPS, a benchmark's time
  kKernel,   // what the kernel did for the workload: waits, events, faults, counters
  kHost,     // what the rest of the host did meanwhile
};

// How a kernel-side metric's change becomes time the workload lost.
enum class Pricing {
  kWaitTime,    // a counter of time (sched.offcpu_time, lock.futex_wait_time): the time itself
  kEvents,      // a counter of events: count times an estimated cost per event
  kLatencySum,  // a histogram of latencies: count times mean, the time all of them took
  // Bytes read back after reclaim (mm.reclaim_refault_bytes): their share of
  // the repetition's disk reads times its I/O waits (`within`).
  kReadBack,
  kUnpriced,  // no time estimate: ranked after the priced ones, by relative change
};

// What a wait is compared per: waits for a CPU per CPU-second the workload
// ran, waits off the CPU per second of its run; a wait that only stretches
// with the run is then no cause.
enum class PriceScale { kNone, kCpu, kWall };

// `within` and `unless` may name a pattern with the metric's own
// placeholders ("syscalls.time.<name>"), filled in from its name.
struct MetricPrice {
  Pricing pricing = Pricing::kUnpriced;
  double event_s = 0;       // kEvents: an order-of-magnitude cost of one event
  std::string within = {};  // the metric whose time includes this one's (subtracted from it first)
  std::string unless = {};  // left out when this metric is there too (it says the same, better)
  bool hidden = false;      // never a cause (sampled or evidence-only numbers)
  PriceScale scale = PriceScale::kNone;
};

struct MetricDeclaration {
  // Exact, or with placeholders in angle brackets that stand for one or more
  // characters: "syscalls.count.<name>", "fio.<job>.read.clat".
  std::string name;
  MetricKind kind = MetricKind::kScalar;
  // kUnitAsReported for numbers whose unit and better direction the workload's
  // own output says (a benchmark's counters, a command's JSON lines).
  std::string unit;
  Better better = Better::kLower;
  MetricRole role = MetricRole::kOutcome;
  MetricPrice price = {};
  std::string help = {};
};

inline constexpr const char* kUnitAsReported = "*";

// The prices of the runner's and the adapters' declarations (the probes'
// are JSON): a cost per event, no price (a cause ranked by relative
// change), or never a cause. `within`: the metric whose time includes this
// one's; `unless`: left out beside that metric.
MetricPrice PerEvent(double seconds, std::string within = {}, std::string unless = {});
MetricPrice Unpriced(std::string unless = {});
MetricPrice NeverACause();
// Kernel-side metrics (lower is better) and host metrics (no direction).
MetricDeclaration KernelCounter(std::string name, std::string unit, MetricPrice price, std::string help);
MetricDeclaration KernelScalar(std::string name, std::string unit, MetricPrice price, std::string help);
MetricDeclaration HostMetric(std::string name, std::string unit, std::string help);
// What the workload's output or its run says of it (adapters, the runner).
MetricDeclaration OutcomeScalar(std::string name, std::string unit, Better better, std::string help);

std::string ToString(MetricRole role);
std::string ToString(Pricing pricing);

// Whether `name` is what `declared` names (placeholders match any non-empty text).
bool DeclarationMatches(std::string_view declared, std::string_view name);

// `related` (a price's `within` or `unless`) with the placeholders of
// `declared` filled in as `name` fills them: "syscalls.time.<name>" for
// syscalls.count.getppid, declared as syscalls.count.<name>.
std::string FillPlaceholders(std::string_view declared, std::string_view name, std::string_view related);

// Every declaration the run knows: the runner's, the adapters' and the probes'.
class MetricVocabulary {
 public:
  MetricVocabulary() = default;
  explicit MetricVocabulary(std::vector<MetricDeclaration> declarations);
  void Add(const std::vector<MetricDeclaration>& declarations);

  // The declaration of `name`: an exact one first, else the matching pattern
  // with the longest literal text (fio.<job>.read.clat over fio.<job>.<x>);
  // nullptr when nothing declares it.
  const MetricDeclaration* Find(std::string_view name) const;
  // The declared role; an undeclared metric is the workload's own outcome
  // (a command's numbers, a tool's output parsed by the suite).
  MetricRole RoleOf(std::string_view name) const;
  const std::vector<MetricDeclaration>& declarations() const { return declarations_; }

 private:
  std::vector<MetricDeclaration> declarations_;
};

// A declaration as a probe's JSON file states it ({"name", "kind", "unit",
// "better", "role", "price": {"pricing", "event_s", "within", "unless",
// "hidden", "scale"}, "help"}); throws InputError naming `file` and the
// JSON path of what is wrong.
MetricDeclaration DeclarationFromJson(const nlohmann::json& j, const std::string& file, const std::string& path);

// What is wrong with a set of declarations, one line each: names that are
// not metric names or are declared twice, prices the why cannot apply (time
// prices on a metric without a time unit, events without a cost, a `within`
// or `unless` that names no declared metric), priced outcomes. Empty when fine.
std::vector<std::string> DeclarationProblems(const std::vector<MetricDeclaration>& declarations);

// What `emitted` (one collection of metrics) holds that `declared` does not
// declare, or declares with another kind or unit: one line each, naming the
// metric; `who` names the emitter ("probe runqlat").
std::vector<std::string> UndeclaredMetrics(const std::string& who, const std::vector<MetricDeclaration>& declared,
                                           const MetricSet& emitted);

}  // namespace perfgate
