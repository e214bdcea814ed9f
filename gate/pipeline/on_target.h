// run, baseline record and ab on a device (--target ssh://USER@HOST[:PORT],
// gate/target/): the device measures, under its own probes, with the same
// perfgate (this binary when the device has this host's architecture, else
// the device's installed perfgate of the same version); the suite's
// directory, the baselines it is compared with and the acceptances are sent
// along; what comes back is its results.json, from which this host writes
// the reports and stores the baselines. The baseline's host is the
// device's. A connection lost or refused is an infrastructure error (exit
// 3), and nothing is written here until the device's results are in.
#pragma once

#include "pipeline/pipeline.h"

namespace perfgate {

enum class TargetFlow {
  kRun,     // perfgate run: against the stored baselines
  kRecord,  // perfgate baseline record
  kAb,      // perfgate ab: both variants interleaved on the device
};

// `variants` for kAb; `update_baseline` for kRun.
GateOutcome GateOnTarget(const GateOptions& options, TargetFlow flow, const AbVariants* variants,
                         bool update_baseline);

}  // namespace perfgate
