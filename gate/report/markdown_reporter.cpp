#include "report/markdown_reporter.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/escape.h"
#include "report/format.h"
#include "report/outcome.h"
#include "report/why_text.h"

namespace perfgate {
namespace {

// A message in a list item or table cell; the full text is in the other reports.
constexpr size_t kMaxCellBytes = 300;
// An error's message is all a reader has to go on, the cause and what to do
// about it (a check on instructions where the host has no PMU: its reason
// and the instrumented mode), so the list of errors gives it more room.
constexpr size_t kMaxErrorBytes = 600;
// Room kept for closing tags and the truncation note.
constexpr size_t kTailReserve = 1024;

std::string Cell(const std::string& text) { return MarkdownEscape(Abbreviate(text, kMaxCellBytes)); }

// A line of "; "-separated phrases (the host's noise) as a cell: whole
// phrases only, so that no value is cut in two; those left out are counted.
std::string PhrasesCell(const std::string& text) {
  std::vector<std::string> phrases;
  for (size_t begin = 0; begin <= text.size();) {
    const size_t end = std::min(text.find("; ", begin), text.size());
    phrases.push_back(text.substr(begin, end - begin));
    begin = end + 2;
  }
  std::string out;
  size_t kept = 0;
  for (; kept < phrases.size(); ++kept) {
    if (kept > 0 && out.size() + 2 + phrases[kept].size() > kMaxCellBytes) break;
    out += (kept ? "; " : "") + phrases[kept];
  }
  if (kept < phrases.size()) out += "; " + std::to_string(phrases.size() - kept) + " more in the HTML report";
  return MarkdownEscape(out);
}

// A Markdown document with a byte budget. Appends that would not leave room
// for the tail are refused, so a truncated summary still closes its
// <details> and says what it left out.
class BoundedDocument {
 public:
  explicit BoundedDocument(size_t max_bytes) : max_bytes_(max_bytes) {}

  bool Append(const std::string& text) {
    if (text_.size() + text.size() + kTailReserve > max_bytes_) return false;
    text_ += text;
    return true;
  }
  // For the tail only: what kTailReserve was kept for.
  void AppendTail(const std::string& text) {
    if (text_.size() + text.size() <= max_bytes_) text_ += text;
  }
  std::string Take() { return std::move(text_); }

 private:
  size_t max_bytes_;
  std::string text_;
};

const char* const kTableHeader =
    "| Scenario | Check | Verdict | Baseline | Candidate | Change | CI | p | Threshold |\n"
    "|---|---|---|--:|--:|--:|--:|--:|--:|\n";

std::string CheckRow(const ScenarioResult& scenario, const CheckResult& check) {
  auto p = check.p_adjusted ? check.p_adjusted : check.p_value;
  bool compared = HasBaseline(check) && !check.candidate_values.empty();
  std::string change = compared ? FormatPercent(check.change_pct) : "";
  std::string interval = compared ? FormatInterval(check.change_ci_low_pct, check.change_ci_high_pct) : "";
  return "| " + Cell(scenario.name) + " | " + Cell(CheckName(check)) + " | " + ToString(OutcomeOf(check)) + " | " +
         Cell(FormatBaseline(check)) + " | " + Cell(FormatCandidate(check)) + " | " + change + " | " + interval +
         " | " + FormatPValue(p) + " | " + Cell(FormatThreshold(check)) + " |\n";
}

std::string RunErrorRow(const ScenarioResult& scenario) {
  return "| " + Cell(scenario.name) + " | run | error |  |  |  |  |  |  |\n";
}

// Appends rows while they fit; returns how many did not.
size_t AppendRows(BoundedDocument& doc, const std::vector<std::string>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!doc.Append(rows[i])) return rows.size() - i;
  }
  return 0;
}

std::string OmittedNote(size_t omitted) {
  return "\n*" + std::to_string(omitted) +
         " more lines not shown (summary size limit); every check is in results.json and report/index.html.*\n";
}

std::string VerdictLine(const RunResults& results) {
  return "**perfgate: " + StatusWord(results) + "** \u2014 " + DescribeCounts(CountOutcomes(results)) + "\n\n";
}

