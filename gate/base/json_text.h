// JSON text as every reader of perfgate takes it: comments allowed, nesting
// bounded, and syntax errors as InputError naming the file and the line.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace perfgate {

// Deepest nesting of arrays and objects any reader accepts. perfgate's own
// files nest about eight levels; the bound keeps nlohmann's recursive
// functions (dump, copy, compare) within the stack on hostile input.
inline constexpr size_t kMaxJsonDepth = 256;

// The 1-based line where JSON `text` (comments allowed) first nests deeper
// than kMaxJsonDepth; 0 when it never does. Strings and comments are skipped.
size_t LineTooDeep(const std::string& text);

// nlohmann's message `what` without its "[json.exception...]" tag, led by the
// line of `text` holding the token it quotes (its out-of-range errors carry no position).
std::string JsonErrorWithLine(const std::string& what, const std::string& text);

// Parses JSON text (comments allowed); InputError naming `file`, line and
// column on syntax errors, numbers out of range and nesting deeper than kMaxJsonDepth.
nlohmann::json ParseJsonText(const std::string& text, const std::string& file);
// Reads and parses a JSON file (comments allowed); InputError on I/O or syntax errors.
nlohmann::json ReadJsonFile(const std::string& file);

}  // namespace perfgate
