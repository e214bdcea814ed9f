#include "report/svg_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "base/escape.h"
#include "report/format.h"

namespace perfgate {
namespace {

constexpr const char* kBaselineColor = "#8a94a6";
constexpr const char* kLimitColor = "#b91c1c";

// Coordinates with one decimal: enough on screen, small in the file.
std::string Num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

struct Range {
  double lo;
  double hi;
};

// Smallest range holding every value, widened by `pad` of its width on both
// sides; a degenerate range is widened around its only value.
Range RangeOf(const std::vector<double>& values, double pad = 0.05) {
  Range r{values.front(), values.front()};
  for (double v : values) {
    r.lo = std::min(r.lo, v);
    r.hi = std::max(r.hi, v);
  }
  double width = r.hi - r.lo;
  if (width <= 0) width = std::fabs(r.hi) > 0 ? std::fabs(r.hi) * 0.1 : 1.0;
  return {r.lo - width * pad, r.hi + width * pad};
}

// Maps a value range onto a pixel range.
class LinearScale {
 public:
  LinearScale(Range domain, double px0, double px1) : domain_(domain), px0_(px0), px1_(px1) {}
  double operator()(double v) const { return px0_ + (v - domain_.lo) / (domain_.hi - domain_.lo) * (px1_ - px0_); }

 private:
  Range domain_;
  double px0_;
  double px1_;
};

std::string SvgOpen(int width, int height, const std::string& label) {
  std::string w = std::to_string(width), h = std::to_string(height);
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h + "\" role=\"img\" aria-label=\"" + XmlEscape(label) + "\"><title>" +
         XmlEscape(label) + "</title>";
}

std::string Text(double x, double y, const std::string& anchor, const std::string& text,
                 const char* fill = kMutedColor) {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor + "\" fill=\"" + fill +
         "\" font-size=\"10\" font-family=\"sans-serif\">" + XmlEscape(text) + "</text>";
}

std::string Line(double x1, double y1, double x2, double y2, const char* stroke, double width = 1,
                 bool dashed = false) {
  std::string svg = "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" + Num(y2) +
                    "\" stroke=\"" + stroke + "\" stroke-width=\"" + Num(width) + "\"";
  if (dashed) svg += " stroke-dasharray=\"4 3\"";
  return svg + "/>";
}

std::string Dot(double x, double y, double r, const std::string& fill, const std::string& tooltip) {
  return "<circle cx=\"" + Num(x) + "\" cy=\"" + Num(y) + "\" r=\"" + Num(r) + "\" fill=\"" + fill +
         "\" fill-opacity=\"0.75\"><title>" + XmlEscape(tooltip) + "</title></circle>";
}

std::string Rect(double x, double y, double w, double h, const std::string& fill, const std::string& tooltip = "") {
  std::string svg = "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(std::max(w, 0.0)) +
                    "\" height=\"" + Num(h) + "\" rx=\"2\" fill=\"" + fill + "\"";
  if (tooltip.empty()) return svg + "/>";
  return svg + "><title>" + XmlEscape(tooltip) + "</title></rect>";
}

// Both sides' per-repetition values as dots on one row each. Dots of equal
// values are spread vertically by repetition index so none hides another.
std::string DotRow(const std::vector<double>& values, const LinearScale& x, double y, const std::string& fill,
                   const std::string& side, const std::string& unit) {
  std::string svg;
  for (size_t i = 0; i < values.size(); ++i) {
    double jitter = (static_cast<double>(i % 3) - 1.0) * 3.0;
    svg += Dot(x(values[i]), y + jitter, 3.5, fill,
               side + " repetition " + std::to_string(i + 1) + ": " + FormatQuantity(values[i], unit));
  }
  return svg;
}

// The candidate median a regression check tolerates, or nullopt when the
// check has no direction to regress in.
std::optional<double> RegressionLimit(const CheckResult& check) {
  double pct = check.spec.max_regression_pct / 100.0;
  switch (check.better) {
    case Better::kLower:
      return check.baseline_median * (1 + pct);
    case Better::kHigher:
      return check.baseline_median * (1 - pct);
    case Better::kNone:
      return std::nullopt;
  }
  return std::nullopt;
}

constexpr const char* kCandidateColor = "#2563eb";
constexpr int kChartWidth = 520, kChartHeight = 230;
constexpr double kChartLeft = 46, kChartRight = kChartWidth - 16, kChartTop = 22, kChartBottom = kChartHeight - 34;

// A logarithmic value axis over both sides' histograms: latencies span
// decades. Values below 1 share the first pixel.
class LogAxis {
 public:
  static constexpr int kBins = 60;

