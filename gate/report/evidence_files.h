// The folded stacks of each scenario's evidence as files next to the reports
// (evidence/<scenario>.<side>.<kind>.folded), for speedscope, inferno and
// FlameGraph. Scenario names come from the suite and may hold anything: file
// names are derived so that none escapes the directory or collides.
#pragma once

#include <string>

#include "metrics/evidence.h"
#include "metrics/results.h"

namespace perfgate {

inline constexpr const char* kEvidenceDir = "evidence";

// A file-name-safe form of a scenario name: ASCII letters, digits, '-', '_'
// and '.', other bytes as '_', no leading '.', at most 80 bytes, never empty.
std::string FileStem(const std::string& name);

// Sets FoldedProfile::file of every profile of every scenario's evidence to
// "evidence/<stem>.<side>.<kind>.folded", relative to the out dir; a stem
// taken by an earlier scenario gets "-2", "-3", ... appended.
void AssignFoldedFiles(RunResults& results);

// One "frame;frame;frame weight" line per stack, as the folded tools read it.
// Characters that would break a line (control characters) become '?' and
// malformed UTF-8 becomes U+FFFD.
std::string FoldedText(const FoldedProfile& profile);

}  // namespace perfgate
