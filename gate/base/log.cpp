#include "base/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <string>

namespace perfgate::log {
namespace {

std::atomic<bool> quiet{false};

// One write per line, so that lines of the threads that log stay whole.
void Line(const char* kind, const char* format, va_list args) {
  va_list again;
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, format, again);
  va_end(again);
  std::string message(size > 0 ? static_cast<size_t>(size) : 0, '\0');
  if (size > 0) std::vsnprintf(message.data(), message.size() + 1, format, args);
  std::string line = std::string("perfgate: ") + kind + message;
  if (line.empty() || line.back() != '\n') line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

void SetQuiet(bool on) { quiet = on; }
bool Quiet() { return quiet; }

// The body of each variadic function below: its arguments to Line.
#define PERFGATE_LOG_LINE(kind) \
  va_list args;                 \
  va_start(args, format);       \
  Line(kind, format, args);     \
  va_end(args)

void Progress(const char* format, ...) {
  if (quiet) return;
  PERFGATE_LOG_LINE("");
}

void Warning(const char* format, ...) { PERFGATE_LOG_LINE("warning: "); }

void Error(const char* format, ...) { PERFGATE_LOG_LINE("error: "); }

void Notice(const char* format, ...) { PERFGATE_LOG_LINE(""); }

#undef PERFGATE_LOG_LINE

}  // namespace perfgate::log
