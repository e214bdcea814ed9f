// profile: on-CPU sampling of the workload, one perf event per CPU at
// `frequency_hz`, with kernel and user stacks summed in the kernel per
// (process, kernel stack, user stack); see bpf/profile.bpf.c.
//
// The event is hardware `cycles` where the PMU is there, else the software
// `cpu-clock` timer (virtual machines without a virtual PMU): the first that
// perf_event_open accepts, said in the report like other probes' attach types.
// Sampling runs on every CPU and the program drops what is not the
// workload's, so processes the workload creates are sampled from their first
// instruction without a per-process event.
#include "profile.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "metrics/error.h"
#include "metrics/metric.h"
#include "probes/bpf_stats.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/hooks.h"
#include "probes/map_keys.h"
#include "probes/percpu.h"
#include "probes/profile_stacks.h"
#include "probes/stack_map.h"
#include "probes/tracker.h"
#include "profile.skel.h"

namespace perfgate {
namespace {

const std::string kName = "profile";
const char* const kWhat = "probe profile";

constexpr int kDefaultFrequencyHz = 99;
constexpr int kMaxFrequencyHz = 10000;
// Distinct (process, kernel, user) stacks kept per repetition; the stack map
// has room for both stacks of each.
constexpr uint32_t kStackSums = 4096;
constexpr uint32_t kStackTraces = 2 * kStackSums;

struct SampledEvent {
  const char* name;
  uint32_t type;
  uint64_t config;
};
// Fastest and most precise first.
constexpr SampledEvent kEvents[] = {{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
                                    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK}};

int OpenSampler(const SampledEvent& event, int frequency_hz, int cpu) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = event.type;
  attr.config = event.config;
  attr.freq = 1;
  attr.sample_freq = static_cast<uint64_t>(frequency_hz);
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

int FrequencyFrom(const nlohmann::json& params) {
  if (!params.contains("frequency_hz")) return kDefaultFrequencyHz;
  const auto& v = params.at("frequency_hz");
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxFrequencyHz)
    throw InputError(std::string(kWhat) + ": parameter \"frequency_hz\" must be an integer in [1, " +
                     std::to_string(kMaxFrequencyHz) + "]");
  return static_cast<int>(v.get<int64_t>());
}

class ProfileProbe final : public Probe, public ProfileStackSource {
 public:
  ~ProfileProbe() override { ProfileProbe::Detach(); }
  const std::string& name() const override { return kName; }

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    Detach();
    RequireAllowedAttachType(options, AttachType::kPerfEvent, kName);
    frequency_hz_ = FrequencyFrom(options.params);
    const bool workload = options.scope == ProbeScope::kWorkload;
    if (workload && tracker == nullptr) throw InfraError("probe profile: workload scope needs a WorkloadTracker");
    scope_ = options.scope;
    try {
      Load(workload ? tracker : nullptr);
      OpenEvents();
    } catch (...) {
      Detach();
      throw;
    }
  }

  void Reset() override {
    ClearMap<pg_stack_key>(bpf_map__fd(skel().maps.profile_by_stack));
    ClearStacks(StacksFd());
    ZeroPerCpu<pg_profile_counts>(bpf_map__fd(skel().maps.profile_counts), kWhat);
  }

  void Collect(double duration_s, MetricSet& out) override {
    auto counts = ReadPerCpuTotal<pg_profile_counts>(bpf_map__fd(skel().maps.profile_counts), kWhat);
    out["profile.samples"] = CounterMetric("profile.samples", "count", static_cast<double>(counts.samples), duration_s);
    dropped_ += counts.stacks + counts.stack_sums;
  }

  ProbeReport Report() const override {
    ProbeReport report = UnattachedReport(kName, scope_);
    if (skel_ == nullptr) return report;
    HookChoice hook;
    hook.hook = "profile";
    hook.attach_type = ToString(AttachType::kPerfEvent);
    hook.target = event_ + " at " + std::to_string(frequency_hz_) + " Hz on " + std::to_string(links_.size()) +
                  (links_.size() == 1 ? " CPU" : " CPUs");
    hook.rejected = rejected_;
    report.hooks.push_back(std::move(hook));
    ProgramRunStats stats = ReadRunStats({bpf_program__fd(skel_->progs.profile_sample)});
    report.run_count = stats.run_count;
    report.run_time_ns = stats.run_time_ns;
    report.drops = stats.recursion_misses + dropped_;
    return report;
  }

