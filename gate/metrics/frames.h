// Frames of folded stacks (metrics/evidence.h) as the evidence views read
// them: what kind of code a frame is, the name to show, and the weight a
// share is a share of.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/evidence.h"

namespace perfgate {

enum class FrameKind { kUser, kKernel, kUnknown };

// "vfs_read_[k]" is kernel code; "[unknown]" and "libfoo.so+0x1a2b" could not
// be symbolized; anything else is a user-space function.
FrameKind FrameKindOf(std::string_view frame);
std::string ToString(FrameKind kind);

// The frame's name without FlameGraph's "_[k]" kernel suffix. Not escaped.
std::string FrameLabel(std::string_view frame);

// "parse.cpp:42" of a source line "/src/app/parse.cpp:42" (FoldedProfile::sources).
std::string ShortSource(std::string_view source);

// "a;b;c" -> {"a", "b", "c"}, outermost first. An empty frame reads "[empty]".
std::vector<std::string_view> SplitStack(std::string_view stack);

// What shares of a profile are shares of: its total, or the sum of its
// stacks when that is larger (a hand-made profile without a total).
uint64_t ProfileDenominator(const FoldedProfile& profile);

// Whether `profile` weighs blocked time (off-CPU, futex waits), which is
// ranked by stack rather than by function, rather than samples of running code.
bool IsBlockedTimeProfile(const FoldedProfile& profile);

// Whether the profile counts instructions per function (Valgrind) rather than sampling.
bool IsCountedProfile(const FoldedProfile& profile);

}  // namespace perfgate
