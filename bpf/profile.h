/* Aggregates of the profile probe (on-CPU sampling), shared with
 * gate/probes/profile.cpp. Only __u32/__u64-style types: this header compiles
 * with vmlinux.h and with the C++ side. */
#ifndef PERFGATE_PROFILE_H
#define PERFGATE_PROFILE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Frames kept per stack (the kernel's default perf_event_max_stack). */
#define PG_PROFILE_STACK_DEPTH 127

/* Samples per process and (kernel, user) stack pair. */
struct pg_profile_key {
	__u32 tgid;
	__s32 kernel_stack; /* id in the stack map; negative when not captured (user mode) */
	__s32 user_stack;   /* negative for kernel threads and unwalkable stacks */
	__u32 pad;
};

/* Per CPU, slot 0. */
struct pg_profile_counts {
	__u64 samples;     /* samples of tracked threads */
	__u64 stacks;      /* stacks not captured: stack map full or colliding */
	__u64 stack_sums;  /* samples not added to a stack: too many distinct stacks */
};

#endif
