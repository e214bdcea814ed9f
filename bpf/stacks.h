/* Stacks captured by the probes that say where a workload spends its time
 * (offcpu, futex, profile; bpf/stacks.bpf.h), shared with their user sides,
 * which read the stack maps (gate/probes/stack_map.h). Only __u32/__u64-style
 * types: this header compiles with vmlinux.h and with the C++ side. */
#ifndef PERFGATE_STACKS_H
#define PERFGATE_STACKS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Frames kept per stack (the kernel's default perf_event_max_stack). */
#define PG_STACK_DEPTH 127

/* One process's (kernel, user) stack pair: the key of per-stack sums. */
struct pg_stack_key {
	__u32 tgid;
	__s32 kernel_stack; /* id in the stack map; negative when not captured (a sample in user mode) */
	__s32 user_stack;   /* negative for kernel threads and unwalkable stacks */
	/* offcpu: why the thread left the CPU (PG_OFFCPU_* of offcpu.h), so that
	 * preemption is told from blocking at the same stack; 0 elsewhere. */
	__u32 reason;
};

#endif
