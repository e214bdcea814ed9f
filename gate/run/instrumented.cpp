#include "run/instrumented.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace perfgate {

std::optional<InstructionCounts> ParseValgrindCounts(const std::string& text) {
  std::istringstream in(text);
  InstructionCounts counts;
  std::string line, function;
  bool events = false, summary = false, call_cost = false;
  while (std::getline(in, line)) {
    if (line.rfind("events:", 0) == 0) {
      std::istringstream names(line.substr(7));
      std::string first;
      names >> first;
      // Only the instruction count is asked for (no cache simulation): Ir alone.
      if (first != "Ir") return std::nullopt;
      events = true;
    } else if (line.rfind("fn=", 0) == 0) {
      function = line.substr(3);
    } else if (line.rfind("calls=", 0) == 0) {
      // Callgrind: the next cost line is the call's inclusive cost, which
      // the callee's own lines count already.
      call_cost = true;
    } else if (line.rfind("summary:", 0) == 0) {
      try {
        counts.total = std::stoull(line.substr(8));
      } catch (const std::exception&) {
        return std::nullopt;
      }
      summary = true;
    } else if (!line.empty() && line[0] >= '0' && line[0] <= '9' && !function.empty()) {
      if (call_cost) {
        call_cost = false;
        continue;
      }
      // "<line> <Ir>": the instructions of one source line of `function`.
      std::istringstream fields(line);
      uint64_t source_line = 0, ir = 0;
      if (fields >> source_line >> ir) counts.by_function[function] += ir;
    }
  }
  if (!events || !summary) return std::nullopt;
  return counts;
}

bool CanInstrument(const std::string& workload_kind) { return workload_kind == "command" || workload_kind == "gbench"; }

std::string ValgrindExecutable() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string wrapper = dir + "/valgrind";
    if (access(wrapper.c_str(), X_OK) != 0) continue;
    // Debian's valgrind is a shell script that execs "$0.bin": run as a
    // script from a descriptor (a workload run as another user is), its $0
    // is /dev/fd/N, and the exec fails. Its other settings are Memcheck's.
    const std::string binary = wrapper + ".bin";
    return access(binary.c_str(), X_OK) == 0 ? binary : wrapper;
  }
  return "valgrind";
}

std::vector<std::string> InstrumentedArgv(const std::vector<std::string>& argv, const std::string& out_dir,
                                          const std::vector<std::string>& paused_in) {
  std::vector<std::string> wrapped = {ValgrindExecutable(), "--quiet", "--trace-children=yes",
                                      // Threads take Valgrind's lock in turn (FIFO) rather than
                                      // whichever the kernel wakes first: the interleaving, and
                                      // with it the lock retries a contended program executes,
                                      // repeat (a two-thread mutex workload: 0.006 % -> 0.001 %).
                                      "--fair-sched=yes",
                                      // Valgrind's own errors must not pass for the workload's.
                                      "--error-exitcode=0"};
  if (paused_in.empty()) {
    // Cachegrind without its cache simulation: instructions, per function.
    wrapped.insert(wrapped.end(),
                   {"--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=" + out_dir + "/cachegrind.out.%p"});
  } else {
    // Callgrind, which can pause: collection toggles off on entering one
    // of the functions and on again when it returns. Uncompressed names and
    // positions keep its output as plain as Cachegrind's.
    wrapped.insert(wrapped.end(), {"--tool=callgrind", "--compress-strings=no", "--compress-pos=no"});
    for (const std::string& pattern : paused_in) wrapped.push_back("--toggle-collect=" + pattern);
    // After the toggles, which would otherwise start collection off.
    wrapped.insert(wrapped.end(), {"--collect-atstart=yes", "--callgrind-out-file=" + out_dir + "/callgrind.out.%p"});
  }
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

InstrumentedLaunch::InstrumentedLaunch(const std::vector<std::string>& argv, const std::vector<std::string>& paused_in,
                                       const Credentials* as)
    : dir_("perfgate-instr", "instrumented run") {
  // A throw below still removes the directory: dir_ is fully made.
  if (as != nullptr && chown(dir().c_str(), as->uid, as->gid) != 0)
    throw InfraError("instrumented run: cannot give " + dir() + " to user " + as->user + ": " + strerror(errno));
  argv_ = InstrumentedArgv(argv, dir(), paused_in);
}

InstructionCounts ReadInstructionCounts(const std::string& out_dir) {
  InstructionCounts sum;
  int files = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(out_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cachegrind.out.", 0) != 0 && name.rfind("callgrind.out.", 0) != 0) continue;
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    const std::optional<InstructionCounts> counts = ParseValgrindCounts(text.str());
    if (!counts) throw InfraError("instrumented run: " + entry.path().string() + " is not a Valgrind count file");
    ++files;
    sum.total += counts->total;
    for (const auto& [function, ir] : counts->by_function) sum.by_function[function] += ir;
  }
  if (files == 0)
    throw InfraError(
        "instrumented run: Valgrind wrote no counts (is the valgrind package installed, "
        "and can it run the workload?)");
  return sum;
}

std::string FunctionMetricName(const std::string& function) {
  static constexpr std::string_view kKept = "_:<>*/+-";
  std::string name;
  for (char c : function) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    kKept.find(c) != std::string_view::npos;
    // A dot would start a new segment of the metric name ("foo.cold").
    name += ok ? c : '_';
  }
  if (name.find_first_not_of('_') == std::string::npos) return "";
  return "instr." + name;
}

