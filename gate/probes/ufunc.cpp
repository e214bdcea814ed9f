// ufunc.<symbol>.latency and ufunc.<symbol>.calls: user-space functions
// chosen by glob (probes/ufunc_targets.h), timed from uprobe to uretprobe;
// see bpf/ufunc.bpf.c for the in-kernel side.
//
// The number of attachments follows the suite, so this probe attaches its two
// programs itself instead of through a HookPlan: preferably with one
// uprobe_multi link per object and direction (Linux 6.6+), else with one
// perf_event uprobe per function and direction. Both run the same programs;
// the cookie of each attachment is its function's number. uprobe_multi is
// first for its detach cost: closing a perf_event uprobe waits for RCU grace
// periods under a global tracing mutex (about 70 ms each on this project's
// machines, so minutes for 1,000 functions), while a uprobe_multi link waits
// once for all of its functions.
//
// The uprobes are attached before the workload exists, so they cannot be
// limited to its processes: every process that maps a traced object gets the
// breakpoints, and the programs drop what is not the workload's. Tracing a
// function of a library everyone maps (libc's malloc) therefore costs a trap
// per call machine-wide while the scenario runs; functions of the workload's
// own binary only cost in its processes. Latencies include the uprobe and
// uretprobe traps themselves (microseconds on virtual machines).
#include "ufunc.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "metrics/metric.h"
#include "probes/bpf_stats.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/hooks.h"
#include "probes/map_keys.h"
#include "probes/percpu.h"
#include "probes/tracker.h"
#include "probes/ufunc_probe.h"
#include "probes/ufunc_targets.h"
#include "ufunc.skel.h"

