// The cells and escaping both parts of the HTML report use
// (html_reporter.cpp, html_evidence.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "base/escape.h"

namespace perfgate::html {

// Messages from workloads can be megabytes of output; the report shows the start.
inline constexpr size_t kMaxMessageBytes = 2000;

inline std::string Esc(const std::string& text) { return XmlEscape(text); }

inline std::string Td(const std::string& html, const char* cls = nullptr) {
  return cls ? "<td class=\"" + std::string(cls) + "\">" + html + "</td>" : "<td>" + html + "</td>";
}

inline std::string Th(const char* text, const char* cls = nullptr) {
  return cls ? "<th class=\"" + std::string(cls) + "\">" + text + "</th>" : "<th>" + std::string(text) + "</th>";
}

}  // namespace perfgate::html
