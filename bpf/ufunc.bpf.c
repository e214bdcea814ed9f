// SPDX-License-Identifier: GPL-2.0
/* User-space function latency and call counts. One entry program and one
 * return program serve every traced function: the user side attaches them
 * once per function (or once per object with a uprobe_multi link), with the
 * function's number as the attachment's cookie. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "filter.bpf.h"
#include "histogram.h"
#include "ufunc.h"

struct ufunc_frame {
	__u64 start_ns;
	__u64 func;
};

/* The thread's probed calls in flight, innermost last. Only the thread itself
 * touches its entry, so no locking is needed. */
struct ufunc_stack {
	__u64 depth;
	struct ufunc_frame frames[PG_UFUNC_DEPTH];
};

/* Keyed by thread id. LRU, so the stacks of threads that exited inside a
 * traced function (exit() in the middle of it) cannot fill the map. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PG_UFUNC_THREADS);
	__type(key, __u32);
	__type(value, struct ufunc_stack);
} ufunc_stacks SEC(".maps");

/* max_entries is set to the number of functions before load. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_ufunc_calls);
} ufunc_calls SEC(".maps");

/* max_entries is sized from the number of functions before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pg_ufunc_bucket);
	__type(value, __u64);
} ufunc_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_ufunc_drops);
} ufunc_drops SEC(".maps");

/* The initial value of a new stack; map memory, so it can be the value
 * argument of bpf_map_update_elem despite being larger than the BPF stack
 * allows for a local. */
static const struct ufunc_stack empty_stack;

/* Uprobe programs run with migration disabled but, unlike tracepoint
 * programs, preemptible, so another thread can run the same program on the
 * same CPU in the middle of an update: per-CPU counters need atomic adds to
 * stay exact. */
static __always_inline void count_drop(__u64 *counter)
{
	__sync_fetch_and_add(counter, 1);
}

static __always_inline struct pg_ufunc_drops *drops(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&ufunc_drops, &zero);
}

SEC("uprobe")
int ufunc_entry(struct pt_regs *ctx)
{
	__u32 func = (__u32)bpf_get_attach_cookie(ctx);
	struct pg_ufunc_calls *calls;
	struct pg_ufunc_drops *lost;
	struct ufunc_stack *stack;
	__u32 tid;
	__u64 depth;

	if (!pg_current_is_tracked())
		return 0;
	calls = bpf_map_lookup_elem(&ufunc_calls, &func);
	if (!calls)
		return 0;
	__sync_fetch_and_add(&calls->calls, 1);

	tid = pg_current_tid();
	stack = bpf_map_lookup_elem(&ufunc_stacks, &tid);
	if (!stack) {
		bpf_map_update_elem(&ufunc_stacks, &tid, &empty_stack, BPF_NOEXIST);
		stack = bpf_map_lookup_elem(&ufunc_stacks, &tid);
		if (!stack) {
			lost = drops();
			if (lost)
				count_drop(&lost->no_stack);
			return 0;
		}
	}
	depth = stack->depth;
	if (depth >= PG_UFUNC_DEPTH) {
		lost = drops();
		if (lost)
			count_drop(&lost->too_deep);
		return 0;
	}
	stack->frames[depth].func = func;
	stack->depth = depth + 1;
	/* Last, so that the probe's own work above is not timed. */
	stack->frames[depth].start_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void record(__u32 func, __u64 delta)
{
	struct pg_ufunc_bucket key = {.func = func, .bucket = pg_hist_index(delta)};
	struct pg_ufunc_drops *lost;
	__u64 zero = 0, *count;

	count = bpf_map_lookup_elem(&ufunc_hist, &key);
	if (!count) {
		/* Two threads may create the bucket at once: BPF_NOEXIST keeps
		 * the first, and both then add to it. */
		bpf_map_update_elem(&ufunc_hist, &key, &zero, BPF_NOEXIST);
		count = bpf_map_lookup_elem(&ufunc_hist, &key);
		if (!count) {
			lost = drops();
			if (lost)
				count_drop(&lost->hist_full);
			return;
		}
	}
	__sync_fetch_and_add(count, 1);
}

SEC("uretprobe")
int ufunc_return(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 func = (__u32)bpf_get_attach_cookie(ctx);
	__u32 tid = pg_current_tid();
	struct ufunc_stack *stack;
	__u64 depth, start = 0;
	bool found = false;
	int i;

	/* Only tracked threads have a stack, so this is the scope check too. */
	stack = bpf_map_lookup_elem(&ufunc_stacks, &tid);
	if (!stack)
		return 0;
	depth = stack->depth;
	/* Frames above this function's belong to calls that never returned
	 * normally (longjmp, exceptions): drop them with it. */
	for (i = 0; i < PG_UFUNC_DEPTH && depth > 0; i++) {
		depth--;
		if (stack->frames[depth & (PG_UFUNC_DEPTH - 1)].func == func) {
			start = stack->frames[depth & (PG_UFUNC_DEPTH - 1)].start_ns;
			found = true;
			break;
		}
	}
	/* No frame: it was entered before the probe attached or too deep; the
	 * stack is left as it was. */
	if (!found)
		return 0;
	stack->depth = depth;
	record(func, now - start);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
