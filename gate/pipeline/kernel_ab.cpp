#include "pipeline/kernel_ab.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "adapters/adapter.h"
#include "adapters/tool_output.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/log.h"
#include "base/quantity.h"
#include "compare/adaptive.h"
#include "compare/compare.h"
#include "compare/confirm.h"
#include "metrics/results_json.h"
#include "pipeline/dir_lock.h"
#include "pipeline/gate_steps.h"
#include "probes/probe.h"

namespace fs = std::filesystem;

namespace perfgate {

namespace {

// Where a boot's perfgate writes in the guest (the initramfs' own /tmp).
constexpr const char* kGuestWork = "/tmp/perfgate-boot";

// A boot pair's repetitions are numbered from its index times this, far
// more than a scenario's repetitions in one boot.
constexpr int kIndicesPerBootPair = 100000;

// The files a workload's launch names that exist here: its adapter's argv
// (the program, a job file, the tool a kind runs such as fio) and the
// kind's keys, each an absolute path or a program found on PATH; the guest
// has only what the initramfs holds. A workload this host cannot launch
// is left to the guest's perfgate to report.
void AddWorkloadFiles(const Suite& suite, std::set<std::string>& files) {
  const auto add_if_here = [&](const std::string& word) {
    if (!word.empty() && word[0] == '/' && fs::is_regular_file(word)) files.insert(word);
  };
  for (const ScenarioSpec& s : suite.scenarios) {
    std::vector<std::string> argv = s.workload.argv;
    if (const WorkloadAdapter* adapter = FindAdapter(s.workload.kind)) {
      try {
        argv = adapter->LaunchArgv(s.workload);
      } catch (const Error&) {
      }
    }
    if (!argv.empty()) add_if_here(FindExecutable(argv[0]));  // a path as it is, a name found on PATH
    for (const std::string& word : argv) add_if_here(word);
    for (const auto& [key, value] : s.workload.options) add_if_here(value);
  }
}

// What every boot of the run shares.
struct BootPlan {
  std::vector<std::string> record;  // perfgate baseline record SUITE ... in the guest, up to --evidence
  VmSettings vm;
  std::string boots_dir;  // OUT/boots
  int count = 0;          // boots so far
};

// `side` boots and records the suite (`scenarios`: only those; empty: the
// options'), with `evidence` as every scenario's evidence mode; its results.
RunResults BootSide(BootPlan& plan, const KernelSide& side, const std::string& label,
                    const std::vector<std::string>& scenarios, const std::string& evidence, const GateOptions& o) {
  ++plan.count;
  char name[64];
  std::snprintf(name, sizeof name, "%02d-%s", plan.count, label.c_str());
  const std::string dir = (fs::path(plan.boots_dir) / name).string();
  fs::create_directories(dir);
  std::vector<std::string> argv = plan.record;
  argv.insert(argv.end(), {"--evidence", evidence});
  for (const std::string& s : scenarios) argv.insert(argv.end(), {"--scenario", s});
  if (scenarios.empty()) {
    for (const std::string& s : o.scenarios) argv.insert(argv.end(), {"--scenario", s});
  }
  log::Progress("boot %d: the %s kernel, %s%s\n", plan.count, label.c_str(), side.kernel.c_str(),
                evidence == "always" ? " (with evidence)" : "");
  const VmBoot boot = BootAndRun(side, plan.vm, argv, std::string(kGuestWork) + "/out", dir, dir + ".log", o.stop);
  const std::string results_file = dir + "/results.json";
  if (!fs::exists(results_file)) {
    // perfgate's own error line in the guest says why.
    std::ifstream log(dir + ".log");
    std::string line, said;
    while (std::getline(log, line)) {
      if (line.find("perfgate: error: ") != std::string::npos) said = line.substr(line.find("perfgate: error: ") + 17);
    }
    if (!said.empty() && said.back() == '\r') said.pop_back();
    throw InfraError("boot " + std::to_string(plan.count) + " (" + side.kernel + "): perfgate in the guest exited " +
                     std::to_string(boot.exit_code) + " and wrote no results" + (said.empty() ? "" : ": " + said) +
                     " (log: " + dir + ".log)");
  }
  RunResults results = ReadResultsFile(results_file);
  log::Progress("boot %d: %s, %.0f s\n", plan.count, boot.release.empty() ? "?" : boot.release.c_str(), boot.seconds);
  return results;
}

// A boot pair: both sides, in the order the pair takes.
BootPair BootPairOf(BootPlan& plan, const KernelAbOptions& k, bool candidate_first,
                    const std::vector<std::string>& scenarios, const std::string& evidence, const GateOptions& o) {
  BootPair pair;
  for (bool candidate : {candidate_first, !candidate_first}) {
    if (Stopped(o)) throw InfraError("interrupted between boots");
    (candidate ? pair.candidate : pair.baseline) = BootSide(
        plan, candidate ? k.candidate : k.baseline, candidate ? "candidate" : "baseline", scenarios, evidence, o);
  }
  return pair;
}

void Renumber(std::vector<Repetition>& reps, int base) {
  int next = base;
  for (Repetition& r : reps) r.index = next++;
}

// "6.1.0-57-cloud-amd64 (linux-image-cloud-amd64 + pg_planted.ko, ...)".
std::string Describe(const KernelSide& side, const Environment& booted) {
  std::string text = booted.kernel.empty() ? side.kernel : booted.kernel;
  std::string given = booted.kernel.empty() ? "" : fs::path(side.kernel).filename().string();
  for (const std::string& m : side.module_files)
    given += (given.empty() ? "" : " + ") + fs::path(m).filename().string();
  if (!side.cmdline.empty()) given += (given.empty() ? "" : ", ") + std::string("booted with \"") + side.cmdline + "\"";
  return given.empty() ? text : text + " (" + given + ")";
}

std::string AccelMeaning(const std::string& accel) {
  if (accel == "kvm")
    return "under KVM, on this host's CPU: times are near a real machine's, less the virtualization's cost";
  return "under TCG, QEMU's emulation of the CPU: times are the emulator's, many times a real machine's, and follow "
         "this host's load; counts (syscalls, page allocations, instructions) are the kernel's own";
}

}  // namespace

std::vector<bool> BootOrder(int pairs) {
  std::vector<bool> order;
  for (int k = 0; k < pairs; ++k) {
    const bool candidate_first = k % 2 == 1;
    order.push_back(candidate_first);
    order.push_back(!candidate_first);
  }
  return order;
}

std::pair<RunResults, RunResults> JoinBootPairs(const std::vector<BootPair>& pairs) {
  if (pairs.empty()) throw InfraError("no boots to join");
  std::pair<RunResults, RunResults> joined = {pairs[0].baseline, pairs[0].candidate};
  for (RunResults* side : {&joined.first, &joined.second}) {
    for (ScenarioResult& s : side->scenarios) {
      s.repetitions.clear();
      s.retaken.clear();
      s.adaptive.reset();
      s.evidence.clear();
      s.duration_s = 0;
    }
  }
  for (size_t k = 0; k < pairs.size(); ++k) {
    const int base = static_cast<int>(k) * kIndicesPerBootPair;
    for (auto [from, to] :
         {std::pair{&pairs[k].baseline, &joined.first}, std::pair{&pairs[k].candidate, &joined.second}}) {
      to->partial = to->partial || from->partial;
      for (const ScenarioResult& s : from->scenarios) {
        auto it = std::find_if(to->scenarios.begin(), to->scenarios.end(),
                               [&](const ScenarioResult& t) { return t.name == s.name; });
        if (it == to->scenarios.end()) {
          to->scenarios.push_back(s);
          it = to->scenarios.end() - 1;
          it->repetitions.clear();
          it->retaken.clear();
          it->evidence.clear();
          it->duration_s = 0;
        }
        if (it->error.empty() && !s.error.empty()) it->error = "boot pair " + std::to_string(k + 1) + ": " + s.error;
        std::vector<Repetition> reps = s.repetitions, retaken = s.retaken;
        Renumber(reps, base);
        Renumber(retaken, base + kIndicesPerBootPair / 2);
        it->repetitions.insert(it->repetitions.end(), reps.begin(), reps.end());
        it->retaken.insert(it->retaken.end(), retaken.begin(), retaken.end());
        it->duration_s += s.duration_s;
      }
    }
  }
  return joined;
}

GateOutcome GateKernels(const GateOptions& o, const KernelAbOptions& k) {
  if (k.boots < 1) throw InputError("--boots: at least 1 boot a side, not " + std::to_string(k.boots));
  if (o.target.remote()) throw InputError("--target: a kernel A/B boots its kernels here, not on a device");
  if (!o.history_db.empty()) throw InputError("--baseline-kernel: a kernel A/B compares its own two sides");
  if (o.trace) throw InputError("--trace: not with --baseline-kernel yet: the boots record no trace");
  TriagePolicy policy;
  const Suite suite = LoadGateSuite(o, {}, &policy);
  const std::string guest_arch = k.vm.arch.empty() ? HostVmArch() : k.vm.arch;
  if (!k.guest_perfgate.empty()) {
    if (access(k.guest_perfgate.c_str(), X_OK) != 0 || !fs::is_regular_file(k.guest_perfgate))
      throw InputError("--vm-perfgate " + k.guest_perfgate + ": no such executable");
    const std::string arch = ElfVmArch(k.guest_perfgate);
    if (arch != guest_arch)
      throw InputError("--vm-perfgate " + k.guest_perfgate + ": built for " +
                       (arch.empty() ? "another architecture" : arch) + ", not the guest's " + guest_arch +
                       " (--vm-arch)");
  } else if (guest_arch != HostVmArch()) {
    throw InputError("--vm-arch " + guest_arch + ": the guest needs a perfgate built for " + guest_arch +
                     " (--vm-perfgate; packaging/arm64/build.sh makes one)");
  }
  CheckVmPrerequisites(k.baseline, k.vm, "--baseline-kernel");
  CheckVmPrerequisites(k.candidate, k.vm, "--candidate-kernel");
  DirectoryLock out_lock(o.out_dir, DirectoryLock::Mode::kReportsOut, "--out");

  BootPlan plan;
  plan.vm = k.vm;
  plan.boots_dir = (fs::absolute(o.out_dir) / "boots").string();
  std::error_code ec;
  fs::remove_all(plan.boots_dir, ec);
  fs::create_directories(plan.boots_dir);
  std::string accel_why = plan.vm.accel == "kvm" ? "KVM, as --vm-accel asked" : "TCG, as --vm-accel asked";
  if (plan.vm.accel == "auto") {
    plan.vm.accel = ChooseAccel(k.baseline, plan.vm, plan.boots_dir + "/00-accel.log", o.stop, accel_why);
    log::Progress("%s\n", accel_why.c_str());
  }
  // The guest gets its perfgate (this one, or --vm-perfgate for another
  // architecture), the suite's directory and what its workloads name, at
  // their paths here; the workloads as the guest's perfgate expands them.
  const std::string self =
      k.guest_perfgate.empty() ? fs::read_symlink("/proc/self/exe").string() : fs::absolute(k.guest_perfgate).string();
  const fs::path suite_file = fs::absolute(o.suite_file);
  const fs::path suite_dir = o.suite_dir.empty() ? suite_file.parent_path() : fs::absolute(o.suite_dir);
  std::set<std::string> files = {self, suite_dir.string()};
  files.insert(k.vm.files.begin(), k.vm.files.end());
  AddWorkloadFiles(k.guest_perfgate.empty()
                       ? suite
                       : LoadSuiteFile(o.suite_file, {{"perfgate_dir", PerfgateDirOf(self)}}, o.suite_dir),
                   files);
  // This host's programs, found for a guest of another architecture, cannot run there.
  std::erase_if(files, [&](const std::string& f) {
    const std::string arch = ElfVmArch(f);  // "" for a directory or a file that is not ELF
    return !arch.empty() && arch != guest_arch;
  });
  plan.vm.files.assign(files.begin(), files.end());
  plan.vm.environment.push_back("PERFGATE_ON_DEVICE=1");
  plan.record = {self,
                 "baseline",
                 "record",
                 suite_file.string(),
                 "--baseline-dir",
                 std::string(kGuestWork) + "/baselines",
                 "--out",
                 std::string(kGuestWork) + "/out",
                 "--suite-path",
                 o.suite_path_in_reports.empty() ? o.suite_file : o.suite_path_in_reports};
  if (o.repetitions) plan.record.insert(plan.record.end(), {"--reps", std::to_string(*o.repetitions)});
  if (o.quiet) plan.record.push_back("--quiet");
  if (o.instrument) plan.record.push_back("--instrument");
  if (!o.run_as.empty()) plan.record.insert(plan.record.end(), {"--run-as", o.run_as});
  if (!o.shard.empty()) plan.record.insert(plan.record.end(), {"--shard", o.shard});
  if (!o.attach_types.empty()) {
    std::string types;
    for (AttachType t : o.attach_types) types += (types.empty() ? "" : ",") + ToString(t);
    plan.record.insert(plan.record.end(), {"--attach-types", types});
  }

  // The first round: ABBA by boot, no evidence (it is taken where a
  // regression is flagged).
  std::vector<BootPair> pairs;
  const std::vector<bool> order = BootOrder(k.boots);
  for (size_t i = 0; i < order.size(); i += 2) pairs.push_back(BootPairOf(plan, k, order[i], {}, "never", o));
  auto [baseline, candidate] = JoinBootPairs(pairs);

  CompareOptions co;
  co.fdr = o.fdr;
  co.interleaved = true;
  // The boots' canaries are not held against each other, as a run's are
  // against stored numbers (compare/host_speed.h): they run in the guest, on
  // the kernel under test, and move with it. With the planted kprobe module
  // on getppid the loop canary read 20 to 90 % slower under TCG, which made
  // a +73 % regression inconclusive, and once an improvement.
  if (o.confirm) co.screen_alpha = kScreenAlpha;
  co.family_size_at_least = RegressionChecks(suite, o.scenarios);
  std::map<std::string, ScenarioResult> sides;
  for (const ScenarioResult& s : baseline.scenarios) {
    if (s.error.empty()) sides.emplace(s.name, s);
  }
  const std::string baseline_label = "the baseline kernel " + Describe(k.baseline, baseline.environment);
  const std::string candidate_label = "the candidate kernel " + Describe(k.candidate, candidate.environment);
  const std::string host = [] {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    return std::string(name);
  }();
  const std::string source = baseline_label + ", booted " + std::to_string(k.boots) + " time" +
                             (k.boots == 1 ? "" : "s") + " in turn with " + candidate_label +
                             " (ABBA by boot, paired by boot) in QEMU on " + host + " " + AccelMeaning(plan.vm.accel) +
                             " (" + accel_why + ")";
  Evaluate(candidate, sides, baseline.environment, source, o.strict, co);

  // A fresh boot pair of the scenarios with a flagged regression (or, with
  // --no-confirm, a failing one): it confirms them, and records each
  // side's evidence.
  std::vector<std::string> again_names;
  std::map<std::string, std::vector<size_t>> flagged =
      o.confirm ? ChecksToConfirm(candidate) : std::map<std::string, std::vector<size_t>>{};
  for (const auto& [name, checks] : flagged) again_names.push_back(name);
  if (!o.confirm) {
    for (const ScenarioResult& s : candidate.scenarios) {
      if (std::any_of(s.checks.begin(), s.checks.end(),
                      [](const CheckResult& c) { return c.verdict == Verdict::kRegression; }))
        again_names.push_back(s.name);
    }
  }
  if (!again_names.empty() && !Stopped(o)) {
    const double t0 = static_cast<double>(std::time(nullptr));
    const BootPair fresh = BootPairOf(plan, k, pairs.size() % 2 == 1, again_names, "always", o);
    const double seconds = static_cast<double>(std::time(nullptr)) - t0;
    std::map<std::string, ScenarioResult> again, again_baseline;
    std::map<std::string, double> took;
    for (const ScenarioResult& s : fresh.candidate.scenarios) {
      if (s.error.empty()) again.emplace(s.name, s);
      took[s.name] = seconds;
    }
    for (const ScenarioResult& s : fresh.baseline.scenarios) {
      if (s.error.empty()) again_baseline.emplace(s.name, s);
    }
    if (o.confirm) {
      ApplyConfirmation(candidate, again, again_baseline, co, took);
      candidate.verdict = OverallVerdict(candidate);
      candidate.exit_code = ExitCodeFor(candidate, candidate.strict);
    }
    // Each side's evidence, as its own boot took it.
    for (ScenarioResult& s : candidate.scenarios) {
      auto c = again.find(s.name);
      auto b = again_baseline.find(s.name);
      if (c != again.end()) {
        for (const Evidence& e : c->second.evidence) s.evidence.push_back(e);
      }
      if (b != again_baseline.end()) {
        for (Evidence e : b->second.evidence) {
          if (e.side != "candidate") continue;
          e.side = "baseline";
          s.evidence.push_back(std::move(e));
        }
      }
    }
  }
  TriageVerdicts(candidate, policy);
  WriteExplainedReports(candidate, o.out_dir);
  WriteFileAtomic((fs::path(o.out_dir) / "baseline-results.json").string(), ResultsText(baseline));
  GateOutcome outcome;
  outcome.exit_code = candidate.exit_code;
  outcome.results = std::move(candidate);
  outcome.baseline = std::move(baseline);
  return outcome;
}

}  // namespace perfgate
