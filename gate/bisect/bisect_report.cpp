#include "bisect/bisect_report.h"

#include <filesystem>

#include "base/atomic_file.h"
#include "base/escape.h"
#include "base/quantity.h"
#include "report/html_reporter.h"

namespace perfgate {

namespace fs = std::filesystem;

namespace {

std::string ShortSha(const std::string& sha) { return sha.substr(0, 12); }

nlohmann::json CommitJson(const CommitInfo& c) {
  return {{"sha", c.sha}, {"subject", c.subject}, {"author", c.author}, {"date", c.date}};
}

nlohmann::json StepJson(const BisectStep& s) {
  nlohmann::json checks = nlohmann::json::array();
  for (const BisectCheck& c : s.checks) {
    nlohmann::json j = {{"scenario", c.scenario},
                        {"check", c.check},
                        {"verdict", ToString(c.verdict)},
                        {"unit", c.unit},
                        {"good_median", c.good_median},
                        {"candidate_median", c.candidate_median},
                        {"change_pct", c.change_pct},
                        {"repetitions", c.repetitions},
                        {"message", c.message}};
    if (c.p_adjusted) j["p_adjusted"] = *c.p_adjusted;
    checks.push_back(j);
  }
  return {{"step", s.number},
          {"position", s.index},
          {"commit", CommitJson(s.commit)},
          {"verdict", ToString(s.verdict)},
          {"reason", s.reason},
          {"build_cached", s.build_cached},
          {"rounds", s.rounds},
          {"build_log", s.build_log},
          {"checks", checks},
          {"why", s.why},
          {"report_dir", s.report_dir},
          {"seconds", s.seconds}};
}

// "12.3 ms → 14.2 ms (+15.4%), 16 reps" per check, one line.
std::string CheckNumbers(const BisectCheck& c) {
  return c.scenario + "/" + c.check + ": " + FormatQuantity(c.good_median, c.unit) + " → " +
         FormatQuantity(c.candidate_median, c.unit) + " (" + FormatPercent(c.change_pct) + "), " + ToString(c.verdict) +
         ", " + std::to_string(c.repetitions) + " reps";
}

std::string StepNumbers(const BisectStep& s) {
  std::string out;
  for (const BisectCheck& c : s.checks) out += (out.empty() ? "" : "; ") + CheckNumbers(c);
  return out.empty() ? s.reason : out;
}

std::string StepName(const BisectStep& s) { return s.number == 0 ? "endpoints" : std::to_string(s.number); }

std::string Headline(const BisectResult& r) {
  switch (r.outcome) {
    case BisectOutcome::kCulprit:
      return "First bad commit";
    case BisectOutcome::kNotReproduced:
      return "Could not reproduce";
    case BisectOutcome::kSuspects:
      return "First bad commit not isolated";
    case BisectOutcome::kPlan:
      return "Bisection plan";
  }
  return "Bisection";
}

}  // namespace

nlohmann::json BisectJson(const BisectResult& r) {
  nlohmann::json range = nlohmann::json::array(), steps = nlohmann::json::array(), suspects = nlohmann::json::array();
  for (const auto& c : r.range) range.push_back(CommitJson(c));
  for (const auto& s : r.steps) steps.push_back(StepJson(s));
  for (const auto& c : r.suspects) suspects.push_back(CommitJson(c));
  nlohmann::json j = {{"schema_version", 1},
                      {"outcome", ToString(r.outcome)},
                      {"summary", r.summary},
                      {"repository", r.repo},
                      {"suite_file", r.suite_file},
                      {"checks", r.checks},
                      {"good", CommitJson(r.good)},
                      {"bad", CommitJson(r.bad)},
                      {"range", range},
                      {"expected_steps", r.expected_steps},
                      {"steps", steps},
                      {"suspects", suspects},
                      {"why", r.why},
                      {"culprit_report_dir", r.culprit_report_dir}};
  j["confirmation"] = r.confirmation ? StepJson(*r.confirmation) : nlohmann::json(nullptr);
  j["culprit"] = r.outcome == BisectOutcome::kCulprit ? CommitJson(r.suspects.front()) : nlohmann::json(nullptr);
  return j;
}

std::string BisectMarkdown(const BisectResult& r) {
  auto md = [](const std::string& text) { return MarkdownEscape(Abbreviate(text, 400)); };
  std::string out = "## perfgate bisect: " + Headline(r) + "\n\n";
  out += md(r.summary) + "\n\n";
  out += "Range: good `" + ShortSha(r.good.sha) + "` .. bad `" + ShortSha(r.bad.sha) + "`, " +
         std::to_string(r.range.size()) + " commits (first parents), about " + std::to_string(r.expected_steps) +
         " steps. Checks: " + md([&] {
           std::string all;
           for (const auto& c : r.checks) all += (all.empty() ? "" : ", ") + c;
           return all;
         }()) +
         ".\n\n";
  if (r.outcome == BisectOutcome::kCulprit || r.outcome == BisectOutcome::kSuspects) {
    out += r.outcome == BisectOutcome::kCulprit ? "| Culprit | Subject | Author | Date |\n"
                                                : "| Suspect | Subject | Author | Date |\n";
    out += "|---|---|---|---|\n";
    for (const CommitInfo& c : r.suspects)
      out += "| `" + c.sha + "` | " + md(c.subject) + " | " + md(c.author) + " | " + md(c.date) + " |\n";
    out += "\n";
  }
  if (!r.why.empty()) {
    out += "**Why** (kernel metrics that moved with the culprit, against the good commit):\n\n";
    for (const auto& w : r.why) out += "- " + md(w) + "\n";
    out += "\n";
  }
  if (r.outcome == BisectOutcome::kPlan) {
    out += "| # | Commit | Subject |\n|---|---|---|\n";
    for (size_t i = 0; i < r.range.size(); ++i)
      out +=
          "| " + std::to_string(i + 1) + " | `" + ShortSha(r.range[i].sha) + "` | " + md(r.range[i].subject) + " |\n";
    return out;
  }
  out += "| Step | Commit | Subject | Verdict | Numbers |\n|---|---|---|---|---|\n";
  std::vector<const BisectStep*> all;
  if (r.confirmation) all.push_back(&*r.confirmation);
  for (const auto& s : r.steps) all.push_back(&s);
  for (const BisectStep* s : all) {
    out += "| " + StepName(*s) + " | `" + ShortSha(s->commit.sha) + "` (" + std::to_string(s->index) + "/" +
           std::to_string(r.range.size()) + ") | " + md(s->commit.subject) + " | " + ToString(s->verdict) + " | " +
           md(s->verdict == StepVerdict::kSkipped ? s->reason : StepNumbers(*s)) + " |\n";
  }
  return out;
}

std::string BisectHtml(const BisectResult& r) {
  auto x = [](const std::string& text) { return XmlEscape(SanitizeText(text)); };
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>perfgate bisect: " +
                    x(Headline(r)) +
                    "</title>\n<link rel=\"stylesheet\" href=\"report.css\"/>\n</head>\n<body>\n<main>\n";
  out += "<h1>perfgate bisect: " + x(Headline(r)) + "</h1>\n<p>" + x(r.summary) + "</p>\n";
  out += "<p>Repository " + x(r.repo) + ", suite " + x(r.suite_file) + "; good <code>" + x(ShortSha(r.good.sha)) +
         "</code>, bad <code>" + x(ShortSha(r.bad.sha)) + "</code>; " + std::to_string(r.range.size()) +
         " commits, about " + std::to_string(r.expected_steps) + " steps.</p>\n";
  if (!r.suspects.empty()) {
    out += "<table>\n<thead><tr><th>" + std::string(r.outcome == BisectOutcome::kCulprit ? "Culprit" : "Suspect") +
           "</th><th>Subject</th><th>Author</th><th>Date</th></tr></thead>\n<tbody>\n";
    for (const CommitInfo& c : r.suspects)
      out += "<tr><td><code>" + x(c.sha) + "</code></td><td>" + x(c.subject) + "</td><td>" + x(c.author) + "</td><td>" +
             x(c.date) + "</td></tr>\n";
    out += "</tbody>\n</table>\n";
  }
  if (!r.why.empty()) {
    out += "<h2>Why</h2>\n<ul class=\"why\">\n";
    for (const auto& w : r.why) out += "<li>" + x(w) + "</li>\n";
    out += "</ul>\n";
    if (!r.culprit_report_dir.empty())
      out += "<p><a href=\"" + XmlAttributeEscape(r.culprit_report_dir + "/report/index.html") +
             "\">The culprit's A/B report</a></p>\n";
  }
  std::vector<const BisectStep*> all;
  if (r.confirmation) all.push_back(&*r.confirmation);
  for (const auto& s : r.steps) all.push_back(&s);
  if (!all.empty()) {
    out +=
        "<h2>Steps</h2>\n<table>\n<thead><tr><th>Step</th><th>Commit</th><th>Subject</th><th>Verdict</th>"
        "<th>Numbers</th><th>Report</th></tr></thead>\n<tbody>\n";
    for (const BisectStep* s : all) {
      out += "<tr><td>" + x(StepName(*s)) + "</td><td><code>" + x(ShortSha(s->commit.sha)) + "</code> (" +
             std::to_string(s->index) + "/" + std::to_string(r.range.size()) + ")</td><td>" + x(s->commit.subject) +
             "</td><td>" + x(ToString(s->verdict)) + "</td><td>" +
             x(s->verdict == StepVerdict::kSkipped ? s->reason : StepNumbers(*s)) + "</td><td>";
      if (!s->report_dir.empty())
        out += "<a href=\"" + XmlAttributeEscape(s->report_dir + "/report/index.html") + "\">A/B</a>";
      out += "</td></tr>\n";
    }
    out += "</tbody>\n</table>\n";
  }
  out += "</main>\n</body>\n</html>\n";
  return out;
}

void WriteBisectReports(const BisectResult& r, const std::string& out_dir) {
  fs::create_directories(out_dir);
  const fs::path dir(out_dir);
  WriteFileAtomic((dir / "report.css").string(), HtmlReporter::Stylesheet());
  WriteFileAtomic((dir / "bisect.json").string(),
                  BisectJson(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  WriteFileAtomic((dir / "bisect.md").string(), BisectMarkdown(r));
  WriteFileAtomic((dir / "bisect.html").string(), BisectHtml(r));
}

}  // namespace perfgate
