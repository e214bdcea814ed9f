// SPDX-License-Identifier: GPL-2.0
/* User page faults, major and minor, as the kernel counts them.
 *
 * The kernel classifies every completed fault in mm_account_fault(): one
 * that returned VM_FAULT_MAJOR, or that had to be retried, bumps the faulting
 * thread's task_struct.maj_flt, any other successful one its min_flt (the
 * counters getrusage() and /proc/<pid>/task/<tid>/stat report). No fault
 * event carries that outcome (exceptions:page_fault_user fires before the
 * fault is handled), and a BPF program on every fault costs more than 1 % of
 * the CPU time of a fault-heavy start-up. So this probe runs at fork and exit
 * only, and reads the counters: a thread's faults in a repetition are its
 * counters at exit (or at the end of the repetition) minus its counters at
 * the start (or zero for a thread forked in the repetition: copy_process()
 * zeroes them).
 *
 * `baselines` holds one entry per thread being counted, keyed by thread id:
 *  - user space writes one at the reset for every thread alive then (the
 *    tracked threads in workload scope, every thread in system scope), read
 *    from /proc;
 *  - the fork hook writes a zero one for every thread forked by a tracked
 *    thread (by any thread in system scope);
 *  - the exit hook adds the thread's growth and deletes its entry;
 *  - at the end user space reads the counters of the threads still alive
 *    from /proc and deletes their entries.
 * Whoever deletes an entry counts that thread, so none is counted twice.
 *
 * Besides faults of user code the counters include faults the kernel took on
 * the thread's behalf (copy_to_user into a fresh buffer, get_user_pages);
 * spurious and failed faults are not counted. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "function_hooks.bpf.h"
#include "pagefault.h"

/* Repetition the baselines belong to; user space bumps it at each reset, and
 * an entry of an older repetition is not a baseline in this one. */
__u32 reset_gen = 1;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PG_PAGEFAULT_THREADS_MAX);
	/* Filled at fork and reset, not preallocated for every possible thread. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* thread id */
	__type(value, struct pg_fault_baseline);
} baselines SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_pagefault_stats);
} pagefault_stats SEC(".maps");

/* Runs in the parent's context: the tracker tracks the child only if the
 * parent is tracked. */
static __always_inline void on_fork(__u32 child_tid)
{
	struct pg_fault_baseline zero = {.reset_gen = reset_gen};

	if (!pg_current_is_tracked())
		return;
	bpf_map_update_elem(&baselines, &child_tid, &zero, BPF_ANY);
}

/* Runs in the exiting thread's context, with its final counters. No tracked
 * check: the tracker's own exit hook may already have forgotten the thread,
 * and only threads being counted have an entry. */
static __always_inline void on_exit(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pg_fault_baseline *entry, seen;
	struct pg_pagefault_stats *stats;
	__u32 tid = pg_current_tid(), zero = 0;
	__u64 maj_flt, min_flt;

	entry = bpf_map_lookup_elem(&baselines, &tid);
	if (!entry)
		return;
	seen = *entry;
	if (bpf_map_delete_elem(&baselines, &tid) != 0 || seen.reset_gen != reset_gen)
		return;
	stats = bpf_map_lookup_elem(&pagefault_stats, &zero);
	if (!stats)
		return;
	maj_flt = BPF_CORE_READ(task, maj_flt);
	min_flt = BPF_CORE_READ(task, min_flt);
	/* Smaller counters: a recycled thread id whose entry outlived its thread. */
	if (maj_flt >= seen.maj_flt)
		stats->major += maj_flt - seen.maj_flt;
	if (min_flt >= seen.min_flt)
		stats->minor += min_flt - seen.min_flt;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(pagefault_fork_tp_btf, struct task_struct *parent, struct task_struct *child)
{
	on_fork(child->pid);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(pagefault_fork_raw_tp, struct task_struct *parent, struct task_struct *child)
{
	on_fork(BPF_CORE_READ(child, pid));
	return 0;
}

SEC("tracepoint/sched/sched_process_fork")
int pagefault_fork_tracepoint(struct trace_event_raw_sched_process_fork *ctx)
{
	on_fork(ctx->child_pid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pagefault_exit_tp_btf)
{
	on_exit();
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(pagefault_exit_raw_tp)
{
	on_exit();
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int pagefault_exit_tracepoint(void *ctx)
{
	on_exit();
	return 0;
}

/* The tracker's functions (gate/probes/tracker.cpp): wake_up_new_task(child)
 * in the parent just after sched_process_fork, do_exit() in the exiting
 * thread before sched_process_exit (the fault counters of its exit path are
 * left out, a handful of faults). */
PG_FUNCTION_ENTRY_HOOK(pagefault_fork, on_fork(BPF_CORE_READ(child, pid)), struct task_struct *child)

PG_FUNCTION_ENTRY_HOOK(pagefault_exit, on_exit())

char LICENSE[] SEC("license") = "GPL";
