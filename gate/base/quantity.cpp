#include "base/quantity.h"

#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>

namespace perfgate {
namespace {

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
  if (a >= 100) return FormatValue("%.0f", value);
  if (a >= 10) return FormatValue("%.1f", value);
  if (a >= 1) return FormatValue("%.2f", value);
  if (a >= 1e-4) return FormatValue("%.3g", value);
  return FormatValue("%.2e", value);
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

std::string FormatValue(const char* printf_format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, printf_format, value);
  return buffer;
}

std::string FormatPercent(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  // Three significant digits; a change that one decimal would round to
  // zero keeps its sign with two ("-0.029%"), and no change is "+0.0%".
  if (pct == 0) return "+0.0%";
  if (std::round(pct * 10) == 0) return FormatValue("%+.2g%%", pct);
  if (std::fabs(pct) >= 1000) return FormatValue("%+.0f%%", pct);
  return FormatValue("%+.1f%%", pct);
}

std::string FormatInterval(const std::optional<double>& low, const std::optional<double>& high) {
  if (!low || !high) return "";
  return "[" + FormatPercent(*low) + ", " + FormatPercent(*high) + "]";
}

std::string FormatPValue(const std::optional<double>& p) {
  if (!p || !std::isfinite(*p)) return "";
  if (*p < 1e-4) return "<0.0001";
  return FormatValue("%.2g", *p);
}

std::string Plural(size_t n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

}  // namespace perfgate
