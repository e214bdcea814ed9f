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
//
// With `user_stack_bytes` (the evidence repetitions set it), each sample
// also copies the thread's user registers and the top of its user stack into
// a ring buffer that a thread drains every few milliseconds; the copies go
// with their stack's sum to whoever unwinds them (symbolize/dwarf_unwind.h).
#include "profile.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/error.h"
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

const std::string kProfileName = "profile";
const char* const kProfileWhat = "probe profile";

constexpr int kDefaultFrequencyHz = 99;
constexpr int kMaxFrequencyHz = 20000;
// Distinct (process, kernel, user) stacks kept per repetition; the stack map
// has room for both stacks of each.
constexpr uint32_t kProfileStackSums = 4096;
constexpr uint32_t kProfileStackTraces = 2 * kProfileStackSums;
// The ring buffer of user stack copies: at 8 KiB a copy and 5 kHz on two
// CPUs, 16 MiB hold 200 ms, 20 times the drain period; it doubles with the
// frequency (a busy host may keep the draining thread off the CPU as long
// at any rate), up to 64 MiB.
constexpr uint32_t kCopyRingBytes = 16u << 20;
constexpr uint32_t kMaxCopyRingBytes = 64u << 20;
constexpr int kCopyRingFrequencyHz = 5000;

uint32_t CopyRingBytes(int frequency_hz) {
  uint32_t bytes = kCopyRingBytes;
  for (int hz = kCopyRingFrequencyHz; hz < frequency_hz && bytes < kMaxCopyRingBytes; hz *= 2) bytes *= 2;
  return bytes;
}
constexpr auto kCopyDrainPeriod = std::chrono::milliseconds(10);
// Copies kept per repetition, a uniform sample of them beyond (64 MiB at 8 KiB).
constexpr size_t kMaxCopies = 8192;

static_assert(UserStackCopy::kRegisters == PG_UNWIND_REGS);
static_assert(UserStackCopy::kStackPointer == PG_UNWIND_REG_SP);
static_assert(UserStackCopy::kInstructionPointer == PG_UNWIND_REG_IP);

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
    throw InputError(std::string(kProfileWhat) + ": parameter \"frequency_hz\" must be an integer in [1, " +
                     std::to_string(kMaxFrequencyHz) + "]");
  return static_cast<int>(v.get<int64_t>());
}

uint32_t UserStackBytesFrom(const nlohmann::json& params) {
  if (!params.contains("user_stack_bytes")) return 0;
  const auto& v = params.at("user_stack_bytes");
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > PG_USER_STACK_MAX ||
      v.get<int64_t>() % 8 != 0)
    throw InputError(std::string(kProfileWhat) + ": parameter \"user_stack_bytes\" must be a multiple of 8 in [0, " +
                     std::to_string(PG_USER_STACK_MAX) + "]");
  return static_cast<uint32_t>(v.get<int64_t>());
}

using StackKey = std::tuple<uint32_t, int32_t, int32_t>;  // tgid, kernel stack, user stack

