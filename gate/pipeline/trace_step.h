// `--trace`: after the measured run, one traced repetition of the scenario
// with the worst check, written as OUT/trace.perfetto-trace and summed up in
// its results (records, drops). With `baseline` (perfgate ab), the baseline
// variant's repetition is traced first and both are in the one file, each
// process named after its side.
#pragma once

#include <string>

#include "config/suite.h"
#include "metrics/results.h"
#include "run/runner.h"

namespace perfgate {

// Syscalls and off-CPU waits of at least `min_us` become slices. A failure
// to trace is said and makes the exit code 3; the verdict stands.
void TraceWorstScenario(const Suite& suite, const RunOptions& options, double min_us, const std::string& out_dir,
                        RunResults& results, const Suite* baseline = nullptr);

}  // namespace perfgate
