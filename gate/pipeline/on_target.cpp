#include "pipeline/on_target.h"

#include <stdlib.h>
#include <sys/utsname.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "base/log.h"
#include "base/quantity.h"
#include "base/scratch_dir.h"
#include "baseline/store.h"
#include "metrics/results_json.h"
#include "pipeline/dir_lock.h"
#include "pipeline/gate_steps.h"
#include "probes/probe.h"
#include "target/ssh.h"
#include "triage/acceptance.h"
#include "triage/triage.h"

namespace fs = std::filesystem;

namespace perfgate {

namespace {

// The device's work directory, made for this command and removed at its end
// (best effort: a connection that went away leaves it to the device's side,
// which removes it once perfgate there has stopped).
class RemoteWorkDir {
 public:
  explicit RemoteWorkDir(const SshDevice& device) : device_(device) {
    const CapturedCommand made = device.RunScript("mktemp -d \"${TMPDIR:-/tmp}/perfgate-target.XXXXXX\"", {});
    path_ = FirstLine(made.out);
    if (made.status != 0 || path_.empty() || path_[0] != '/')
      throw InfraError(device.target().url + ": could not make a work directory there: " + FirstLine(made.err));
  }
  ~RemoteWorkDir() {
    try {
      device_.RunScript("rm -rf -- \"$1\"", {path_});
    } catch (const Error&) {
    }
  }
  RemoteWorkDir(const RemoteWorkDir&) = delete;
  RemoteWorkDir& operator=(const RemoteWorkDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  const SshDevice& device_;
  std::string path_;
};

// This binary in the device's cache (XDG_CACHE_HOME, else ~/.cache, on
// the device: perfgate/perfgate-SHA256), sent once per build: it is tens
// of megabytes, and a device's link may be slow. The cache keeps the three
// newest. `work` receives it first, so a send cut short leaves no binary
// in the cache.
std::string CachedPerfgate(const SshDevice& device, const std::string& work) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const CapturedCommand sum = RunCaptured({"sha256sum", "--", self});
  const std::string hash = sum.out.substr(0, sum.out.find(' '));
  if (sum.status != 0 || hash.size() != 64) throw InfraError("sha256sum " + self + " failed: " + FirstLine(sum.err));
  const std::string where = "c=\"${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/perfgate\"; f=\"$c/perfgate-$1\"; ";
  const CapturedCommand cached = device.RunScript(where + "echo \"$f\"; [ -x \"$f\" ]", {hash});
  const std::string file = FirstLine(cached.out);
  if (file.empty()) throw InfraError(device.target().url + ": no cache directory there: " + FirstLine(cached.err));
  if (cached.status == 0) return file;
  log::Progress("%s: sending this perfgate (once per build)\n", device.target().url.c_str());
  device.SendFile(self, work + "/perfgate");
  const CapturedCommand kept =
      device.RunScript(where +
                           "mkdir -p \"$c\" && cp \"$2/perfgate\" \"$f.part\" && mv -f \"$f.part\" \"$f\" && "
                           "ls -t \"$c\"/perfgate-* | sed 1,3d | while read -r old; do rm -f \"$old\"; done",
                       {hash, work});
  if (kept.status != 0) return work + "/perfgate";  // no cache there: this run's copy
  return file;
}

// The perfgate the device runs: this one, sent, when the device has this
// host's architecture (the same rules on both sides); else the device's
// own, which must be this version.
std::string PerfgateOnDevice(const SshDevice& device, const std::string& work) {
  const CapturedCommand here = RunCaptured({"/proc/self/exe", "--version"});
  const std::string version = FirstLine(here.out);
  struct utsname uts {};
  uname(&uts);
  const CapturedCommand there = device.RunScript(
      "uname -m; if command -v perfgate > /dev/null 2>&1; then perfgate --version 2>&1 | sed -n 1p; fi", {});
  const std::string arch = FirstLine(there.out);
  const size_t eol = there.out.find('\n');
  const std::string installed = eol == std::string::npos ? "" : FirstLine(there.out.substr(eol + 1));
  const std::string& url = device.target().url;
  if (arch == uts.machine) {
    const std::string sent = CachedPerfgate(device, work);
    const CapturedCommand runs = device.Run({sent, "--version"});
    if (runs.status != 0 || FirstLine(runs.out) != version) {
      throw InfraError(url + ": this perfgate, sent there, does not run (" +
                       FirstLine(runs.err.empty() ? runs.out : runs.err) +
                       "): install perfgate's package on the device, with the libraries it needs");
    }
    return sent;
  }
  if (installed == version) return "perfgate";
  throw InfraError(url + ": the device is " + arch + " and has " +
                   (installed.empty() ? "no perfgate on its PATH" : "\"" + installed + "\"") + "; it needs " + version +
                   " built for " + arch + " (perfgate's " + arch + " package)");
}

// The acceptances as a trailer file ("BY SCENARIO/CHECK <= +N%: reason"),
// already resolved against the suite here.
std::string TrailerFileText(const std::vector<Acceptance>& acceptances) {
  std::string text;
  for (const Acceptance& a : acceptances) {
    char bound[64];
    std::snprintf(bound, sizeof bound, "%g", a.bound_pct);
    std::string by = a.by.empty() ? "--accept" : a.by;
    for (char& c : by) c = c == ' ' ? '_' : c;
    text += by + " " + a.target + " <= +" + bound + "%: " + a.reason + "\n";
  }
  return text;
}

struct DevicePaths {
  std::string perfgate, suite, baselines, out, accepts;
};

// The command the device runs: this one's options, with the device's paths.
std::vector<std::string> DeviceCommand(const GateOptions& o, TargetFlow flow, const AbVariants* v,
                                       const DevicePaths& p) {
  std::vector<std::string> argv = {p.perfgate};
  if (flow == TargetFlow::kRun) argv.push_back("run");
  if (flow == TargetFlow::kRecord) argv.insert(argv.end(), {"baseline", "record"});
  if (flow == TargetFlow::kAb) argv.push_back("ab");
  argv.insert(argv.end(), {p.suite, "--out", p.out, "--suite-path",
                           o.suite_path_in_reports.empty() ? o.suite_file : o.suite_path_in_reports});
  for (const std::string& s : o.scenarios) argv.insert(argv.end(), {"--scenario", s});
  if (o.repetitions) argv.insert(argv.end(), {"--reps", std::to_string(*o.repetitions)});
  if (o.strict) argv.push_back("--strict");
  if (o.fdr) argv.push_back("--fdr");
  if (o.quiet) argv.push_back("--quiet");
  if (o.instrument) argv.push_back("--instrument");
  if (!o.attach_types.empty()) {
    std::string types;
    for (AttachType t : o.attach_types) types += (types.empty() ? "" : ",") + ToString(t);
    argv.insert(argv.end(), {"--attach-types", types});
  }
  if (!o.run_as.empty()) argv.insert(argv.end(), {"--run-as", o.run_as});
  if (!o.shard.empty()) argv.insert(argv.end(), {"--shard", o.shard});
  if (flow != TargetFlow::kAb) {
    argv.insert(argv.end(), {"--baseline-dir", p.baselines});
    if (o.require_same_env) argv.push_back("--require-same-env");
    if (o.allow_other_host) argv.push_back("--allow-other-host");
  }
  if (flow == TargetFlow::kRecord) return argv;
  if (!o.confirm) argv.push_back("--no-confirm");
  if (o.trace) argv.insert(argv.end(), {"--trace", "--trace-min-us", FormatNumber(o.trace_min_us)});
  if (!p.accepts.empty()) argv.insert(argv.end(), {"--accept-trailers", p.accepts});
  argv.insert(argv.end(), {"--today", TriageToday(o.today)});
  if (flow != TargetFlow::kAb || v == nullptr) return argv;
  if (!v->baseline_cmd.empty()) argv.insert(argv.end(), {"--baseline-cmd", v->baseline_cmd});
  if (!v->candidate_cmd.empty()) argv.insert(argv.end(), {"--candidate-cmd", v->candidate_cmd});
  for (const auto& [name, value] : v->baseline_set) argv.insert(argv.end(), {"--baseline-set", name + "=" + value});
  for (const auto& [name, value] : v->candidate_set) argv.insert(argv.end(), {"--candidate-set", name + "=" + value});
  argv.insert(argv.end(), {"--baseline-label", v->baseline_label, "--candidate-label", v->candidate_label});
  return argv;
}

// Runs `command` on the device so that it stops when this perfgate goes
// away: the device's shell watches the connection's input, which this side
// holds open and empty until the command ends, and on its end stops
// perfgate there (SIGTERM: it keeps what it measured, which nobody fetches)
// and removes the work directory a minute later. perfgate's progress and
// messages come through as they are written.
int RunWatched(const SshDevice& device, const std::string& work, const std::vector<std::string>& command) {
  const std::string script =
      "w=$1; shift; exec 3<&0; PERFGATE_ON_DEVICE=1 \"$@\" < /dev/null & p=$!; "
      "{ cat <&3 > /dev/null; kill -TERM \"$p\" 2> /dev/null && sleep 60 && rm -rf -- \"$w\"; } "
      "> /dev/null 2>&1 & exec 3<&-; wait \"$p\"";
  std::vector<std::string> args = {work};
  args.insert(args.end(), command.begin(), command.end());
  CaptureOptions options;
  options.pass_err = true;
  options.hold_input_open = true;
  // Its summary is this host's to print (PERFGATE_ON_DEVICE keeps it quiet).
  return device.RunScript(script, args, options).status;
}

// The device's paths in what it wrote, as this host's.
void NameLocalPaths(RunResults& results, const DevicePaths& p, const GateOptions& o) {
  const auto replace = [](std::string& text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  replace(results.baseline_source, p.baselines, o.baseline_dir);
  results.baseline_source += " (measured on " + o.target.url + ")";
}

}  // namespace

GateOutcome GateOnTarget(const GateOptions& o, TargetFlow flow, const AbVariants* variants, bool update_baseline) {
  if (!o.history_db.empty())
    throw InputError(
        "--target: --baseline-from-history needs the history here; record the device's baselines "
        "with `perfgate baseline record --target` and run against those");
  // Bad input is said before anything connects: the suite, its variants,
  // names that cannot be baseline files, and the acceptances.
  const Suite suite = LoadSuiteFile(
      o.suite_file, variants ? variants->candidate_set : std::map<std::string, std::string>{}, o.suite_dir);
  if (variants) LoadSuiteFile(o.suite_file, variants->baseline_set, o.suite_dir);
  for (const auto& s : suite.scenarios) BaselinePath(o.baseline_dir, suite.name, s.name);
  std::vector<Acceptance> acceptances = o.acceptances;
  ResolveAcceptances(acceptances, suite, nullptr);
  const fs::path suite_file = fs::absolute(o.suite_file);
  const fs::path suite_dir = o.suite_dir.empty() ? suite_file.parent_path() : fs::absolute(o.suite_dir);
  const fs::path in_dir = suite_file.lexically_relative(suite_dir);
  if (in_dir.empty() || *in_dir.begin() == "..")
    throw InputError("--target: the suite file " + o.suite_file + " is not in its directory " + suite_dir.string());

  const SshDevice device(o.target, o.ssh_config);
  const RemoteWorkDir work(device);
  DevicePaths p;
  p.perfgate = PerfgateOnDevice(device, work.path());
  p.suite = work.path() + "/suite/" + in_dir.string();
  p.baselines = work.path() + "/baselines";
  p.out = work.path() + "/out";
  log::Progress("%s: sending %s\n", o.target.url.c_str(), suite_dir.c_str());
  device.SendDirectory(suite_dir.string(), work.path() + "/suite");
  if (flow == TargetFlow::kRun) {
    for (const auto& s : suite.scenarios) {
      const std::string file = BaselinePath(o.baseline_dir, suite.name, s.name);
      if (!fs::exists(file)) continue;
      device.SendFile(file, p.baselines + "/" + fs::path(file).lexically_relative(o.baseline_dir).string());
    }
  }
  // Named apart from the device's work directory: on a loopback device both are in one /tmp.
  const ScratchDir scratch("perfgate-target-host", "--target");
  if (!acceptances.empty()) {
    const std::string local = scratch.path() + "/accepts";
    std::ofstream(local) << TrailerFileText(acceptances);
    p.accepts = work.path() + "/accepts";
    device.SendFile(local, p.accepts);
  }

  const int status = RunWatched(device, work.path(), DeviceCommand(o, flow, variants, p));
  const CapturedCommand has = device.RunScript("test -f \"$1/results.json\"", {p.out});
  if (has.status != 0) {
    if (status == static_cast<int>(ExitCode::kBadInput))
      throw InputError(o.target.url + ": perfgate there refused the run (its message above)");
    throw InfraError(o.target.url + ": perfgate there ended with status " + std::to_string(status) +
                     " and wrote no results (its message above)");
  }
  const std::string fetched = scratch.path() + "/out";
  fs::create_directories(fetched);
  device.FetchDirectory(p.out, fetched);

  // The device's results are in: now this host writes.
  RunResults results = ReadResultsFile(fetched + "/results.json");
  NameLocalPaths(results, p, o);
  GateOutcome outcome;
  {
    DirectoryLock out_lock(o.out_dir, DirectoryLock::Mode::kReportsOut, "--out");
    for (const char* kept : {"baseline-results.json", "trace.perfetto-trace"}) {
      if (fs::exists(fetched + "/" + kept))
        fs::copy_file(fetched + "/" + kept, fs::path(o.out_dir) / kept, fs::copy_options::overwrite_existing);
    }
    results.strict = o.strict;
    WriteExplainedReports(results, o.out_dir);
  }
  outcome.exit_code = status;
  if (flow == TargetFlow::kRecord || update_baseline) {
    if (results.partial) {
      log::Notice("interrupted; no baseline written\n");
      outcome.exit_code = static_cast<int>(ExitCode::kInfra);
    } else {
      outcome.stored_baselines = StoreBaselines(suite, results, o.baseline_dir, flow == TargetFlow::kRecord);
      if (flow == TargetFlow::kRecord && outcome.stored_baselines.empty())
        outcome.exit_code = static_cast<int>(ExitCode::kInfra);
    }
  }
  outcome.results = std::move(results);
  return outcome;
}

}  // namespace perfgate