std::string Header(const RunResults& results) {
  OutcomeCounts counts = CountOutcomes(results);
  std::string text = VerdictLine(results);
  text += "Suite " + Cell(results.suite) + ": " + Plural(results.scenarios.size(), "scenario", "scenarios") + ", " +
          Plural(counts.total(), "check", "checks");
  if (!results.environment.git_commit.empty()) text += ", commit " + Cell(results.environment.git_commit);
  if (results.baseline_environment && !results.baseline_environment->git_commit.empty() &&
      results.baseline_environment->git_commit != results.environment.git_commit) {
    text += " vs baseline " + Cell(results.baseline_environment->git_commit);
  }
  text += ".";
  if (results.partial) text += " **The run was interrupted; results are partial.**";
  text += "\n\nCompared against: " + (results.baseline_source.empty() ? std::string("no baseline (budgets only).")
                                                                      : Cell(results.baseline_source) + ".");
  if (results.baseline_environment) {
    for (const std::string& m : EnvironmentMismatches(*results.baseline_environment, results.environment)) {
      text += "\n\n> **Baseline from a different machine:** " + Cell(m);
    }
  }
  for (const ScenarioResult& s : results.scenarios) {
    if (s.trace) text += "\n\nPerfetto trace of " + Cell(s.name) + ": " + Cell(FormatTrace(*s.trace));
    // A cell per part: each has its own length limit, so no part cuts off the next.
    std::vector<std::string> parts = HostLoadParts(s);
    if (const std::string held = FormatCpuHolders(s); !held.empty()) parts.push_back(held);
    std::string cells;
    for (const std::string& part : parts) cells += (cells.empty() ? "" : "; ") + Cell(part);
    if (!cells.empty()) text += "\n\nHost load in " + Cell(s.name) + ": " + cells;
  }
  return text + "\n\n";
}

std::vector<std::string> FindingRows(const std::vector<Finding>& findings) {
  std::vector<std::string> rows;
  for (const Finding& f : findings) {
    rows.push_back(f.check ? CheckRow(*f.scenario, *f.check) : RunErrorRow(*f.scenario));
  }
  return rows;
}

std::vector<std::string> ErrorItems(const std::vector<Finding>& findings) {
  std::vector<std::string> items;
  for (const Finding& f : findings) {
    if (f.outcome != Outcome::kError) continue;
    std::string where = Cell(f.scenario->name) + (f.check ? " / " + Cell(CheckName(*f.check)) : " failed to run");
    const std::string& message = f.check ? f.check->message : f.scenario->error;
    items.push_back("- " + where + ": " + MarkdownEscape(Abbreviate(message, kMaxErrorBytes)) + "\n");
  }
  return items;
}

// "- camera / workload.wall_time: accepted (+10.0% [+8.1%, +12.0%] within the accepted <= +15%) in 1a2b3c: reason"
std::vector<std::string> TriageItems(const RunResults& results) {
  std::vector<std::string> items;
  for (const Finding& f : TriagedOf(results)) {
    items.push_back("- " + Cell(f.scenario->name) + " / " + Cell(CheckName(*f.check)) + ": " +
                    Cell(f.check->triage->note) + "\n");
  }
  return items;
}

// "- nightly-accepts.txt:2: "parse/gone <= +5%: …" names no check of suite …"
std::vector<std::string> SkippedTrailerItems(const RunResults& results) {
  std::vector<std::string> items;
  for (const std::string& skipped : results.skipped_trailers) items.push_back("- " + Cell(skipped) + "\n");
  return items;
}

