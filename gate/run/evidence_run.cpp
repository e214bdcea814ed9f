#include "run/evidence_run.h"

#include <algorithm>
#include <cstdio>

#include "adapters/adapter.h"
#include "metrics/error.h"
#include "probes/futex_contention.h"
#include "probes/offcpu_stacks.h"
#include "probes/profile_stacks.h"
#include "run/repetition.h"
#include "run/schedule.h"
#include "symbolize/symbolize.h"

namespace perfgate {

namespace {

// Distinct off-CPU stacks kept: the offcpu probe's map size.
constexpr size_t kOffCpuStacks = 2048;
// Futex words whose waiting stacks are folded, and how many the notes name.
constexpr size_t kContendedFutexes = 1024;
constexpr size_t kFutexWordsNamed = 3;
// How often the workload's process maps are looked for.
constexpr std::chrono::milliseconds kMapsPollInterval{20};

std::string Describe(const CheckResult& c) {
  if (c.spec.type == CheckSpec::Type::kBudget) return c.spec.name + ": " + c.message;
  char change[32];
  std::snprintf(change, sizeof change, "%+.1f %%", c.change_pct);
  return c.spec.name + ": " + ToString(c.verdict) + " (" + change + ")";
}

// The scenario's probes without its own profile and offcpu, then those two in
// workload scope, offcpu with stacks; the scenario's futex probe, if any,
// with the waiting stacks of its contended words.
std::vector<ProbeSpec> EvidenceProbes(const ScenarioSpec& spec) {
  std::vector<ProbeSpec> probes;
  for (const ProbeSpec& p : spec.probes) {
    if (p.name != "profile" && p.name != "offcpu") probes.push_back(p);
    if (p.name == "futex") probes.back().params["stacks"] = true;
  }
  ProbeSpec profile{"profile", "workload", nlohmann::json::object()};
  for (const ProbeSpec& p : spec.probes) {
    if (p.name == "profile") profile.params = p.params;  // the suite's frequency
  }
  probes.push_back(profile);
  probes.push_back({"offcpu", "workload", {{"stacks", true}}});
  return probes;
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

double MedianWallTime(const std::vector<Repetition>& repetitions) {
  std::vector<double> walls;
  for (const Repetition& r : repetitions) {
    auto it = r.metrics.find("workload.wall_time");
    if (it != r.metrics.end()) walls.push_back(it->second.value);
  }
  if (walls.empty()) return 0;
  std::sort(walls.begin(), walls.end());
  const size_t n = walls.size();
  return n % 2 == 1 ? walls[n / 2] : (walls[n / 2 - 1] + walls[n / 2]) / 2;
}

Evidence EvidenceRepetition(const ScenarioSpec& spec, const RunOptions& options, const std::string& side,
                            const std::string& reason, double measured_wall_s) {
  Evidence evidence;
  evidence.side = side;
  evidence.reason = reason;
  std::vector<RawStack> on_cpu, off_cpu, futex_waits;
  std::vector<ContendedFutex> futex_words;  // the most contended, for the notes
  bool has_futex = false;
  std::map<uint32_t, ProcessMaps> maps;
  std::vector<ProbeReport> reports;
  std::string event;
  std::optional<ProcessMapsRecorder> recorder;
  Schedule schedule;
  schedule.arms = {{"evidence", &spec, EvidenceProbes(spec)}};
  schedule.probe_cost = ProbeCostWindow::kAlways;  // the evidence note says what sampling cost
  schedule.progress = false;
  schedule.numbered = false;
  schedule.before_repetition = [&](ScenarioProbes& probes) {
    recorder.emplace(probes.tracked_map_fd(), kMapsPollInterval);
  };
  // Read with the probes still attached: their maps go with them.
  schedule.after_repetition = [&](size_t, const Repetition&, ScenarioProbes& probes) {
    maps = recorder->Finish();
    if (auto* profile = dynamic_cast<ProfileStackSource*>(probes.Find("profile"))) {
      evidence.frequency_hz = profile->frequency_hz();
      event = profile->sampled_event();
      for (SampledStack& s : profile->SampledStacks())
        on_cpu.push_back({s.tgid, s.samples, s.samples, std::move(s.kernel_ips), std::move(s.user_ips)});
    }
    if (auto* offcpu = dynamic_cast<OffCpuStackSource*>(probes.Find("offcpu"))) {
      for (OffCpuStack& s : offcpu->TopOffCpuStacks(kOffCpuStacks))
        off_cpu.push_back({s.tgid, s.time_ns, s.count, std::move(s.kernel_ips), std::move(s.user_ips)});
    }
    if (auto* futex = dynamic_cast<FutexContentionSource*>(probes.Find("futex"))) {
      has_futex = true;
      for (ContendedFutex& f : futex->TopContendedFutexes(kContendedFutexes)) {
        if (futex_words.size() < kFutexWordsNamed) futex_words.push_back(f);
        futex_waits.push_back({f.tgid, f.time_ns, f.count, {}, std::move(f.user_ips)});
      }
    }
    reports = probes.Reports();
  };
  std::vector<ScenarioResult> ran;
  RunSchedule(schedule, options, ran);
  const Repetition& rep = ran[0].repetitions.at(0);
  StackSymbolizer symbolizer(KernelSymbols::Load(), std::move(maps));
  evidence.profiles.push_back(FoldProfile("on-cpu", "samples", on_cpu, symbolizer));
  evidence.profiles.push_back(FoldProfile("off-cpu", "ns", off_cpu, symbolizer));
  if (has_futex) {
    evidence.profiles.push_back(FoldProfile("futex", "ns", futex_waits, symbolizer));
    for (const ContendedFutex& f : futex_words) {
      char line[160];
      std::snprintf(line, sizeof line, "futex word 0x%llx of process %u: %.3f ms waited in %llu waits",
                    static_cast<unsigned long long>(f.uaddr), f.tgid, static_cast<double>(f.time_ns) / 1e6,
                    static_cast<unsigned long long>(f.count));
      evidence.notes.push_back(line);
    }
  }
  for (const FoldedProfile& p : evidence.profiles) {
    if (std::string note = TruncationNote(p); !note.empty()) evidence.notes.push_back(note);
  }
  if (symbolizer.processes_without_maps() > 0)
    evidence.notes.push_back(std::to_string(symbolizer.processes_without_maps()) +
                             " processes exited before their memory map was read: their user frames are [unknown]");
  for (const std::string& why : symbolizer.unreadable()) evidence.notes.push_back("no symbols: " + why);
  auto wall = rep.metrics.find("workload.wall_time");
  if (wall != rep.metrics.end() && measured_wall_s > 0) evidence.slowdown = wall->second.value / measured_wall_s;
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
