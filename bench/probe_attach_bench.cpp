// How long loading and attaching probes takes, the time a run spends before
// its first repetition. The default set is what a suite gets when it lists
// the everyday probes; the goal is <= 200 ms for all of it (root only).
//
//   build/bench/probe_attach_bench --benchmark_filter=DefaultSet
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "probes/probe.h"
#include "probes/tracker.h"

namespace {

using perfgate::CreateProbe;
using perfgate::Probe;
using perfgate::ProbeOptions;
using perfgate::WorkloadTracker;

const std::vector<std::string> kDefaultSet = {"runqlat", "syscalls", "kmem", "sched", "reclaim", "pagefault"};

// The tracker and every probe of `names`, in workload scope, as a run attaches them.
struct AttachedSet {
  WorkloadTracker tracker;
  std::vector<std::unique_ptr<Probe>> probes;

  explicit AttachedSet(const std::vector<std::string>& names) {
    ProbeOptions options;
    tracker.Attach(options);
    for (const auto& name : names) {
      auto probe = CreateProbe(name);
      if (!probe) throw perfgate::InputError("probe \"" + name + "\" is not in the catalog");
      probe->Attach(options, &tracker);
      probes.push_back(std::move(probe));
    }
  }
  void Detach() {
    for (auto& probe : probes) probe->Detach();
    tracker.Detach();
  }
};

bool Skip(benchmark::State& state) {
  if (geteuid() == 0) return false;
  state.SkipWithError("needs root to load BPF programs");
  return true;
}

void BM_AttachDefaultSet(benchmark::State& state) {
  if (Skip(state)) return;
  for (auto _ : state) {
    try {
      AttachedSet set(kDefaultSet);
      state.PauseTiming();
      set.Detach();
      state.ResumeTiming();
    } catch (const perfgate::Error& e) {
      state.SkipWithError(e.what());
      return;
    }
  }
}
BENCHMARK(BM_AttachDefaultSet)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

void BM_DetachDefaultSet(benchmark::State& state) {
  if (Skip(state)) return;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<AttachedSet> set;
    try {
      set = std::make_unique<AttachedSet>(kDefaultSet);
    } catch (const perfgate::Error& e) {
      state.SkipWithError(e.what());
      return;
    }
    state.ResumeTiming();
    set->Detach();
  }
}
BENCHMARK(BM_DetachDefaultSet)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

// One probe at a time (with the tracker), to see which one dominates.
void BM_AttachOne(benchmark::State& state, const std::string& name) {
  if (Skip(state)) return;
  for (auto _ : state) {
    try {
      AttachedSet set({name});
      state.PauseTiming();
      set.Detach();
      state.ResumeTiming();
    } catch (const perfgate::Error& e) {
      state.SkipWithError(e.what());
      return;
    }
  }
}

const bool kRegistered = [] {
  for (const auto& info : perfgate::ProbeCatalog()) {
    if (!info.parameters.empty()) {
      bool required = false;
      for (const auto& p : info.parameters) required |= p.name == "functions";
      if (required) continue;  // ufunc needs functions to attach to
    }
    benchmark::RegisterBenchmark(("BM_AttachOne/" + info.name).c_str(), BM_AttachOne, info.name)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(5);
  }
  return true;
}();

}  // namespace