class ProfileProbe final : public Probe, public ProfileStackSource {
 public:
  ~ProfileProbe() override { ProfileProbe::Detach(); }
  const std::string& name() const override { return kProfileName; }

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    Detach();
    RequireAllowedAttachType(options, AttachType::kPerfEvent, kProfileName);
    frequency_hz_ = FrequencyFrom(options.params);
    user_stack_bytes_ = UserStackBytesFrom(options.params);
    const bool workload = options.scope == ProbeScope::kWorkload;
    if (workload && tracker == nullptr) throw InfraError("probe profile: workload scope needs a WorkloadTracker");
    scope_ = options.scope;
    try {
      Load(workload ? tracker : nullptr);
      OpenEvents();
      if (user_stack_bytes_ > 0) StartDraining();
    } catch (...) {
      Detach();
      throw;
    }
  }

  void Reset() override {
    ClearMap<pg_stack_key>(bpf_map__fd(skel().maps.profile_by_stack));
    ClearStacks(StacksFd());
    ZeroPerCpu<pg_profile_counts>(bpf_map__fd(skel().maps.profile_counts), kProfileWhat);
    if (copy_ring_ != nullptr) {
      std::lock_guard<std::mutex> lock(copies_mutex_);
      ring_buffer__consume(copy_ring_);
      copies_.clear();
      copies_seen_ = 0;
    }
  }

  void Collect(double duration_s, MetricSet& out) override {
    auto counts = ReadPerCpuTotal<pg_profile_counts>(bpf_map__fd(skel().maps.profile_counts), kProfileWhat);
    out["profile.samples"] = CounterMetric("profile.samples", "count", static_cast<double>(counts.samples), duration_s);
    dropped_ += counts.stacks + counts.stack_sums;
    copies_made_ += counts.copies;
    copies_lost_ += counts.copies_lost;
  }

  ProbeReport Report() const override {
    ProbeReport report = UnattachedReport(kProfileName, scope_);
    if (skel_ == nullptr) return report;
    HookChoice hook;
    hook.hook = "profile";
    hook.attach_type = ToString(AttachType::kPerfEvent);
    hook.target = event_ + " at " + std::to_string(frequency_hz_) + " Hz on " + std::to_string(links_.size()) +
                  (links_.size() == 1 ? " CPU" : " CPUs");
    if (user_stack_bytes_ > 0) {
      hook.target += ", " + std::to_string(user_stack_bytes_) + " bytes of user stack copied per sample (" +
                     std::to_string(copies_made_) + " copied, " + std::to_string(copies_lost_) + " not)";
    }
    hook.rejected = rejected_;
    report.hooks.push_back(std::move(hook));
    ProgramRunStats stats = ReadRunStats({bpf_program__fd(skel_->progs.profile_sample)});
    report.run_count = stats.run_count;
    report.run_time_ns = stats.run_time_ns;
    report.drops = stats.recursion_misses + dropped_;
    return report;
  }

  void Detach() override {
    StopDraining();
    DestroyLinks(links_);
    if (skel_ != nullptr) profile_bpf__destroy(skel_);
    skel_ = nullptr;
    event_.clear();
    rejected_.clear();
  }

  std::vector<SampledStack> SampledStacks() override {
    std::map<StackKey, std::vector<UserStackCopy>> copies;
    if (copy_ring_ != nullptr) {
      std::lock_guard<std::mutex> lock(copies_mutex_);
      ring_buffer__consume(copy_ring_);
      for (auto& [key, copy] : copies_) copies[key].push_back(std::move(copy));
      copies_.clear();
      copies_seen_ = 0;
    }
    std::vector<SampledStack> stacks;
    for (const auto& [key, samples] : MapEntries<pg_stack_key, uint64_t>(bpf_map__fd(skel().maps.profile_by_stack))) {
      if (samples == 0) continue;
      SampledStack stack;
      stack.tgid = key.tgid;
      stack.samples = samples;
      stack.kernel_ips = ReadStack(StacksFd(), key.kernel_stack);
      stack.user_ips = ReadStack(StacksFd(), key.user_stack);
      if (auto it = copies.find({key.tgid, key.kernel_stack, key.user_stack}); it != copies.end())
        stack.copies = std::move(it->second);
      stacks.push_back(std::move(stack));
    }
    return stacks;
  }

  int frequency_hz() const override { return frequency_hz_; }
  const std::string& sampled_event() const override { return event_; }

 private:
  const profile_bpf& skel() const {
    if (skel_ == nullptr) throw InfraError(std::string(kProfileWhat) + ": used before Attach()");
    return *skel_;
  }
  int StacksFd() const { return bpf_map__fd(skel().maps.profile_stacks); }

  void Load(const WorkloadTracker* tracker) {
    skel_ = profile_bpf__open();
    if (skel_ == nullptr) throw InfraError(std::string(kProfileWhat) + ": open BPF object: " + ErrnoText(errno));
    skel_->rodata->pg_filter_tracked = tracker != nullptr;
    ScopeTrackedMaps(skel_->maps.pg_tracked, skel_->maps.pg_tracked_gen, tracker, kProfileName);
    // Code without frame pointers, whose stacks the copies are for, gives the
    // walk garbage chains: nearly a stack per sample. Their sums must not
    // run out of room before the stack map does (a sample without a sum is lost).
    const uint32_t sums = user_stack_bytes_ > 0 ? kProfileStackTraces : kProfileStackSums;
    int err = bpf_map__set_max_entries(skel_->maps.profile_stacks, kProfileStackTraces);
    if (err == 0) err = bpf_map__set_max_entries(skel_->maps.profile_by_stack, sums);
    skel_->rodata->pg_user_stack_bytes = user_stack_bytes_;
    if (err == 0 && user_stack_bytes_ > 0)
      err = bpf_map__set_max_entries(skel_->maps.profile_stack_copies, CopyRingBytes(frequency_hz_));
    if (err != 0) throw InfraError(std::string(kProfileWhat) + ": configure BPF object: " + ErrnoText(-err));
    LibbpfLogCapture log;
    if ((err = profile_bpf__load(skel_)) != 0)
      throw InfraError(std::string(kProfileWhat) + ": load: " + ErrnoText(-err) + ": " + log.text());
  }

  // One sampling event per online CPU, of the first kind this machine has.
  void OpenEvents() {
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) throw InfraError(std::string(kProfileWhat) + ": cannot count possible CPUs: " + ErrnoText(-cpus));
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

  // Keeps a record of the copy ring buffer: all of them up to kMaxCopies,
  // then a uniform sample (reservoir sampling), so that a long repetition
  // is not unwound from its beginning only.
  static int KeepCopy(void* self, void* data, size_t size) {
    auto* probe = static_cast<ProfileProbe*>(self);
    const size_t header = offsetof(pg_user_stack_copy, stack);
    if (size < header) return 0;
    pg_user_stack_copy record;
    std::memcpy(&record, data, header);
    if (record.size > size - header) return 0;
    size_t slot = probe->copies_.size();
    ++probe->copies_seen_;
    if (slot >= kMaxCopies) {
      slot = std::uniform_int_distribution<uint64_t>(0, probe->copies_seen_ - 1)(probe->random_);
      if (slot >= kMaxCopies) return 0;
    } else {
      probe->copies_.emplace_back();
    }
    auto& [key, copy] = probe->copies_[slot];
    key = {record.tgid, record.kernel_stack, record.user_stack};
    std::copy(std::begin(record.regs), std::end(record.regs), copy.regs.begin());
    const auto* bytes = static_cast<const uint8_t*>(data) + header;
    copy.stack.assign(bytes, bytes + record.size);
    return 0;
  }

  void StartDraining() {
    copy_ring_ = ring_buffer__new(bpf_map__fd(skel_->maps.profile_stack_copies), KeepCopy, this, nullptr);
    if (copy_ring_ == nullptr) throw InfraError(std::string(kProfileWhat) + ": user stack copies: " + ErrnoText(errno));
    stop_draining_ = false;
    drainer_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(copies_mutex_);
      while (!drained_.wait_for(lock, kCopyDrainPeriod, [this] { return stop_draining_; }))
        ring_buffer__consume(copy_ring_);
    });
  }

  void StopDraining() {
    if (drainer_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(copies_mutex_);
        stop_draining_ = true;
      }
      drained_.notify_all();
      drainer_.join();
    }
    if (copy_ring_ != nullptr) ring_buffer__free(copy_ring_);
    copy_ring_ = nullptr;
    copies_.clear();
  }

  profile_bpf* skel_ = nullptr;
  std::vector<bpf_link*> links_;
  std::string event_;
  std::vector<std::string> rejected_;
  int frequency_hz_ = kDefaultFrequencyHz;
  ProbeScope scope_ = ProbeScope::kWorkload;
  uint64_t dropped_ = 0;  // over every repetition collected
  uint32_t user_stack_bytes_ = 0;
  uint64_t copies_made_ = 0;  // over every repetition collected
  uint64_t copies_lost_ = 0;
  ring_buffer* copy_ring_ = nullptr;
  std::thread drainer_;
  std::mutex copies_mutex_;  // guards copy_ring_'s consumption and what follows
  std::condition_variable drained_;
  bool stop_draining_ = false;
  std::vector<std::pair<StackKey, UserStackCopy>> copies_;
  uint64_t copies_seen_ = 0;
  std::mt19937_64 random_{0x5eed};
};

}  // namespace

ProbeDefinition DefineProfileProbe() { return DefineProbe<ProfileProbe>(DeclaredProbe("profile")); }

}  // namespace perfgate