std::vector<MetricDeclaration> InstructionMetricDeclarations() {
  const auto counter = [](const char* name, const char* help) {
    return MetricDeclaration{.name = name, .kind = MetricKind::kCounter, .unit = "instructions", .help = help};
  };
  return {counter(kInstrTotal, "instructions the workload executed, counted under Valgrind (--instrument)"),
          counter("instr.<function>", "instructions executed in one function's own code, counted likewise")};
}

void AddInstructionMetrics(const InstructionCounts& counts, double wall_s, MetricSet& out) {
  out[kInstrTotal] = CounterMetric(kInstrTotal, "instructions", static_cast<double>(counts.total), wall_s);
  const double floor = kFunctionMetricShare * static_cast<double>(counts.total);
  for (const auto& [function, ir] : counts.by_function) {
    if (static_cast<double>(ir) < floor) continue;
    const std::string name = FunctionMetricName(function);
    if (name.empty() || name == kInstrTotal) continue;
    // Two functions that read alike once sanitized ("f(int)", "f(long)") add up.
    auto [it, fresh] = out.try_emplace(name, CounterMetric(name, "instructions", 0, wall_s));
    it->second.value += static_cast<double>(ir);
  }
}

void AddInstructionChecks(Suite& suite) {
  for (ScenarioSpec& spec : suite.scenarios) {
    if (!spec.instrument || !CanInstrument(spec.workload.kind)) continue;
    if (std::any_of(spec.checks.begin(), spec.checks.end(), [](const CheckSpec& c) { return c.metric == kInstrTotal; }))
      continue;
    CheckSpec check;
    check.type = CheckSpec::Type::kRegression;
    check.metric = kInstrTotal;
    check.statistic = "count";
    check.max_regression_pct = kInstructionCountThresholdPct;
    check.name = kInstructionTotalCheck;
    spec.checks.push_back(std::move(check));
  }
}

namespace {

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

std::optional<FoldedProfile> CountedProfile(const std::vector<Repetition>& repetitions) {
  std::map<std::string, std::vector<double>> values;
  size_t measured = 0;
  for (const Repetition& rep : repetitions) {
    if (!rep.measured() || rep.metrics.count(kInstrTotal) == 0) continue;
    ++measured;
    for (const auto& [name, metric] : rep.metrics) {
      if (name.starts_with("instr.")) values[name].push_back(metric.value);
    }
  }
  if (measured == 0) return std::nullopt;
  FoldedProfile profile;
  profile.kind = kCountedProfileKind;
  profile.unit = "instructions";
  profile.samples = measured;
  profile.total = static_cast<uint64_t>(Median(values[kInstrTotal]) + 0.5);
  uint64_t named = 0;
  for (auto& [name, counts] : values) {
    if (name == kInstrTotal) continue;
    // A function below the floor in some repetitions counts 0 there.
    counts.resize(measured, 0);
    const auto count = static_cast<uint64_t>(Median(counts) + 0.5);
    if (count == 0) continue;
    profile.stacks[name.substr(6)] = count;
    named += count;
  }
  if (profile.total > named) profile.stacks[kOtherFunctionsFrame] = profile.total - named;
  return profile;
}

void AddCountedEvidence(ScenarioResult& scenario, const std::string& reason) {
  for (const auto& [side, repetitions] :
       {std::pair<std::string, const std::vector<Repetition>*>{"candidate", &scenario.repetitions},
        {"baseline", &scenario.baseline_repetitions}}) {
    std::optional<FoldedProfile> profile = CountedProfile(*repetitions);
    if (!profile) continue;
    auto it = std::find_if(scenario.evidence.begin(), scenario.evidence.end(),
                           [&](const Evidence& e) { return e.side == side; });
    if (it == scenario.evidence.end()) {
      Evidence evidence;
      evidence.side = side;
      evidence.reason = reason;
      scenario.evidence.push_back(std::move(evidence));
      it = scenario.evidence.end() - 1;
    }
    std::erase_if(it->profiles, [](const FoldedProfile& p) { return p.kind == kCountedProfileKind; });
    it->profiles.push_back(std::move(*profile));
  }
}

}  // namespace perfgate
