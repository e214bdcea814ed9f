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
	__u64 copies;      /* user stacks copied for unwinding after the run */
	__u64 copies_lost; /* copies not made: stack unreadable, ring buffer full */
};

/* Stacks without frame pointers are unwound after the run from the unwind
 * tables of the mapped files (.eh_frame, .debug_frame), as `perf record
 * --call-graph dwarf` does: each sample copies the thread's user registers
 * and the top of its user stack into a ring buffer record. */

/* The largest copy the probe parameter user_stack_bytes allows. */
#define PG_USER_STACK_MAX 16384
/* The registers an unwinder starts from, in DWARF's x86_64 numbering: rax,
 * rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8 to r15, then the return address
 * column, which holds the sampled instruction pointer. */
#define PG_UNWIND_REGS 17
#define PG_UNWIND_REG_SP 7
#define PG_UNWIND_REG_IP 16

struct pg_user_stack_copy {
	__u32 tgid;
	__s32 kernel_stack; /* the sample's key in profile_by_stack */
	__s32 user_stack;
	__u32 size; /* bytes of `stack`, copied from regs[PG_UNWIND_REG_SP] up */
	__u64 regs[PG_UNWIND_REGS];
	__u8 stack[PG_USER_STACK_MAX]; /* a record holds only `size` bytes of it */
};

#endif
