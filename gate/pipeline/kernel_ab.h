// perfgate ab --baseline-kernel K --candidate-kernel K': the change under
// test is the kernel (a patch, a config, a module, a command-line tunable).
// Each side's kernel boots in a virtual machine in turn (target/kernel_vm.h),
// ABBA by boot: several boots a side, the suite's repetitions within each;
// each boot records the suite under its probes, and the sides are paired by
// boot (a repetition of the one with the same repetition of the other in
// the adjacent boot), so that what drifts on the host between boots falls
// on both sides alike. A regression the first boots flag is confirmed in a
// fresh pair of boots, which also take the evidence (kernel stacks) of each
// side; then verdicts, the why, the reports, as for any ab.
#pragma once

#include <string>
#include <vector>

#include "pipeline/pipeline.h"
#include "target/kernel_vm.h"

namespace perfgate {

struct KernelAbOptions {
  KernelSide baseline, candidate;
  VmSettings vm;
  int boots = 2;  // boots of each side
  // The perfgate the guest runs (--vm-perfgate): one built for vm.arch,
  // with its workload programs beside it (its ${perfgate_dir}); empty: this
  // perfgate, for a guest of this host's architecture.
  std::string guest_perfgate;
};

// The order the boots of `pairs` boot pairs take: false for the baseline's,
// true for the candidate's; ABBA (A B, B A, A B, ...).
std::vector<bool> BootOrder(int pairs);

// One boot's results of each side.
struct BootPair {
  RunResults baseline, candidate;
};

// The boots of each side joined into one run per side: each scenario's
// repetitions (and retaken ones) one boot pair after the other, numbered so
// that the sides' repetitions of one boot pair share their indices (the
// pairs of an interleaved comparison). A scenario that failed in any boot
// carries that boot's error. The first boot's environment; partial when any
// boot was.
std::pair<RunResults, RunResults> JoinBootPairs(const std::vector<BootPair>& pairs);

GateOutcome GateKernels(const GateOptions& options, const KernelAbOptions& kernels);

}  // namespace perfgate