  void Detach() override {
    DestroyLinks(links_);
    if (skel_ != nullptr) profile_bpf__destroy(skel_);
    skel_ = nullptr;
    event_.clear();
    rejected_.clear();
  }

  std::vector<SampledStack> SampledStacks() const override {
    std::vector<SampledStack> stacks;
    for (const auto& [key, samples] : MapEntries<pg_stack_key, uint64_t>(bpf_map__fd(skel().maps.profile_by_stack))) {
      if (samples == 0) continue;
      SampledStack stack;
      stack.tgid = key.tgid;
      stack.samples = samples;
      stack.kernel_ips = ReadStack(StacksFd(), key.kernel_stack);
      stack.user_ips = ReadStack(StacksFd(), key.user_stack);
      stacks.push_back(std::move(stack));
    }
    return stacks;
  }

  int frequency_hz() const override { return frequency_hz_; }
  const std::string& sampled_event() const override { return event_; }

 private:
  const profile_bpf& skel() const {
    if (skel_ == nullptr) throw InfraError(std::string(kWhat) + ": used before Attach()");
    return *skel_;
  }
  int StacksFd() const { return bpf_map__fd(skel().maps.profile_stacks); }

  void Load(const WorkloadTracker* tracker) {
    skel_ = profile_bpf__open();
    if (skel_ == nullptr) throw InfraError(std::string(kWhat) + ": open BPF object: " + ErrnoText(errno));
    skel_->rodata->pg_filter_tracked = tracker != nullptr;
    ScopeTrackedMaps(skel_->maps.pg_tracked, skel_->maps.pg_tracked_gen, tracker, kName);
    int err = bpf_map__set_max_entries(skel_->maps.profile_stacks, kStackTraces);
    if (err == 0) err = bpf_map__set_max_entries(skel_->maps.profile_by_stack, kStackSums);
    if (err != 0) throw InfraError(std::string(kWhat) + ": configure BPF object: " + ErrnoText(-err));
    LibbpfLogCapture log;
    if ((err = profile_bpf__load(skel_)) != 0)
      throw InfraError(std::string(kWhat) + ": load: " + ErrnoText(-err) + ": " + log.text());
  }

  // One sampling event per online CPU, of the first kind this machine has.
  void OpenEvents() {
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) throw InfraError(std::string(kWhat) + ": cannot count possible CPUs: " + ErrnoText(-cpus));
    for (const SampledEvent& event : kEvents) {
      std::string failure;
      for (int cpu = 0; cpu < cpus && failure.empty(); ++cpu) {
        int fd = OpenSampler(event, frequency_hz_, cpu);
        if (fd < 0) {
          if (errno == ENODEV && cpu > 0) continue;  // an offline CPU
          failure = "perf_event_open on CPU " + std::to_string(cpu) + ": " + ErrnoText(errno);
          break;
        }
        bpf_link* link = bpf_program__attach_perf_event(skel_->progs.profile_sample, fd);
        if (link == nullptr) {
          int link_errno = errno;
          close(fd);
          failure = "attach on CPU " + std::to_string(cpu) + ": " + ErrnoText(link_errno);
          break;
        }
        links_.push_back(link);  // the link closes the event
      }
      if (failure.empty() && !links_.empty()) {
        event_ = event.name;
        return;
      }
      DestroyLinks(links_);
      rejected_.push_back(std::string(event.name) + ": " + (failure.empty() ? "no online CPU" : failure));
    }
    std::string why;
    for (const auto& r : rejected_) why += (why.empty() ? "" : "; ") + r;
    throw InfraError("probe profile, hook profile: no usable sampling event (" + why + ")");
  }

  profile_bpf* skel_ = nullptr;
  std::vector<bpf_link*> links_;
  std::string event_;
  std::vector<std::string> rejected_;
  int frequency_hz_ = kDefaultFrequencyHz;
  ProbeScope scope_ = ProbeScope::kWorkload;
  uint64_t dropped_ = 0;  // over every repetition collected
};

}  // namespace

std::unique_ptr<Probe> MakeProfileProbe() { return std::make_unique<ProfileProbe>(); }

}  // namespace perfgate
