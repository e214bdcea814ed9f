#include "report/junit_reporter.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <regex>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "base/escape.h"
#include "report/format.h"
#include "report/outcome.h"
#include "report/why_text.h"

namespace perfgate {
namespace {

// CI tools show the message attribute on one line; the detail is the body.
constexpr size_t kMaxJunitMessageBytes = 1000;
constexpr size_t kMaxDetailBytes = 64 * 1024;
constexpr size_t kMaxWhyBytes = 4 * 1024;

std::string Attr(std::string_view name, const std::string& value) {
  return " " + std::string(name) + "=\"" + XmlAttributeEscape(value) + "\"";
}

std::string Attr(std::string_view name, int value) { return Attr(name, std::to_string(value)); }

// `text` on one line: control characters (newline, CR, tab, escapes) become
// spaces. Test names and messages are shown as one line (an annotation
// title, a table cell, a test's identity), and a newline in a name splits one
// test into two for some consumers.
std::string OneLineAttribute(std::string text) {
  for (char& c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return text;
}

// A message attribute, one line and capped in length.
std::string MessageAttr(const std::string& text) {
  return Attr("message", OneLineAttribute(Abbreviate(text, kMaxJunitMessageBytes)));
}

// Seconds as JUnit wants them: plain decimal, no unit.
std::string Seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", s > 0 ? s : 0.0);
  return buffer;
}

// A timestamp attribute, only when it is an ISO 8601 date-time (what
// results.json holds unless edited by hand): tools that parse it reject others.
std::string TimestampAttr(const std::string& timestamp) {
  static const std::regex kIso(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?)");
  // The length check first: std::regex recurses per character of a long input.
  return timestamp.size() <= 40 && std::regex_match(timestamp, kIso) ? Attr("timestamp", timestamp) : "";
}

// Machine-readable number for properties: enough digits to round-trip what matters.
std::string Raw(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", value);
  return buffer;
}

std::string ValueList(const std::vector<double>& values) {
  std::string text;
  for (double v : values) text += (text.empty() ? "" : " ") + Raw(v);
  return text;
}

using Properties = std::vector<std::pair<std::string, std::string>>;

std::string PropertiesElement(const Properties& properties, const std::string& indent) {
  std::string xml = indent + "<properties>\n";
  for (const auto& [name, value] : properties) {
    xml += indent + "  <property" + Attr("name", name) + Attr("value", value) + "/>\n";
  }
  return xml + indent + "</properties>\n";
}

// The numbers of a check, for tools that chart testcase properties.
Properties CheckProperties(const CheckResult& check) {
  Properties p = {{"metric", check.spec.metric},
                  {"statistic", check.statistic},
                  {"unit", check.unit},
                  {"type", ToString(check.spec.type)},
                  {"verdict", ToString(check.verdict)}};
  if (HasBaseline(check)) p.emplace_back("baseline_median", Raw(check.baseline_median));
  if (!check.candidate_values.empty()) p.emplace_back("candidate_median", Raw(check.candidate_median));
  if (HasBaseline(check)) p.emplace_back("change_pct", Raw(check.change_pct));
  if (check.change_ci_low_pct) p.emplace_back("change_ci_low_pct", Raw(*check.change_ci_low_pct));
  if (check.change_ci_high_pct) p.emplace_back("change_ci_high_pct", Raw(*check.change_ci_high_pct));
  if (check.p_value) p.emplace_back("p_value", Raw(*check.p_value));
  if (check.p_adjusted) p.emplace_back("p_adjusted", Raw(*check.p_adjusted));
  if (check.min_detectable_pct) p.emplace_back("min_detectable_pct", Raw(*check.min_detectable_pct));
  p.emplace_back("threshold", FormatThreshold(check));
  if (check.triage) {
    const CheckResult::Triage& t = *check.triage;
    p.emplace_back("triage", t.state);
    p.emplace_back("measured_verdict", ToString(t.measured));
    const bool accepting = t.state == "accepted" || t.state == "exceeded";
    if (t.bound_pct) p.emplace_back("accepted_bound_pct", Raw(*t.bound_pct));
    p.emplace_back(accepting ? "accepted_reason" : "quarantine_reason", t.reason);
    p.emplace_back(accepting ? "accepted_by" : "quarantine_owner", t.by);
    if (!t.until.empty()) p.emplace_back("quarantine_until", t.until);
    p.emplace_back("triage_note", t.note);
  }
  return p;
}

// "workload.wall_time.value: 1.30 s vs 1.00 s baseline, +30.0% [+25.1%, +35.2%], limit +5.0%, p=0.0012"
std::string OneLineSummary(const CheckResult& check) {
  std::string line = CheckName(check) + ": " + FormatCandidate(check);
  if (HasBaseline(check)) line += " vs " + FormatBaseline(check) + " baseline, " + FormatChange(check);
  line += ", threshold " + FormatThreshold(check);
  std::string p = FormatPValue(check.p_adjusted ? check.p_adjusted : check.p_value);
  if (!p.empty()) line += ", p=" + p;
  if (check.verdict == Verdict::kInconclusive && check.min_detectable_pct) {
    line += ", minimum detectable change " + FormatPercent(*check.min_detectable_pct).substr(1);
  }
  return line;
}

std::string Detail(const CheckResult& check) {
  std::string text;
  if (check.triage) text += check.triage->note + "\n";
  if (!check.message.empty()) text += check.message + "\n";
  text += "metric: " + check.spec.metric + " (" + check.statistic + ", " + check.unit + ", " + ToString(check.better) +
          " is better)\n";
  text += "verdict: " + ToString(OutcomeOf(check)) + "; threshold " + FormatThreshold(check) + "\n";
  if (HasBaseline(check)) {
    text += "baseline: median " + Raw(check.baseline_median) + "; per repetition: " + ValueList(check.baseline_values) +
            "\n";
  }
  text += "candidate: median " + Raw(check.candidate_median) +
          "; per repetition: " + ValueList(check.candidate_values) + "\n";
  if (HasBaseline(check)) text += "change: " + FormatChange(check) + "\n";
  if (check.p_value) text += "p: " + FormatPValue(check.p_value);
  if (check.p_adjusted) text += " (adjusted for all checks: " + FormatPValue(check.p_adjusted) + ")";
  if (check.p_value) text += "\n";
  if (check.min_detectable_pct) {
    text += "minimum detectable change: " + FormatPercent(*check.min_detectable_pct).substr(1) + "\n";
  }
  return Abbreviate(text, kMaxDetailBytes);
}

// The <failure>/<error>/<skipped> child of a check's testcase, or "" when it
// passed. With --strict an inconclusive check fails the run, so it is a
// failure here too: a red job never shows only green and skipped tests.
// `why`: the kernel-side causes of a failed outcome check, lines for the body.
std::string CheckOutcomeElement(const ScenarioResult& scenario, const CheckResult& check, bool strict,
                                const std::string& why) {
  std::string message = OneLineSummary(check);
  if (check.triage) message = check.triage->note + "; " + message;
  switch (OutcomeOf(check)) {
    case Outcome::kRegressed:
    case Outcome::kOverBudget: {
      const char* type = OutcomeOf(check) == Outcome::kRegressed ? "PerfRegression" : "BudgetExceeded";
      const std::vector<std::string>* explained = scenario.explanation ? &scenario.explanation->failing : nullptr;
      const bool outcome =
          explained && std::find(explained->begin(), explained->end(), CheckName(check)) != explained->end();
      std::string detail = Detail(check) + (outcome ? why : "");
      return "      <failure" + Attr("type", type) + MessageAttr(message) + ">" +
             XmlEscape(Abbreviate(detail, kMaxDetailBytes + kMaxWhyBytes)) + "</failure>\n";
    }
    case Outcome::kError: {
      std::string reason = check.message.empty() ? "the check could not be evaluated" : check.message;
      return "      <error" + Attr("type", "InfrastructureError") + MessageAttr(CheckName(check) + ": " + reason) +
             ">" + XmlEscape(Detail(check)) + "</error>\n";
    }
    case Outcome::kInconclusive:
      if (strict) {
        return "      <failure" + Attr("type", "Inconclusive") + MessageAttr("inconclusive (--strict): " + message) +
               ">" + XmlEscape(Detail(check)) + "</failure>\n";
      }
      return "      <skipped" + MessageAttr("inconclusive: " + message) + ">" + XmlEscape(Detail(check)) +
             "</skipped>\n";
    case Outcome::kAccepted:
    case Outcome::kQuarantined:
      // Passed, and said why: consumers that show a passed test's output show who let it pass.
      return "      <system-out>" + XmlEscape(Detail(check)) + "</system-out>\n";
    case Outcome::kImproved:
    case Outcome::kPassed:
      break;
  }
  return "";
}

// "why: syscalls.count.getppid.per_op +200.0% (...), at least +9.10 us/op (...)" and the host-noise
// line, for the failures of the scenario's outcome checks; "" when none failed.
std::string WhyDetail(const ScenarioResult& scenario) {
  constexpr size_t kCauses = 3;
  if (!scenario.explanation || scenario.explanation->failing.empty()) return "";
  const Explanation& e = *scenario.explanation;
  std::string text;
  // Counted instructions per function are exact: the answer, said first.
  const bool counted = e.user_code && e.user_code->counted;
  if (counted) text += "why: " + DescribeUserCode(*e.user_code) + "\n";
  for (size_t i = 0; i < e.causes.size() && i < kCauses; ++i) text += "why: " + DescribeShift(e.causes[i]) + "\n";
  if (e.causes.empty() && !counted) {
    text +=
        "why: no kernel-side metric clearly grew" + (e.user_code ? "; " + DescribeUserCode(*e.user_code) : "") + "\n";
  } else if (e.user_code && !counted) {
    text += "why: " + DescribeUserCode(*e.user_code) + "\n";
  }
  if (std::string host = DescribeHost(e); !host.empty()) text += host + "\n";
  return text;
}

std::string RunErrorDetail(const ScenarioResult& scenario) {
  std::string text = scenario.error + "\n";
  for (const Repetition& rep : scenario.repetitions) {
    if (rep.failure.empty()) continue;
    text += "repetition " + std::to_string(rep.index) + " (exit status " + std::to_string(rep.exit_status) +
            "): " + rep.failure + "\n";
  }
  return Abbreviate(text, kMaxDetailBytes);
}

// Testcase names must be unique per classname or tools merge them silently;
// a suite may name two checks alike, so later ones get " #2", " #3".
class UniqueNames {
 public:
  std::string Take(const std::string& wanted) {
    std::string name = wanted;
    for (int n = 2; !used_.insert(name).second; ++n) name = wanted + " #" + std::to_string(n);
    return name;
  }

