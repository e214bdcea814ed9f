#include "report/format.h"

#include <cmath>
#include <cstdio>

namespace perfgate {
namespace {

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

struct Scaled {
  double value;
  const char* unit;
};

// Nanoseconds to the largest unit that keeps the number >= 1.
Scaled ScaleNanoseconds(double ns) {
  double a = std::fabs(ns);
  if (a >= 1e9) return {ns / 1e9, "s"};
  if (a >= 1e6) return {ns / 1e6, "ms"};
  if (a >= 1e3) return {ns / 1e3, "\u00b5s"};
  return {ns, "ns"};
}

Scaled ScaleBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t i = 0;
  while (std::fabs(bytes) >= 1024 && i + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++i;
  }
  return {bytes, kUnits[i]};
}

std::optional<double> NanosecondsPer(const std::string& unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\u00b5s") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return std::nullopt;
}

// 80000 -> "80.0k": counts and rates span many orders of magnitude.
std::string FormatWithSiPrefix(double value) {
  double a = std::fabs(value);
  if (a >= 1e9) return FormatNumber(value / 1e9) + "G";
  if (a >= 1e6) return FormatNumber(value / 1e6) + "M";
  if (a >= 1e4) return FormatNumber(value / 1e3) + "k";
  return FormatNumber(value);
}

}  // namespace

std::string FormatNumber(double value) {
  if (!std::isfinite(value)) return "n/a";
  double a = std::fabs(value);
  if (a == 0) return "0";
  if (a >= 100) return Printf("%.0f", value);
  if (a >= 10) return Printf("%.1f", value);
  if (a >= 1) return Printf("%.2f", value);
  if (a >= 1e-4) return Printf("%.3g", value);
  return Printf("%.2e", value);
}

std::string FormatQuantity(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "n/a";
  if (auto per = NanosecondsPer(unit)) {
    Scaled s = ScaleNanoseconds(value * *per);
    return FormatNumber(s.value) + " " + s.unit;
  }
  if (unit == "bytes" || unit == "B") {
    Scaled s = ScaleBytes(value);
    return FormatNumber(s.value) + " " + s.unit;
  }
  std::string number = FormatWithSiPrefix(value);
  return unit.empty() ? number : number + " " + unit;
}

std::string FormatPercent(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  // Three significant digits, and never "-0.0%".
  double rounded = std::round(pct * 10) / 10;
  if (rounded == 0) return "+0.0%";
  if (std::fabs(pct) >= 1000) return Printf("%+.0f%%", pct);
  return Printf("%+.1f%%", pct);
}

std::string FormatInterval(const std::optional<double>& low, const std::optional<double>& high) {
  if (!low || !high) return "";
  return "[" + FormatPercent(*low) + ", " + FormatPercent(*high) + "]";
}

std::string FormatPValue(const std::optional<double>& p) {
  if (!p || !std::isfinite(*p)) return "";
  if (*p < 1e-4) return "<0.0001";
  return Printf("%.2g", *p);
}

bool HasBaseline(const CheckResult& check) { return !check.baseline_values.empty(); }

std::string FormatThreshold(const CheckResult& check) {
  const CheckSpec& spec = check.spec;
  if (spec.type == CheckSpec::Type::kBudget) {
    if (spec.min && spec.max) {
      return FormatQuantity(*spec.min, check.unit) + " .. " + FormatQuantity(*spec.max, check.unit);
    }
    if (spec.max) return "<= " + FormatQuantity(*spec.max, check.unit);
    if (spec.min) return ">= " + FormatQuantity(*spec.min, check.unit);
    return "";
  }
  double pct = spec.max_regression_pct;
  switch (check.better) {
    case Better::kLower:
      return FormatPercent(pct);
    case Better::kHigher:
      return FormatPercent(-pct);
    case Better::kNone:
      return "\u00b1" + FormatPercent(pct).substr(1);
  }
  return "";
}

std::string FormatBaseline(const CheckResult& check) {
  return HasBaseline(check) ? FormatQuantity(check.baseline_median, check.unit) : "";
}

std::string FormatCandidate(const CheckResult& check) {
  return check.candidate_values.empty() ? "" : FormatQuantity(check.candidate_median, check.unit);
}

std::string FormatChange(const CheckResult& check) {
  if (!HasBaseline(check) || check.candidate_values.empty()) return "";
  std::string interval = FormatInterval(check.change_ci_low_pct, check.change_ci_high_pct);
  return interval.empty() ? FormatPercent(check.change_pct) : FormatPercent(check.change_pct) + " " + interval;
}

std::string FormatTrace(const TraceSummary& trace) {
  std::string text = trace.file + ": one extra traced repetition after the measured ones";
  if (!trace.reason.empty()) text += " (worst check: " + trace.reason + ")";
  text += "; " + std::to_string(trace.received) + " records, " + std::to_string(trace.dropped) + " dropped";
  if (trace.produced > 0 && trace.dropped > 0) {
    const double share = static_cast<double>(trace.dropped) / static_cast<double>(trace.produced);
    text += " (" + FormatNumber(100.0 * share) + " %)";
  }
  text += ", ring buffer " + FormatQuantity(static_cast<double>(trace.buffer_bytes), "bytes");
  return text;
}

}  // namespace perfgate
