// A probe: one BPF object (bpf/<name>.bpf.c) plus its user side. The runner
// opens probes once per scenario, resets them before each repetition and
// collects their in-kernel aggregates into metrics afterwards.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric.h"
#include "metrics/metric_declaration.h"
#include "metrics/results.h"

namespace perfgate {

enum class ProbeScope { kWorkload, kSystem };

class TraceBuffer;

// Attach types in the order the loader prefers them (fastest first).
enum class AttachType { kFentry, kTpBtf, kRawTp, kTracepoint, kKprobe, kUprobe, kPerfEvent };
std::string ToString(AttachType type);

// The report of the probe `name` in `scope` with nothing attached: what
// Probe::Report() says before Attach(), and what it adds the hooks and
// run-time statistics of an attached probe to.
ProbeReport UnattachedReport(const std::string& name, ProbeScope scope);

struct ProbeOptions {
  ProbeScope scope = ProbeScope::kWorkload;
  // When non-empty, only these attach types may be chosen (tests force each
  // type this kernel has, e.g. {kTracepoint}).
  std::vector<AttachType> allowed_attach_types;
  // Per hook (its tracepoint, e.g. "block_rq_complete"): the attach types
  // that hook may use, in place of allowed_attach_types. Tests force plans
  // whose hooks differ, which a kernel gives when a faster type fails on
  // only some hooks.
  std::map<std::string, std::vector<AttachType>> hook_attach_types;
  // The probe's parameters from the suite (keys and types already checked
  // against its ProbeInfo::parameters; strings have variables expanded).
  nlohmann::json params = nlohmann::json::object();
  // The workload's executable, resolved through PATH (empty for a shell
  // command line or when unknown); probes of user code attach to it.
  std::string workload_path;
  // `perfgate run --trace`: probes that write trace records share this ring
  // buffer (probes/trace_buffer.h); null for every measured repetition.
  const TraceBuffer* trace = nullptr;
};

class WorkloadTracker;

class Probe {
 public:
  virtual ~Probe() = default;
  virtual const std::string& name() const = 0;
  // Loads the BPF object and attaches every hook, choosing the fastest attach
  // type that works. Throws InfraError naming the probe, the hook and the reason.
  // In workload scope the probe filters on the tracker's pid map.
  virtual void Attach(const ProbeOptions& options, WorkloadTracker* tracker) = 0;
  // Zeroes the in-kernel aggregates before a repetition.
  virtual void Reset() = 0;
  // Reads the aggregates of the repetition that just ended.
  virtual void Collect(double duration_s, MetricSet& out) = 0;
  // The tasks of other processes that held the CPUs the workload waited for
  // in the repetition last collected (runqlat); empty for the other probes.
  virtual std::vector<CpuHolder> CpuHolders() const { return {}; }
  // Hooks with the chosen attach type, and BPF run-time stats of its programs.
  virtual ProbeReport Report() const = 0;
  // Detaches and unloads; safe to call twice. Destructor calls it.
  virtual void Detach() = 0;
  // Takes the probe off its hooks and keeps its programs and maps loaded
  // until Detach(), so that nothing of it runs while what loading it did to
  // the machine stays (`perfgate overhead`'s bare side). False when the
  // probe cannot: it is then still attached.
  virtual bool Unhook() { return false; }
};

// A parameter a probe accepts in the suite, e.g. {"name": "ufunc", "functions": ["leveldb::*"]}.
enum class ProbeParameterType { kString, kStrings, kInteger, kBoolean };
struct ProbeParameter {
  std::string name;
  ProbeParameterType type;
  std::string description;
};

// "string", "strings", "integer", "boolean" (the suite's vocabulary).
std::string ToString(ProbeParameterType type);

struct ProbeInfo {
  std::string name;
  std::string description;
  // Its attach types in the order it tries them and, for hooks without a
  // fentry or kprobe variant, why (docs/kernels.md).
  std::string attach;
  // Every metric the probe emits, declared once (metrics/metric_declaration.h).
  std::vector<MetricDeclaration> metrics;
  std::vector<ProbeParameter> parameters = {};
};

class Probe;
// A catalog entry: what the probe is, and how to make one.
struct ProbeDefinition {
  ProbeInfo info;
  std::unique_ptr<Probe> (*make)();
};

// A probe's catalog entry as its gate/probes/<name>.json states it: name,
// description, parameters and the declaration of every metric it emits.
// The build embeds the files; a file that does not parse throws InputError
// naming it and the JSON path (ProbeCatalog's tests load every one).
ProbeInfo DeclaredProbe(const std::string& name);
// The embedded text of gate/probes/<name>.json; empty when there is none.
std::string_view EmbeddedProbeJson(const std::string& name);

// The definition of probe class P, made by its default constructor.
template <typename P>
ProbeDefinition DefineProbe(ProbeInfo info) {
  return {std::move(info), []() -> std::unique_ptr<Probe> { return std::make_unique<P>(); }};
}

// Whether an attach type works on this kernel, and why not (doctor, `perfgate probes`).
struct AttachSupport {
  AttachType type;
  bool supported = false;
  std::string reason;  // empty when supported
};
// Probes every attach type with a trivial program; nothing stays loaded.
std::vector<AttachSupport> ProbeAttachSupport();

// Turns on the kernel's BPF run-time statistics (run_cnt/run_time_ns) for as
// long as it lives; the kernel restores the previous setting when the fd closes.
class BpfStatsEnabler {
 public:
  BpfStatsEnabler();
  ~BpfStatsEnabler();
  BpfStatsEnabler(const BpfStatsEnabler&) = delete;
  BpfStatsEnabler& operator=(const BpfStatsEnabler&) = delete;
  bool enabled() const { return fd_ >= 0 || already_on_; }
  // Why statistics are off; empty when enabled.
  const std::string& reason() const { return reason_; }

 private:
  int fd_ = -1;
  bool already_on_ = false;
  std::string reason_;
};

// The catalog: every probe perfgate knows, in a stable order.
const std::vector<ProbeInfo>& ProbeCatalog();
// Creates a probe by catalog name; nullptr when the name is unknown.
std::unique_ptr<Probe> CreateProbe(const std::string& name);
// The metric declarations of every probe in the catalog.
std::vector<MetricDeclaration> ProbeMetricDeclarations();

}  // namespace perfgate
