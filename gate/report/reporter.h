// Reporters: one class per output format over the one results model
// (metrics/results.h), in the manner of Google Benchmark's reporters. Adding
// a format means one new class and one line in WriteReports.
#pragma once

#include <string>

#include "metrics/results.h"

namespace perfgate {

class Reporter {
 public:
  virtual ~Reporter() = default;
  // The whole output file for `results`. Pure: no I/O, deterministic.
  virtual std::string Render(const RunResults& results) const = 0;
};

// Writes results.json, junit.xml, summary.md, report/index.html and
// report/report.css into out_dir (creating directories 0755), each
// atomically, so that a CI step reading them never sees half a file; and
// the evidence's folded stacks as evidence/*.folded (report/evidence_files.h),
// which the reports name.
// InfraError naming the path when a directory or file cannot be written.
void WriteReports(const RunResults& results, const std::string& out_dir);

}  // namespace perfgate
