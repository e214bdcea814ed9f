// Reading what benchmark tools print: the JSON document inside their stdout,
// metric-name segments from the tools' own names, and finding the tools and
// the directories they need.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate {

// The first JSON object in `text` whose first line starts with '{', ignoring
// the lines before it (tools print notes and warnings there) and anything
// after its closing brace. Bare NaN, Infinity and -Infinity values (Google
// Benchmark prints them; JSON has no such literals) become null. Throws
// InfraError naming `source` when there is no document, it is truncated or
// it is not valid JSON.
nlohmann::json ParseToolJson(const std::string& text, const std::string& source);

// `name` made into one segment of a metric name: characters the metric-name
// pattern does not allow in a segment ('.', spaces, commas, parentheses, ...)
// become '_'. Empty input gives "_".
std::string MetricSegment(std::string_view name);

// Lower-case words joined by '_' ("Pipe-based Context Switching" ->
// "pipe_based_context_switching"), for names meant to be typed in checks.
std::string SnakeCase(std::string_view name);

// `name` as exec would find it in PATH (or itself, when it has a '/'); empty
// when it is not there or not executable.
std::string FindExecutable(const std::string& name);

// Throws InfraError when `dir` is not a directory on a disk file system
// (tmpfs and ramfs keep files in memory: no disk I/O to measure).
void RequireDiskDirectory(const std::string& dir, const std::string& what);

// Where the workload programs perfgate ships are (a suite's ${perfgate_dir}):
// next to the running binary in a build dir; installed, the libexec
// directory at PERFGATE_LIBEXEC_FROM_BIN from the binary's directory.
std::string PerfgateDir();
// The same for the perfgate executable at `perfgate` (another build's: a
// kernel A/B's guest of another architecture).
std::string PerfgateDirOf(const std::string& perfgate);

}  // namespace perfgate
