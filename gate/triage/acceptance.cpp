#include "triage/acceptance.h"

#include <cmath>
#include <fstream>
#include <optional>
#include <regex>

#include "base/error.h"

namespace perfgate {

namespace {

const char kForm[] = "expected \"SCENARIO/CHECK <= +N%: reason\"";

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

Acceptance ParseAcceptance(const std::string& text, const std::string& by, const std::string& source) {
  auto fail = [&](const std::string& what) -> Error {
    std::string shown = text.size() > 200 ? text.substr(0, 200) + "..." : text;
    return InputError(source + ": \"" + shown + "\": " + what);
  };
  const size_t le = text.find("<=");
  if (le == std::string::npos) throw fail(std::string("no bound; ") + kForm);
  Acceptance a;
  a.target = Trim(text.substr(0, le));
  if (a.target.empty()) throw fail(std::string("no check named; ") + kForm);
  const std::string rest = text.substr(le + 2);
  const size_t colon = rest.find(':');
  if (colon == std::string::npos) throw fail(std::string("no reason; ") + kForm);
  const std::string bound = Trim(rest.substr(0, colon));
  // The bound's number is read strictly: "15", "+15", "+7.5", then '%'.
  static const std::regex kBound(R"(([+-]?)(\d{1,6}(?:\.\d{1,6})?)\s*%)");
  std::smatch m;
  if (bound.size() > 32 || !std::regex_match(bound, m, kBound)) {
    throw fail("malformed bound \"" + bound + "\"; " + kForm);
  }
  const double n = std::stod(m[2].str());
  if (m[1].str() == "-" || n <= 0) {
    throw fail("a bound on an improvement (\"" + bound +
               "\"): an acceptance bounds a regression, a change in the check's worse direction, e.g. <= +15%");
  }
  if (n > 10000) throw fail("bound \"" + bound + "\" is out of range (at most +10000%)");
  a.bound_pct = n;
  a.reason = Trim(rest.substr(colon + 1));
  if (a.reason.empty()) throw fail("an acceptance needs a reason after the ':'");
  a.by = by;
  a.source = source;
  return a;
}

std::vector<Acceptance> ReadAcceptanceFile(const std::string& file, std::vector<std::string>* skipped) {
  std::ifstream in(file);
  if (!in) throw InputError(file + ": cannot open the file of accept trailers");
  std::vector<Acceptance> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string text = Trim(line);
    if (text.empty() || text[0] == '#') continue;
    const std::string where = file + ":" + std::to_string(number);
    try {
      const size_t space = text.find_first_of(" \t");
      if (space == std::string::npos) {
        throw InputError(where + ": expected \"COMMIT SCENARIO/CHECK <= +N%: reason\"");
      }
      Acceptance a = ParseAcceptance(Trim(text.substr(space + 1)), text.substr(0, space), where);
      a.from_trailer_file = true;
      out.push_back(std::move(a));
    } catch (const Error& e) {
      if (skipped == nullptr) throw;
      skipped->push_back(e.what());
    }
  }
  return out;
}

namespace {

// Why `a` cannot gate a check of `suite`, or nothing when it resolves (and is resolved).
std::optional<std::string> Resolve(Acceptance& a, const Suite& suite) {
  std::optional<CheckTarget> target = ResolveCheckTarget(suite.scenarios, a.target);
  if (!target) {
    return a.source + ": \"" + a.target + "\" names no check of suite " + suite.file +
           " (write SCENARIO/CHECK with the check's name as the reports show it)";
  }
  for (const ScenarioSpec& s : suite.scenarios) {
    if (s.name != target->scenario) continue;
    for (const CheckSpec& c : s.checks) {
      if (c.name == target->check && c.type == CheckSpec::Type::kBudget) {
        return a.source + ": \"" + a.target +
               "\" is a budget check: its limit is absolute, so there is no change to accept; raise the budget in "
               "the suite instead";
      }
    }
  }
  a.scenario = target->scenario;
  a.check = target->check;
  return std::nullopt;
}

}  // namespace

void ResolveAcceptances(std::vector<Acceptance>& acceptances, const Suite& suite, std::vector<std::string>* skipped) {
  std::vector<Acceptance> resolved;
  for (Acceptance& a : acceptances) {
    if (std::optional<std::string> why = Resolve(a, suite)) {
      if (skipped == nullptr || !a.from_trailer_file) throw InputError(*why);
      skipped->push_back(std::move(*why));
      continue;
    }
    resolved.push_back(std::move(a));
  }
  acceptances = std::move(resolved);
}

}  // namespace perfgate
