#include "run/evidence_run.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <set>
#include <string_view>

#include "adapters/adapter.h"
#include "base/error.h"
#include "metrics/metric.h"
#include "probes/futex_contention.h"
#include "probes/offcpu_stacks.h"
#include "probes/profile_stacks.h"
#include "run/repetition.h"
#include "run/schedule.h"
#include "stats/distributions.h"
#include "symbolize/dwarf_unwind.h"
#include "symbolize/symbolize.h"

namespace perfgate {

namespace {

// Distinct off-CPU stacks kept: the offcpu probe's map size.
constexpr size_t kOffCpuStacks = 2048;
// Futex words whose waiting stacks are folded, and how many the notes name.
constexpr size_t kContendedFutexes = 1024;
constexpr size_t kFutexWordsNamed = 3;

std::string Describe(const CheckResult& c) {
  if (c.spec.type == CheckSpec::Type::kBudget) return c.spec.name + ": " + c.message;
  char change[32];
  std::snprintf(change, sizeof change, "%+.1f %%", c.change_pct);
  return c.spec.name + ": " + ToString(c.verdict) + " (" + change + ")";
}

// The scenario's probes without its own profile and offcpu, then those two in
// workload scope, profile at `frequency_hz` unless the scenario sets its own,
// offcpu with stacks; the scenario's futex probe, if any, with the waiting
// stacks of its contended words.
std::vector<ProbeSpec> EvidenceProbes(const ScenarioSpec& spec, int frequency_hz) {
  std::vector<ProbeSpec> probes;
  for (const ProbeSpec& p : spec.probes) {
    if (p.name != "profile" && p.name != "offcpu") probes.push_back(p);
    if (p.name == "futex") probes.back().params["stacks"] = true;
  }
  ProbeSpec profile{"profile", "workload", {{"frequency_hz", frequency_hz}}};
  for (const ProbeSpec& p : spec.probes) {
    if (p.name != "profile") continue;
    for (const auto& [key, value] : p.params.items()) profile.params[key] = value;  // the suite's frequency
  }
  if (!profile.params.contains("user_stack_bytes")) profile.params["user_stack_bytes"] = kEvidenceUserStackBytes;
  probes.push_back(profile);
  probes.push_back({"offcpu", "workload", {{"stacks", true}}});
  return probes;
}

// The fastest sampling the kernel accepts now (it lowers the limit itself
// when samples take too long); INT_MAX when unknown.
int KernelMaxSampleRate() {
  std::ifstream file("/proc/sys/kernel/perf_event_max_sample_rate");
  long rate = 0;
  if (file >> rate && rate > 0) return static_cast<int>(std::min<long>(rate, INT_MAX));
  return INT_MAX;
}

std::string PerEvent(const ProbeReport& r) {
  if (r.run_count == 0) return "";
  char text[96];
  std::snprintf(text, sizeof text, "%llu runs, %.0f ns each in BPF", static_cast<unsigned long long>(r.run_count),
                static_cast<double>(r.run_time_ns) / static_cast<double>(r.run_count));
  return text;
}

}  // namespace

std::optional<std::string> EvidenceReason(EvidenceMode mode, const ScenarioResult& scenario) {
  if (mode == EvidenceMode::kNever || !scenario.error.empty() || scenario.repetitions.empty()) return std::nullopt;
  if (mode == EvidenceMode::kAlways) return "always";
  for (const CheckResult& c : scenario.checks) {
    if (c.verdict == Verdict::kRegression) return Describe(c);
  }
  return std::nullopt;
}

namespace {

double MedianOf(const std::vector<Repetition>& repetitions, const std::string& metric) {
  std::vector<double> values;
  for (const Repetition& r : repetitions) {
    auto it = r.metrics.find(metric);
    if (it != r.metrics.end()) values.push_back(it->second.value);
  }
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

double MedianWallTime(const std::vector<Repetition>& repetitions) { return MedianOf(repetitions, kWorkloadWallTime); }

double MedianCpuTime(const std::vector<Repetition>& repetitions) { return MedianOf(repetitions, kWorkloadCpuTime); }

int EvidenceFrequencyHz(uint64_t target_samples, double cpu_s) {
  if (!(cpu_s > 0)) return kEvidenceFrequencyHz;
  const double hz = std::ceil(static_cast<double>(target_samples) / (kEvidenceRoundsWanted * cpu_s));
  return static_cast<int>(
      std::clamp(hz, static_cast<double>(kEvidenceFrequencyHz), static_cast<double>(kEvidenceMaxFrequencyHz)));
}

namespace {

// CPU time of the calling thread: what unwinding costs, whatever else the host runs.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// The samples of `sampled` as stacks of its copies unwound: the samples
// spread evenly over the copies (each stands for samples / copies of them),
// copies that unwound alike summed.
std::vector<RawStack> UnwoundStacks(const SampledStack& sampled, UserStackUnwinder& unwinder) {
  std::map<std::vector<uint64_t>, uint64_t> copies_by_stack;
  for (const UserStackCopy& copy : sampled.copies) ++copies_by_stack[unwinder.Unwind(copy)];
  const uint64_t copies = sampled.copies.size();
  const uint64_t samples = std::max(sampled.samples, copies);
  std::vector<RawStack> out;
  uint64_t copies_before = 0, samples_before = 0;
  for (const auto& [ips, n] : copies_by_stack) {
    copies_before += n;
    const uint64_t samples_through = samples * copies_before / copies;
    const uint64_t weight = samples_through - samples_before;
    samples_before = samples_through;
    if (weight == 0) continue;
    out.push_back({sampled.tgid, weight, weight, sampled.kernel_ips, sampled.user_ips, ips});
  }
  return out;
}

// What one side's evidence repetitions captured, its processes renumbered
// (synthetic ids from 1) so that a pid reused from one repetition to the
// next keeps its own map.
struct SideCapture {
  std::vector<RawStack> on_cpu, off_cpu, preempted, futex_waits;
  // Each repetition's on-CPU stacks folded as it ends: how far the shares
  // spread between repetitions, which the stop rule and the reports weigh.
  std::vector<FoldedProfile> on_cpu_repetitions;
  std::vector<ContendedFutex> futex_words;  // the most contended, for the notes
  bool has_futex = false;
  std::map<uint32_t, ProcessMaps> maps;
  std::vector<double> walls;
  uint64_t on_cpu_samples = 0;
  uint64_t off_cpu_waits = 0;  // where it blocked; waits for a CPU are not counted
  uint64_t off_cpu_ns = 0;
  uint64_t lost_map_records = 0;
  uint64_t copied_samples = 0;  // on-CPU samples with a copy of the user stack
  double unwind_cpu_s = 0;      // CPU time spent unwinding those copies
  int repetitions = 0;
};

// How the evidence repetitions ended: the dispersion the samples were
// weighed by, and whether a limit (repetitions, time) ended them first.
struct EvidenceStop {
  double dispersion = 1;
  bool limited = false;
};

Evidence SideEvidence(const EvidenceSide& side, const std::string& reason, SideCapture& capture,
                      const std::vector<ProbeReport>& reports, const std::string& event, int frequency_hz,
                      uint64_t target_samples, const EvidenceStop& stop, StackSymbolizer& symbolizer) {
  Evidence evidence;
  evidence.side = side.side;
  evidence.reason = reason;
  evidence.frequency_hz = frequency_hz;
  symbolizer.ReplaceMaps(std::move(capture.maps));
  evidence.profiles.push_back(FoldProfile("on-cpu", "samples", capture.on_cpu, symbolizer));
  SetRepetitionSpread(evidence.profiles.back(), capture.on_cpu_repetitions);
  evidence.profiles.push_back(FoldProfile("off-cpu", "ns", capture.off_cpu, symbolizer));
  if (!capture.preempted.empty())
    evidence.profiles.push_back(FoldProfile("preempted", "ns", capture.preempted, symbolizer));
  if (capture.has_futex) {
    evidence.profiles.push_back(FoldProfile("futex", "ns", capture.futex_waits, symbolizer));
    for (const ContendedFutex& f : capture.futex_words) {
      char line[160];
      std::snprintf(line, sizeof line, "futex word 0x%llx of process %u: %.3f ms waited in %llu waits",
                    static_cast<unsigned long long>(f.uaddr), f.tgid, static_cast<double>(f.time_ns) / 1e6,
                    static_cast<unsigned long long>(f.count));
      evidence.notes.push_back(line);
    }
  }
  std::string spread;
  if (stop.dispersion > 1) {
    char times[96];
    std::snprintf(times, sizeof times, ", times %.1f for the shares' spread between repetitions", stop.dispersion);
    spread = times;
  }
  evidence.notes.push_back(
      "evidence: " + std::to_string(capture.repetitions) +
      (capture.repetitions == 1 ? " repetition, " : " repetitions, ") + FormatCount(capture.on_cpu_samples) +
      " on-CPU samples, " + FormatCount(capture.off_cpu_waits) + " blocking off-CPU waits (target " +
      FormatCount(target_samples) + " on-CPU samples" + spread + ", or " + FormatCount(kEvidenceTargetSamples) +
      " waits per side)" +
      (stop.limited ? "; stopped at the limit (" + std::to_string(kEvidenceMaxRepetitions) + " repetitions a side or " +
                          std::to_string(static_cast<int>(kEvidenceBudgetS)) +
                          " s) before the target or before the growth of the function that grew most was decided"
                    : ""));
  if (capture.copied_samples > 0) {
    char cost[96];
    std::snprintf(cost, sizeof cost, " (%.2f s of CPU, %.0f us per copy)", capture.unwind_cpu_s,
                  1e6 * capture.unwind_cpu_s / static_cast<double>(capture.copied_samples));
    evidence.notes.push_back("on-cpu: user stacks copied at " + FormatCount(capture.copied_samples) +
                             " samples, unwound from the files' unwind tables" + cost +
                             ", used where frame pointers end early");
  }
  if (std::string note = TruncationNote(evidence.profiles); !note.empty()) evidence.notes.push_back(note);
  if (symbolizer.processes_without_maps() > 0)
    evidence.notes.push_back(std::to_string(symbolizer.processes_without_maps()) +
                             " processes without a recorded memory map: their user frames are [unknown]");
  if (capture.lost_map_records > 0)
    evidence.notes.push_back(std::to_string(capture.lost_map_records) +
                             " mmap records lost (ring buffer full): some user frames may be [unknown]");
  for (const std::string& why : symbolizer.unreadable()) evidence.notes.push_back("no symbols: " + why);
  if (!capture.walls.empty() && side.measured_wall_s > 0) {
    std::sort(capture.walls.begin(), capture.walls.end());
    const size_t n = capture.walls.size();
    const double median = n % 2 == 1 ? capture.walls[n / 2] : (capture.walls[n / 2 - 1] + capture.walls[n / 2]) / 2;
    evidence.slowdown = median / side.measured_wall_s;
  }
  for (const ProbeReport& r : reports) {
    if (r.name == "profile") {
      std::string target = r.hooks.empty() ? event : r.hooks.front().target;
      evidence.notes.push_back("profile: " + target + (PerEvent(r).empty() ? "" : ": " + PerEvent(r)));
    } else if (r.name == "offcpu") {
      if (!PerEvent(r).empty()) evidence.notes.push_back("offcpu with stacks: " + PerEvent(r));
    }
  }
  return evidence;
}

}  // namespace

double EvidenceChange(const ScenarioResult& scenario) {
  for (const CheckResult& c : scenario.checks) {
    if (c.verdict == Verdict::kRegression && c.spec.type != CheckSpec::Type::kBudget && std::isfinite(c.change_pct) &&
        c.change_pct != 0) {
      double change = std::abs(c.change_pct) / 100;
      // The smallest change the interval allows: a noisy estimate must not lower the target.
      const std::optional<double> near_zero = c.change_pct > 0 ? c.change_ci_low_pct : c.change_ci_high_pct;
      if (near_zero && std::isfinite(*near_zero) && *near_zero * c.change_pct > 0)
        change = std::min(change, std::abs(*near_zero) / 100);
      return change;
    }
  }
  return 0;
}

uint64_t EvidenceTargetSamples(const ScenarioResult& scenario) {
  const double change = EvidenceChange(scenario);
  if (change <= 0) return kEvidenceTargetSamples;
  const double growth = change / (2 * (1 + change));
  const double z = stats::NormalQuantile(1 - 0.05 / 100) + stats::NormalQuantile(0.9);
  const double n = 0.5 * (z / growth) * (z / growth);
  return static_cast<uint64_t>(std::clamp(std::ceil(n), static_cast<double>(kEvidenceTargetSamples),
                                          static_cast<double>(kEvidenceMaxTargetSamples)));
}

double RepetitionDispersion(const std::vector<std::vector<FoldedProfile>>& sides) {
  double chi_square = 0, df = 0;
  for (const std::vector<FoldedProfile>& repetitions : sides) {
    FoldedProfile spread;
    SetRepetitionSpread(spread, repetitions);
    chi_square += spread.spread_chi_square;
    df += spread.spread_df;
  }
  return df > 0 ? std::max(1.0, chi_square / df) : 1.0;
}

namespace {

// The weight of each user leaf of `profile` (a sample taken in user code,
// never in an interrupt, whose work the reports leave out of a function's
// own share; nor "[unknown]", which names no code), its whole weight in
// `total`, and every frame's name in `frames`.
std::map<std::string, double> UserLeafWeights(const FoldedProfile& profile, double& total,
                                              std::set<std::string, std::less<>>& frames) {
  std::map<std::string, double> leaves;
  double sum = 0;
  for (const auto& [stack, weight] : profile.stacks) {
    sum += static_cast<double>(weight);
    std::string_view leaf;
    for (size_t start = 0;;) {
      const size_t end = stack.find(';', start);
      leaf = std::string_view(stack).substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (frames.find(leaf) == frames.end()) frames.emplace(leaf);
      if (end == std::string::npos) break;
      start = end + 1;
    }
    const bool kernel = leaf.size() >= 4 && leaf.substr(leaf.size() - 4) == "_[k]";
    if (!kernel && leaf != "[unknown]") leaves[std::string(leaf)] += static_cast<double>(weight);
  }
  total = std::max(sum, static_cast<double>(profile.total));
  return leaves;
}

// `repetitions` as one profile: their stacks and weights summed.
FoldedProfile Pooled(const std::vector<FoldedProfile>& repetitions) {
  FoldedProfile pooled;
  for (const FoldedProfile& r : repetitions) {
    for (const auto& [stack, weight] : r.stacks) pooled.stacks[stack] += weight;
    pooled.total += r.total;
    pooled.samples += r.samples;
  }
  return pooled;
}

}  // namespace

GrowthDecision LeadingUserGrowth(const FoldedProfile& baseline, const FoldedProfile& candidate, double dispersion,
                                 double change) {
  std::set<std::string, std::less<>> frames;
  double nb = 0, nc = 0;
  const std::map<std::string, double> b_leaves = UserLeafWeights(baseline, nb, frames);
  const std::map<std::string, double> c_leaves = UserLeafWeights(candidate, nc, frames);
  if (nb <= 0 || nc <= 0) return GrowthDecision::kOpen;
  // The user function whose own share grew most.
  std::optional<std::pair<double, double>> lead;  // its shares, baseline and candidate
  for (const auto& [frame, weight] : c_leaves) {
    auto b = b_leaves.find(frame);
    const double pb = b == b_leaves.end() ? 0 : b->second / nb, pc = weight / nc;
    if (!lead || pc - pb > lead->second - lead->first) lead = {pb, pc};
  }
  if (!lead || lead->second <= lead->first) return GrowthDecision::kRuledOut;  // no user function grew
  const auto [pb, pc] = *lead;
  // As the reports' intervals (Agresti-Caffo, each side's samples divided
  // by the dispersion), with a family no smaller than theirs.
  const double d = std::max(1.0, dispersion), b = nb / d, c = nc / d;
  const double p1 = (pb * b + 1) / (b + 2), p2 = (pc * c + 1) / (c + 2);
  const double se = std::sqrt(p1 * (1 - p1) / (b + 2) + p2 * (1 - p2) / (c + 2));
  const double z = stats::NormalQuantile(1 - 0.05 / std::max<double>(100, static_cast<double>(frames.size())));
  const double growth = pc - pb;
  if (p2 - p1 > z * se && growth > z * se && growth >= 0.01) return GrowthDecision::kNamed;
  if (growth + z * se < change * (1 - pb) / (1 + change)) return GrowthDecision::kRuledOut;
  return GrowthDecision::kOpen;
}

std::vector<Evidence> EvidenceRepetitions(const std::vector<EvidenceSide>& sides, const RunOptions& options,
                                          const std::string& reason, uint64_t target_samples, double change) {
  std::vector<SideCapture> captures(sides.size());
  uint32_t next_id = 1;
  std::vector<ProbeReport> reports;
  std::string event;
  int frequency_hz = 0;
  std::optional<ProcessMapsRecorder> recorder;
  // Also folds each repetition's on-CPU stacks as it ends, for the stop rule.
  StackSymbolizer symbolizer(KernelSymbols::Load(), {});
  // One set of probes samples every side: the rate that suits the side with the least CPU time.
  double cpu_s = 0;
  for (const EvidenceSide& side : sides) {
    if (side.measured_cpu_s > 0) cpu_s = cpu_s > 0 ? std::min(cpu_s, side.measured_cpu_s) : side.measured_cpu_s;
  }
  const int wanted_hz =
      std::min(EvidenceFrequencyHz(target_samples, cpu_s), std::max(kEvidenceFrequencyHz, KernelMaxSampleRate()));
  Schedule schedule;
  for (const EvidenceSide& side : sides)
    schedule.arms.push_back({"evidence", side.spec, EvidenceProbes(*side.spec, wanted_hz)});
  schedule.rounds = kEvidenceMaxRepetitions;
  schedule.min_rounds = 1;
  schedule.probe_cost = ProbeCostWindow::kAlways;  // the evidence note says what sampling cost
  schedule.progress = false;
  schedule.canary = false;  // no verdict rests on it
  schedule.before_repetition = [&](ScenarioProbes& probes) { recorder.emplace(probes.tracked_map_fd()); };
  // Read with the probes still attached: their maps go with them.
  schedule.after_repetition = [&](size_t arm, const Repetition& rep, ScenarioProbes& probes) {
    SideCapture& c = captures.at(arm);
    std::map<uint32_t, uint32_t> ids;  // this repetition's tgid -> its id in `c.maps`
    auto id_of = [&](uint32_t tgid) {
      auto [it, added] = ids.emplace(tgid, next_id);
      if (added) ++next_id;
      return it->second;
    };
    std::map<uint32_t, ProcessMaps> maps = recorder->Finish();
    c.lost_map_records += recorder->lost();
    recorder.reset();
    ++c.repetitions;
    if (auto wall = rep.metrics.find(kWorkloadWallTime); wall != rep.metrics.end())
      c.walls.push_back(wall->second.value);
    const size_t on_cpu_start = c.on_cpu.size();
    if (auto* profile = dynamic_cast<ProfileStackSource*>(probes.Find("profile"))) {
      frequency_hz = profile->frequency_hz();
      event = profile->sampled_event();
      std::map<uint32_t, std::unique_ptr<UserStackUnwinder>> unwinders;
      for (SampledStack& s : profile->SampledStacks()) {
        c.on_cpu_samples += s.samples;
        if (s.copies.empty()) {
          c.on_cpu.push_back({id_of(s.tgid), s.samples, s.samples, std::move(s.kernel_ips), std::move(s.user_ips)});
          continue;
        }
        const double unwind_start = ThreadCpuSeconds();
        auto& unwinder = unwinders[s.tgid];
        if (!unwinder) {
          auto m = maps.find(s.tgid);
          unwinder = std::make_unique<UserStackUnwinder>(m == maps.end() ? ProcessMaps{} : m->second);
        }
        c.copied_samples += s.copies.size();
        for (RawStack& stack : UnwoundStacks(s, *unwinder)) {
          stack.tgid = id_of(s.tgid);
          c.on_cpu.push_back(std::move(stack));
        }
        c.unwind_cpu_s += ThreadCpuSeconds() - unwind_start;
      }
    }
    if (auto* offcpu = dynamic_cast<OffCpuStackSource*>(probes.Find("offcpu"))) {
      for (OffCpuStack& s : offcpu->TopOffCpuStacks(kOffCpuStacks)) {
        // Waits for a CPU are the host's: on a busy host they outweigh the
        // run itself, and would end the evidence of CPU-bound code as if it
        // mostly blocked, with a fraction of its on-CPU samples.
        if (!s.preempted) {
          c.off_cpu_waits += s.count;
          c.off_cpu_ns += s.time_ns;
        }
        // Waiting for a CPU is not blocking: on a busy host it would bury the place the code blocked.
        (s.preempted ? c.preempted : c.off_cpu)
            .push_back({id_of(s.tgid), s.time_ns, s.count, std::move(s.kernel_ips), std::move(s.user_ips)});
      }
    }
    if (auto* futex = dynamic_cast<FutexContentionSource*>(probes.Find("futex"))) {
      c.has_futex = true;
      for (ContendedFutex& f : futex->TopContendedFutexes(kContendedFutexes)) {
        if (c.futex_words.size() < kFutexWordsNamed) c.futex_words.push_back(f);
        c.futex_waits.push_back({id_of(f.tgid), f.time_ns, f.count, {}, std::move(f.user_ips)});
      }
    }
    std::map<uint32_t, ProcessMaps> repetition_maps;
    for (const auto& [tgid, id] : ids) {
      auto m = maps.find(tgid);
      if (m == maps.end()) continue;
      repetition_maps[id] = m->second;
      c.maps[id] = std::move(m->second);
    }
    symbolizer.ReplaceMaps(std::move(repetition_maps));
    c.on_cpu_repetitions.push_back(
        FoldProfile("on-cpu", "samples",
                    std::vector<RawStack>(c.on_cpu.begin() + static_cast<std::ptrdiff_t>(on_cpu_start), c.on_cpu.end()),
                    symbolizer));
    reports = probes.Reports();
  };
  const double start = MonotonicSeconds();
  // The sides an A/B run compares, for the leading function's growth.
  std::optional<size_t> baseline_side, candidate_side;
  for (size_t i = 0; i < sides.size(); ++i) {
    if (sides[i].side == "baseline") baseline_side = i;
    if (sides[i].side == "candidate") candidate_side = i;
  }
  // On a busy host the shares spread from one repetition to the next far
  // beyond sampling (bursts of the scheduler's and interrupts' samples when
  // neighbours preempt the workload), and the reports' intervals widen by as
  // much: a sample is worth 1/dispersion of one.
  auto dispersion_now = [&] {
    std::vector<std::vector<FoldedProfile>> repetitions;
    for (const SideCapture& c : captures) repetitions.push_back(c.on_cpu_repetitions);
    return RepetitionDispersion(repetitions);
  };
  auto decided = [&] {
    const double dispersion = dispersion_now();
    bool blocked = false;
    const bool enough = std::all_of(captures.begin(), captures.end(), [&](const SideCapture& c) {
      // A workload that mostly blocks has few on-CPU samples to wait for; its waits are the evidence.
      const double on_cpu_ns = frequency_hz > 0 ? 1e9 * static_cast<double>(c.on_cpu_samples) / frequency_hz : 0;
      const bool mostly_blocked = static_cast<double>(c.off_cpu_ns) > on_cpu_ns;
      blocked = blocked || mostly_blocked;
      return static_cast<double>(c.on_cpu_samples) >= static_cast<double>(target_samples) * dispersion ||
             (mostly_blocked && c.off_cpu_waits >= kEvidenceTargetSamples);
    });
    if (!enough) return false;
    // The target gives the growth the regression implies 90 % power: at
    // that growth, one run in ten would end short of naming the function
    // that grew. So the rounds go on while it is neither named nor ruled out.
    if (blocked || change <= 0 || !baseline_side || !candidate_side) return true;
    return LeadingUserGrowth(Pooled(captures[*baseline_side].on_cpu_repetitions),
                             Pooled(captures[*candidate_side].on_cpu_repetitions), dispersion,
                             change) != GrowthDecision::kOpen;
  };
  schedule.more = [&](const std::vector<ScenarioResult>&) {
    return MonotonicSeconds() - start < kEvidenceBudgetS && !decided();
  };
  RunOptions quiet = options;
  quiet.quiet = true;  // the stop rule's own line would speak of checks
  std::vector<ScenarioResult> ran;
  RunSchedule(schedule, quiet, ran);
  const EvidenceStop stop{dispersion_now(), !decided()};
  std::vector<Evidence> out;
  for (size_t i = 0; i < sides.size(); ++i) {
    out.push_back(
        SideEvidence(sides[i], reason, captures[i], reports, event, frequency_hz, target_samples, stop, symbolizer));
  }
  return out;
}

void AddBaselineEvidence(RunResults& results, const std::map<std::string, ScenarioResult>& baselines) {
  for (ScenarioResult& s : results.scenarios) {
    auto b = baselines.find(s.name);
    if (b == baselines.end() || s.evidence.empty()) continue;
    const bool has_candidate =
        std::any_of(s.evidence.begin(), s.evidence.end(), [](const Evidence& e) { return e.side == "candidate"; });
    const bool has_baseline =
        std::any_of(s.evidence.begin(), s.evidence.end(), [](const Evidence& e) { return e.side == "baseline"; });
    if (!has_candidate || has_baseline) continue;
    // The baseline's own run stored its evidence as that run's candidate.
    for (const Evidence& e : b->second.evidence) {
      if (e.side != "candidate") continue;
      Evidence copy = e;
      copy.side = "baseline";
      s.evidence.push_back(std::move(copy));
      break;
    }
  }
}

}  // namespace perfgate
