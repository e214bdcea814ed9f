#include "adapters/unixbench.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

#include "adapters/tool_output.h"
#include "base/error.h"

namespace perfgate {

namespace {

// Run must be started from its own directory (it runs make and finds pgms/
// relative to the working directory); the runner's cwd is the scenario's, so
// a small wrapper changes into it. $1 is the UnixBench directory.
constexpr const char* kUnixbenchWrapper = "cd \"$1\" || exit 1\nshift\nexec ./Run \"$@\"\n";

// UnixBench scores and indexes: higher is better.
Metric Score(const std::string& name, double value, const std::string& unit) {
  return ScalarMetric(name, value, unit, Better::kHigher);
}

// One "Benchmark Run:" section of the results: one copies count.
struct RunSection {
  int copies = 1;
  size_t line_no = 0;
  int results = 0;
  bool index_table = false;  // inside the index table
  bool index_open = false;   // an index table started and its score line has not come yet
  std::string prefix() const { return copies == 1 ? "unixbench." : "unixbench." + std::to_string(copies) + "copy."; }
  std::string label() const { return copies == 1 ? "single-copy run" : std::to_string(copies) + "-copy run"; }
};

// UnixBench's own lines are short; longer ones (a compiler command line in
// make's output, binary junk) are never matched: std::regex recurses per
// character and would overflow the stack on them.
constexpr size_t kLongestMatchedLine = 1024;

// A number the line's pattern matched, checked for range (hundreds of digits
// overflow a double).
double LineNumber(const std::string& digits, const std::string& source, size_t line_no) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(digits.c_str(), &end);
  if (errno == ERANGE || !std::isfinite(value) || end != digits.c_str() + digits.size()) {
    throw InfraError(source + ": line " + std::to_string(line_no) + ": number " + digits.substr(0, 40) +
                     (digits.size() > 40 ? "..." : "") + " is out of range");
  }
  return value;
}

}  // namespace

const WorkloadKeys& UnixBenchAdapter::keys() const {
  static const WorkloadKeys kKeys{
      .argv = false,
      .args = true,
      .shell = false,
      .keys = {
          {"dir", WorkloadKeyType::kString, "", false,
           "the UnixBench directory holding Run (default: the UNIXBENCH_DIR environment variable)"},
          {"tests", WorkloadKeyType::kString, "", false,
           "test names separated by spaces or commas (default: UnixBench's index set)"},
          {"iterations", WorkloadKeyType::kInteger, "", false, "runs of each test (-i)"},
          {"copies", WorkloadKeyType::kInteger, "1", false,
           "with C > 1: a single-copy run and a C-copy run (-c 1 -c C)"},
      }};
  return kKeys;
}

std::vector<std::string> UnixBenchAdapter::LaunchArgv(const WorkloadSpec& spec) const {
  const WorkloadOptions options = Options(spec);
  std::string dir;
  if (auto from_suite = options.Find("dir")) {
    dir = *from_suite;
  } else if (auto env = spec.env.find("UNIXBENCH_DIR"); env != spec.env.end()) {
    dir = env->second;
  } else if (const char* from_env = std::getenv("UNIXBENCH_DIR")) {
    dir = from_env;
  }
  const std::string how =
      "UnixBench is not packaged for Debian: clone byte-unixbench (github.com/kdlucas/byte-unixbench) and set the "
      "scenario's \"dir\" or the UNIXBENCH_DIR environment variable to its UnixBench directory (the one holding Run)";
  if (dir.empty()) throw InfraError("unixbench workload: no UnixBench directory given. " + how);
  std::filesystem::path path = dir;
  if (path.is_relative() && !spec.cwd.empty()) path = std::filesystem::path(spec.cwd) / path;
  if (access((path / "Run").c_str(), X_OK) != 0) {
    throw InfraError("unixbench workload: no executable Run in " + dir + ". " + how);
  }
  std::vector<std::string> argv = {"/bin/sh", "-c", kUnixbenchWrapper, "perfgate-unixbench", path.string()};
  if (auto iterations = options.Find("iterations")) argv.insert(argv.end(), {"-i", *iterations});
  const int copies = options.Integer("copies").value();  // declared with a default
  argv.insert(argv.end(), {"-c", "1"});
  if (copies > 1) argv.insert(argv.end(), {"-c", std::to_string(copies)});
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  if (auto listed = options.Find("tests")) {
    std::string tests = *listed;
    for (char& c : tests) {
      if (c == ',') c = ' ';
    }
    std::istringstream in(tests);
    for (std::string test; in >> test;) argv.push_back(test);
  }
  return argv;
}

