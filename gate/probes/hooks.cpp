#include "probes/hooks.h"

#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <sstream>

#include "base/error.h"
#include "probes/features.h"

namespace perfgate {
namespace {

bool Allowed(AttachType type, const std::vector<AttachType>& allowed) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), type) != allowed.end();
}

bool Allowed(AttachType type, const HookSpec& spec, const ProbeOptions& options) {
  auto forced = options.hook_attach_types.find(spec.event);
  return Allowed(type, forced != options.hook_attach_types.end() ? forced->second : options.allowed_attach_types);
}

// Narrows `variant.functions` to the first that the kernel has.
Feature ResolveKernelFunction(HookVariant& variant) {
  std::string reasons;
  for (const std::string& function : variant.functions) {
    Feature found =
        variant.type == AttachType::kFentry ? KernelFunctionHasBtf(function) : KernelFunctionInKallsyms(function);
    if (found.supported) {
      variant.functions = {function};
      return found;
    }
    reasons += (reasons.empty() ? "" : "; ") + found.reason;
  }
  return Feature::No(reasons.empty() ? "no kernel function given" : reasons);
}

Feature KernelSupports(HookVariant& variant, const HookSpec& spec) {
  switch (variant.type) {
    case AttachType::kFentry:
      if (Feature fentry = FentrySupported(); !fentry.supported) return fentry;
      return ResolveKernelFunction(variant);
    case AttachType::kKprobe:
      if (Feature kprobe = KprobeSupported(); !kprobe.supported) return kprobe;
      return ResolveKernelFunction(variant);
    case AttachType::kTpBtf:
      return TpBtfSupported();
    case AttachType::kRawTp:
      return RawTpSupported(spec.event);
    case AttachType::kTracepoint:
      return TracepointExists(spec.category, spec.event);
    default:
      return Feature::No("not a tracepoint attach type");
  }
}

std::string Target(const HookSpec& spec, const HookVariant& variant) {
  if (variant.type == AttachType::kTracepoint) return spec.category + ":" + spec.event;
  if (!variant.functions.empty()) return variant.functions.front();
  return spec.event;
}

bool IsReturnProbe(const bpf_program* program) {
  return std::string(bpf_program__section_name(program)).rfind("kretprobe", 0) == 0;
}

thread_local std::string* capture_target = nullptr;

int CaptureLibbpfPrint(libbpf_print_level level, const char* format, va_list args) {
  if (capture_target == nullptr || level == LIBBPF_DEBUG) return 0;
  char buffer[1024];
  int n = vsnprintf(buffer, sizeof(buffer), format, args);
  if (n > 0) capture_target->append(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof(buffer) - 1));
  return n;
}

}  // namespace

// libbpf reports a program failure as "prog 'NAME': ...", writes an
// instruction whose CO-RE relocation failed into the verifier's log as
// "failed to resolve CO-RE relocation <spec>", and the verifier's verdict is
// the last line before "-- END PROG LOAD LOG --".
std::string LoadFailureSummary(const std::string& log, const std::string& program) {
  std::istringstream lines(log);
  std::string line, previous, summary, relocation, verdict;
  const std::string tag = "prog '" + program + "'";
  const std::string unresolved = "failed to resolve CO-RE relocation";
  while (std::getline(lines, line)) {
    if (line.find("-- END PROG LOAD LOG --") != std::string::npos) verdict = previous;
    if (summary.empty() && line.find(tag) != std::string::npos) summary = line;
    if (relocation.empty() && line.find(unresolved) != std::string::npos)
      relocation = line.substr(line.find(unresolved));
    previous = line;
  }
  if (!relocation.empty()) summary += "; " + relocation + " (this kernel's BTF lacks it)";
  if (!verdict.empty()) summary += "; verifier: " + verdict;
  return summary;
}

