// SPDX-License-Identifier: GPL-2.0
/* Syscall count and sampled latency from raw_syscalls sys_enter/sys_exit.
 * This runs on every syscall of the machine, so both paths are kept minimal:
 *
 *  - The count is exact: every (tracked) sys_enter bumps a per-CPU counter
 *    (an inlined per-CPU array lookup, no atomics), and the counter of its
 *    syscall number in the same per-CPU value (one more increment).
 *  - The latency is sampled (or, with the `latency` parameter off, not kept
 *    and sys_exit not hooked): only about 1 in sample_every syscalls reads the
 *    clock, at enter and at exit (two kvm-clock reads were most of the cost).
 *    The start time of a sampled call lives in task-local storage, not in a
 *    per-CPU slot, because the thread may be preempted or migrate between
 *    sys_enter and sys_exit. A machine-wide count of open sampled calls
 *    lets sys_exit return at once, without a storage lookup, while none is
 *    open (most of the time, at the default 1 in 16; a trace or exact mode,
 *    which time every call, keep no count). exit and exit_group never reach
 *    sys_exit, so they are never sampled and cannot leave the count raised.
 *    A sampled call's latency also goes to its syscall number's sampled
 *    count and sum, so user space can say which syscall's time grew, unless
 *    the thread left the CPU during the call: that wait is the offcpu
 *    probe's (a sleep, a lock wait, a read from the disk, a preemption), and
 *    counting it here too would charge it twice. Only sampled calls pay for
 *    this (two reads of the thread's context switch counts at each end).
 *  - In workload scope the filter is the per-CPU answer of filter.bpf.h:
 *    syscalls come in bursts from one thread, and caching the verdict in
 *    task storage instead measured slower on fio (a storage lookup chases
 *    more cold pointers than the answer's two array slots).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "filter.bpf.h"
#include "function_hooks.bpf.h"
#include "hist.bpf.h"
#include "stats.h"
#include "trace_events.bpf.h"

/* False where task-local storage is unavailable to tracing programs; the
 * thread-keyed hash below then holds the start times instead. */
const volatile bool use_task_storage = true;

/* A syscall is sampled for latency when the 32-bit Fibonacci hash of its
 * per-CPU sequence number is below this: (1 << 32) / sample_every, so
 * 1 << 32 (every syscall) for exact mode. Hashing instead of taking every
 * N-th call keeps a workload whose syscalls repeat with a period dividing N
 * (write, read, write, read...) from being sampled on one syscall only. */
const volatile __u64 sample_threshold = 1ULL << 32;

/* False with the probe's `latency` off and no trace: sys_exit is then not
 * hooked at all, and sys_enter only counts. An empty program at sys_exit
 * costs nearly as much as one at sys_enter, so this takes about 40 % off
 * what every syscall of the machine pays (bench/syscalls_overhead.sh). */
const volatile bool time_syscalls = true;

/* Syscall numbers that never return to sys_exit, set by user space (-1:
 * none known). */
const volatile long exit_nr = -1;
const volatile long exit_group_nr = -1;

/* Sampled calls whose sys_exit has not run yet, machine-wide. */
__u64 open_samples = 0;

/* Whether the count is kept: not when every call is timed (a trace, or
 * sampling 1 in 1), where it is never 0 and would only bounce between CPUs
 * (two atomic adds per syscall). */
static __always_inline bool count_open_samples(void)
{
	return !pg_trace_enabled && sample_threshold < (1ULL << 32);
}

/* Threads inside a sampled syscall at once, when the hash fallback is used. */
#define IN_SYSCALL_MAX 16384

/* The open sampled call of a thread, in task storage or the hash fallback. */
struct pg_syscall_task {
	__u64 start;    /* ktime at a sampled sys_enter; 0 when none is open */
	__u32 nr;       /* its syscall number, for the trace and the per-number time */
	__u32 switches; /* the thread's context switches then (low 32 bits) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pg_syscall_task);
} task_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IN_SYSCALL_MAX);
	__type(key, __u32); /* thread id */
	__type(value, struct pg_syscall_task);
} start_by_tid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_syscalls_stats);
} syscalls_stats SEC(".maps");

static __always_inline struct pg_syscall_task *task_get(__u64 flags)
{
	return bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0, flags);
}

static __always_inline bool sampled(__u64 sequence)
{
	return (__u64)((__u32)sequence * 0x9E3779B9u) < sample_threshold;
}

/* Voluntary and involuntary context switches of the current thread so far;
 * unchanged across a call that never left the CPU. */
static __always_inline __u32 switches(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return (__u32)(BPF_CORE_READ(task, nvcsw) + BPF_CORE_READ(task, nivcsw));
}

