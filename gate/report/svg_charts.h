// Inline SVG charts for the HTML report. Styling is by presentation
// attributes only (fill=, stroke=, ...): no style attributes, no <style>, no
// script, so the charts render under a CSP of style-src 'self' and in an
// XML parser. Text inside is escaped; tooltips are <title> elements.
#pragma once

#include <string>

#include "metrics/log_linear_histogram.h"
#include "metrics/results.h"
#include "report/outcome.h"

namespace perfgate {

// The charts' shared palette (the report and the trend dashboard).
inline constexpr const char* kInkColor = "#1f2937";
inline constexpr const char* kMutedColor = "#6b7280";
inline constexpr const char* kGridColor = "#e5e7eb";

// Fill colour of an outcome, shared with report.css so charts and pills agree.
std::string OutcomeColor(Outcome outcome);

// Per-repetition values of a check as dots on one axis, baseline row above
// candidate row, with a tick at each median. "" when there are no values.
std::string StripPlotSvg(const CheckResult& check);

// A budget check: the candidate's median as a bar, its repetitions as dots,
// and the limit(s) as a dashed line. "" when there are no values.
std::string BudgetBarSvg(const CheckResult& check);

// Cumulative distribution of the candidate's histogram on a logarithmic
// value axis, with p50, p90 and p99 marked, over the baseline's (grey,
// dashed) when `baseline` is not null. "" for an empty candidate histogram.
std::string CdfSvg(const LogLinearHistogram* baseline, const LogLinearHistogram& candidate, const std::string& unit,
                   const std::string& label);

// Both sides' histograms as shares of their samples in bins of equal width on
// a logarithmic value axis: the baseline as a grey area, the candidate as a
// line over it. "" for an empty candidate histogram.
std::string HistogramOverlaySvg(const LogLinearHistogram* baseline, const LogLinearHistogram& candidate,
                                const std::string& unit, const std::string& label);

// A signed change as a small horizontal bar around a centre line; `scale_pct`
// is the |change| that fills half the width.
std::string ChangeBarSvg(double change_pct, double scale_pct, Outcome outcome);

}  // namespace perfgate