HookSpec TracepointHook(const std::string& category, const std::string& event, const std::string& program_prefix,
                        const std::vector<std::string>& functions) {
  HookSpec spec{event,
                category,
                {{AttachType::kTpBtf, program_prefix + "_tp_btf"},
                 {AttachType::kRawTp, program_prefix + "_raw_tp"},
                 {AttachType::kTracepoint, program_prefix + "_tracepoint"}}};
  if (!functions.empty()) {
    spec.variants.insert(spec.variants.begin(), {AttachType::kFentry, program_prefix + "_fentry", functions});
    spec.variants.push_back({AttachType::kKprobe, program_prefix + "_kprobe", functions});
  }
  return spec;
}

HookSpec ProcessForkHook(const std::string& program_prefix) {
  return TracepointHook("sched", "sched_process_fork", program_prefix, {"wake_up_new_task"});
}

HookSpec ThreadExitHook(const std::string& program_prefix) {
  return TracepointHook("sched", "sched_process_exit", program_prefix, {"do_exit"});
}

HookPlan::HookPlan(std::string probe, std::vector<HookSpec> hooks, const ProbeOptions& options)
    : probe_(std::move(probe)) {
  for (auto& spec : hooks) {
    Hook hook{std::move(spec), {}, {}};
    for (HookVariant variant : hook.spec.variants) {
      Feature feature = Allowed(variant.type, hook.spec, options) ? KernelSupports(variant, hook.spec)
                                                                  : Feature::No("not in the allowed attach types");
      if (feature.supported)
        hook.usable.push_back(variant);
      else
        hook.rejected.push_back(ToString(variant.type) + ": " + feature.reason);
    }
    if (hook.usable.empty()) {
      std::string reasons;
      for (const auto& r : hook.rejected) reasons += (reasons.empty() ? "" : "; ") + r;
      throw InfraError("probe " + probe_ + ", hook " + hook.spec.event + ": no usable attach type (" + reasons + ")");
    }
    hooks_.push_back(std::move(hook));
  }
}

std::string HookPlan::HookName(const Hook& hook) const {
  return "probe " + probe_ + ", hook " + hook.spec.event + " (" + ToString(hook.usable.front().type) + ")";
}

void HookPlan::ApplyAutoload(bpf_object* object) const {
  // Programs of hooks the plan leaves out (a probe option turned them off,
  // or their event does not exist here) must not load either.
  bpf_program* program = nullptr;
  bpf_object__for_each_program(program, object) bpf_program__set_autoload(program, false);
  for (const auto& hook : hooks_) {
    for (const auto& variant : hook.spec.variants) {
      bpf_program* program = bpf_object__find_program_by_name(object, variant.program.c_str());
      if (program == nullptr) throw InfraError(HookName(hook) + ": no BPF program " + variant.program);
      bpf_program__set_autoload(program, variant.program == hook.usable.front().program);
    }
    const HookVariant& chosen = hook.usable.front();
    if (chosen.type == AttachType::kFentry) {
      bpf_program* program = bpf_object__find_program_by_name(object, chosen.program.c_str());
      if (int err = bpf_program__set_attach_target(program, 0, chosen.functions.front().c_str()); err != 0)
        throw InfraError(HookName(hook) + ": target " + chosen.functions.front() + ": " + ErrnoText(-err));
    }
  }
}

std::optional<std::pair<size_t, std::string>> HookPlan::Attach(bpf_object* object,
                                                               std::vector<bpf_link*>& links) const {
  for (size_t i = 0; i < hooks_.size(); ++i) {
    const HookVariant& chosen = hooks_[i].usable.front();
    bpf_program* program = bpf_object__find_program_by_name(object, chosen.program.c_str());
    // A kprobe's section names no function: the plan chose it at run time.
    bpf_link* link = chosen.type == AttachType::kKprobe
                         ? bpf_program__attach_kprobe(program, IsReturnProbe(program), chosen.functions.front().c_str())
                         : bpf_program__attach(program);
    if (link == nullptr) {
      std::string reason = "attach: " + ErrnoText(errno);
      DestroyLinks(links);
      return std::make_pair(i, reason);
    }
    links.push_back(link);
  }
  return std::nullopt;
}

