#include "report/html_reporter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/escape.h"
#include "report/flamegraph.h"
#include "report/format.h"
#include "report/html_cells.h"
#include "report/html_evidence.h"
#include "report/outcome.h"
#include "report/svg_charts.h"
#include "report/why_text.h"

namespace perfgate {
namespace {

using html::Esc;
using html::kMaxMessageBytes;
using html::Td;
using html::Th;

std::string ScenarioId(size_t index) { return "scenario-" + std::to_string(index); }

std::string Pill(Outcome outcome) {
  return "<span class=\"pill " + Slug(outcome) + "\">" + ToString(outcome) + "</span>";
}

// The p the verdict used (adjusted for the family of checks), raw p in the tooltip.
std::string PValueCell(const CheckResult& check) {
  const std::string shown = Esc(FormatPValue(check.p_adjusted ? check.p_adjusted : check.p_value));
  if (!check.p_value || !check.p_adjusted) return Td(shown, "num");
  return "<td class=\"num\" title=\"raw p " + Esc(FormatPValue(check.p_value)) + "\">" + shown + "</td>";
}

std::string ChangeCell(const CheckResult& check) {
  if (!HasBaseline(check) || check.candidate_values.empty()) return Td("", "num");
  std::string html = Esc(FormatPercent(check.change_pct));
  std::string interval = FormatInterval(check.change_ci_low_pct, check.change_ci_high_pct);
  if (!interval.empty()) html += "<span class=\"sub\">" + Esc(interval) + "</span>";
  return Td(html, "num");
}

std::string CheckChart(const CheckResult& check) {
  return check.spec.type == CheckSpec::Type::kBudget ? BudgetBarSvg(check) : StripPlotSvg(check);
}

std::string CheckNameCell(const CheckResult& check) {
  std::string sub = check.spec.metric + " \u00b7 " + check.statistic;
  if (!check.unit.empty()) sub += " \u00b7 " + check.unit;
  sub += " \u00b7 " + ToString(check.better) + " is better";
  return Td(Esc(CheckName(check)) + "<span class=\"sub\">" + Esc(sub) + "</span>", "name");
}

std::string MessageRow(const std::string& message, int columns) {
  return "<tr class=\"message\"><td colspan=\"" + std::to_string(columns) + "\">" +
         Esc(Abbreviate(message, kMaxMessageBytes)) + "</td></tr>\n";
}

// ---- top of the page ----

// Banner colour: green only for PASS, red for FAIL and ERROR, amber otherwise.
std::string StatusClass(const std::string& status) {
  if (status == "PASS") return "status-pass";
  if (status == "FAIL") return "status-fail";
  if (status == "ERROR") return "status-error";
  return "status-warn";
}

std::string Banner(const RunResults& results) {
  OutcomeCounts counts = CountOutcomes(results);
  std::string status = StatusWord(results);
  std::string html = "<header class=\"banner " + StatusClass(status) + "\">\n";
  html += "<p class=\"status\">perfgate: " + Esc(status) + "</p>\n";
  html += "<h1>" + Esc(results.suite.empty() ? "suite" : results.suite) + "</h1>\n";
  html += "<p class=\"summary\">" + Esc(DescribeCounts(counts)) + "</p>\n";

  std::vector<std::string> meta = {Plural(results.scenarios.size(), "scenario", "scenarios"),
                                   Plural(counts.total(), "check", "checks")};
  if (!results.environment.git_commit.empty()) meta.push_back("commit " + results.environment.git_commit);
  if (!results.environment.timestamp.empty()) meta.push_back(results.environment.timestamp);
  std::string joined;
  for (const std::string& m : meta) joined += (joined.empty() ? "" : " \u00b7 ") + m;
  html += "<p class=\"meta baseline-source\">Compared against: " +
          Esc(results.baseline_source.empty() ? "no baseline (budgets only)" : results.baseline_source) + "</p>\n";
  html += "<p class=\"meta\">" + Esc(joined) + "</p>\n";
  if (results.partial) html += "<p class=\"partial\">The run was interrupted: these results are partial.</p>\n";
  for (const ScenarioResult& s : results.scenarios) {
    const std::string load = FormatHostLoad(s), held = FormatCpuHolders(s);
    if (!load.empty() || !held.empty()) {
      html += "<p class=\"meta host-load\">Host load in " + Esc(s.name) + ": " +
              Esc(load + (load.empty() || held.empty() ? "" : "; ") + held) + "</p>\n";
    }
  }

  html += "<ul class=\"counts\">";
  const std::pair<Outcome, int> tally[] = {
      {Outcome::kRegressed, counts.regressed}, {Outcome::kOverBudget, counts.over_budget},
      {Outcome::kError, counts.errors},        {Outcome::kInconclusive, counts.inconclusive},
      {Outcome::kAccepted, counts.accepted},   {Outcome::kQuarantined, counts.quarantined},
      {Outcome::kImproved, counts.improved},   {Outcome::kPassed, counts.passed}};
  for (const auto& [outcome, n] : tally) {
    if (IsTriaged(outcome) && n == 0) continue;
    html += "<li class=\"count " + Slug(outcome) + (n == 0 ? " zero" : "") + "\"><span class=\"n\">" +
            std::to_string(n) + "</span> " + ToString(outcome) + "</li>";
  }
  return html + "</ul>\n</header>\n";
}

std::string FindingsSection(const std::vector<Finding>& findings) {
  std::string html = "<section class=\"card\" id=\"attention\">\n<h2>Needs attention</h2>\n";
  if (findings.empty()) return html + "<p class=\"all-clear\">Every check passed.</p>\n</section>\n";
  html += "<table class=\"checks\">\n<thead><tr>" + Th("Scenario") + Th("Check") + Th("Verdict") +
          Th("Baseline", "num") + Th("Candidate", "num") + Th("Change [CI]", "num") + Th("p", "num") +
          Th("Threshold", "num") + "</tr></thead>\n<tbody>\n";
  for (const Finding& f : findings) {
    std::string scenario_link = "<a href=\"#" + ScenarioId(f.scenario_index) + "\">" + Esc(f.scenario->name) + "</a>";
    if (!f.check) {
      html += "<tr class=\"row-error\">" + Td(scenario_link) + Td("run", "name") + Td(Pill(Outcome::kError)) +
              "<td colspan=\"5\"></td></tr>\n" + MessageRow("failed to run: " + f.scenario->error, 8);
      continue;
    }
    const CheckResult& c = *f.check;
    html += "<tr class=\"row-" + Slug(f.outcome) + "\">" + Td(scenario_link) + CheckNameCell(c) + Td(Pill(f.outcome)) +
            Td(Esc(FormatBaseline(c)), "num") + Td(Esc(FormatCandidate(c)), "num") + ChangeCell(c) + PValueCell(c) +
            Td(Esc(FormatThreshold(c)), "num") + "</tr>\n";
    if (c.triage) html += MessageRow(c.triage->note, 8);
    if (!c.message.empty()) html += MessageRow(c.message, 8);
  }
  return html + "</tbody>\n</table>\n</section>\n";
}

// Checks a person accepted or quarantined (and acceptances exceeded,
// quarantines expired): who, why, until when, and what was measured.
std::string TriageSection(const RunResults& results) {
  const std::vector<Finding> triaged = TriagedOf(results);
  if (triaged.empty()) return "";
  std::string html =
      "<section class=\"card\" id=\"triage\">\n<h2>Accepted and quarantined</h2>\n<ul class=\"triage\">\n";
  for (const Finding& f : triaged) {
    html += "<li>" + Pill(f.outcome) + " <a href=\"#" + ScenarioId(f.scenario_index) + "\">" + Esc(f.scenario->name) +
            "</a> / " + Esc(CheckName(*f.check)) + ": " + Esc(Abbreviate(f.check->triage->note, kMaxMessageBytes)) +
            "</li>\n";
  }
  return html + "</ul>\n</section>\n";
}

std::string ShiftRow(const KernelShift& shift, double scale) {
  std::string name = Esc(shift.metric + "." + shift.statistic);
  if (!shift.excluding.empty()) {
    std::string excluding;
    for (const std::string& m : shift.excluding) excluding += (excluding.empty() ? "" : ", ") + m;
    name += "<br/><span class=\"muted\">beyond " + Esc(excluding) + "</span>";
  }
  const bool priced = shift.pricing != Pricing::kUnpriced;
  std::string accounted = priced ? Esc(FormatAccounted(shift.accounted_low_s, shift.per_op)) : "not priced";
  if (priced && shift.pricing == Pricing::kEvents && shift.event_cost_s > 0) {
    accounted += "<br/><span class=\"muted\">at " + Esc(FormatQuantity(shift.event_cost_s, "s")) + " each</span>";
  }
  std::string share = priced && shift.share ? Esc(FormatNumber(100 * *shift.share) + " %") : "";
  std::string bar = priced ? ChangeBarSvg(100 * shift.accounted_low_s, scale, Outcome::kRegressed) : "";
  return "<tr>" + Td(name, "name") + Td(Esc(FormatShiftValue(shift.baseline_median, shift.unit)), "num") +
         Td(Esc(FormatShiftValue(shift.candidate_median, shift.unit)), "num") +
         Td(Esc(FormatPercent(shift.change_pct)), "num") + Td(accounted, "num") + Td(share, "num") + Td(bar, "bar") +
         "</tr>\n";
}

// For each scenario whose user-visible outcome regressed, the kernel-side
// metrics that grew, ranked by the time they account for: the likely
// mechanism leads. The host's load gets a line of its own.
std::string KernelDifferencesSection(const RunResults& results) {
  std::string body;
  for (size_t i = 0; i < results.scenarios.size(); ++i) {
    const ScenarioResult& s = results.scenarios[i];
    if (s.kernel_differences.empty()) continue;
    body += "<div class=\"why\">\n<h3><a href=\"#" + ScenarioId(i) + "\">" + Esc(s.name) + "</a></h3>\n";
    body += "<table class=\"related\">\n<thead><tr>" + Th("Kernel metric") + Th("Baseline", "num") +
            Th("Candidate", "num") + Th("Change", "num") + "</tr></thead>\n<tbody>\n";
    for (const KernelShift& d : s.kernel_differences) {
      body += "<tr>" + Td(Esc(d.metric + "." + d.statistic), "name") +
              Td(Esc(FormatShiftValue(d.baseline_median, d.unit)), "num") +
              Td(Esc(FormatShiftValue(d.candidate_median, d.unit)), "num") +
              Td(Esc(FormatPercent(d.change_pct)), "num") + "</tr>\n";
    }
    body += "</tbody>\n</table>\n</div>\n";
  }
  if (body.empty()) return "";
  const std::string kernels = results.baseline_environment
                                  ? results.baseline_environment->kernel + " \u2192 " + results.environment.kernel
                                  : "";
  return "<section class=\"card\" id=\"kernel-differences\">\n<h2>What differs between the kernels</h2>\n"
         "<p class=\"muted\">" +
         Esc(kernels) + ": the kernel-side metrics of each scenario that moved by " +
         std::to_string(static_cast<int>(kKernelDifferencePct)) +
         " % or more, either way, with a 90 % interval of the shift that excludes no change; whether or not a "
         "check failed.</p>\n" +
         body + "</section>\n";
}

std::string WhySection(const std::vector<Finding>& findings) {
  const std::vector<Finding> explained = ExplainedScenarios(findings);
  if (explained.empty()) return "";
  std::string body;
  for (const Finding& f : explained) {
    const Explanation& e = *f.scenario->explanation;
    std::string failing;
    for (const std::string& name : e.failing) {
      failing += (failing.empty() ? "" : ", ") + Esc(name);
      const CheckResult* check = FindCheck(*f.scenario, name);
      if (check && HasBaseline(*check))
        failing += " <span class=\"change\">" + Esc(FormatPercent(check->change_pct)) + "</span>";
    }
    body += "<div class=\"why\">\n<h3><a href=\"#" + ScenarioId(f.scenario_index) + "\">" + Esc(f.scenario->name) +
            "</a> \u00b7 " + failing + "</h3>\n";
    if (e.wall_change_s) {
      body += "<p class=\"muted\">workload.wall_time changed " + Esc(FormatAccounted(*e.wall_change_s, e.per_op)) +
              ".</p>\n";
    }
    if (std::string host = DescribeHost(e); !host.empty())
      body += "<p class=\"host-noise muted\">" + Esc(host) + "</p>\n";
    std::string user_code;
    if (e.user_code) {
      std::string sentence = DescribeUserCode(*e.user_code);
      sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
      user_code = "<p class=\"user-code\">" + Esc(sentence) + ".</p>\n";
    }
    if (e.causes.empty()) {
      body += "<p class=\"muted\">No kernel-side metric of this scenario clearly grew against the baseline.</p>\n";
      body += user_code + "</div>\n";
      continue;
    }
    body += user_code;
    double scale = 1e-12;
    for (const KernelShift& shift : e.causes) scale = std::max(scale, 100 * shift.accounted_low_s);
    body += "<table class=\"related\">\n<thead><tr>" + Th("Kernel metric") + Th("Baseline", "num") +
            Th("Candidate", "num") + Th("Change", "num") + Th("Accounts for, at least", "num") +
            Th("Of the wall-time change", "num") + Th("") + "</tr></thead>\n<tbody>\n";
    for (const KernelShift& shift : e.causes) body += ShiftRow(shift, scale);
    body += "</tbody>\n</table>\n</div>\n";
  }
  return "<section class=\"card\" id=\"why\">\n<h2>Why it regressed</h2>\n"
         "<p class=\"muted\">Kernel-side metrics that grew in each scenario that regressed, ranked by the time their "
         "growth accounts for per operation of the workload (per repetition when it counts none): events times an "
         "estimated cost per event, wait and latency time as measured; the low end of a 90 % interval. Waits that "
         "only stretch with the run are not causes; nor are metrics that improved. The host's load, and waits for "
         "a CPU while it was busy, are noise, on a line of their own.</p>\n" +
         body + "</section>\n";
}

// ---- one scenario ----

std::string ScenarioMeta(const ScenarioResult& scenario) {
  size_t failed = std::count_if(scenario.repetitions.begin(), scenario.repetitions.end(),
                                [](const Repetition& r) { return !r.failure.empty(); });
  size_t reps = scenario.repetitions.size();
  std::string meta = "workload " + scenario.workload_kind + " \u00b7 " + std::to_string(reps) +
                     (reps == 1 ? " repetition" : " repetitions");
  if (failed > 0) meta += " (" + std::to_string(failed) + " failed)";
  if (scenario.duration_s > 0) meta += " \u00b7 " + FormatQuantity(scenario.duration_s, "s");
  if (!scenario.timestamp.empty()) meta += " \u00b7 " + scenario.timestamp;
  return "<p class=\"meta\">" + Esc(meta) + "</p>\n";
}

std::string FailedRepetitions(const ScenarioResult& scenario) {
  std::string items;
  for (const Repetition& rep : scenario.repetitions) {
    if (rep.failure.empty()) continue;
    items += "<li>repetition " + std::to_string(rep.index) + ", exit status " + std::to_string(rep.exit_status) + ": " +
             Esc(Abbreviate(rep.failure, kMaxMessageBytes)) + "</li>\n";
  }
  return items.empty() ? "" : "<ul class=\"failures\">\n" + items + "</ul>\n";
}

// What the adapter could not use in the workload's output, each said once.
std::string Warnings(const ScenarioResult& scenario) {
  std::set<std::string> seen;
  std::string items;
  for (const Repetition& rep : scenario.repetitions) {
    for (const auto& warning : rep.warnings) {
      if (seen.insert(warning).second) items += "<li>" + Esc(Abbreviate(warning, kMaxMessageBytes)) + "</li>\n";
    }
  }
  return items.empty() ? "" : "<ul class=\"warnings\">\n" + items + "</ul>\n";
}

std::string ChecksTable(const ScenarioResult& scenario) {
  if (scenario.checks.empty()) return "<p class=\"muted\">No checks.</p>\n";
  std::string html = "<table class=\"checks\">\n<thead><tr>" + Th("Check") + Th("Verdict") + Th("Baseline", "num") +
                     Th("Candidate", "num") + Th("Change [CI]", "num") + Th("p", "num") + Th("Threshold", "num") +
                     Th("Repetitions") + "</tr></thead>\n<tbody>\n";
  for (const CheckResult& c : scenario.checks) {
    Outcome outcome = OutcomeOf(c);
    html += "<tr class=\"row-" + Slug(outcome) + "\">" + CheckNameCell(c) + Td(Pill(outcome)) +
            Td(Esc(FormatBaseline(c)), "num") + Td(Esc(FormatCandidate(c)), "num") + ChangeCell(c) + PValueCell(c) +
            Td(Esc(FormatThreshold(c)), "num") + Td(CheckChart(c), "chart") + "</tr>\n";
    if (c.triage) html += MessageRow(c.triage->note, 8);
    if (NeedsAttention(outcome) && !c.message.empty()) html += MessageRow(c.message, 8);
  }
  return html + "</tbody>\n</table>\n";
}

struct MergedHistogram {
  LogLinearHistogram histogram;
  std::string unit;
  int repetitions = 0;
};

// Each histogram metric merged over the successful repetitions: the shape of
// the distribution, where the checks compare per-repetition statistics.
std::map<std::string, MergedHistogram> MergedHistograms(const std::vector<Repetition>& repetitions) {
  std::map<std::string, MergedHistogram> merged;
  for (const Repetition& rep : repetitions) {
    if (!rep.measured()) continue;
    for (const auto& [name, metric] : rep.metrics) {
      if (metric.kind != MetricKind::kHistogram || metric.hist.empty()) continue;
      MergedHistogram& m = merged[name];
      m.histogram.Merge(metric.hist);
      m.unit = metric.unit;
      ++m.repetitions;
    }
  }
  return merged;
}

std::string QuantileLine(const char* side, const MergedHistogram& m) {
  return std::string(side) + ": p50 " + FormatQuantity(m.histogram.Quantile(0.5), m.unit) + " \u00b7 p90 " +
         FormatQuantity(m.histogram.Quantile(0.9), m.unit) + " \u00b7 p99 " +
         FormatQuantity(m.histogram.Quantile(0.99), m.unit) + " \u00b7 max " +
         FormatQuantity(m.histogram.Max(), m.unit) + " (" + Plural(m.repetitions, "repetition", "repetitions") +
         " merged)";
}

// Per latency metric, baseline against candidate: histogram overlay and CDF.
std::string Distributions(const ScenarioResult& scenario) {
  std::map<std::string, MergedHistogram> baseline = MergedHistograms(scenario.baseline_repetitions);
  std::string figures;
  for (const auto& [name, m] : MergedHistograms(scenario.repetitions)) {
    auto b = baseline.find(name);
    const MergedHistogram* base = b == baseline.end() ? nullptr : &b->second;
    const LogLinearHistogram* base_hist = base ? &base->histogram : nullptr;
    std::string stats = "<p class=\"sub\">" + Esc(QuantileLine("candidate", m)) + "</p>\n";
    if (base) stats += "<p class=\"sub\">" + Esc(QuantileLine("baseline", *base)) + "</p>\n";
    figures += "<figure>\n<figcaption>" + Esc(name + (base ? ": baseline vs candidate" : ": candidate")) +
               "</figcaption>\n<div class=\"pair\">" +
               HistogramOverlaySvg(base_hist, m.histogram, m.unit, "distribution of " + name) +
               CdfSvg(base_hist, m.histogram, m.unit, "cumulative distribution of " + name) + "</div>\n" + stats +
               "</figure>\n";
  }
  if (figures.empty()) return "";
  return "<h3>Distributions</h3>\n<div class=\"figures\">\n" + figures + "</div>\n";
}

std::string HooksCell(const ProbeReport& probe) {
  std::string html;
  if (!probe.not_attached.empty())
    html += "<div class=\"warnings\">not attached: " + Esc(probe.not_attached) + "</div>";
  for (const UnavailableMetrics& u : probe.unavailable) {
    std::string metrics;
    for (const std::string& m : u.metrics) metrics += (metrics.empty() ? "" : ", ") + m;
    html += "<div class=\"sub\">not measured here: " + Esc(metrics) + ": " + Esc(u.reason) +
            (u.instead.empty() ? "" : "; " + Esc(u.instead)) + "</div>";
  }
  for (const HookChoice& hook : probe.hooks) {
    html += "<div>" + Esc(hook.hook) + " <span class=\"attach\">" + Esc(hook.attach_type) + "</span>";
    if (!hook.target.empty()) html += " <span class=\"sub-inline\">" + Esc(hook.target) + "</span>";
    for (const std::string& rejected : hook.rejected) html += "<span class=\"sub\">not " + Esc(rejected) + "</span>";
    html += "</div>";
  }
  return Td(html);
}

// The probe's BPF run time as a share of the workload's CPU time.
std::string CpuShareText(const ProbeReport& probe) {
  std::optional<double> share = probe.CpuShare();
  return share ? FormatNumber(100 * *share) + " %" : "";
}

std::string ProbesTable(const ScenarioResult& scenario) {
  if (scenario.probes.empty()) return "";
  std::string html = "<h3>Probes</h3>\n<table class=\"probes\">\n<thead><tr>" + Th("Probe") + Th("Scope") +
                     Th("Hooks (attach type)") + Th("Events", "num") + Th("ns/event", "num") + Th("CPU share", "num") +
                     Th("Drops", "num") + "</tr></thead>\n<tbody>\n";
  for (const ProbeReport& p : scenario.probes) {
    std::string per_event =
        p.run_count > 0 ? FormatNumber(static_cast<double>(p.run_time_ns) / static_cast<double>(p.run_count)) : "";
    html += "<tr>" + Td(Esc(p.name), "name") + Td(Esc(p.scope)) + HooksCell(p) +
            Td(std::to_string(p.run_count), "num") + Td(per_event, "num") + Td(CpuShareText(p), "num") +
            Td(std::to_string(p.drops), p.drops > 0 ? "num warn" : "num") + "</tr>\n";
  }
  return html + "</tbody>\n</table>\n";
}

std::string ScenarioSection(const ScenarioResult& scenario, size_t index) {
  Outcome worst = Outcome::kPassed;
  if (!scenario.error.empty()) worst = Outcome::kError;
  for (const CheckResult& c : scenario.checks) worst = std::min(worst, OutcomeOf(c));

  std::string html = "<section class=\"card scenario\" id=\"" + ScenarioId(index) + "\">\n<h2>" + Esc(scenario.name) +
                     " " + Pill(worst) + "</h2>\n" + ScenarioMeta(scenario);
  if (!scenario.error.empty()) {
    html += "<div class=\"error-box\"><strong>Failed to run:</strong> " +
            Esc(Abbreviate(scenario.error, kMaxMessageBytes)) + "</div>\n";
  }
  if (scenario.trace) html += "<p class=\"meta\">Perfetto trace: " + Esc(FormatTrace(*scenario.trace)) + "</p>\n";
  html += FailedRepetitions(scenario) + Warnings(scenario) + ChecksTable(scenario) + EvidenceSection(scenario) +
          Distributions(scenario) + ProbesTable(scenario);
  return html + "</section>\n";
}

// ---- bottom ----

std::string EnvironmentSection(const RunResults& results) {
  const Environment& env = results.environment;
  const Environment* base = results.baseline_environment ? &*results.baseline_environment : nullptr;
  auto row = [&](const char* label, const std::string& candidate, const std::string& baseline) {
    bool differs = base && candidate != baseline;
    std::string html =
        std::string("<tr") + (differs ? " class=\"differs\"" : "") + ">" + Th(label) + Td(Esc(candidate));
    if (base) html += Td(Esc(baseline));
    return html + "</tr>\n";
  };
  std::string html = "<section class=\"card\" id=\"environment\">\n<h2>Environment</h2>\n";
  if (base) {
    for (const std::string& m : EnvironmentMismatches(*base, env)) {
      html += "<div class=\"error-box\"><strong>Baseline from a different machine:</strong> " + Esc(m) + "</div>\n";
    }
  }
  html += "<table class=\"env\">\n";
  if (base) html += "<thead><tr><td></td>" + Th("Candidate") + Th("Baseline") + "</tr></thead>\n";
  html += "<tbody>\n";
  const std::pair<const char*, std::string Environment::*> fields[] = {
      {"Kernel", &Environment::kernel},     {"CPU", &Environment::cpu_model},
      {"Host", &Environment::hostname},     {"perfgate", &Environment::perfgate_version},
      {"Commit", &Environment::git_commit}, {"Time", &Environment::timestamp}};
  for (const auto& [label, member] : fields) {
    std::string candidate = env.*member;
    // Shards of one gate that each ran on a host of their own name them all.
    if (member == &Environment::hostname && !results.shard_hosts.empty()) {
      candidate.clear();
      for (const auto& [shard, host] : results.shard_hosts)
        candidate += (candidate.empty() ? "" : ", ") + host + " (shard " + shard + ")";
    }
    html += row(label, candidate, base ? base->*member : "");
  }
  html += row("CPUs", std::to_string(env.cpu_count), base ? std::to_string(base->cpu_count) : "");
  html += row("Suite file", results.suite_file, results.suite_file);
  return html + "</tbody>\n</table>\n</section>\n";
}

}  // namespace

std::string HtmlReporter::Render(const RunResults& results) const {
  std::vector<Finding> findings = FindingsOf(results);
  std::string html =
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
      "<meta charset=\"utf-8\"/>\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
      "<title>" +
      Esc("perfgate: " + StatusWord(results) + " \u2014 " + results.suite) +
      "</title>\n"
      "<link rel=\"stylesheet\" href=\"report.css\"/>\n</head>\n<body>\n";
  html += Banner(results) + "<main>\n" + FindingsSection(findings) + TriageSection(results) + WhySection(findings) +
          KernelDifferencesSection(results);
  for (size_t i = 0; i < results.scenarios.size(); ++i) html += ScenarioSection(results.scenarios[i], i);
  html += EnvironmentSection(results) + "</main>\n";
  html += "<footer>Generated by perfgate " + Esc(results.environment.perfgate_version) +
          ". The numbers behind this page are in results.json.</footer>\n";
  return html + "</body>\n</html>\n";
}

}  // namespace perfgate
