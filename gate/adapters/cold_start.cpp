#include "adapters/cold_start.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "adapters/command.h"
#include "adapters/memory_limit.h"
#include "adapters/page_cache.h"
#include "adapters/tool_output.h"
#include "base/error.h"
#include "config/credentials.h"

namespace perfgate {

namespace {

using nlohmann::json;

// "ready": exactly one marker; a pattern must compile, a port be a port.
json ReadReady(const JsonObjectReader& workload, const std::string& key, const WorkloadKeyContext& context) {
  const JsonObjectReader o(workload.Get(key), workload.file(), workload.At(key),
                           {"stdout", "stderr", "file", "port", "phase", "exit"});
  if (!o.raw().is_object() || o.raw().size() != 1) {
    o.Fail(o.path(),
           "expected one marker: {\"stdout\": RE}, {\"stderr\": RE}, {\"file\": PATH}, {\"port\": N}, "
           "{\"phase\": NAME} or {\"exit\": true}");
  }
  const std::string kind = o.raw().begin().key();
  json out = json::object();
  if (kind == "stdout" || kind == "stderr") {
    const std::string pattern = o.String(kind);
    try {
      std::regex compiled(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      o.Fail(o.At(kind), "the pattern does not compile: " + std::string(e.what()));
    }
    out[kind] = pattern;
  } else if (kind == "file") {
    const std::string path = ExpandVariables(o.String(kind), context.variables, o.file() + ": " + o.At(kind));
    if (path.empty() || path[0] != '/') o.Fail(o.At(kind), "expected an absolute path, got \"" + path + "\"");
    out[kind] = path;
  } else if (kind == "port") {
    out[kind] = o.Integer(kind, 1, 65535);
  } else if (kind == "phase") {
    const std::string phase = o.String(kind);
    if (phase.empty()) o.Fail(o.At(kind), "expected a phase name");
    out[kind] = phase;
  } else if (!o.Bool("exit")) {
    o.Fail(o.At("exit"), "expected true (the app's exit is its readiness)");
  } else {
    out[kind] = true;
  }
  return out;
}

json ReadAfterReady(const JsonObjectReader& workload, const std::string& key, const WorkloadKeyContext& /*context*/) {
  const std::string value = workload.String(key);
  if (value != "stop" && value != "wait") {
    workload.Fail(workload.At(key), "expected \"stop\" or \"wait\", got \"" + value + "\"");
  }
  return value;
}

// One path of "evict": absolute, there, and readable by the workload's user:
// perfgate evicts as root, so a suite may not reach files its workload cannot.
std::string ReadEvictPath(const JsonObjectReader& o, const std::string& where, const json& value, bool directory,
                          const WorkloadKeyContext& context) {
  if (!value.is_string()) o.Fail(where, "expected a string, got " + std::string(value.type_name()));
  const std::string path = ExpandVariables(value.get<std::string>(), context.variables, o.file() + ": " + where);
  if (path.empty() || path[0] != '/') o.Fail(where, "expected an absolute path, got \"" + path + "\"");
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) o.Fail(where, path + ": no such " + (directory ? "directory" : "file"));
  if (directory != std::filesystem::is_directory(status)) {
    o.Fail(where, path + (directory ? " is not a directory" : " is a directory (list it under \"dirs\")"));
  }
  std::optional<Credentials> as;
  if (!context.run_as.empty()) as = ResolveUser(context.run_as, o.file() + ": " + where);
  if (!UserMayRead(path, as ? &*as : nullptr)) {
    o.Fail(where, path + ": the workload's user" + (as ? " \"" + as->user + "\"" : std::string()) +
                      " may not read it, so perfgate does not evict it");
  }
  return path;
}

json ReadEvict(const JsonObjectReader& workload, const std::string& key, const WorkloadKeyContext& context) {
  const JsonObjectReader o(workload.Get(key), workload.file(), workload.At(key),
                           {"executable", "libraries", "files", "dirs"});
  if (!o.raw().is_object()) o.Fail(o.path(), "expected an object");
  json out = {{"executable", o.Bool("executable", true)},
              {"libraries", o.Bool("libraries", true)},
              {"files", json::array()},
              {"dirs", json::array()}};
  for (const char* list : {"files", "dirs"}) {
    const json& paths = o.ArrayOrEmpty(list);
    for (size_t i = 0; i < paths.size(); ++i) {
      out[list].push_back(ReadEvictPath(o, o.At(list, i), paths[i], std::string(list) == "dirs", context));
    }
  }
  return out;
}

// The interpreter of a script ("#!/bin/sh", "#!/usr/bin/env python3"), whose
// files a start of the script loads; empty for anything else.
std::string ScriptInterpreter(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!std::getline(in, line) || line.rfind("#!", 0) != 0) return "";
  std::istringstream words(line.substr(2));
  std::string interpreter, argument;
  words >> interpreter >> argument;
  if (std::filesystem::path(interpreter).filename() == "env" && !argument.empty()) {
    interpreter = FindExecutable(argument);
  }
  if (interpreter.empty() || access(interpreter.c_str(), X_OK) != 0) return "";
  return std::filesystem::weakly_canonical(interpreter).string();
}

}  // namespace

