// SPDX-License-Identifier: GPL-2.0
/* On-CPU profile: a perf_event program run by one sampling event per CPU
 * (cycles, or the cpu-clock software timer where the PMU is not exposed, as
 * on most virtual machines). Each sample of a tracked thread adds one to its
 * (process, kernel stack, user stack) entry; user space symbolizes them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "filter.bpf.h"
#include "profile.h"
#include "stacks.bpf.h"

#define PG_EEXIST 17

PG_STACK_MAP(profile_stacks);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct pg_stack_key);
	__type(value, __u64);
} profile_by_stack SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_profile_counts);
} profile_counts SEC(".maps");

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	struct pg_stack_key key = {};
	struct pg_profile_counts *counts;
	__u64 *total, zero = 0, id;
	__u32 slot = 0;

	id = bpf_get_current_pid_tgid();
	/* Every CPU's idle task has tid 0. */
	if ((__u32)id == 0 || !pg_current_is_tracked())
		return 0;
	counts = bpf_map_lookup_elem(&profile_counts, &slot);
	if (!counts)
		return 0;
	counts->samples++;
	key.tgid = id >> 32;
	/* -EFAULT (nothing to walk: a sample in user mode has no kernel stack, a
	 * kernel thread no user stack) is not a loss; a collision is. */
	pg_capture_stacks(ctx, &profile_stacks, &key);
	if (key.kernel_stack == -PG_EEXIST || key.user_stack == -PG_EEXIST)
		counts->stacks++;
	total = pg_stack_sum(&profile_by_stack, &key, &zero);
	if (!total) {
		counts->stack_sums++;
		return 0;
	}
	/* Shared by every CPU. */
	__sync_fetch_and_add(total, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
