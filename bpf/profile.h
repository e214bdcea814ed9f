/* Aggregates of the profile probe (on-CPU sampling), shared with
 * gate/probes/profile.cpp. Only __u32/__u64-style types: this header compiles
 * with vmlinux.h and with the C++ side. */
#ifndef PERFGATE_PROFILE_H
#define PERFGATE_PROFILE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "stacks.h"

/* Samples are summed per process and (kernel, user) stack pair: struct
 * pg_stack_key. */

/* Per CPU, slot 0. */
struct pg_profile_counts {
	__u64 samples;     /* samples of tracked threads */
	__u64 stacks;      /* stacks not captured: stack map full or colliding */
	__u64 stack_sums;  /* samples not added to a stack: too many distinct stacks */
};

#endif
