#include "adapters/fio.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>

#include "adapters/tool_output.h"
#include "base/error.h"

namespace perfgate {

namespace {

using nlohmann::json;

// Makes the scratch directory, runs fio in it and removes it however fio
// ends: the EXIT trap runs on a normal exit and, through the TERM/INT traps,
// when the runner stops the process group (a timeout, perfgate interrupted).
// Only SIGKILL, the runner's last resort after a grace period, leaves it.
// The job file's text comes as an argument and is written into the scratch
// directory: a workload run as an ordinary user (run_as) may not be able to
// read the checkout the job file lives in.
// $1 scratch base, $2 fio, $3 job file name, $4 its text, then fio's extra arguments.
constexpr const char* kFioWrapper =
    "d=$(mktemp -d \"$1/perfgate-fio.XXXXXX\") || exit 1\n"
    "trap 'rm -rf \"$d\"' EXIT\n"
    "trap 'exit 143' TERM\n"
    "trap 'exit 130' INT\n"
    "fio=$2 job=\"$d/$3\"\n"
    "printf '%s' \"$4\" > \"$job\" || exit 1\n"
    "shift 4\n"
    "\"$fio\" --output-format=json --directory=\"$d\" \"$@\" \"$job\"\n";

// An argument may hold at most 128 KiB (MAX_ARG_STRLEN); job files are small.
constexpr size_t kMaxJobFileBytes = 100u << 10;

double Number(const json& object, const std::string& key, const std::string& where) {
  if (!object.contains(key)) throw InfraError(where + ": missing \"" + key + "\"");
  const json& v = object.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    std::string got = v.dump();
    if (got.size() > 40) {
      size_t cut = 40;
      while (cut > 0 && (static_cast<unsigned char>(got[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
      got = got.substr(0, cut) + "...";
    }
    throw InfraError(where + "." + key + ": expected a finite number, got " + got);
  }
  return v.get<double>();
}

// The mean and percentiles of one latency object of a direction: fio 3's
// "<base>_ns" in ns or older fio's "<base>" in microseconds. Returns false
// when the direction has neither.
bool AddLatency(const json& direction, const std::string& base, const std::string& prefix, const std::string& where,
                WorkloadOutput& out) {
  double scale = 1;
  std::string key = base + "_ns";
  if (!direction.contains(key)) {
    key = base;
    scale = 1000;
    if (!direction.contains(key)) return false;
  }
  const json& lat = direction.at(key);
  const std::string at = where + "." + key;
  if (!lat.is_object()) throw InfraError(at + ": expected an object");
  const std::string name = prefix + "." + base;
  out.metrics[name + "_mean"] = ScalarMetric(name + "_mean", Number(lat, "mean", at) * scale, "ns", Better::kLower);
  if (!lat.contains("percentile")) return true;
  const json& percentiles = lat.at("percentile");
  if (!percentiles.is_object()) throw InfraError(at + ".percentile: expected an object");
  for (const auto& [q, value] : percentiles.items()) {
    std::string suffix = FioPercentileName(q);
    if (suffix.empty()) throw InfraError(at + ".percentile: \"" + q + "\" is not a percentile");
    const std::string metric = name + "_" + suffix;
    out.metrics[metric] =
        ScalarMetric(metric, Number(percentiles, q, at + ".percentile") * scale, "ns", Better::kLower);
  }
  return true;
}

}  // namespace

std::string FioPercentileName(const std::string& key) {
  if (key.empty() || key.find_first_not_of("0123456789.") != std::string::npos) return "";
  if (key.find('.') != key.rfind('.') || key.front() == '.') return "";
  std::string q = key;
  if (q.find('.') != std::string::npos) {
    while (q.back() == '0') q.pop_back();
    if (q.back() == '.') q.pop_back();
  }
  for (char& c : q) {
    if (c == '.') c = '_';
  }
  return "p" + q;
}

const WorkloadKeys& FioAdapter::keys() const {
  static const WorkloadKeys kKeys{
      .argv = false,
      .args = true,
      .shell = false,
      .keys = {
          {"job", WorkloadKeyType::kString, "", true, "the fio job file"},
          {"scratch_dir", WorkloadKeyType::kString, "/var/tmp", false,
           "where each repetition's scratch directory is made; on a disk file system, not tmpfs"},
      }};
  return kKeys;
}

std::vector<std::string> FioAdapter::LaunchArgv(const WorkloadSpec& spec) const {
  const WorkloadOptions options = Options(spec);
  const std::string job = options.Required("job");
  std::filesystem::path job_path = job;
  if (job_path.is_relative() && !spec.cwd.empty()) job_path = std::filesystem::path(spec.cwd) / job_path;
  if (!std::filesystem::is_regular_file(job_path)) throw InputError("fio workload: job file " + job + " not found");
  const std::string fio = FindExecutable("fio");
  if (fio.empty()) {
    throw InfraError("fio workload: fio is not installed (not in PATH); install the fio package (ci/install-deps.sh)");
  }
  const std::string base = options.Find("scratch_dir").value();  // declared with a default
  RequireDiskDirectory(base, "fio workload: scratch_dir");
  std::ifstream in(job_path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) throw InputError("fio workload: job file " + job + " cannot be read");
  if (text.size() > kMaxJobFileBytes) {
    throw InputError("fio workload: job file " + job + " is larger than " + std::to_string(kMaxJobFileBytes >> 10) +
                     " KiB");
  }
  std::vector<std::string> argv = {
      "/bin/sh", "-c", kFioWrapper, "perfgate-fio", base, fio, job_path.filename().string(), text};
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  return argv;
}

WorkloadOutput FioAdapter::ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const {
  return ParseFioJson(stdout_text, "fio output (job file " + Options(spec).Find("job").value_or("?") + ")");
}

WorkloadOutput ParseFioJson(const std::string& text, const std::string& source) {
  const json doc = ParseToolJson(text, source);
  if (!doc.is_object() || !doc.contains("jobs") || !doc.at("jobs").is_array()) {
    throw InfraError(source + ": no \"jobs\" array in the JSON document");
  }
  const json& jobs = doc.at("jobs");
  if (jobs.empty()) throw InfraError(source + ": \"jobs\" is empty");
  WorkloadOutput out;
  double ios = 0;
  std::set<std::string> seen;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const json& job = jobs[i];
    std::string where = source + ": jobs[" + std::to_string(i) + "]";
    if (!job.is_object() || !job.contains("jobname") || !job.at("jobname").is_string()) {
      throw InfraError(where + ": missing \"jobname\"");
    }
    const std::string jobname = job.at("jobname").get<std::string>();
    where += " (" + jobname + ")";
    if (job.contains("error") && job.at("error").is_number() && job.at("error").get<double>() != 0) {
      throw InfraError(where + ": fio reported error " + job.at("error").dump());
    }
    const std::string segment = MetricSegment(jobname);
    if (!seen.insert(segment).second) {
      // Several jobs of one name (numjobs > 1): their latency percentiles
      // cannot be merged, so each must be reported on its own or grouped.
      throw InfraError(where + ": more than one job is named \"" + jobname +
                       "\"; give the jobs distinct names or set group_reporting=1");
    }
    const std::string prefix = "fio." + segment;
    bool any = false;
    for (const char* dir : {"read", "write", "trim"}) {
      if (!job.contains(dir)) continue;
      const json& d = job.at(dir);
      const std::string at = where + "." + dir;
      if (!d.is_object()) throw InfraError(at + ": expected an object");
      if (d.contains("total_ios")) ios += Number(d, "total_ios", at);
      if (Number(d, "io_bytes", at) <= 0) continue;
      any = true;
      const std::string name = prefix + "." + dir;
      out.metrics[name + ".iops"] = ScalarMetric(name + ".iops", Number(d, "iops", at), "ops/s", Better::kHigher);
      // fio 3 has bw_bytes; older fio only bw, in KiB/s.
      const double bw = d.contains("bw_bytes") ? Number(d, "bw_bytes", at) : Number(d, "bw", at) * 1024;
      out.metrics[name + ".bw"] = ScalarMetric(name + ".bw", bw, "bytes/s", Better::kHigher);
      if (!AddLatency(d, "clat", name, at, out)) throw InfraError(at + ": missing \"clat_ns\" (or \"clat\")");
      AddLatency(d, "lat", name, at, out);
    }
    if (job.contains("sync") && job.at("sync").is_object()) {
      const json& sync = job.at("sync");
      const std::string at = where + ".sync";
      if (sync.contains("total_ios") && Number(sync, "total_ios", at) > 0) {
        AddLatency(sync, "lat", prefix + ".sync", at, out);
        any = true;
      }
    }
    if (!any) throw InfraError(where + ": the job did no I/O (io_bytes is 0 in every direction)");
  }
  out.ops = ios;
  return out;
}

std::vector<MetricDeclaration> FioAdapter::metrics() const {
  return {
      OutcomeScalar("fio.<job>.<direction>.iops", "ops/s", Better::kHigher,
                    "I/O operations per second of a job in one direction (read, write, trim)"),
      OutcomeScalar("fio.<job>.<direction>.bw", "bytes/s", Better::kHigher, "bandwidth of a job in one direction"),
      OutcomeScalar("fio.<job>.<direction>.clat_<statistic>", "ns", Better::kLower,
                    "completion latency: mean, or a percentile (p50, p99, p99.9, ...)"),
      OutcomeScalar("fio.<job>.<direction>.lat_<statistic>", "ns", Better::kLower,
                    "total latency, submission to completion: mean, or a percentile"),
  };
}

std::unique_ptr<WorkloadAdapter> MakeFioAdapter() { return std::make_unique<FioAdapter>(); }

}  // namespace perfgate
