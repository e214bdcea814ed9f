// Numbers as perfgate prints them, in check messages and reports alike: a
// few significant digits and a readable unit (1.23 ms rather than 1234567 ns).
#pragma once

#include <string>

namespace perfgate {

// "1.23 ms", "4.10 MiB", "80.0k count/s", "3.20 count/op"; "n/a" for NaN/inf.
std::string FormatQuantity(double value, const std::string& unit);
// A bare number with about three significant digits: "0.0123", "12.3", "1234".
std::string FormatNumber(double value);
// `value` through a printf format with one double conversion ("%+.1f").
std::string FormatValue(const char* printf_format, double value);

}  // namespace perfgate
