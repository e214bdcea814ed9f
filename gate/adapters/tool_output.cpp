#include "adapters/tool_output.h"

#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "base/json_text.h"

namespace perfgate {

namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Position of the first line whose first non-blank character is '{', and its
// 1-based line number; npos when there is none.
size_t DocumentStart(const std::string& text, size_t& line_no) {
  size_t pos = 0;
  line_no = 1;
  while (pos < text.size()) {
    size_t first = text.find_first_not_of(" \t\r", pos);
    if (first != std::string::npos && text[first] == '{') return first;
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    pos = nl + 1;
    ++line_no;
  }
  return std::string::npos;
}

}  // namespace

nlohmann::json ParseToolJson(const std::string& text, const std::string& source) {
  size_t line_no = 0;
  const size_t start = DocumentStart(text, line_no);
  if (start == std::string::npos) throw InfraError(source + ": no JSON document in the output");
  const std::string where = source + ": JSON document starting at line " + std::to_string(line_no);
  // One pass: find the closing brace (outside strings) and rewrite the
  // non-JSON number literals, so a truncated document is reported as such
  // rather than as a syntax error somewhere.
  std::string doc;
  doc.reserve(text.size() - start);
  int depth = 0;
  bool in_string = false;
  size_t i = start;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      doc += c;
      if (c == '\\' && i + 1 < text.size()) {
        doc += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (static_cast<size_t>(++depth) > kMaxJsonDepth) {
        const auto line =
            line_no + static_cast<size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(start),
                                                     text.begin() + static_cast<std::ptrdiff_t>(i), '\n'));
        throw InfraError(where + ": line " + std::to_string(line) + ": arrays and objects nested deeper than " +
                         std::to_string(kMaxJsonDepth) + " levels");
      }
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == 'N' || c == 'I' || c == '-') {
      const bool after_word = !doc.empty() && IsWordChar(doc.back());
      size_t len = 0;
      for (const char* literal : {"NaN", "Infinity", "-NaN", "-Infinity"}) {
        const std::string_view lit(literal);
        if (text.compare(i, lit.size(), lit) == 0 &&
            (i + lit.size() >= text.size() || !IsWordChar(text[i + lit.size()]))) {
          len = lit.size();
        }
      }
      if (len > 0 && !after_word) {
        doc += "null";
        i += len - 1;
        continue;
      }
    }
    doc += c;
    if (depth == 0) break;
  }
  if (depth != 0 || in_string) {
    throw InfraError(where + ": truncated: the output ends before the document closes");
  }
  try {
    return nlohmann::json::parse(doc);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    auto pos = what.find("parse error");
    throw InfraError(where + ": invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  } catch (const nlohmann::json::exception& e) {
    // A number beyond double's range (1e400); lines counted within the document.
    throw InfraError(where + ": invalid JSON: " + JsonErrorWithLine(e.what(), doc));
  }
}

std::string MetricSegment(std::string_view name) {
  // The characters the metric-name pattern allows inside a segment.
  static constexpr std::string_view kAllowed = "_:<>*/+-";
  std::string out;
  for (char c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 0x80;
    out += ok || kAllowed.find(c) != std::string_view::npos ? c : '_';
  }
  return out.empty() ? "_" : out;
}

std::string SnakeCase(std::string_view name) {
  std::string out;
  bool gap = false;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 0x80) {
      if (gap && !out.empty()) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      gap = false;
    } else {
      gap = true;
    }
  }
  return out.empty() ? "_" : out;
}

std::string FindExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

void RequireDiskDirectory(const std::string& dir, const std::string& what) {
  struct statfs fs {};
  if (statfs(dir.c_str(), &fs) != 0) throw InfraError(what + " " + dir + ": " + std::strerror(errno));
  if (!std::filesystem::is_directory(dir)) throw InfraError(what + " " + dir + ": not a directory");
  if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC) {
    throw InfraError(what + " " + dir +
                     " is on tmpfs/ramfs, which keeps files in memory; choose a directory on a "
                     "disk file system (set \"scratch_dir\")");
  }
}

std::string PerfgateDir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return PerfgateDirOf(self.string());
}

std::string PerfgateDirOf(const std::string& perfgate) {
  const std::filesystem::path self = perfgate;
  std::error_code ec;
  const std::filesystem::path installed = (self.parent_path() / PERFGATE_LIBEXEC_FROM_BIN).lexically_normal();
  if (std::filesystem::is_directory(installed, ec)) return installed.string();
  return self.parent_path().string();
}

}  // namespace perfgate
