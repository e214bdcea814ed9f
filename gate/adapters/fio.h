// The `fio` adapter: runs real fio on a job file in a fresh scratch directory
// and reads its JSON output.
//
// Keys: declared in keys() (job, scratch_dir), and "args" (more fio options,
// placed before the job file, so the job file's own settings win). Each
// repetition runs in a new directory
// <scratch_dir>/perfgate-fio.XXXXXX that a small /bin/sh wrapper removes when
// fio exits or is stopped (SIGTERM, SIGINT), so every repetition lays out
// fresh files and none are left behind.
//
// Metrics, per job and per direction <dir> (read, write, trim) that moved
// bytes; <job> is fio's job name with characters a metric name does not
// allow replaced by '_':
//   fio.<job>.<dir>.iops            operations/s (higher is better)
//   fio.<job>.<dir>.bw              bytes/s (higher is better)
//   fio.<job>.<dir>.clat_mean       completion latency, mean, ns
//   fio.<job>.<dir>.clat_p<q>       completion latency percentiles fio reported, ns:
//                                   p50, p90, p99, p99_9, p99_99 (the '.' of 99.9 becomes '_')
//   fio.<job>.<dir>.lat_mean        total latency (submission + completion), mean, ns
//   fio.<job>.<dir>.lat_p<q>        its percentiles, when the job sets lat_percentiles=1
//   fio.<job>.sync.lat_mean / lat_p<q>   fsync/fdatasync latency, for jobs that sync
// Operation count (per-op statistics): the I/Os of all jobs and directions.
// Both fio 3's *_ns fields and older fio's microsecond fields (clat, lat,
// bw in KiB/s) are read.
#pragma once

#include "adapters/adapter.h"

namespace perfgate {

class FioAdapter : public WorkloadAdapter {
 public:
  std::string kind() const override { return "fio"; }
  const WorkloadKeys& keys() const override;
  std::vector<MetricDeclaration> metrics() const override;
  std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const override;
  WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const override;
};

// Parses fio's --output-format=json output; `source` names it in errors.
WorkloadOutput ParseFioJson(const std::string& text, const std::string& source);

// The percentile key of fio's JSON ("99.900000") as a metric-name suffix
// ("p99_9"); empty when the key is not a number.
std::string FioPercentileName(const std::string& key);

}  // namespace perfgate