// "- camera / workload.wall_time.value +30.0%: mm.reclaim_latency.sum_per_op +410.0% (1.00 us/op → 5.10 us/op),
// at least +4.00 us/op (80 % of the wall-time change); ... host noise (not a cause): host.other_cpus ..."
std::vector<std::string> WhyItems(const std::vector<Finding>& findings) {
  constexpr size_t kShownCauses = 3;
  std::vector<std::string> items;
  for (const Finding& f : ExplainedScenarios(findings)) {
    const ScenarioResult* scenario = f.scenario;
    const Explanation& e = *scenario->explanation;
    // The holders in a cell of their own, as on the host-load line.
    std::string host = DescribeHost(e, false);
    std::string held = e.cpu_holders.empty() ? "" : "CPUs held by other tasks: " + DescribeCpuHolders(e.cpu_holders);
    if (e.causes.empty() && host.empty() && held.empty() && !e.user_code) continue;
    std::string item = "- " + Cell(scenario->name) + " /";
    for (size_t i = 0; i < e.failing.size(); ++i) {
      item += (i ? ", " : " ") + Cell(e.failing[i]);
      const CheckResult* check = FindCheck(*scenario, e.failing[i]);
      if (check && HasBaseline(*check)) item += " " + FormatPercent(check->change_pct);
    }
    item += ":";
    // Counted instructions per function are exact: the answer, said first.
    const bool counted = e.user_code && e.user_code->counted;
    if (counted) item += " " + Cell(DescribeUserCode(*e.user_code)) + ";";
    if (e.causes.empty()) item += " no kernel-side metric clearly grew";
    for (size_t i = 0; i < e.causes.size() && i < kShownCauses; ++i)
      item += (i ? "; " : " ") + Cell(DescribeShift(e.causes[i]));
    if (e.user_code && !counted) item += "; " + Cell(DescribeUserCode(*e.user_code));
    if (!host.empty()) item += ". " + PhrasesCell(host);
    if (!held.empty()) item += (host.empty() ? ". host noise (not a cause): " : "; ") + PhrasesCell(held);
    items.push_back(item + "\n");
  }
  return items;
}

// Functions named in the evidence of failing scenarios; the full table is in the HTML report.
constexpr size_t kGrowthItems = 3;

// The first n of a ranked list.
template <typename T>
std::vector<T> First(const std::vector<T>& ranked, size_t n) {
  return std::vector<T>(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(std::min(n, ranked.size())));
}

std::string Pp(double pp) {
  if (std::abs(pp) < 1e-9) pp = 0;  // shares are sums of doubles: below this is rounding
  return (pp > 0 ? "+" : "") + FormatNumber(pp) + " pp";
}
std::string Pct(double share) { return FormatNumber(100 * share) + " %"; }

// "- camera / off-cpu, blocking stacks vs baseline: … → load_config → read +31.0 pp (2.0 % → 33.0 %); ..."
// The innermost frames of each stack, where the code waited. A preempted
// stack did not block: it was runnable and waited for a CPU.
std::string BlockingStacksItem(const std::string& scenario, const ProfileGrowth& growth) {
  constexpr size_t kShownFrames = 4;
  const bool base = growth.against_baseline;
  const std::string stacks = growth.kind == "preempted" ? "stacks waiting for a CPU" : "blocking stacks";
  std::string item = "- " + Cell(scenario) + " / " + Cell(growth.kind) +
                     (base ? ", " + stacks + " vs baseline:" : ", heaviest " + stacks + ":");
  std::vector<StackGrowth> rows = First(growth.stacks, kGrowthItems);
  // Against a baseline, only stacks that grew by a point or more: blocked
  // time has no sampling interval, and smaller moves are a run's jitter.
  if (base) {
    rows.erase(
        std::remove_if(rows.begin(), rows.end(), [](const StackGrowth& r) { return r.DeltaPp() < kMinGrowthPp; }),
        rows.end());
    if (rows.empty()) return item + " no stack's share grew by a point or more\n";
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const StackGrowth& r = rows[i];
    std::string stack = r.frames.empty() ? "(kernel thread)" : "";
    const size_t first = r.frames.size() > kShownFrames ? r.frames.size() - kShownFrames : 0;
    if (first > 0) stack = "\u2026";
    for (size_t f = first; f < r.frames.size(); ++f)
      stack += (stack.empty() ? "" : " \u2192 ") + FrameLabel(r.frames[f]);
    item += (i ? "; " : " ") + Cell(stack) + " ";
    item += base ? Pp(r.DeltaPp()) + " (" + Pct(r.baseline_share) + " \u2192 " + Pct(r.candidate_share) + ")"
                 : Pct(r.candidate_share);
  }
  return item + "\n";
}

