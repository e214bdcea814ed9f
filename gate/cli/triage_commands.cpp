// perfgate quarantine list, perfgate alerts, and the options that accept regressions.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "adapters/tool_output.h"
#include "base/error.h"
#include "base/escape.h"
#include "cli/commands.h"
#include "history/alerts.h"
#include "history/history_db.h"
#include "triage/acceptance.h"
#include "triage/triage.h"

namespace perfgate {

std::vector<Acceptance> ParseAcceptances(const std::vector<std::string>& texts, const std::vector<std::string>& files,
                                         std::vector<std::string>* skipped) {
  std::vector<Acceptance> out;
  for (const std::string& text : texts) out.push_back(ParseAcceptance(text, "--accept", "--accept"));
  for (const std::string& file : files) {
    for (Acceptance& a : ReadAcceptanceFile(file, skipped)) out.push_back(std::move(a));
  }
  return out;
}

void ParseAcceptOptions(RunCommandOptions& o) {
  for (Acceptance& a :
       ParseAcceptances(o.accepts, o.accept_files, o.gate.skip_bad_trailers ? &o.gate.skipped_trailers : nullptr))
    o.gate.acceptances.push_back(std::move(a));
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

namespace {

int64_t AlertId(const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos &&
                      text != "0" && text[0] != '0';
  if (!digits) {
    throw InputError("alert id: \"" + Abbreviate(SanitizeText(text), 100) +
                     "\" is not an alert id (a positive number, as perfgate alerts list shows)");
  }
  return std::strtoll(text.c_str(), nullptr, 10);
}

AlertState StateOption(const std::string& text, const std::string& option) {
  std::optional<AlertState> state = ParseAlertState(text);
  if (!state) {
    throw InputError(option + ": \"" + Abbreviate(SanitizeText(text), 100) + "\" is not an alert state (" +
                     AlertStateNames() + ")");
  }
  return *state;
}

// Who changes an alert when --by is not given: the login name.
std::string DefaultBy() {
  if (const char* user = std::getenv("USER"); user && *user) return user;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_name) return pw->pw_name;
  return "uid " + std::to_string(getuid());
}

}  // namespace

int AlertsListCommand(const AlertsOptions& o) {
  std::vector<AlertState> states;
  for (const std::string& s : o.states) states.push_back(StateOption(s, "--state"));
  const HistoryDb db = HistoryDb::OpenForReading(o.db_file);
  nlohmann::json listed = nlohmann::json::array();
  size_t shown = 0;
  for (const AlertGroup& g : db.Alerts(o.suite)) {
    if (!states.empty() && std::find(states.begin(), states.end(), g.state) == states.end()) continue;
    ++shown;
    if (o.json)
      listed.push_back(AlertToJson(g));
    else
      std::printf("%s\n", AlertLine(g).c_str());
  }
  if (o.json)
    std::printf("%s\n", listed.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  else if (shown == 0)
    std::printf("perfgate: %s holds no alert%s\n", db.Name().c_str(), states.empty() ? "" : " in those states");
  return 0;
}

int AlertsShowCommand(const AlertsOptions& o) {
  const int64_t id = AlertId(o.id);
  const HistoryDb db = HistoryDb::OpenForReading(o.db_file);
  const AlertGroup g = db.Alert(id);
  if (o.json) {
    std::printf("%s\n", AlertToJson(g).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::fputs(AlertMarkdown(g, db.Name()).c_str(), stdout);
  }
  return 0;
}

int AlertsSetCommand(const AlertsOptions& o) {
  const int64_t id = AlertId(o.id);
  AlertUpdate update;
  if (o.state_given) update.state = StateOption(o.state, "--state");
  if (o.owner_given) update.owner = o.owner;
  if (o.bug_given) update.bug = o.bug;
  update.by = o.by.empty() ? DefaultBy() : o.by;
  update.note = o.note;
  HistoryDb db = HistoryDb::OpenExisting(o.db_file);
  db.SetAlert(id, update);
  const AlertGroup g = db.Alert(id);
  std::printf("perfgate: alert %s\n", AlertLine(g).c_str());
  return 0;
}

}  // namespace perfgate
