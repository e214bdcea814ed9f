// perfgate quarantine list, and the options that accept regressions.
#include <cstdio>

#include "adapters/tool_output.h"
#include "cli/commands.h"
#include "triage/acceptance.h"
#include "triage/triage.h"

namespace perfgate {

void ParseAcceptOptions(RunCommandOptions& o) {
  for (const std::string& text : o.accepts) o.gate.acceptances.push_back(ParseAcceptance(text, "--accept", "--accept"));
  for (const std::string& file : o.accept_files) {
    for (Acceptance& a : ReadAcceptanceFile(file)) o.gate.acceptances.push_back(std::move(a));
  }
}

int QuarantineListCommand(const std::string& suite_file, const std::string& today_option) {
  const Suite suite = LoadSuite(suite_file, GateVocabulary(), {.suite_dir = "", .perfgate_dir = PerfgateDir()});
  const std::string today = TriageToday(today_option);
  if (suite.quarantine.empty()) {
    std::printf("perfgate: %s quarantines no check\n", suite_file.c_str());
    return 0;
  }
  for (const QuarantineEntry& q : suite.quarantine) {
    const bool expired = today > q.until;
    std::printf("%s/%s\t%s %s\towner %s\t%s\n", q.scenario.c_str(), q.check.c_str(), expired ? "expired on" : "until",
                q.until.c_str(), q.owner.c_str(), q.reason.c_str());
  }
  return 0;
}

}  // namespace perfgate