// A frame as the evidence lines name it: "parse_header at parser.c:88 (kernel)".
std::string FrameText(const FoldedProfile& profile, const FrameGrowth& r) {
  auto source = profile.sources.find(r.frame);
  return Cell(FrameLabel(r.frame)) +
         (source == profile.sources.end() ? "" : " at " + Cell(ShortSource(source->second))) +
         (r.kind == FrameKind::kUser ? "" : " (" + ToString(r.kind) + ")");
}

// "- camera / on-cpu vs baseline: the extra cost is on-CPU in user code: parse_header self +12.3 pp of 2,400
// samples, ±1.1; grew beyond sampling noise: parse_header at parse.cpp:42 self +12.3 pp of 2,400 samples, ±1.1
// (4.0 % → 16.3 %), inclusive ...": only functions whose share grew beyond sampling noise, or that none did.
std::string GrownFramesItem(const std::string& scenario, const ProfileGrowth& growth, const FoldedProfile& base,
                            const FoldedProfile& profile) {
  std::string item = "- " + Cell(scenario) + " / " + Cell(profile.kind) + " vs baseline: ";
  const std::vector<FrameGrowth> rows = First(growth.grown, kGrowthItems);
  const bool counted = IsCountedProfile(base) && IsCountedProfile(profile);
  if (rows.empty() && counted) return item + "no function's share of the instructions grew (counted, exact)\n";
  if (rows.empty()) {
    return item + "no function's share grew beyond sampling noise (" + FormatCount(ProfileDenominator(profile)) +
           " candidate samples, " + FormatCount(ProfileDenominator(base)) + " baseline)\n";
  }
  if (growth.user_code) item += Cell(DescribeUserCode(*growth.user_code)) + "; ";
  item += counted ? "grew (counted, exact):" : "grew beyond sampling noise:";
  for (size_t i = 0; i < rows.size(); ++i) {
    const FrameGrowth& r = rows[i];
    item += (i ? "; " : " ") + FrameText(profile, r);
    if (r.self_grew) {
      item += " self " + FormatGrowth(r.SelfDeltaPp(), r.candidate_samples, r.self_margin_pp) + " (" +
              Pct(r.baseline_self) + " \u2192 " + Pct(r.candidate_self) + ")";
    } else {
      item += " inclusive " + FormatGrowth(r.InclusiveDeltaPp(), r.candidate_samples, r.inclusive_margin_pp) + " (" +
              Pct(r.baseline_inclusive) + " \u2192 " + Pct(r.candidate_inclusive) + ")";
    }
  }
  return item + "\n";
}

// "- camera / on-cpu, top self: parse_header self 16.3 %, inclusive 16.3 %; ..." (no baseline)
// What differs between the kernels: one item per scenario.
std::vector<std::string> KernelDifferenceItems(const RunResults& results) {
  std::vector<std::string> items;
  for (const ScenarioResult& scenario : results.scenarios) {
    if (scenario.kernel_differences.empty()) continue;
    std::string item = "- " + Cell(scenario.name) + ":";
    for (size_t i = 0; i < scenario.kernel_differences.size(); ++i) {
      const KernelShift& d = scenario.kernel_differences[i];
      item += (i ? "; " : " ") + Cell(d.metric + "." + d.statistic + " " + FormatPercent(d.change_pct) + " (" +
                                      FormatShiftValue(d.baseline_median, d.unit) + " \u2192 " +
                                      FormatShiftValue(d.candidate_median, d.unit) + ")");
    }
    items.push_back(item);
  }
  return items;
}

