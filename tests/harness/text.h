// Looking into rendered text.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>

namespace perfgate::testing {

// How often `needle` occurs in `text`, overlaps included.
inline size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

// ASCII lower case, for case-insensitive searches in markup.
inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace perfgate::testing