std::optional<size_t> HookPlan::HookBlamedBy(const std::string& libbpf_log) const {
  for (size_t i = 0; i < hooks_.size(); ++i) {
    if (libbpf_log.find("prog '" + hooks_[i].usable.front().program + "'") != std::string::npos) return i;
  }
  return std::nullopt;
}

void HookPlan::Reject(size_t index, const std::string& reason) {
  Hook& hook = hooks_.at(index);
  std::string name = HookName(hook);
  hook.rejected.push_back(ToString(hook.usable.front().type) + ": " + reason);
  hook.usable.erase(hook.usable.begin());
  if (hook.usable.empty()) throw InfraError(name + ": " + reason);
}

const std::string& HookPlan::ChosenProgram(size_t hook) const { return hooks_.at(hook).usable.front().program; }

std::optional<AttachType> HookPlan::CommonType() const {
  std::optional<AttachType> common;
  for (const auto& hook : hooks_) {
    AttachType type = hook.usable.front().type;
    if (common && *common != type) return std::nullopt;
    common = type;
  }
  return common;
}

bool HookPlan::Chose(AttachType type) const {
  return std::any_of(hooks_.begin(), hooks_.end(), [&](const Hook& hook) { return hook.usable.front().type == type; });
}

std::vector<HookChoice> HookPlan::Choices() const {
  std::vector<HookChoice> choices;
  for (const auto& hook : hooks_) {
    const HookVariant& chosen = hook.usable.front();
    choices.push_back({hook.spec.event, ToString(chosen.type), Target(hook.spec, chosen), hook.rejected});
  }
  return choices;
}

LibbpfLogCapture::LibbpfLogCapture() : previous_(libbpf_set_print(CaptureLibbpfPrint)) { capture_target = &text_; }

LibbpfLogCapture::~LibbpfLogCapture() {
  capture_target = nullptr;
  libbpf_set_print(previous_);
}

void DestroyLinks(std::vector<bpf_link*>& links) {
  for (bpf_link* link : links) bpf_link__destroy(link);
  links.clear();
}

void KeepLargeAllocationsOnTheHeap() {
  static std::once_flag once;
  std::call_once(once, [] {
    // libbpf reads and parses the kernel's BTF (several MB) for every object
    // it loads. glibc serves such blocks with a fresh mmap and unmaps them on
    // free, so each load page-faults the whole buffer in again: on a VM that
    // tripled the attach time of the default probe set. Served from the heap
    // and not trimmed, the next load reuses the same pages.
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  });
}

void LoadAndAttach(HookPlan& plan, const std::function<bpf_object*()>& open, const std::function<void()>& close,
                   std::vector<bpf_link*>& links) {
  KeepLargeAllocationsOnTheHeap();
  // Each retry drops one variant of one hook, so this ends.
  for (;;) {
    bpf_object* object = open();
    plan.ApplyAutoload(object);
    LibbpfLogCapture log;
    if (int err = bpf_object__load(object); err != 0) {
      std::optional<size_t> hook = plan.HookBlamedBy(log.text());
      close();
      if (!hook && !KernelBtf().supported) {
        throw InfraError("probe " + plan.probe() + ": cannot load: " + KernelBtf().reason +
                         " (perfgate's probes are CO-RE programs; `perfgate doctor` lists what else is missing)");
      }
      if (!hook) throw InfraError("probe " + plan.probe() + ": load: " + ErrnoText(-err) + ": " + log.text());
      plan.Reject(*hook, "load: " + ErrnoText(-err) + "; " + LoadFailureSummary(log.text(), plan.ChosenProgram(*hook)));
      continue;
    }
    if (auto failure = plan.Attach(object, links)) {
      close();
      plan.Reject(failure->first, failure->second);
      continue;
    }
    return;
  }
}

void RequireAllowedAttachType(const ProbeOptions& options, AttachType type, const std::string& probe) {
  if (!Allowed(type, options.allowed_attach_types))
    throw InfraError("probe " + probe + ", hook " + probe + ": no usable attach type (" + ToString(type) +
                     ": not in the allowed attach types)");
}

}  // namespace perfgate
