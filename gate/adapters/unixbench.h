// The `unixbench` adapter: runs a user-provided byte-unixbench (it is not
// packaged for Debian) and reads the results text its Run script prints.
//
// Keys: declared in keys() (dir, tests, iterations, copies), and "args"
// (more Run arguments).
//
// Metrics, for the single-copy run; the C-copy run has the same names under
// unixbench.<C>copy. (e.g. unixbench.2copy.index). <test> is the test's title
// in lower case with '_' between words ("System Call Overhead" ->
// system_call_overhead). All higher is better.
//   unixbench.<test>          the test's score, in its unit (lps, lpm, KBps, MWIPS, MFLOPS)
//   unixbench.<test>.index    its index (score / baseline * 10)
//   unixbench.index           System Benchmarks Index Score (also "(Partial Only)")
//   unixbench.<group>_index   the index score of another group, e.g. 2d_graphics_benchmarks_index
#pragma once

#include "adapters/adapter.h"

namespace perfgate {

class UnixBenchAdapter : public WorkloadAdapter {
 public:
  std::string kind() const override { return "unixbench"; }
  const WorkloadKeys& keys() const override;
  std::vector<MetricDeclaration> metrics() const override;
  std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const override;
  WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const override;
};

// Parses the results text of UnixBench's Run; `source` names it in errors.
WorkloadOutput ParseUnixBenchText(const std::string& text, const std::string& source);

}  // namespace perfgate