std::vector<WorkloadKey> ColdStartKeys(const std::string& default_ready, const std::string& default_after_ready) {
  std::vector<WorkloadKey> keys = {
      {"ready", WorkloadKeyType::kObject, default_ready, false,
       "the readiness marker: {\"stdout\"|\"stderr\": RE}, {\"file\": PATH}, {\"port\": N}, {\"phase\": NAME}, "
       "{\"exit\": true}",
       ReadReady},
      {"after_ready", WorkloadKeyType::kObject, "\"" + default_after_ready + "\"", false,
       "\"stop\": an app still running once ready is stopped (SIGTERM to its group); \"wait\": it runs to its end "
       "and its output until then is parsed",
       ReadAfterReady},
      {"evict", WorkloadKeyType::kObject, R"({"executable":true,"libraries":true,"files":[],"dirs":[]})", false,
       "what leaves the page cache before each start: executable, libraries, files, dirs", ReadEvict},
      {"drop_caches", WorkloadKeyType::kBoolean, "false", false,
       "also drop the whole machine's page cache before each start (global: every process's files)"},
  };
  for (auto& key : MemoryLimitKeys()) keys.push_back(std::move(key));
  return keys;
}

const WorkloadKeys& ColdStartAdapter::keys() const {
  static const WorkloadKeys kKeys{
      .argv = true, .args = false, .shell = false, .keys = ColdStartKeys(R"({"exit":true})", "stop")};
  return kKeys;
}

std::vector<std::string> ColdStartAdapter::LaunchArgv(const WorkloadSpec& spec) const {
  if (spec.argv.empty()) throw InputError("cold-start workload: empty argv");
  Options(spec);  // checks the keys of specs made in code
  return spec.argv;
}

std::vector<std::string> ColdStartFiles(const WorkloadSpec& spec) {
  const WorkloadAdapter* adapter = FindAdapter(spec.kind);
  if (adapter == nullptr || adapter->keys().Find("evict") == nullptr) adapter = FindAdapter("cold-start");
  const WorkloadOptions options(adapter->keys(), spec);
  const std::vector<std::string> argv = adapter->LaunchArgv(spec);
  json evict = options.Object("evict");
  if (!evict.is_object()) throw InputError("cold-start workload: \"evict\" must be an object");
  std::vector<std::string> files;
  std::set<std::string> seen;
  const auto add = [&](const std::string& path) {
    if (!path.empty() && seen.insert(path).second) files.push_back(path);
  };
  std::string ld_library_path;
  if (auto it = spec.env.find("LD_LIBRARY_PATH"); it != spec.env.end()) ld_library_path = it->second;
  std::vector<std::string> programs;
  if (!argv.empty() && evict.value("executable", true)) {
    std::string executable = argv[0];
    if (executable.find('/') == std::string::npos) {
      executable = FindExecutable(executable);
    } else if (executable[0] != '/' && !spec.cwd.empty()) {
      executable = spec.cwd + "/" + executable;
    }
    if (!executable.empty()) programs.push_back(std::filesystem::weakly_canonical(executable).string());
    if (!programs.empty()) {
      if (std::string interpreter = ScriptInterpreter(programs[0]); !interpreter.empty())
        programs.push_back(interpreter);
    }
  }
  for (const auto& program : programs) {
    add(program);
    if (evict.value("libraries", true)) {
      for (const auto& library : SharedLibraries(program, ld_library_path)) {
        add(std::filesystem::weakly_canonical(library).string());
      }
    }
  }
  for (const auto& file : evict.value("files", json::array())) add(file.get<std::string>());
  for (const auto& dir : evict.value("dirs", json::array())) {
    for (const auto& file : FilesUnder(dir.get<std::string>())) add(file);
  }
  return files;
}

