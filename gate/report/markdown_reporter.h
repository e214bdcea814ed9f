// summary.md for $GITHUB_STEP_SUMMARY and PR comments: a verdict line, a
// table of the checks that need attention, and every check in a collapsed
// <details>. All user text is escaped; the output never exceeds max_bytes
// (GitHub rejects step summaries over 1 MiB, PR comments over 65536 chars).
#pragma once

#include <cstddef>

#include "report/reporter.h"

namespace perfgate {

class MarkdownReporter : public Reporter {
 public:
  static constexpr size_t kStepSummaryLimit = 1024 * 1024 - 1;
  // For a PR comment, pass 65536 bytes (characters <= bytes).
  explicit MarkdownReporter(size_t max_bytes = kStepSummaryLimit) : max_bytes_(max_bytes) {}
  std::string Render(const RunResults& results) const override;

 private:
  size_t max_bytes_;
};

}  // namespace perfgate