WorkloadOutput UnixBenchAdapter::ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const {
  const std::optional<std::string> dir = Options(spec).Find("dir");
  return ParseUnixBenchText(stdout_text, "UnixBench output" + (dir ? " of " + *dir : std::string()));
}

WorkloadOutput ParseUnixBenchText(const std::string& text, const std::string& source) {
  static const std::regex kRunStart(R"(^Benchmark Run: )");
  static const std::regex kCopies(R"(running (\d+) parallel cop(y|ies) of tests)");
  // "System Call Overhead                        1564332.2 lps   (10.0 s, 7 samples)"
  static const std::regex kResult(R"(^(\S.*?)\s+(\d+(?:\.\d+)?) (\S+)\s+\(\s*\d+(?:\.\d+)? s, \d+ samples?\)\s*$)");
  // "System Benchmarks Index Values               BASELINE       RESULT    INDEX" (or "... Partial Index ...")
  static const std::regex kIndexHeader(R"(^\S.*\s+BASELINE\s+RESULT\s+INDEX\s*$)");
  static const std::regex kIndexRow(R"(^(\S.*?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s*$)");
  static const std::regex kRule(R"(^\s*=+\s*$)");
  static const std::regex kScore(R"(^(\S.*?) Index Score(?: \(Partial Only\))?\s+(\d+(?:\.\d+)?)\s*$)");

  WorkloadOutput out;
  std::vector<RunSection> sections;
  std::map<int, size_t> copies_seen;
  auto close_section = [&](const RunSection& s) {
    const std::string where = source + ": " + s.label() + " (line " + std::to_string(s.line_no) + ")";
    if (s.results == 0) throw InfraError(where + ": no test results; the output is truncated or not UnixBench's");
    if (s.index_open) throw InfraError(where + ": truncated: an index table without its \"Index Score\" line");
  };
  std::istringstream in(text);
  std::string line;
  size_t line_no = 0;
  std::smatch m;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > kLongestMatchedLine) continue;
    if (std::regex_search(line, kRunStart)) {
      if (!sections.empty()) close_section(sections.back());
      sections.push_back(RunSection{});
      sections.back().line_no = line_no;
      continue;
    }
    if (sections.empty()) continue;  // the banner, make's output, system details
    RunSection& s = sections.back();
    if (std::regex_search(line, m, kCopies)) {
      const double copies = LineNumber(m[1], source, line_no);
      if (copies < 1 || copies > 1 << 20) {
        throw InfraError(source + ": line " + std::to_string(line_no) + ": copies must be between 1 and 1048576");
      }
      s.copies = static_cast<int>(copies);
      if (auto [it, fresh] = copies_seen.emplace(s.copies, line_no); !fresh) {
        throw InfraError(source + ": line " + std::to_string(line_no) + ": a second " + s.label() +
                         " (the first at line " + std::to_string(it->second) + ")");
      }
      continue;
    }
    if (std::regex_match(line, kIndexHeader)) {
      s.index_table = s.index_open = true;
      continue;
    }
    if (s.index_table && std::regex_match(line, kRule)) {
      s.index_table = false;
      continue;
    }
    if (std::regex_match(line, m, kScore)) {
      const std::string group = m[1];
      const std::string name = s.prefix() + (group == "System Benchmarks" ? "index" : SnakeCase(group) + "_index");
      out.metrics[name] = Score(name, LineNumber(m[2], source, line_no), "index");
      s.index_table = s.index_open = false;
      continue;
    }
    if (s.index_table && std::regex_match(line, m, kIndexRow)) {
      const std::string name = s.prefix() + SnakeCase(m[1].str()) + ".index";
      out.metrics[name] = Score(name, LineNumber(m[4], source, line_no), "index");
      continue;
    }
    if (!s.index_table && std::regex_match(line, m, kResult)) {
      const std::string name = s.prefix() + SnakeCase(m[1].str());
      out.metrics[name] = Score(name, LineNumber(m[2], source, line_no), m[3]);
      ++s.results;
    }
  }
  if (sections.empty()) {
    throw InfraError(source + ": no \"Benchmark Run:\" section; the output is not UnixBench's results text");
  }
  close_section(sections.back());
  return out;
}

std::vector<MetricDeclaration> UnixBenchAdapter::metrics() const {
  return {
      OutcomeScalar("unixbench.<test>", kUnitAsReported, Better::kHigher,
                    "a test's result or index score (unixbench.<copies>copy.<test> for a multi-copy run)"),
  };
}

std::unique_ptr<WorkloadAdapter> MakeUnixBenchAdapter() { return std::make_unique<UnixBenchAdapter>(); }

}  // namespace perfgate
