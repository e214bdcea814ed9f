// The stack-trace maps of the probes that capture stacks (offcpu, futex,
// profile: PG_STACK_MAP in bpf/stacks.bpf.h), read and emptied alike.
#pragma once

#include <cstdint>
#include <vector>

#include "stacks.h"

namespace perfgate {

// The instruction pointers of stack `id` in the stack-trace map `stacks_fd`,
// innermost first; empty for a negative id (not captured) or an id since
// evicted.
std::vector<uint64_t> ReadStack(int stacks_fd, int32_t id);

// Empties the stack-trace map `stacks_fd` before a repetition.
void ClearStacks(int stacks_fd);

}  // namespace perfgate
