// Files written whole or not at all: a reader (or a crash) never sees half a
// report or baseline.
#pragma once

#include <string>

namespace perfgate {

// Writes text to `file` atomically: temp file in the same directory, fsync, rename.
// InfraError (naming the file and errno text) when it cannot; the old file survives.
void WriteFileAtomic(const std::string& file, const std::string& text);
// The two halves of WriteFileAtomic, for writing several files all or none:
// StageFile writes and fsyncs a temporary file next to `file` and returns its
// name (nothing is left when it throws); CommitStagedFile renames it over `file`.
std::string StageFile(const std::string& file, const std::string& text);
void CommitStagedFile(const std::string& staged, const std::string& file);

}  // namespace perfgate
