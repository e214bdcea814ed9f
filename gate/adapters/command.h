// The `command` adapter: runs argv as given (or through /bin/sh -c when the
// scenario says shell: true). A command may report its own metrics on stdout
// as JSON lines: {"metric": "...", "value": 1.5, "unit": "ms", "better": "lower"}
// and its operation count as {"ops": N}. Other lines are ignored.
#pragma once

#include "adapters/adapter.h"

namespace perfgate {

class CommandAdapter : public WorkloadAdapter {
 public:
  std::string kind() const override { return "command"; }
  std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const override;
  WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const override;
};

// Parses JSON-lines metrics; `source` names the output in errors.
WorkloadOutput ParseCommandJsonLines(const std::string& text, const std::string& source);

}  // namespace perfgate