namespace perfgate {
namespace {

static_assert(kUfuncMaxFunctions == PG_UFUNC_MAX_FUNCTIONS);

const std::string kUfuncName = "ufunc";

// BPF_LINK_CREATE for BPF_TRACE_UPROBE_MULTI (Linux 6.6 uapi), spelled out
// because the installed kernel headers and libbpf 1.1 predate it. The kernel
// zero-fills the rest of union bpf_attr.
constexpr uint32_t kBpfTraceUprobeMulti = 48;
constexpr uint32_t kBpfUprobeMultiReturn = 1;
struct UprobeMultiLinkAttr {
  uint32_t prog_fd;
  uint32_t target_fd;
  uint32_t attach_type;
  uint32_t flags;
  uint64_t path;
  uint64_t offsets;
  uint64_t ref_ctr_offsets;
  uint64_t cookies;
  uint32_t cnt;
  uint32_t uprobe_flags;
  uint32_t pid;
};

// Buckets of the histogram hash per function: a latency spread over two
// octaves fills 64 buckets. Functions share the total, and entries are only
// allocated when used, but the kernel sizes the hash table for the maximum.
constexpr uint32_t kBucketsPerFunction = 64;
constexpr uint32_t kMinHistogramEntries = 16384;

int UprobePmuType(std::string& error) {
  std::ifstream in("/sys/bus/event_source/devices/uprobe/type");
  int type = -1;
  if (!(in >> type)) error = "no uprobe PMU in /sys/bus/event_source/devices";
  return type;
}

// Bit of perf_event_attr.config that makes a uprobe a uretprobe ("config:0").
int UretprobeBit() {
  std::ifstream in("/sys/bus/event_source/devices/uprobe/format/retprobe");
  std::string format;
  in >> format;
  if (format.rfind("config:", 0) != 0) return 0;
  return std::atoi(format.c_str() + 7);
}

std::vector<std::string> StringList(const nlohmann::json& params, const std::string& key) {
  std::vector<std::string> out;
  if (!params.contains(key)) return out;
  const auto& value = params.at(key);
  if (!value.is_array()) throw InputError("probe ufunc: parameter \"" + key + "\" must be an array of strings");
  for (const auto& item : value) {
    if (!item.is_string()) throw InputError("probe ufunc: parameter \"" + key + "\" must be an array of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

UfuncRequest RequestFrom(const ProbeOptions& options) {
  const nlohmann::json& params = options.params;
  UfuncRequest request;
  request.globs = StringList(params, "functions");
  if (request.globs.empty())
    throw InputError(
        "probe ufunc: needs parameter \"functions\": globs of the functions to trace, e.g. [\"myapp::*\"]");
  request.binary = options.workload_path;
  if (params.contains("binary")) {
    if (!params.at("binary").is_string()) throw InputError("probe ufunc: parameter \"binary\" must be a string");
    request.binary = params.at("binary").get<std::string>();
  }
  request.libraries = StringList(params, "libraries");
  if (params.contains("pid")) {
    if (!params.at("pid").is_number_integer() || params.at("pid").get<int64_t>() <= 0)
      throw InputError("probe ufunc: parameter \"pid\" must be a positive process id");
    request.pid = static_cast<pid_t>(params.at("pid").get<int64_t>());
    if (!params.contains("binary")) request.binary.clear();  // the process's executable
  }
  return request;
}

// Makes room for `needed` more file descriptors (with some to spare), up to
// the hard limit.
void EnsureFileDescriptors(size_t needed) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  std::error_code ec;
  size_t open_now = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != decltype(it){};
       it.increment(ec))
    ++open_now;
  rlim_t want = static_cast<rlim_t>(open_now + needed + 64);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < want) {
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < want)
      throw InfraError("probe ufunc: " + std::to_string(needed) + " uprobes need as many file descriptors, but the " +
                       "hard limit is " + std::to_string(limit.rlim_max) + " (ulimit -Hn)");
    limit.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

class UfuncProbe final : public Probe {
 public:
  explicit UfuncProbe(const UfuncProbeOptions& options) : options_(options) {}
  ~UfuncProbe() override { UfuncProbe::Detach(); }
  const std::string& name() const override { return kUfuncName; }

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    Detach();
    RequireAllowedAttachType(options, AttachType::kUprobe, kUfuncName);
    UfuncRequest request = RequestFrom(options);
    bool workload = options.scope == ProbeScope::kWorkload;
    if (workload && tracker == nullptr) throw InfraError("probe ufunc: workload scope needs a WorkloadTracker");
    std::vector<UfuncFunction> functions = ResolveUfuncFunctions(request);

    scope_ = options.scope;
    pid_ = request.pid;
    functions_ = std::move(functions);
    const WorkloadTracker* filter_by = workload ? tracker : nullptr;
    std::string multi_error = "disabled by the probe's options";
    if (options_.uprobe_multi) {
      try {
        Load(filter_by, true);
        AttachMulti();
        mode_ = "uprobe_multi";
        return;
      } catch (const Error& e) {
        multi_error = e.what();
        Destroy();
      } catch (...) {
        Detach();
        throw;
      }
    }
    try {
      rejected_ = {"uprobe_multi: " + multi_error};
      Load(filter_by, false);
      AttachPerFunction();
      mode_ = "perf_event";
    } catch (const Error& e) {
      Detach();
      throw InfraError(std::string(e.what()) + " (uprobe_multi: " + multi_error + ")");
    } catch (...) {
      Detach();
      throw;
    }
  }

  void Reset() override {
    const ufunc_bpf& s = skel();
    std::vector<pg_ufunc_calls> zeros(CpuCount());
    for (uint32_t i = 0; i < functions_.size(); ++i) {
      if (bpf_map_update_elem(bpf_map__fd(s.maps.ufunc_calls), &i, zeros.data(), BPF_ANY) != 0)
        throw InfraError("probe ufunc: reset call counts: " + ErrnoText(errno));
    }
    ZeroPerCpu<pg_ufunc_drops>(bpf_map__fd(s.maps.ufunc_drops), "probe ufunc");
    ClearMap<pg_ufunc_bucket>(bpf_map__fd(s.maps.ufunc_hist));
    // Stacks left by the previous repetition's threads (an exit() inside a
    // traced function) must not pair with this one's returns.
    ClearMap<uint32_t>(bpf_map__fd(s.maps.ufunc_stacks));
  }

  void Collect(double duration_s, MetricSet& out) override {
    const ufunc_bpf& s = skel();
    std::vector<pg_ufunc_calls> per_cpu(CpuCount());
    std::vector<LogLinearHistogram> hists(functions_.size());
    for (const auto& [key, count] : ReadHistogramEntries(bpf_map__fd(s.maps.ufunc_hist))) {
      if (key.func < hists.size()) hists[key.func].AddBucket(key.bucket, count);
    }
    for (uint32_t i = 0; i < functions_.size(); ++i) {
      if (bpf_map_lookup_elem(bpf_map__fd(s.maps.ufunc_calls), &i, per_cpu.data()) != 0)
        throw InfraError("probe ufunc: read call counts: " + ErrnoText(errno));
      double calls = 0;
      for (const auto& cpu : per_cpu) calls += static_cast<double>(cpu.calls);
      std::string prefix = "ufunc." + functions_[i].metric_name;
      out[prefix + ".calls"] = CounterMetric(prefix + ".calls", "count", calls, duration_s);
      out[prefix + ".latency"] = HistogramMetric(prefix + ".latency", "ns", std::move(hists[i]), duration_s);
    }
  }

  ProbeReport Report() const override {
    ProbeReport report = UnattachedReport(kUfuncName, scope_);
    if (skel_ == nullptr) return report;
    HookChoice hook;
    size_t n = functions_.size();
    hook.hook = "ufunc:" + std::to_string(n) + (n == 1 ? " function" : " functions");
    hook.attach_type = ToString(AttachType::kUprobe);
    hook.target = mode_ + ": " + ObjectSummary();
    hook.rejected = rejected_;
    report.hooks.push_back(std::move(hook));
    ProgramRunStats stats = ReadRunStats(ProgramFds());
    report.run_count = stats.run_count;
    report.run_time_ns = stats.run_time_ns;
    report.drops = stats.recursion_misses;
    try {
      for (const auto& cpu : ReadPerCpu<pg_ufunc_drops>(bpf_map__fd(skel_->maps.ufunc_drops), "probe ufunc"))
        report.drops += cpu.too_deep + cpu.no_stack + cpu.hist_full;
    } catch (const Error&) {
      // The report is best effort; the metrics carry the errors.
    }
    return report;
  }

  void Detach() override {
    Destroy();
    functions_.clear();
    rejected_.clear();
    mode_.clear();
  }

 private:
  static size_t CpuCount() {
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) throw InfraError("probe ufunc: cannot count possible CPUs: " + ErrnoText(-cpus));
    return static_cast<size_t>(cpus);
  }