std::vector<std::string> EvidenceItems(const RunResults& results) {
  std::vector<std::string> items;
  for (const ScenarioResult& scenario : results.scenarios) {
    const Evidence* candidate = nullptr;
    const Evidence* baseline = nullptr;
    for (const Evidence& e : scenario.evidence) (e.side == "baseline" ? baseline : candidate) = &e;
    bool failed = std::any_of(scenario.checks.begin(), scenario.checks.end(),
                              [](const CheckResult& c) { return IsFailure(OutcomeOf(c)); });
    if (!candidate || !failed) continue;
    for (const FoldedProfile& profile : candidate->profiles) {
      if (profile.stacks.empty()) continue;
      const ProfileGrowth* growth = FindProfileGrowth(scenario.profile_growth, profile.kind);
      if (growth == nullptr) continue;
      const FoldedProfile* base = baseline ? FindProfile(*baseline, profile.kind) : nullptr;
      if (base && base->stacks.empty()) base = nullptr;
      if (IsBlockedTimeProfile(profile)) {
        items.push_back(BlockingStacksItem(scenario.name, *growth));
        continue;
      }
      if (base && !IsBlockedTimeProfile(*base)) {
        items.push_back(GrownFramesItem(scenario.name, *growth, *base, profile));
        continue;
      }
      std::string item =
          "- " + Cell(scenario.name) + " / " + Cell(profile.kind) + (base ? " vs baseline:" : ", top self:");
      std::vector<FrameGrowth> rows = First(growth->frames, kGrowthItems);
      for (size_t i = 0; i < rows.size(); ++i) {
        const FrameGrowth& r = rows[i];
        item += (i ? "; " : " ") + FrameText(profile, r);
        if (base) {
          item += " self " + Pp(r.SelfDeltaPp()) + " (" + Pct(r.baseline_self) + " \u2192 " + Pct(r.candidate_self) +
                  "), inclusive " + Pp(r.InclusiveDeltaPp());
        } else {
          item += " self " + Pct(r.candidate_self) + ", inclusive " + Pct(r.candidate_inclusive);
        }
      }
      items.push_back(item + "\n");
    }
  }
  return items;
}

void AppendSection(BoundedDocument& doc, const std::string& title, const std::vector<std::string>& items,
                   size_t& omitted) {
  if (items.empty()) return;
  if (!doc.Append(title)) {
    omitted += items.size();
    return;
  }
  omitted += AppendRows(doc, items);
  doc.Append("\n");
}

}  // namespace

std::string MarkdownReporter::Render(const RunResults& results) const {
  BoundedDocument doc(max_bytes_);
  // A tiny limit still gets the verdict.
  if (!doc.Append(Header(results))) doc.AppendTail(VerdictLine(results));
  size_t omitted = 0;

  std::vector<Finding> findings = FindingsOf(results);
  AppendSection(doc, kTableHeader, FindingRows(findings), omitted);
  AppendSection(doc, "**Errors**\n\n", ErrorItems(findings), omitted);
  AppendSection(doc, "**Accepted and quarantined** (a person's decision; these checks do not fail the run)\n\n",
                TriageItems(results), omitted);
  AppendSection(doc,
                "**Skipped accept trailers** (--skip-bad-trailers: malformed, or naming no check of this suite; "
                "they accept nothing)\n\n",
                SkippedTrailerItems(results), omitted);
  AppendSection(doc,
                "**Why it regressed**: kernel metrics that grew, ranked by the time they account for at least (events "
                "times an estimated cost, waits as measured); metrics that improved and the host's load are not "
                "causes\n\n",
                WhyItems(findings), omitted);
  AppendSection(doc,
                "**Where the time went** (evidence stacks; share of each side's total, in percentage points; "
                "flame graphs in report/index.html)\n\n",
                EvidenceItems(results), omitted);
  if (results.baseline_environment) {
    AppendSection(doc,
                  "**What differs between the kernels** (" +
                      Cell(results.baseline_environment->kernel + " \u2192 " + results.environment.kernel) +
                      ": kernel-side metrics that moved by " + std::to_string(static_cast<int>(kKernelDifferencePct)) +
                      " % or more, either way, with a 90 % interval that excludes no change)\n\n",
                  KernelDifferenceItems(results), omitted);
  }

  std::vector<std::string> all_rows;
  for (const ScenarioResult& scenario : results.scenarios) {
    if (!scenario.error.empty()) all_rows.push_back(RunErrorRow(scenario));
    for (const CheckResult& check : scenario.checks) all_rows.push_back(CheckRow(scenario, check));
  }
  if (!all_rows.empty() && doc.Append("<details><summary>All " + Plural(all_rows.size(), "check", "checks") +
                                      "</summary>\n\n" + kTableHeader)) {
    omitted += AppendRows(doc, all_rows);
    doc.AppendTail("\n</details>\n");
  } else {
    omitted += all_rows.size();
  }
  if (omitted > 0) doc.AppendTail(OmittedNote(omitted));
  return doc.Take();
}

}  // namespace perfgate
