// perfgate's lines on stderr, in one voice: "perfgate: " and what happened.
// Progress (what is being measured) is silenced by --quiet; warnings and
// errors never are. What a command prints as its result goes to stdout, not
// through here.
#pragma once

namespace perfgate::log {

// --quiet: no progress lines from here on.
void SetQuiet(bool quiet);
bool Quiet();

// "perfgate: <message>", unless quiet.
void Progress(const char* format, ...) __attribute__((format(printf, 1, 2)));
// "perfgate: warning: <message>".
void Warning(const char* format, ...) __attribute__((format(printf, 1, 2)));
// "perfgate: error: <message>".
void Error(const char* format, ...) __attribute__((format(printf, 1, 2)));
// "perfgate: <message>" whatever --quiet says: a line the user must see that
// is neither a warning nor an error (an interrupted run, a usage hint).
void Notice(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace perfgate::log