void ColdStartAdapter::PrepareLaunch(const WorkloadSpec& spec) const {
  if (Options(spec).Flag("drop_caches")) DropAllCaches();
  for (const auto& file : ColdStartFiles(spec)) EvictFromPageCache(file);
}

WorkloadOutput ColdStartAdapter::ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const {
  return ParseStartOutput(stdout_text, "output of " + (spec.argv.empty() ? kind() : spec.argv[0]));
}

WorkloadOutput ColdStartAdapter::ParseStartOutput(const std::string& stdout_text, const std::string& source) {
  WorkloadOutput out = ParseCommandJsonLines(stdout_text, source);
  for (const auto& phase : out.phases) {
    const std::string name = "coldstart.phase." + MetricSegment(phase.name);
    out.metrics[name] = ScalarMetric(name, static_cast<double>(phase.end_ns - phase.begin_ns) / 1e6, "ms");
  }
  return out;
}

std::unique_ptr<ReadinessMarker> ColdStartAdapter::Readiness(const WorkloadSpec& spec) const {
  const WorkloadOptions options = Options(spec);
  std::unique_ptr<ReadinessMarker> marker =
      MakeReadinessMarker(options.Object("ready"), kind() + " workload: \"ready\"");
  const json after = options.Object("after_ready");
  if (after != "stop" && after != "wait") {
    throw InputError(kind() + " workload: \"after_ready\" must be \"stop\" or \"wait\"");
  }
  marker->set_stop_when_ready(after == "stop");
  return marker;
}

std::optional<MemoryLimit> ColdStartAdapter::MemoryLimitOf(const WorkloadSpec& spec) const {
  return ReadMemoryLimit(Options(spec), kind());
}

void ColdStartAdapter::AddStartMetrics(double ready_s, const ::rusage& usage, const WorkloadSpec& /*spec*/,
                                       MetricSet& out) const {
  out["coldstart.time_to_ready"] = ScalarMetric("coldstart.time_to_ready", ready_s * 1e3, "ms");
  out["coldstart.major_faults"] = ScalarMetric("coldstart.major_faults", static_cast<double>(usage.ru_majflt), "count");
  // ru_inblock counts 512-byte units of the tree's read_bytes (what had to come from the disk).
  out["coldstart.disk_read_bytes"] =
      ScalarMetric("coldstart.disk_read_bytes", static_cast<double>(usage.ru_inblock) * 512.0, "bytes");
}

std::vector<MetricDeclaration> ColdStartAdapter::metrics() const {
  return {
      OutcomeScalar("coldstart.time_to_ready", "ms", Better::kLower, "exec to the readiness marker"),
      OutcomeScalar("coldstart.phase.<phase>", "ms", Better::kLower, "a phase the app reported of its start"),
      KernelScalar("coldstart.major_faults", "count", Unpriced(),
                   "major page faults of the start's process tree (rusage)"),
      KernelScalar("coldstart.disk_read_bytes", "bytes", NeverACause(),
                   "what the start read from the disk (rusage): the whole its I/O waits are for, which prices "
                   "reclaim's read-back"),
  };
}

std::unique_ptr<WorkloadAdapter> MakeColdStartAdapter() { return std::make_unique<ColdStartAdapter>(); }

}  // namespace perfgate
