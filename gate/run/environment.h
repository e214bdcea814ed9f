#pragma once

#include "metrics/results.h"

namespace perfgate {

// Fingerprint of this machine: kernel, CPU model and count, perfgate version, git commit.
Environment CaptureEnvironment();
// ISO 8601 UTC timestamp of now.
std::string UtcTimestamp();

}  // namespace perfgate