  const ufunc_bpf& skel() const {
    if (skel_ == nullptr) throw InfraError("probe ufunc: used before Attach()");
    return *skel_;
  }

  std::vector<int> ProgramFds() const {
    return {bpf_program__fd(skel_->progs.ufunc_entry), bpf_program__fd(skel_->progs.ufunc_return)};
  }

  // Opens, sizes and loads the object; `multi` loads the programs for
  // uprobe_multi links, which the kernel checks at load time.
  void Load(const WorkloadTracker* tracker, bool multi) {
    skel_ = ufunc_bpf__open();
    if (skel_ == nullptr) throw InfraError("probe ufunc: open BPF object: " + ErrnoText(errno));
    ufunc_bpf& s = *skel_;
    s.rodata->pg_filter_tracked = tracker != nullptr;
    auto n = static_cast<uint32_t>(functions_.size());
    ScopeTrackedMaps(s.maps.pg_tracked, s.maps.pg_tracked_gen, tracker, "ufunc");
    int err = bpf_map__set_max_entries(s.maps.ufunc_calls, n);
    if (err == 0)
      err = bpf_map__set_max_entries(s.maps.ufunc_hist, std::max(kMinHistogramEntries, n * kBucketsPerFunction));
    if (err == 0 && multi) {
      auto type = static_cast<bpf_attach_type>(kBpfTraceUprobeMulti);
      err = bpf_program__set_expected_attach_type(s.progs.ufunc_entry, type);
      if (err == 0) err = bpf_program__set_expected_attach_type(s.progs.ufunc_return, type);
    }
    if (err != 0) throw InfraError("probe ufunc: configure BPF object: " + ErrnoText(-err));
    LibbpfLogCapture log;
    if ((err = bpf_object__load(s.obj)) != 0)
      throw InfraError("probe ufunc: load: " + ErrnoText(-err) + ": " + log.text());
  }

