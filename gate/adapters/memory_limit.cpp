#include "adapters/memory_limit.h"

#include "base/error.h"

namespace perfgate {

namespace {

using nlohmann::json;

constexpr int kMinLimitMb = 16;  // below this a start of anything is an OOM kill, not a measurement

json ReadLimit(const JsonObjectReader& workload, const std::string& key, const WorkloadKeyContext& /*context*/) {
  return workload.Integer(key, kMinLimitMb, 1 << 20);
}

json ReadAntagonist(const JsonObjectReader& workload, const std::string& key, const WorkloadKeyContext& context) {
  const json& raw = workload.Get(key);
  bool on = false;
  if (raw.is_string()) {
    const std::string text =
        ExpandVariables(raw.get<std::string>(), context.variables, workload.file() + ": " + workload.At(key));
    if (text != "true" && text != "false") {
      workload.Fail(workload.At(key), "expected true or false, got \"" + text + "\"");
    }
    on = text == "true";
  } else {
    on = workload.Bool(key);
  }
  if (on && !workload.Has("memory_limit_mb")) {
    workload.Fail(workload.At(key), "the antagonist needs \"memory_limit_mb\" (the cgroup it shares)");
  }
  return on;
}

}  // namespace

std::vector<WorkloadKey> MemoryLimitKeys() {
  return {
      {"memory_limit_mb", WorkloadKeyType::kObject, "", false,
       "run each launch in a new memory cgroup with this limit in MiB (16 to 1048576; needs root)", ReadLimit},
      {"antagonist", WorkloadKeyType::kObject, "false", false,
       "a background allocator fills that cgroup before each start (needs memory_limit_mb); a boolean, or a "
       "\"${VARIABLE}\" that expands to one",
       ReadAntagonist},
  };
}

std::optional<MemoryLimit> ReadMemoryLimit(const WorkloadOptions& options, const std::string& kind) {
  const std::optional<int> limit = options.Integer("memory_limit_mb");
  const bool antagonist = options.Flag("antagonist");
  if (!limit) {
    if (antagonist)
      throw InputError(kind + " workload: \"antagonist\" needs \"memory_limit_mb\" (the cgroup it shares)");
    return std::nullopt;
  }
  if (*limit < kMinLimitMb) {
    throw InputError(kind + " workload: \"memory_limit_mb\" must be at least " + std::to_string(kMinLimitMb));
  }
  return MemoryLimit{*limit, antagonist};
}

}  // namespace perfgate
