#pragma once

#include <string>

#include "metrics/results.h"

namespace perfgate {

// Fingerprint of this machine: kernel, CPU model and count, perfgate version, git commit.
Environment CaptureEnvironment();
// The CPU's name, from /proc/cpuinfo's text and the board's name
// (a device tree's model, or DMI's product name; empty when there is none):
// x86's "model name"; on arm64, which has none, the board and its cores by
// implementer and part, e.g. "Raspberry Pi 4 Model B Rev 1.4: ARM Cortex-A72"
// or, for a phone's mixed cores, "ARM Cortex-A55 x4 + ARM Cortex-A78 x4".
// "unknown" when neither says anything.
std::string CpuModelFrom(const std::string& cpuinfo, const std::string& board);
// ISO 8601 UTC timestamp of now.
std::string UtcTimestamp();

}  // namespace perfgate