  LogAxis(const LogLinearHistogram* baseline, const LogLinearHistogram& candidate, double px0, double px1)
      : lo_(Lower(candidate)), hi_(Upper(candidate)), px0_(px0), px1_(px1) {
    if (baseline) {
      lo_ = std::min(lo_, Lower(*baseline));
      hi_ = std::max(hi_, Upper(*baseline));
    }
    hi_ = std::max(hi_, lo_ * 2);
  }
  double operator()(double v) const {
    double f = (std::log10(std::clamp(v, lo_, hi_)) - std::log10(lo_)) / (std::log10(hi_) - std::log10(lo_));
    return px0_ + f * (px1_ - px0_);
  }
  // Vertical grid lines and labels at the powers of ten, and the base line.
  std::string Grid(const std::string& unit) const {
    std::string svg;
    for (double decade = std::pow(10, std::ceil(std::log10(lo_))); decade <= hi_; decade *= 10) {
      svg += Line((*this)(decade), kChartTop, (*this)(decade), kChartBottom, kGridColor);
      svg += Text((*this)(decade), kChartBottom + 14, "middle", FormatQuantity(decade, unit));
    }
    return svg + Line(px0_, kChartBottom, px1_, kChartBottom, kMutedColor);
  }
  // Share of the histogram's samples in each of kBins equal bins of the axis,
  // a bucket counted in the bin of its geometric midpoint.
  std::vector<double> Shares(const LogLinearHistogram& histogram) const {
    std::vector<double> shares(kBins, 0.0);
    double total = static_cast<double>(histogram.count());
    for (const auto& [index, count] : histogram.buckets()) {
      double lower = std::max(1.0, static_cast<double>(LogLinearHistogram::BucketLower(index)));
      double upper = std::max(lower, static_cast<double>(LogLinearHistogram::BucketUpper(index)));
      double f = ((*this)(std::sqrt(lower * upper)) - px0_) / (px1_ - px0_);
      shares[std::min(kBins - 1, static_cast<int>(f * kBins))] += static_cast<double>(count) / total;
    }
    return shares;
  }
  // Points of a step line through per-bin values.
  std::string StepPoints(const std::vector<double>& values, const LinearScale& y) const {
    std::string points;
    double width = (px1_ - px0_) / kBins;
    for (int i = 0; i < kBins; ++i) {
      double x0 = px0_ + i * width;
      points += (i ? " " : "") + Num(x0) + "," + Num(y(values[i])) + " " + Num(x0 + width) + "," + Num(y(values[i]));
    }
    return points;
  }