 private:
  std::set<std::string> used_;
};

// `file`: the suite file, so that annotations point at the suite that
// defines the check rather than at a results or baseline file.
// `seconds`: the check's share of what measuring its scenario took (the
// scenario's time divided among its test cases: readers that add the cases'
// times up, as some JUnit summaries do, get the scenario's time, not it
// once per check).
std::string Testcase(const std::string& classname, const std::string& name, const std::string& file, double seconds,
                     const std::string& body) {
  return "    <testcase" + Attr("classname", OneLineAttribute(classname)) + Attr("name", OneLineAttribute(name)) +
         (file.empty() ? "" : Attr("file", OneLineAttribute(file))) + Attr("time", Seconds(seconds)) + ">\n" + body +
         "    </testcase>\n";
}

// Failures as the exit code counts them: regressions, budgets exceeded and,
// with --strict, inconclusive checks.
int Failures(const OutcomeCounts& counts, bool strict) {
  return counts.regressed + counts.over_budget + (strict ? counts.inconclusive : 0);
}

Properties ScenarioProperties(const RunResults& results, const ScenarioResult& scenario) {
  const Environment& env = results.environment;
  return {{"workload_kind", scenario.workload_kind},
          {"repetitions", std::to_string(scenario.repetitions.size())},
          {"kernel", env.kernel},
          {"cpu_model", env.cpu_model},
          {"cpu_count", std::to_string(env.cpu_count)},
          {"perfgate_version", env.perfgate_version},
          {"git_commit", env.git_commit},
          {"baseline_source", results.baseline_source.empty() ? "none" : results.baseline_source}};
}

std::string Testsuite(const RunResults& results, const ScenarioResult& scenario) {
  const std::string classname = "perfgate." + results.suite + "." + scenario.name;
  UniqueNames names;
  std::string cases;
  const std::string why = WhyDetail(scenario);
  const size_t case_count = scenario.checks.size() + (scenario.error.empty() ? 0 : 1);
  const double share = case_count > 0 ? scenario.duration_s / static_cast<double>(case_count) : 0;
  if (!scenario.error.empty()) {
    std::string message = scenario.name + " failed to run: " + scenario.error;
    cases += Testcase(classname, names.Take("run"), results.suite_file, share,
                      "      <error" + Attr("type", "InfrastructureError") + MessageAttr(message) + ">" +
                          XmlEscape(RunErrorDetail(scenario)) + "</error>\n");
  }
  for (const CheckResult& check : scenario.checks) {
    cases += Testcase(classname, names.Take(CheckName(check)), results.suite_file, share,
                      PropertiesElement(CheckProperties(check), "      ") +
                          CheckOutcomeElement(scenario, check, results.strict, why));
  }

  OutcomeCounts counts = CountOutcomes(scenario);
  const std::string& timestamp = scenario.timestamp.empty() ? results.environment.timestamp : scenario.timestamp;
  std::string xml = "  <testsuite" + Attr("name", OneLineAttribute(classname)) + Attr("tests", counts.total()) +
                    Attr("failures", Failures(counts, results.strict)) + Attr("errors", counts.errors) +
                    Attr("skipped", results.strict ? 0 : counts.inconclusive) +
                    Attr("time", Seconds(scenario.duration_s));
  xml += TimestampAttr(timestamp);
  if (!results.environment.hostname.empty()) xml += Attr("hostname", results.environment.hostname);
  xml += ">\n";
  return xml + PropertiesElement(ScenarioProperties(results, scenario), "    ") + cases + "  </testsuite>\n";
}

}  // namespace

std::string JUnitReporter::Render(const RunResults& results) const {
  OutcomeCounts counts = CountOutcomes(results);
  double seconds = 0;
  for (const ScenarioResult& scenario : results.scenarios) seconds += scenario.duration_s;

  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += "<testsuites" + Attr("name", OneLineAttribute("perfgate " + results.suite)) + Attr("tests", counts.total()) +
         Attr("failures", Failures(counts, results.strict)) + Attr("errors", counts.errors) +
         Attr("skipped", results.strict ? 0 : counts.inconclusive) + Attr("time", Seconds(seconds));
  xml += TimestampAttr(results.environment.timestamp);
  xml += ">\n";
  for (const ScenarioResult& scenario : results.scenarios) xml += Testsuite(results, scenario);
  return xml + "</testsuites>\n";
}

}  // namespace perfgate
