// Numbers as perfgate prints them, in check messages and reports alike: a
// few significant digits and a readable unit (1.23 ms rather than 1234567 ns).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace perfgate {

// "1.23 ms", "4.10 MiB", "80.0k count/s", "3.20 count/op"; "n/a" for NaN/inf.
std::string FormatQuantity(double value, const std::string& unit);
// A bare number with about three significant digits: "0.0123", "12.3", "1234".
std::string FormatNumber(double value);
// `value` through a printf format with one double conversion ("%+.1f").
std::string FormatValue(const char* printf_format, double value);

// Signed percentage: "+30.0%", "-2.5%".
std::string FormatPercent(double pct);
// "1 scenario", "3 scenarios": a count with its noun in the right number.
std::string Plural(size_t n, const std::string& singular, const std::string& plural);
// "[+25.1%, +35.2%]", or "" when either bound is missing.
std::string FormatInterval(const std::optional<double>& low, const std::optional<double>& high);
// "0.0012", "<0.0001", "" when missing.
std::string FormatPValue(const std::optional<double>& p);

}  // namespace perfgate