 private:
  static double Lower(const LogLinearHistogram& h) {
    return std::max(1.0, static_cast<double>(LogLinearHistogram::BucketLower(h.buckets().front().first)));
  }
  static double Upper(const LogLinearHistogram& h) {
    return std::max(1.0, static_cast<double>(LogLinearHistogram::BucketUpper(h.buckets().back().first)));
  }
  double lo_;
  double hi_;
  double px0_;
  double px1_;
};

// A histogram's cumulative distribution, linear inside each bucket as
// LogLinearHistogram::Quantile interpolates.
std::string CdfLine(const LogLinearHistogram& histogram, const LogAxis& x, const LinearScale& y, const char* color,
                    bool dashed) {
  std::string points;
  double total = static_cast<double>(histogram.count());
  uint64_t seen = 0;
  for (const auto& [index, count] : histogram.buckets()) {
    double lower = static_cast<double>(LogLinearHistogram::BucketLower(index));
    double upper = static_cast<double>(LogLinearHistogram::BucketUpper(index));
    points += (points.empty() ? "" : " ") + Num(x(lower)) + "," + Num(y(static_cast<double>(seen) / total));
    seen += count;
    points += " " + Num(x(upper)) + "," + Num(y(static_cast<double>(seen) / total));
  }
  std::string svg = "<polyline points=\"" + points + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\"";
  if (dashed) svg += " stroke-dasharray=\"5 3\"";
  return svg + "/>";
}

// "baseline" and "candidate" swatches in the top left corner.
std::string Legend(bool with_baseline) {
  std::string svg = Rect(kChartLeft + 4, 4, 12, 8, kCandidateColor) + Text(kChartLeft + 20, 12, "start", "candidate");
  if (!with_baseline) return svg;
  return svg + Rect(kChartLeft + 84, 4, 12, 8, kBaselineColor) + Text(kChartLeft + 100, 12, "start", "baseline");
}

}  // namespace

std::string OutcomeColor(Outcome outcome) {
  // In Outcome's order: regressed and over budget red, errors grey,
  // inconclusive amber, accepted and quarantined violet, improved green,
  // passed blue.
  static constexpr const char* kColors[] = {"#d13438", "#d13438", "#6b7280", "#b7791f",
                                            "#7c3aed", "#7c3aed", "#107c41", "#2563eb"};
  static_assert(std::size(kColors) == static_cast<size_t>(Outcome::kPassed) + 1);
  return kColors[static_cast<size_t>(outcome)];
}

std::string StripPlotSvg(const CheckResult& check) {
  if (check.candidate_values.empty()) return "";
  constexpr int kWidth = 280, kHeight = 56;
  constexpr double kLeft = 34, kRight = kWidth - 6, kBaseY = 14, kCandY = 33, kAxisY = 52;

  std::vector<double> all = check.candidate_values;
  all.insert(all.end(), check.baseline_values.begin(), check.baseline_values.end());
  std::optional<double> limit = HasBaseline(check) ? RegressionLimit(check) : std::nullopt;
  if (limit) all.push_back(*limit);
  Range range = RangeOf(all);
  LinearScale x(range, kLeft, kRight);
  std::string color = OutcomeColor(OutcomeOf(check));

  std::string svg = SvgOpen(kWidth, kHeight, CheckName(check) + ": values per repetition, baseline vs candidate");
  svg += Line(kLeft, kBaseY, kRight, kBaseY, kGridColor) + Line(kLeft, kCandY, kRight, kCandY, kGridColor);
  if (limit) {
    svg += "<g>" + Line(x(*limit), 4, x(*limit), kCandY + 8, kLimitColor, 1, true) + "<title>" +
           XmlEscape("limit: " + FormatQuantity(*limit, check.unit) + " (baseline median " + FormatThreshold(check) +
                     ")") +
           "</title></g>";
  }
  if (HasBaseline(check)) {
    svg += Text(0, kBaseY + 3.5, "start", "base");
    svg += DotRow(check.baseline_values, x, kBaseY, kBaselineColor, "baseline", check.unit);
    svg += Line(x(check.baseline_median), kBaseY - 7, x(check.baseline_median), kBaseY + 7, kInkColor, 2);
  }
  svg += Text(0, kCandY + 3.5, "start", "cand");
  svg += DotRow(check.candidate_values, x, kCandY, color, "candidate", check.unit);
  svg += Line(x(check.candidate_median), kCandY - 7, x(check.candidate_median), kCandY + 7, kInkColor, 2);
  svg += Text(kLeft, kAxisY, "start", FormatQuantity(range.lo, check.unit));
  svg += Text(kRight, kAxisY, "end", FormatQuantity(range.hi, check.unit));
  return svg + "</svg>";
}

std::string BudgetBarSvg(const CheckResult& check) {
  if (check.candidate_values.empty()) return "";
  constexpr int kWidth = 280, kHeight = 56;
  constexpr double kLeft = 34, kRight = kWidth - 6, kBarTop = 16, kBarHeight = 16, kAxisY = 52;
  const CheckSpec& spec = check.spec;

  std::vector<double> all = check.candidate_values;
  all.push_back(0);  // bars start at zero
  if (spec.max) all.push_back(*spec.max);
  if (spec.min) all.push_back(*spec.min);
  Range range = RangeOf(all, 0.08);
  // Budgets are mostly on quantities that cannot go negative: start at zero.
  if (*std::min_element(all.begin(), all.end()) >= 0) range.lo = 0;
  LinearScale x(range, kLeft, kRight);
  std::string color = OutcomeColor(OutcomeOf(check));

  std::string svg = SvgOpen(kWidth, kHeight, CheckName(check) + ": candidate against its budget");
  svg += Text(0, kBarTop + 11.5, "start", "cand");
  svg += Rect(kLeft, kBarTop, kRight - kLeft, kBarHeight, "#f3f4f6");
  svg += Rect(x(0), kBarTop, x(check.candidate_median) - x(0), kBarHeight, color,
              "candidate median: " + FormatQuantity(check.candidate_median, check.unit));
  for (size_t i = 0; i < check.candidate_values.size(); ++i) {
    double v = check.candidate_values[i];
    svg += Dot(x(v), kBarTop + kBarHeight / 2, 2.5, kInkColor,
               "repetition " + std::to_string(i + 1) + ": " + FormatQuantity(v, check.unit));
  }
  for (auto [bound, name] : {std::pair{spec.max, "max"}, std::pair{spec.min, "min"}}) {
    if (!bound) continue;
    double bx = x(*bound);
    std::string label = std::string(name) + " " + FormatQuantity(*bound, check.unit);
    svg += Line(bx, kBarTop - 6, bx, kBarTop + kBarHeight + 6, kLimitColor, 1.5, true);
    svg += Text(bx, kBarTop - 7, bx > (kLeft + kRight) / 2 ? "end" : "start", label, kLimitColor);
  }
  svg += Text(kLeft, kAxisY, "start", FormatQuantity(range.lo, check.unit));
  svg += Text(kRight, kAxisY, "end", FormatQuantity(range.hi, check.unit));
  return svg + "</svg>";
}

std::string CdfSvg(const LogLinearHistogram* baseline, const LogLinearHistogram& candidate, const std::string& unit,
                   const std::string& label) {
  if (candidate.empty()) return "";
  if (baseline && baseline->empty()) baseline = nullptr;
  LogAxis axis(baseline, candidate, kChartLeft, kChartRight);
  LinearScale y({0, 1}, kChartBottom, kChartTop);

  std::string svg = SvgOpen(kChartWidth, kChartHeight, label);
  for (double q : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    svg += Line(kChartLeft, y(q), kChartRight, y(q), kGridColor);
    svg += Text(kChartLeft - 6, y(q) + 3.5, "end", std::to_string(static_cast<int>(q * 100)) + "%");
  }
  svg += axis.Grid(unit);
  if (baseline) svg += CdfLine(*baseline, axis, y, kBaselineColor, true);
  svg += CdfLine(candidate, axis, y, kCandidateColor, false);

  for (auto [q, name] : {std::pair{0.5, "p50"}, std::pair{0.9, "p90"}, std::pair{0.99, "p99"}}) {
    double v = candidate.Quantile(q);
    std::string text = std::string(name) + " " + FormatQuantity(v, unit);
    svg += Dot(axis(v), y(q), 3.5, kInkColor, text);
    // Left of the dot, unless it would run into the y axis' labels (a
    // quantile near the smallest value): then right of it. About 5.5 px a
    // character at font-size 10.
    if (axis(v) - 6 - 5.5 * static_cast<double>(text.size()) < kChartLeft)
      svg += Text(axis(v) + 6, y(q) + 3.5, "start", text, kInkColor);
    else
      svg += Text(axis(v) - 6, y(q) + 3.5, "end", text, kInkColor);
  }
  svg += Legend(baseline != nullptr);
  svg += Text(kChartRight, kChartHeight - 4, "end",
              "value (log scale), " + std::to_string(candidate.count()) + " candidate samples");
  return svg + "</svg>";
}

std::string HistogramOverlaySvg(const LogLinearHistogram* baseline, const LogLinearHistogram& candidate,
                                const std::string& unit, const std::string& label) {
  if (candidate.empty()) return "";
  if (baseline && baseline->empty()) baseline = nullptr;
  LogAxis axis(baseline, candidate, kChartLeft, kChartRight);
  std::vector<double> cand = axis.Shares(candidate);
  std::vector<double> base = baseline ? axis.Shares(*baseline) : std::vector<double>();
  double top = std::max(*std::max_element(cand.begin(), cand.end()),
                        base.empty() ? 0.0 : *std::max_element(base.begin(), base.end()));
  LinearScale y({0, top * 1.1}, kChartBottom, kChartTop);

  std::string svg = SvgOpen(kChartWidth, kChartHeight, label);
  svg += Line(kChartLeft, kChartTop, kChartLeft, kChartBottom, kGridColor);
  svg += Text(kChartLeft - 6, y(top) + 3.5, "end", FormatNumber(100 * top) + "%");
  svg += Text(kChartLeft - 6, y(0) + 3.5, "end", "0%");
  svg += axis.Grid(unit);
  if (baseline) {
    svg += "<polygon points=\"" + Num(kChartLeft) + "," + Num(y(0)) + " " + axis.StepPoints(base, y) + " " +
           Num(kChartRight) + "," + Num(y(0)) + "\" fill=\"" + kBaselineColor + "\" fill-opacity=\"0.45\"/>";
  }
  svg += "<polyline points=\"" + axis.StepPoints(cand, y) + "\" fill=\"none\" stroke=\"" + kCandidateColor +
         "\" stroke-width=\"2\"/>";
  svg += Legend(baseline != nullptr);
  svg += Text(kChartRight, kChartHeight - 4, "end", "share of samples per bin, value (log scale)");
  return svg + "</svg>";
}

std::string ChangeBarSvg(double change_pct, double scale_pct, Outcome outcome) {
  constexpr int kWidth = 120, kHeight = 12;
  constexpr double kMid = kWidth / 2.0;
  double fraction = scale_pct > 0 ? std::clamp(change_pct / scale_pct, -1.0, 1.0) : 0;
  double length = std::fabs(fraction) * (kMid - 1);
  std::string svg = SvgOpen(kWidth, kHeight, "change " + FormatPercent(change_pct));
  svg += Rect(change_pct < 0 ? kMid - length : kMid, 2, length, kHeight - 4, OutcomeColor(outcome));
  svg += Line(kMid, 0, kMid, kHeight, kMutedColor);
  return svg + "</svg>";
}

}  // namespace perfgate
