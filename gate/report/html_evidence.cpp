#include "report/html_evidence.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "report/flamegraph.h"
#include "report/format.h"
#include "report/html_cells.h"
#include "report/why_text.h"

namespace perfgate {
namespace {

using html::Esc;
using html::kMaxMessageBytes;
using html::Td;
using html::Th;

constexpr double kFlameWidth = 1140;

std::string SharePct(double share) { return FormatNumber(100 * share) + " %"; }

std::string DeltaCell(double pp) {
  if (std::abs(pp) < 1e-9) pp = 0;  // shares are sums of doubles: below this is rounding
  std::string text = (pp > 0 ? "+" : "") + FormatNumber(pp) + " pp";
  const char* cls = pp >= 0.05 ? "num grew" : pp <= -0.05 ? "num shrank" : "num";
  return Td(Esc(text), cls);
}

// A change with its interval ("+6.4 ± 1.1 pp"): marked grown only beyond
// sampling noise; without an interval (blocked time), as DeltaCell.
std::string GrowthCell(double pp, double margin_pp, bool grew, bool has_interval) {
  if (!has_interval) return DeltaCell(pp);
  if (std::abs(pp) < 1e-9) pp = 0;  // shares are sums of doubles: below this is rounding
  const std::string text = (pp > 0 ? "+" : "") + FormatNumber(pp) + " \u00b1 " + FormatNumber(margin_pp) + " pp";
  const bool shrank = -pp > margin_pp;
  return Td(Esc(text), grew ? "num grew" : shrank ? "num shrank" : "num");
}

// The source line a frame's weight fell on most, "parse.cpp:42" (the whole
// path in the tooltip); empty without line info.
std::string SourceNote(const FoldedProfile& profile, const std::string& frame) {
  auto it = profile.sources.find(frame);
  if (it == profile.sources.end()) return "";
  const std::string path = Abbreviate(SanitizeText(it->second), 1000);
  return " <span class=\"sub-inline\" title=\"" + XmlAttributeEscape(path) + "\">" + Esc(ShortSource(path)) + "</span>";
}

std::string FunctionCell(const FrameGrowth& row, const FoldedProfile& profile) {
  std::string name = Abbreviate(SanitizeText(FrameLabel(row.frame)), 300);
  std::string html = "<code>" + Esc(name) + "</code>" + SourceNote(profile, row.frame);
  if (row.kind != FrameKind::kUser) html += " <span class=\"sub-inline\">" + Esc(ToString(row.kind)) + "</span>";
  return Td(html, "frame");
}

// Per function, self and inclusive shares on both sides, most grown first
// (explain/frame_growth.h says why self growth leads).
std::string GrowthTable(const ProfileGrowth& growth, const FoldedProfile& candidate) {
  if (!growth.against_baseline) {
    std::string html = "<table class=\"growth\">\n<thead><tr>" + Th("Function (top by self share)") +
                       Th("Self", "num") + Th("Inclusive", "num") + "</tr></thead>\n<tbody>\n";
    for (const FrameGrowth& row : growth.frames) {
      html += "<tr>" + FunctionCell(row, candidate) + Td(SharePct(row.candidate_self), "num") +
              Td(SharePct(row.candidate_inclusive), "num") + "</tr>\n";
    }
    return html + "</tbody>\n</table>\n";
  }
  // Above the table, what grew beyond sampling noise, or that nothing did.
  std::string html;
  const std::vector<FrameGrowth>& rows = growth.frames;
  const std::string user = growth.user_code ? DescribeUserCode(*growth.user_code) : "";
  if (!rows.empty() && growth.kind == "counted") {
    html += "<p class=\"sub\">" +
            (user.empty() ? std::string("No function's share of the instructions grew (counted, exact).")
                          : Esc(Abbreviate(SanitizeText(user), 600))) +
            "</p>\n";
  } else if (!rows.empty() && rows.front().HasInterval()) {
    if (!user.empty()) {
      html += "<p class=\"sub\">" + Esc(Abbreviate(SanitizeText(user), 600)) + "</p>\n";
    } else if (growth.grown.empty()) {
      html += "<p class=\"sub\">No function's share grew beyond sampling noise (" +
              FormatCount(rows.front().candidate_samples) + " candidate samples, " +
              FormatCount(rows.front().baseline_samples) + " baseline).</p>\n";
    }
  }
  html += "<table class=\"growth\">\n<thead><tr>" + Th("Function (top by growth)") + Th("Self, baseline", "num") +
          Th("Self, candidate", "num") + Th("\u0394 self", "num") + Th("Inclusive, baseline", "num") +
          Th("Inclusive, candidate", "num") + Th("\u0394 inclusive", "num") + "</tr></thead>\n<tbody>\n";
  for (const FrameGrowth& row : rows) {
    html += "<tr>" + FunctionCell(row, candidate) + Td(SharePct(row.baseline_self), "num") +
            Td(SharePct(row.candidate_self), "num") +
            GrowthCell(row.SelfDeltaPp(), row.self_margin_pp, row.self_grew, row.HasInterval()) +
            Td(SharePct(row.baseline_inclusive), "num") + Td(SharePct(row.candidate_inclusive), "num") +
            GrowthCell(row.InclusiveDeltaPp(), row.inclusive_margin_pp, row.inclusive_grew, row.HasInterval()) +
            "</tr>\n";
  }
  return html + "</tbody>\n</table>\n";
}

// A user stack of a blocked-time profile: its innermost frames, where the
// code waited, last; the whole stack in the tooltip.
std::string StackCell(const StackGrowth& row, const FoldedProfile& profile) {
  if (row.frames.empty()) return Td("<span class=\"muted\">no user stack (kernel thread)</span>", "frame");
  constexpr size_t kShownFrames = 6;
  const size_t first = row.frames.size() > kShownFrames ? row.frames.size() - kShownFrames : 0;
  std::string whole, shown = first > 0 ? "\u2026 \u2192 " : "";
  for (size_t i = 0; i < row.frames.size(); ++i) {
    const std::string name = Abbreviate(SanitizeText(FrameLabel(row.frames[i])), 300);
    whole += (i > 0 ? " \u2192 " : "") + name;
    auto source = profile.sources.find(row.frames[i]);
    if (source != profile.sources.end()) whole += " (" + Abbreviate(SanitizeText(source->second), 1000) + ")";
    if (i >= first) shown += (i > first ? " \u2192 " : "") + ("<code>" + Esc(name) + "</code>");
  }
  return "<td class=\"frame\" title=\"" + XmlAttributeEscape(Abbreviate(whole, 2000)) + "\">" + shown + "</td>";
}

// Blocked time by the user stack that waited, most grown first
// (explain/frame_growth.h says why stacks rather than functions).
std::string StackTable(const ProfileGrowth& growth, const FoldedProfile& candidate) {
  const std::vector<StackGrowth>& rows = growth.stacks;
  if (!growth.against_baseline) {
    std::string html = "<table class=\"growth\">\n<thead><tr>" +
                       Th("Blocking stack (user frames, innermost last; top by share)") + Th("Share", "num") +
                       "</tr></thead>\n<tbody>\n";
    for (const StackGrowth& row : rows)
      html += "<tr>" + StackCell(row, candidate) + Td(SharePct(row.candidate_share), "num") + "</tr>\n";
    return html + "</tbody>\n</table>\n";
  }
  std::string html = "<table class=\"growth\">\n<thead><tr>" +
                     Th("Blocking stack (user frames, innermost last; top by growth)") + Th("Share, baseline", "num") +
                     Th("Share, candidate", "num") + Th("\u0394 share", "num") + "</tr></thead>\n<tbody>\n";
  for (const StackGrowth& row : rows) {
    html += "<tr>" + StackCell(row, candidate) + Td(SharePct(row.baseline_share), "num") +
            Td(SharePct(row.candidate_share), "num") + DeltaCell(row.DeltaPp()) + "</tr>\n";
  }
  return html + "</tbody>\n</table>\n";
}

// "candidate: 1234 samples at 99 Hz, 12 with a truncated user stack", "baseline: 395 ms blocked in 800 waits"
std::string ProfileLine(const Evidence& evidence, const FoldedProfile& profile) {
  std::string line = evidence.side + ": ";
  if (profile.unit == "ns") {
    line += FormatQuantity(static_cast<double>(profile.total), "ns") + " blocked in " +
            std::to_string(profile.samples) + " waits";
  } else {
    line += std::to_string(profile.total) + " " + (profile.unit.empty() ? "samples" : profile.unit);
    if (profile.kind == "on-cpu" && evidence.frequency_hz > 0)
      line += " at " + std::to_string(evidence.frequency_hz) + " Hz";
  }
  if (profile.truncated_user_stacks > 0)
    line += ", " + std::to_string(profile.truncated_user_stacks) + " with a truncated user stack";
  return line;
}

std::string FoldedLink(const FoldedProfile& profile) {
  if (profile.file.empty()) return "";
  // The file is relative to the out dir; the page is in report/.
  return "<a href=\"../" + XmlAttributeEscape(profile.file) + "\">" + Esc(profile.file) + "</a>";
}

std::string SideLine(const Evidence& evidence) {
  std::string line = evidence.side + " evidence repetition";
  if (!evidence.reason.empty()) line += " (" + Abbreviate(evidence.reason, 300) + ")";
  if (evidence.frequency_hz > 0) line += ", on-CPU sampling at " + std::to_string(evidence.frequency_hz) + " Hz";
  if (evidence.slowdown > 0)
    line += ", wall time " + FormatNumber(evidence.slowdown) + "\u00d7 the measured repetitions' median (" +
            FormatPercent(100 * (evidence.slowdown - 1)) + ")";
  return line;
}

std::string ProfileBlock(const ScenarioResult& scenario, const Evidence& shown, const Evidence* baseline,
                         const std::string& kind) {
  const FoldedProfile* profile = FindProfile(shown, kind);
  if (!profile) return "";
  const FoldedProfile* base = baseline ? FindProfile(*baseline, kind) : nullptr;
  if (base && base->stacks.empty()) base = nullptr;
  std::string title = kind == "on-cpu"      ? "On-CPU"
                      : kind == "off-cpu"   ? "Off-CPU (blocked time)"
                      : kind == "futex"     ? "Futex waits (user lock wait time)"
                      : kind == "preempted" ? "Preempted (runnable, waiting for a CPU)"
                      : kind == "counted"   ? "Instructions per function (counted, exact: no sampling noise)"
                                            : kind;
  std::string html = "<div class=\"evidence-profile\">\n<h4>" + Esc(title) + "</h4>\n";
  html += "<p class=\"sub\">" + Esc(ProfileLine(shown, *profile));
  if (base) html += "<br/>" + Esc(ProfileLine(*baseline, *base));
  html += "</p>\n";
  std::string links = FoldedLink(*profile);
  if (base && !base->file.empty()) links += (links.empty() ? "" : " \u00b7 ") + FoldedLink(*base);
  if (!links.empty()) html += "<p class=\"sub\">Folded stacks: " + links + "</p>\n";
  if (profile->stacks.empty()) return html + "<p class=\"muted\">No stacks were captured.</p>\n</div>\n";

  if (const ProfileGrowth* growth = FindProfileGrowth(scenario.profile_growth, kind))
    html += IsBlockedTimeProfile(*profile) ? StackTable(*growth, *profile) : GrowthTable(*growth, *profile);
  FlameGraphOptions options;
  options.width = kFlameWidth;
  if (base) {
    options.label = "differential " + kind + " flame graph of " + scenario.name + ": candidate against baseline";
    html += "<figure class=\"flame\">\n<figcaption>" + Esc(title) +
            ": candidate against baseline (red: share grew, blue: shrank)</figcaption>\n" +
            DifferentialFlameGraphSvg(*base, *profile, options) + "\n</figure>\n";
  }
  options.label = kind + " flame graph of " + scenario.name + " (" + shown.side + ")";
  html += "<figure class=\"flame\">\n<figcaption>" + Esc(title + ": " + shown.side) + "</figcaption>\n" +
          FlameGraphSvg(*profile, options) + "\n</figure>\n";
  return html + "</div>\n";
}

// The evidence's notes, each fact once: a note every side gives alike is
// one line naming the sides; one the sides give with their own figures
// (the same words, other numbers) is one line with each side's version;
// a side's repeats go. In the order they first come.
std::vector<std::string> EvidenceNotes(const std::vector<Evidence>& evidence) {
  const auto words = [](const std::string& note) {
    std::string out;
    for (size_t i = 0; i < note.size(); ++i) {
      if (std::isdigit(static_cast<unsigned char>(note[i]))) {
        while (i + 1 < note.size() &&
               (std::isdigit(static_cast<unsigned char>(note[i + 1])) || note[i + 1] == '.' || note[i + 1] == ','))
          ++i;
        out += '#';
      } else {
        out += note[i];
      }
    }
    return out;
  };
  struct Group {
    std::string words;
    std::vector<std::pair<std::string, std::string>> sides;  // side, its note
  };
  std::vector<Group> groups;
  for (const Evidence& e : evidence) {
    for (const std::string& note : e.notes) {
      const std::string w = words(note);
      auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.words == w; });
      if (g == groups.end()) g = groups.insert(groups.end(), {w, {}});
      if (std::none_of(g->sides.begin(), g->sides.end(), [&](const auto& x) { return x.first == e.side; }))
        g->sides.emplace_back(e.side, note);
    }
  }
  std::vector<std::string> out;
  for (const Group& g : groups) {
    const bool alike =
        std::all_of(g.sides.begin(), g.sides.end(), [&](const auto& x) { return x.second == g.sides.front().second; });
    std::string line;
    if (alike) {
      for (const auto& [side, note] : g.sides) line += (line.empty() ? "" : " and ") + side;
      line += ": " + g.sides.front().second;
    } else {
      for (const auto& [side, note] : g.sides) line += (line.empty() ? "" : "; ") + side + ": " + note;
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace

std::string EvidenceSection(const ScenarioResult& scenario) {
  if (scenario.evidence.empty()) return "";
  const Evidence* candidate = FindEvidence(scenario.evidence, "candidate");
  const Evidence* baseline = FindEvidence(scenario.evidence, "baseline");
  const Evidence& shown = candidate ? *candidate : scenario.evidence.front();
  if (&shown == baseline) baseline = nullptr;

  std::string html = "<div class=\"evidence\">\n<h3>Evidence: which code</h3>\n<ul class=\"evidence-meta\">\n";
  for (const Evidence& e : scenario.evidence) html += "<li>" + Esc(SideLine(e)) + "</li>\n";
  html += "</ul>\n";
  std::string notes;
  for (const std::string& note : EvidenceNotes(scenario.evidence))
    notes += "<li>" + Esc(Abbreviate(note, kMaxMessageBytes)) + "</li>\n";
  if (!notes.empty()) html += "<ul class=\"warnings\">\n" + notes + "</ul>\n";
  std::set<std::string> kinds = {"on-cpu", "off-cpu"};
  for (const FoldedProfile& p : shown.profiles) kinds.insert(p.kind);
  for (const char* kind : {"on-cpu", "off-cpu"}) {
    html += ProfileBlock(scenario, shown, baseline, kind);
    kinds.erase(kind);
  }
  for (const std::string& kind : kinds) html += ProfileBlock(scenario, shown, baseline, kind);
  return html + "</div>\n";
}

}  // namespace perfgate
