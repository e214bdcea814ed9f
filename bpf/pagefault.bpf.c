// SPDX-License-Identifier: GPL-2.0
/* User page faults, and how many of them were major.
 *
 * exceptions:page_fault_user fires when user code takes a page fault, before
 * the kernel handles it, so it cannot say whether the fault was major (it
 * needed I/O) or minor. No tracepoint fires when a fault completes, and the
 * x86 fault path has no other event carrying the outcome:
 * filemap:mm_filemap_fault fires on every file-backed fault, resident page or
 * not, and fentry/kprobes on handle_mm_fault are not available everywhere.
 *
 * The kernel itself classifies every completed fault in mm_account_fault():
 * a fault that returned VM_FAULT_MAJOR, or that had to be retried, bumps the
 * faulting thread's task_struct.maj_flt, any other successful one its
 * min_flt (the counters getrusage() and /proc/<pid>/stat report). So each
 * thread's counters are read at each of its page_fault_user events and when
 * it exits (sched_process_exit, still in its context), and their growth
 * between two reads is added to the major and minor totals. Each fault is
 * thus classified by the kernel's own rule, one event late.
 *
 * What that counts, per thread of the workload (or of the system):
 *  - faults from the thread's first user fault in the repetition (its
 *    counters before it are the baseline) to its exit, or to its last user
 *    fault when it is still alive at the end (system scope);
 *  - besides faults of user code, the faults the kernel took on the thread's
 *    behalf (copy_to_user into a fresh buffer, get_user_pages), which the
 *    counters include too; so major + minor may exceed mm.page_faults, which
 *    counts user-mode fault exceptions, failed and spurious ones included. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "pagefault.h"

/* Threads whose counters are remembered at once; the least recently faulting
 * are forgotten first (their next fault starts a new baseline). */
#define FAULTING_THREADS_MAX 16384

/* Repetition the counters were seen in; user space bumps it in Reset(), so
 * counters seen before a repetition are not a baseline in it. */
__u32 reset_gen = 1;

struct fault_counters {
	__u64 maj_flt;
	__u64 min_flt;
	__u32 reset_gen;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FAULTING_THREADS_MAX);
	__type(key, __u32); /* thread id */
	__type(value, struct fault_counters);
} counters_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_pagefault_stats);
} pagefault_stats SEC(".maps");

static __always_inline struct fault_counters current_counters(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fault_counters now = {
		.maj_flt = BPF_CORE_READ(task, maj_flt),
		.min_flt = BPF_CORE_READ(task, min_flt),
		.reset_gen = reset_gen,
	};

	return now;
}

/* Adds the growth since `seen`. The counters only grow while a thread lives;
 * smaller ones mean a recycled thread id whose entry outlived its thread. */
static __always_inline void add_growth(struct pg_pagefault_stats *stats, const struct fault_counters *seen,
				       const struct fault_counters *now)
{
	if (now->maj_flt >= seen->maj_flt)
		stats->major += now->maj_flt - seen->maj_flt;
	if (now->min_flt >= seen->min_flt)
		stats->minor += now->min_flt - seen->min_flt;
}

static __always_inline void on_fault(void)
{
	struct pg_pagefault_stats *stats;
	struct fault_counters now, *seen;
	__u32 tid, zero = 0;

	if (!pg_current_is_tracked())
		return;
	stats = bpf_map_lookup_elem(&pagefault_stats, &zero);
	if (!stats)
		return;
	stats->faults++;
	now = current_counters();
	tid = pg_current_tid();
	/* Only this thread (here and at its exit) writes its entry. */
	seen = bpf_map_lookup_elem(&counters_seen, &tid);
	if (!seen) {
		bpf_map_update_elem(&counters_seen, &tid, &now, BPF_ANY);
		return;
	}
	if (seen->reset_gen == now.reset_gen)
		add_growth(stats, seen, &now);
	*seen = now;
}

/* No tracked check: the tracker's own exit hook may already have forgotten
 * the thread, and only threads seen faulting while tracked have an entry. */
static __always_inline void on_exit(void)
{
	struct pg_pagefault_stats *stats;
	struct fault_counters now, *seen;
	__u32 tid = pg_current_tid(), zero = 0;

	seen = bpf_map_lookup_elem(&counters_seen, &tid);
	if (!seen)
		return;
	now = current_counters();
	stats = bpf_map_lookup_elem(&pagefault_stats, &zero);
	if (stats && seen->reset_gen == now.reset_gen)
		add_growth(stats, seen, &now);
	bpf_map_delete_elem(&counters_seen, &tid);
}

/* page_fault_user(unsigned long address, struct pt_regs *regs, unsigned long
 * error_code) is x86's; the body needs none of its arguments. */
SEC("tp_btf/page_fault_user")
int BPF_PROG(pagefault_fault_tp_btf)
{
	on_fault();
	return 0;
}

SEC("raw_tp/page_fault_user")
int BPF_PROG(pagefault_fault_raw_tp)
{
	on_fault();
	return 0;
}

SEC("tracepoint/exceptions/page_fault_user")
int pagefault_fault_tracepoint(void *ctx)
{
	on_fault();
	return 0;
}

/* sched_process_exit runs in the exiting thread's context. */
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

char LICENSE[] SEC("license") = "GPL";