static __always_inline void on_enter(long id)
{
	struct pg_syscall_task *task, sample;
	struct pg_syscalls_stats *stats;
	__u32 zero = 0;
	__u64 now, sequence;
	__u32 tid;

	if (!pg_current_is_tracked())
		return;
	stats = bpf_map_lookup_elem(&syscalls_stats, &zero);
	if (!stats)
		return;
	sequence = stats->count++;
	/* Negative for a syscall skipped by seccomp or a tracer (-1); beyond the
	 * table for x32. Both stay in the total only. */
	if ((unsigned long)id < PG_SYSCALL_SLOTS)
		stats->by_nr[id]++;
	/* A trace times every syscall to find the slow ones. */
	if (!time_syscalls || (!pg_trace_enabled && !sampled(sequence)))
		return;
	if (id == exit_nr || id == exit_group_nr)
		return;

	now = bpf_ktime_get_ns();
	if (use_task_storage) {
		task = task_get(BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!task)
			return;
		/* Never left open: sys_exit follows every sys_enter but those
		 * of exit and exit_group. */
		if (count_open_samples() && !task->start)
			__sync_fetch_and_add(&open_samples, 1);
		task->start = now;
		task->nr = (__u32)id;
		task->switches = switches();
		return;
	}
	tid = pg_current_tid();
	sample = (struct pg_syscall_task){.start = now, .nr = (__u32)id, .switches = switches()};
	if (bpf_map_update_elem(&start_by_tid, &tid, &sample, BPF_NOEXIST) != 0)
		bpf_map_update_elem(&start_by_tid, &tid, &sample, BPF_EXIST);
	else if (count_open_samples())
		__sync_fetch_and_add(&open_samples, 1);
}

/* The current thread's open sampled syscall, consumed into *sample; false
 * when the syscall was not sampled (or not tracked: only tracked threads ever
 * get a start time, so sys_exit needs no filter lookup). */
static __always_inline bool take_sample(struct pg_syscall_task *sample)
{
	struct pg_syscall_task *task;
	__u32 tid;

	if (count_open_samples() && !*(volatile __u64 *)&open_samples)
		return false;
	if (use_task_storage) {
		task = task_get(0);
		if (!task || !task->start)
			return false;
		*sample = *task;
		task->start = 0;
	} else {
		tid = pg_current_tid();
		task = bpf_map_lookup_elem(&start_by_tid, &tid);
		if (!task)
			return false;
		*sample = *task;
		bpf_map_delete_elem(&start_by_tid, &tid);
	}
	if (count_open_samples())
		__sync_fetch_and_add(&open_samples, -1);
	return true;
}

static __always_inline void on_exit(void)
{
	struct pg_syscalls_stats *stats;
	struct pg_syscall_task sample;
	__u64 delta;
	__u32 zero = 0;

	if (!take_sample(&sample))
		return;
	delta = bpf_ktime_get_ns() - sample.start;
	if (pg_trace_enabled && delta >= pg_trace_slow_syscall_ns)
		pg_trace_emit_current(PG_TRACE_SYSCALL, sample.nr, sample.start, delta);
	stats = bpf_map_lookup_elem(&syscalls_stats, &zero);
	if (!stats)
		return;
	pg_hist_add(stats->hist, delta);
	/* The numbers sys_enter left out of by_nr (-1, x32) stay in the
	 * histogram only, and so do calls that left the CPU. */
	if (sample.nr < PG_SYSCALL_SLOTS && sample.switches == switches()) {
		stats->sampled_by_nr[sample.nr]++;
		stats->sampled_ns_by_nr[sample.nr] += delta;
	}
}

SEC("tp_btf/sys_enter")
int BPF_PROG(syscalls_enter_tp_btf, struct pt_regs *regs, long id)
{
	on_enter(id);
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(syscalls_enter_raw_tp, struct pt_regs *regs, long id)
{
	on_enter(id);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int syscalls_enter_tracepoint(struct trace_event_raw_sys_enter *ctx)
{
	on_enter(ctx->id);
	return 0;
}

/* The kernel function every syscall goes through with its number (x86-64:
 * x64_sys_call(regs, nr)); the plan sets the target. exit and exit_group
 * never return from it, as they never reach sys_exit. Syscalls a seccomp
 * filter or a tracer skipped never reach it: uncounted here, where the
 * tracepoint counts them as -1. */
PG_FUNCTION_ENTRY_HOOK(syscalls_enter, on_enter(nr), struct pt_regs *regs, unsigned int nr)

SEC("tp_btf/sys_exit")
int BPF_PROG(syscalls_exit_tp_btf)
{
	on_exit();
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(syscalls_exit_raw_tp)
{
	on_exit();
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int syscalls_exit_tracepoint(void *ctx)
{
	on_exit();
	return 0;
}

PG_FUNCTION_RETURN_HOOK(syscalls_exit, on_exit())

char LICENSE[] SEC("license") = "GPL";