  // Two links per object: every entry, then every return.
  void AttachMulti() {
    std::map<std::string, std::vector<uint32_t>> by_object;
    for (uint32_t i = 0; i < functions_.size(); ++i) by_object[functions_[i].object].push_back(i);
    for (const auto& [object, indices] : by_object) {
      std::vector<uint64_t> offsets, cookies;
      for (uint32_t i : indices) {
        offsets.push_back(functions_[i].file_offset);
        cookies.push_back(i);
      }
      for (bool retprobe : {false, true}) {
        UprobeMultiLinkAttr attr{};
        attr.prog_fd =
            static_cast<uint32_t>(bpf_program__fd(retprobe ? skel_->progs.ufunc_return : skel_->progs.ufunc_entry));
        attr.attach_type = kBpfTraceUprobeMulti;
        attr.path = reinterpret_cast<uint64_t>(object.c_str());
        attr.offsets = reinterpret_cast<uint64_t>(offsets.data());
        attr.cookies = reinterpret_cast<uint64_t>(cookies.data());
        attr.cnt = static_cast<uint32_t>(offsets.size());
        attr.uprobe_flags = retprobe ? kBpfUprobeMultiReturn : 0;
        attr.pid = pid_ > 0 ? static_cast<uint32_t>(pid_) : 0;
        int fd = static_cast<int>(syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr)));
        if (fd < 0) throw InfraError(object + ": link: " + ErrnoText(errno));
        links_.push_back(fd);
      }
    }
  }

  // One perf_event uprobe per function and direction, linked to its program
  // with the function's number as cookie (Linux 5.15+). Only the link's fd is
  // kept: the link holds the perf event.
  void AttachPerFunction() {
    EnsureFileDescriptors(2 * functions_.size());
    std::string error;
    int pmu = UprobePmuType(error);
    if (pmu < 0) throw InfraError("probe ufunc: " + error);
    uint64_t retprobe_config = uint64_t{1} << UretprobeBit();
    for (uint32_t i = 0; i < functions_.size(); ++i) {
      const UfuncFunction& f = functions_[i];
      for (bool retprobe : {false, true}) {
        perf_event_attr attr{};
        attr.size = sizeof(attr);
        attr.type = static_cast<uint32_t>(pmu);
        attr.config = retprobe ? retprobe_config : 0;
        attr.config1 = reinterpret_cast<uint64_t>(f.object.c_str());  // uprobe_path
        attr.config2 = f.file_offset;                                 // probe_offset
        // Every process (on any CPU), or one process on every CPU.
        pid_t pid = pid_ > 0 ? pid_ : -1;
        int cpu = pid_ > 0 ? -1 : 0;
        int event = static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
        if (event < 0) throw InfraError(Where(f, retprobe) + ": perf_event_open: " + ErrnoText(errno));
        LIBBPF_OPTS(bpf_link_create_opts, link_opts);
        link_opts.perf_event.bpf_cookie = i;
        bpf_program* program = retprobe ? skel_->progs.ufunc_return : skel_->progs.ufunc_entry;
        int link = bpf_link_create(bpf_program__fd(program), event, BPF_PERF_EVENT, &link_opts);
        int link_errno = errno;
        close(event);
        if (link < 0) throw InfraError(Where(f, retprobe) + ": link: " + ErrnoText(link_errno));
        links_.push_back(link);
      }
    }
  }

  static std::string Where(const UfuncFunction& f, bool retprobe) {
    return "probe ufunc, function " + f.demangled + " in " + f.object + " (" + (retprobe ? "uretprobe" : "uprobe") +
           ")";
  }

  // "/path/app (12), /lib/x86_64-linux-gnu/libz.so.1 (2)"
  std::string ObjectSummary() const {
    std::vector<std::pair<std::string, size_t>> counts;
    for (const auto& f : functions_) {
      if (counts.empty() || counts.back().first != f.object) counts.emplace_back(f.object, 0);
      ++counts.back().second;
    }
    std::string text;
    for (const auto& [object, count] : counts)
      text += (text.empty() ? "" : ", ") + object + " (" + std::to_string(count) + ")";
    return text;
  }

  // (function, bucket) -> count, sorted, so buckets reach each histogram in order.
  static std::vector<std::pair<pg_ufunc_bucket, uint64_t>> ReadHistogramEntries(int map_fd) {
    std::vector<std::pair<pg_ufunc_bucket, uint64_t>> entries;
    for (const auto& key : MapKeys<pg_ufunc_bucket>(map_fd)) {
      uint64_t count = 0;
      if (bpf_map_lookup_elem(map_fd, &key, &count) == 0) entries.emplace_back(key, count);
    }
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.first.func != b.first.func ? a.first.func < b.first.func : a.first.bucket < b.first.bucket;
    });
    return entries;
  }

  // Links first, so no program runs while its maps go away.
  void Destroy() {
    for (int fd : links_) close(fd);
    links_.clear();
    if (skel_ != nullptr) ufunc_bpf__destroy(skel_);
    skel_ = nullptr;
  }

  UfuncProbeOptions options_;
  ufunc_bpf* skel_ = nullptr;
  std::vector<int> links_;
  std::vector<UfuncFunction> functions_;  // index = cookie = map slot
  std::string mode_;                      // "uprobe_multi" or "perf_event"
  std::vector<std::string> rejected_;
  ProbeScope scope_ = ProbeScope::kWorkload;
  pid_t pid_ = -1;
};

}  // namespace

std::unique_ptr<Probe> MakeUfuncProbe(const UfuncProbeOptions& options) {
  return std::make_unique<UfuncProbe>(options);
}

ProbeDefinition DefineUfuncProbe() {
  return {DeclaredProbe("ufunc"), []() -> std::unique_ptr<Probe> { return MakeUfuncProbe(UfuncProbeOptions{}); }};
}

}  // namespace perfgate
