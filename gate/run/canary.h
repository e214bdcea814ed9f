// The host canary: a short fixed piece of work — a dependent integer loop,
// a memory stream, fresh memory faulted in, a few direct-I/O reads — timed right before and right
// after every repetition (warm-ups too), on the thread that starts the workload, so
// on the CPUs and in the cgroup the workload inherits. Its times per unit of
// work are the repetition's host.canary.* metrics: how fast this host is
// now. A slower host (a slower machine, a throttled guest, a neighbour on
// the memory bus) slows the canary as it slows the workload, and no counter
// of the guest shows it (docs/verdicts.md); compare holds a stored
// baseline's canaries against the run's (compare/host_speed.h).
//
// The canary is sized to a share of the repetition it brackets (the
// previous one's wall time), between kMinSeconds and kMaxSeconds, so its
// cost stays near kShareOfRepetition (bench/canary.sh). Its metrics
// are times per unit of work, comparable whatever the size.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metrics/metric.h"

namespace perfgate {

struct CanaryReading {
  std::optional<double> cpu_s;     // host.canary.cpu: s per 2^20 iterations of the loop
  std::optional<double> memory_s;  // host.canary.memory: s per GiB read
  std::optional<double> fault_s;   // host.canary.fault: s per MiB of fresh memory mapped, written, unmapped
  std::optional<double> io_s;      // host.canary.io: s per 4 KiB direct read (absent where the
                                   // temporary directory's file system refuses O_DIRECT)
  double elapsed_s = 0;            // host.canary.elapsed: the whole canary, its cost
};

// Adds the reading to a repetition's metrics.
void AddCanaryMetrics(const CanaryReading& reading, MetricSet& out);
// The reading of a repetition's metrics (what AddCanaryMetrics wrote).
CanaryReading CanaryOf(const MetricSet& metrics);

// One reading of the halves before and after a repetition: each time per
// unit the slower half's, the elapsed times summed. Not their mean: the
// half before starts after a pause, on a refilled quota, at full speed
// however throttled the host is, so a mean shows about half of a quota's
// slowdown (docs/verdicts.md). On a steady host the slower of two is as
// steady as either, and baseline and run take it alike.
CanaryReading BracketReading(const CanaryReading& before, const CanaryReading& after);

// Runs the canary for about `budget_s` seconds and returns its reading;
// without `reads`, the loop, the stream and the faults only. Its buffers and file are
// set up on the first call of the process and kept.
CanaryReading RunCanary(double budget_s, bool reads = true);

// The canaries of one schedule: sizes each from the repetition before it
// and tells a slow spell from the schedule's steady state.
class HostCanary {
 public:
  static constexpr double kShareOfRepetition = 0.01;
  static constexpr double kMinSeconds = 0.0006;
  static constexpr double kMaxSeconds = 0.05;

  // Runs half the canary sized for the repetition about to start: the
  // loop, the stream and the faults. The direct reads, which decide nothing and on a busy
  // device cost most, come after it only.
  void Before();
  // Runs the other half right after it and returns the whole reading
  // (BracketReading); `wall_s` sizes the next canary. Bracketing the
  // repetition catches a host that slows only once work has run for a
  // while: a CPU quota (a throttled guest or container) lets a short burst
  // after a pause run at full speed, while the workload that used up the
  // quota and the canary right after it are both held back.
  CanaryReading After(double wall_s);
  // A slow spell: the loop, the stream or the faults of `reading` took more than
  // kSpellFactor times its median over the canaries of this schedule before
  // it (at least kSpellHistory of them): the reason in words, else "". The
  // direct reads vary too much to tell. The reading joins the history
  // afterwards either way.
  static constexpr double kSpellFactor = 1.5;
  static constexpr size_t kSpellHistory = 3;
  std::string SpellOf(const CanaryReading& reading);

 private:
  double Budget() const;
  double last_wall_s_ = 0;
  CanaryReading before_;
  std::vector<CanaryReading> history_;
};

}  // namespace perfgate
