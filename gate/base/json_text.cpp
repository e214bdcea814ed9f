#include "base/json_text.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace perfgate {

using nlohmann::json;

std::string JsonErrorWithLine(const std::string& what, const std::string& text) {
  std::string message = what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2);
  const size_t open = message.find('\''), close = message.rfind('\'');
  if (open == std::string::npos || close <= open + 1) return message;
  const size_t at = text.find(message.substr(open + 1, close - open - 1));
  if (at == std::string::npos) return message;
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  return "line " + std::to_string(line) + ": " + message;
}

size_t LineTooDeep(const std::string& text) {
  size_t depth = 0;
  size_t line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line;  // invalid JSON; the parser says so
      }
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      ++line;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t end = text.find("*/", i + 2);
      const size_t stop = end == std::string::npos ? text.size() : end + 1;
      line += static_cast<size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(i),
                                             text.begin() + static_cast<std::ptrdiff_t>(stop), '\n'));
      i = stop;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return line;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return 0;
}

json ParseJsonText(const std::string& text, const std::string& file) {
  if (const size_t line = LineTooDeep(text); line != 0) {
    throw InputError(file + ": invalid JSON: line " + std::to_string(line) +
                     ": arrays and objects nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    return json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    // nlohmann's message carries the line and column.
    std::string what = e.what();
    auto pos = what.find("parse error");
    throw InputError(file + ": invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  } catch (const json::exception& e) {
    // A number beyond double's range: "number overflow parsing '1e400'", without a position.
    throw InputError(file + ": invalid JSON: " + JsonErrorWithLine(e.what(), text));
  }
}

json ReadJsonFile(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file + ": cannot open: " + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseJsonText(buffer.str(), file);
}

}  // namespace perfgate
