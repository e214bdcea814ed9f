/* In-kernel side of stack capture (layout in stacks.h): a stack-trace map per
 * program and the ids of the current thread's stacks in it, and the sums
 * kept per stack in a hash map shared by every CPU. */
#ifndef PERFGATE_STACKS_BPF_H
#define PERFGATE_STACKS_BPF_H

#include "stacks.h"

/* Declared with one entry and sized by user space when stacks are captured,
 * so a probe attached without stacks costs no stack memory. */
#define PG_STACK_MAP(name)                                           \
	struct {                                                     \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);              \
		__uint(max_entries, 1);                              \
		__uint(key_size, sizeof(__u32));                     \
		__uint(value_size, PG_STACK_DEPTH * sizeof(__u64));  \
	} name SEC(".maps")

/* The id in `stacks` of the current thread's user stack; negative when it
 * could not be captured: -EFAULT for a kernel thread (no user stack), -EEXIST
 * when another stack holds its hash bucket, -ENOMEM when the map is full. */
static __always_inline __s32 pg_user_stack(void *ctx, void *stacks)
{
	return bpf_get_stackid(ctx, stacks, BPF_F_USER_STACK);
}

/* The ids in `stacks` of the current thread's kernel and user stacks, as
 * pg_user_stack(); the kernel stack is -EFAULT for a sample taken in user
 * mode. */
static __always_inline void pg_capture_stacks(void *ctx, void *stacks, struct pg_stack_key *key)
{
	key->kernel_stack = bpf_get_stackid(ctx, stacks, 0);
	key->user_stack = pg_user_stack(ctx, stacks);
}

/* The value of `key` in the hash map `sums`, inserted as `zero` when missing;
 * NULL when the map is full. Every CPU adds to it: use __sync_fetch_and_add. */
static __always_inline void *pg_stack_sum(void *sums, const void *key, const void *zero)
{
	void *sum = bpf_map_lookup_elem(sums, key);

	if (!sum) {
		bpf_map_update_elem(sums, key, zero, BPF_NOEXIST);
		sum = bpf_map_lookup_elem(sums, key);
	}
	return sum;
}

#endif
