// SPDX-License-Identifier: GPL-2.0
/* Off-CPU time: from a tracked thread leaving the CPU to it running again,
 * split by why it left (its state at switch-out). Both ends are
 * sched_switch, which runs in prev's context: prev leaves, next returns.
 *
 * Not every switch reaches the tracepoint: some kernels leave out the
 * switches away from their own agents' threads (a VM's init: none of its
 * threads is ever a traced prev), which are then also the switches that
 * bring a tracked thread back. A thread that leaves the CPU, or dies, with
 * its wait still open came back unseen; the wait ends then, at the
 * return its runtime since points to (unseen_return_wait). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "hist.bpf.h"
#include "offcpu.h"
#include "stacks.bpf.h"
#include "task_state.bpf.h"
#include "trace_events.bpf.h"

/* task_struct::__state bits (macros, so not in vmlinux.h). */
#define PG_TASK_INTERRUPTIBLE 0x1
#define PG_TASK_UNINTERRUPTIBLE 0x2
#define PG_TASK_DEAD 0x80
#define PG_TASK_NOLOAD 0x400

/* sched_switch's tracepoint reports the state as one bit per letter of ps:
 * S, D, T, t, X, Z, P, I; see __trace_sched_switch_state(). */
#define PG_REPORT_SLEEPING 0x1
#define PG_REPORT_DISK 0x2
#define PG_REPORT_DEAD 0x10
#define PG_REPORT_ZOMBIE 0x20
#define PG_REPORT_IDLE 0x80

/* Not a wait: the thread's last switch-out, it never runs again. */
#define PG_OFFCPU_NONE -1

/* Set by user space for the `stacks` parameter; false lets the verifier drop
 * every stack path, and the stack maps are shrunk to one entry. */
const volatile bool capture_stacks = false;

/* Threads off-CPU at once that can be followed: sleeping threads of the whole
 * machine in system scope. */
#define OFFCPU_MAX 16384

struct offcpu_start {
	__u64 ts;                  /* ktime at switch-out; 0 once the wait ended */
	__u32 reason;              /* PG_OFFCPU_* */
	struct pg_stack_key stack; /* tgid, and the stacks when captured */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX);
	__type(key, __u32); /* thread id */
	__type(value, struct offcpu_start);
} offcpu_since SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PG_OFFCPU_REASONS);
	__type(key, __u32); /* PG_OFFCPU_* */
	__type(value, struct pg_offcpu_stats);
} offcpu_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_offcpu_drops);
} offcpu_drops SEC(".maps");

PG_STACK_MAP(offcpu_stacks);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct pg_stack_key);
	__type(value, struct pg_offcpu_stack_total);
} offcpu_by_stack SEC(".maps");

static __always_inline struct pg_offcpu_drops *drops(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&offcpu_drops, &zero);
}

/* From task_struct::__state (tp_btf, raw_tp) and sched_switch's preempt flag.
 * A preempted thread never left the run queue, whatever its state says. */
static __always_inline int reason_of_state(bool preempt, long state)
{
	if (preempt || state == TASK_RUNNING)
		return PG_OFFCPU_PREEMPTED;
	if (state & PG_TASK_DEAD)
		return PG_OFFCPU_NONE;
	/* TASK_IDLE is uninterruptible only so that signals do not wake it;
	 * it is an idle wait, not load. */
	if (state & PG_TASK_NOLOAD)
		return PG_OFFCPU_SLEEP;
	if (state & PG_TASK_UNINTERRUPTIBLE)
		return PG_OFFCPU_IO;
	if (state & PG_TASK_INTERRUPTIBLE)
		return PG_OFFCPU_SLEEP;
	return PG_OFFCPU_OTHER;
}

/* From the tracepoint's prev_state: TASK_REPORT_MAX (0x100) when preempted,
 * 0 when runnable, else one bit per state. */
static __always_inline int reason_of_report(long report)
{
	if ((report & ~PG_TASK_REPORT_PREEMPTED) == 0)
		return PG_OFFCPU_PREEMPTED;
	if (report & (PG_REPORT_DEAD | PG_REPORT_ZOMBIE))
		return PG_OFFCPU_NONE;
	if (report & PG_REPORT_IDLE)
		return PG_OFFCPU_SLEEP;
	if (report & PG_REPORT_DISK)
		return PG_OFFCPU_IO;
	if (report & PG_REPORT_SLEEPING)
		return PG_OFFCPU_SLEEP;
	return PG_OFFCPU_OTHER;
}

/* io_schedule() marks the thread; some of its callers sleep interruptibly. */
static __always_inline bool current_in_iowait(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ_BITFIELD_PROBED(task, in_iowait);
}

static __always_inline void add_to_stack(const struct offcpu_start *start, __u64 delta)
{
	struct pg_stack_key key = start->stack;
	struct pg_offcpu_stack_total *total, zero = {};
	struct pg_offcpu_drops *lost;

	if (key.kernel_stack < 0 && key.user_stack < 0)
		return;
	key.reason = start->reason;
	total = pg_stack_sum(&offcpu_by_stack, &key, &zero);
	if (!total) {
		if ((lost = drops()))
			lost->stack_sums++;
		return;
	}
	/* Shared by every CPU. */
	__sync_fetch_and_add(&total->time_ns, delta);
	__sync_fetch_and_add(&total->count, 1);
}

/* A wait of `reason` of thread `tid` (of process `tgid`) from `since` ended
 * `delta` later. */
static __always_inline void add_wait(__u32 reason, __u32 tgid, __u32 tid, __u64 since, __u64 delta)
{
	struct pg_offcpu_stats *stats = bpf_map_lookup_elem(&offcpu_stats, &reason);

	if (stats) {
		stats->time_ns += delta;
		pg_hist_add(stats->hist, delta);
	}
	if (pg_trace_enabled && delta >= pg_trace_long_offcpu_ns)
		pg_trace_emit(PG_TRACE_OFFCPU, reason, tgid, tid, since, delta);
}

/* The CPU time the current thread has run since it last came onto a CPU:
 * the scheduler's runtime of it since it was last picked. */
static __always_inline __u64 current_ran_ns(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 sum = BPF_CORE_READ(task, se.sum_exec_runtime);
	__u64 picked = BPF_CORE_READ(task, se.prev_sum_exec_runtime);

	return sum > picked ? sum - picked : 0;
}

/* The wait since `since` of the current thread, which came back to the CPU
 * without a traced switch and is leaving it again at `now`: it ended when
 * the thread came back, its runtime since before now (a little later than
 * that where interrupts or a hypervisor took time from its runtime). */
static __always_inline __u64 unseen_return_wait(__u64 since, __u64 now)
{
	__u64 ran = current_ran_ns(), back = now > ran ? now - ran : 0;

	return back > since ? back - since : 0;
}

/* The wait `start` of thread `tid` (hash map) ended `delta` after it began. */
static __always_inline void end_wait(struct offcpu_start *start, __u32 tid, __u64 delta)
{
	add_wait(start->reason, start->stack.tgid, tid, start->ts, delta);
	if (capture_stacks)
		add_to_stack(start, delta);
	/* Ended even if the delete below fails: it must not end twice. */
	start->ts = 0;
	bpf_map_delete_elem(&offcpu_since, &tid);
}

/* A tracked thread leaves the CPU: its wait is kept in `mark`, its mark,
 * where the marks tell (see pg_task_mark()) and no stacks are captured,
 * else in the hash map. A wait still open came back unseen; it ends first. */
static __always_inline void on_leave(void *ctx, struct pg_tracked_mark *mark, __u32 tid, int reason, __u64 now)
{
	struct offcpu_start start = {}, *open;
	struct pg_offcpu_drops *lost;

	start.ts = now;
	start.reason = reason == PG_OFFCPU_SLEEP && current_in_iowait() ? PG_OFFCPU_IO : reason;
	start.stack.tgid = bpf_get_current_pid_tgid() >> 32; /* prev is current */
	if (mark && !capture_stacks) {
		if (mark->offcpu.since)
			add_wait(mark->offcpu.reason, mark->offcpu.tgid, tid, mark->offcpu.since,
				 unseen_return_wait(mark->offcpu.since, now));
		mark->offcpu.reason = start.reason;
		mark->offcpu.tgid = start.stack.tgid;
		mark->offcpu.since = now;
		return;
	}
	open = bpf_map_lookup_elem(&offcpu_since, &tid);
	if (open && open->ts)
		end_wait(open, tid, unseen_return_wait(open->ts, now));
	start.stack.kernel_stack = -1;
	start.stack.user_stack = -1;
	if (capture_stacks) {
		/* A user stack fails for kernel threads, which have none: not a drop. */
		pg_capture_stacks(ctx, &offcpu_stacks, &start.stack);
		if (start.stack.kernel_stack < 0 && (lost = drops()))
			lost->stacks++;
	}
	if (bpf_map_update_elem(&offcpu_since, &tid, &start, BPF_ANY) != 0 && (lost = drops()))
		lost->starts++;
}

/* task: next's task_struct where the hook's pointer is trusted, else NULL. */
static __always_inline void on_return(struct task_struct *task, __u32 tid)
{
	struct pg_tracked_mark *mark;
	struct offcpu_start *start;
	__u64 since;
	bool told;

	/* Most threads of the machine are not tracked, and their mark says so
	 * without the hash lookup below. */
	mark = pg_task_mark(task, &told);
	if (told && !mark)
		return;
	if (mark && !capture_stacks) {
		since = mark->offcpu.since;
		if (!since)
			return;
		mark->offcpu.since = 0;
		add_wait(mark->offcpu.reason, mark->offcpu.tgid, tid, since, bpf_ktime_get_ns() - since);
		return;
	}
	start = bpf_map_lookup_elem(&offcpu_since, &tid);
	if (!start)
		return;
	/* The tracker may have forgotten the thread since (a new repetition). */
	if (!start->ts || (!told && !pg_is_tracked(tid))) {
		bpf_map_delete_elem(&offcpu_since, &tid);
		return;
	}
	end_wait(start, tid, bpf_ktime_get_ns() - start->ts);
}

/* A thread's last switch-out: it died, and the tracker no longer tracks it.
 * A wait it left open came back unseen, and ends here. */
static __always_inline void on_death(struct task_struct *prev, __u32 tid)
{
	struct pg_tracked_mark *mark;
	struct offcpu_start *start;
	__u64 since;

	/* The tracker leaves a dead thread's mark with no epoch (tracker.bpf.c). */
	if (pg_tracked_marks && prev && !capture_stacks) {
		mark = bpf_task_storage_get(&pg_tracked_task, prev, 0, 0);
		if (mark && mark->epoch == 0 && (since = mark->offcpu.since)) {
			mark->offcpu.since = 0;
			add_wait(mark->offcpu.reason, mark->offcpu.tgid, tid, since,
				 unseen_return_wait(since, bpf_ktime_get_ns()));
		}
	}
	/* Only a tracked thread's wait is kept, and Reset() empties the map. */
	start = bpf_map_lookup_elem(&offcpu_since, &tid);
	if (start && start->ts)
		end_wait(start, tid, unseen_return_wait(start->ts, bpf_ktime_get_ns()));
}

/* Most switches of the machine are of untracked threads: the clock is read
 * only for a tracked thread leaving or a followed one returning. prev is
 * current (sched_switch runs in its context), so the per-CPU answer of
 * filter.bpf.h filters it without a hash lookup while the same thread keeps
 * leaving the CPU. */
static __always_inline void on_switch(void *ctx, struct task_struct *prev, __u32 prev_tid, int reason,
				      struct task_struct *next, __u32 next_tid)
{
	struct pg_tracked_mark *mark;

	/* Every CPU's idle task has tid 0; its "off-CPU" time is busy time. */
	if (prev_tid != 0 && reason == PG_OFFCPU_NONE)
		on_death(prev, prev_tid);
	else if (prev_tid != 0 && pg_current_task_tracked_mark(prev, &mark))
		on_leave(ctx, mark, prev_tid, reason, bpf_ktime_get_ns());
	if (next_tid != 0)
		on_return(next, next_tid);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_tp_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(ctx, prev, prev->pid, reason_of_state(preempt, pg_task_state(prev)), next, next->pid);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_switch_raw_tp, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(ctx, NULL, BPF_CORE_READ(prev, pid), reason_of_state(preempt, pg_task_state(prev)), NULL,
		  BPF_CORE_READ(next, pid));
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int offcpu_switch_tracepoint(struct trace_event_raw_sched_switch *ctx)
{
	on_switch(ctx, NULL, ctx->prev_pid, reason_of_report(ctx->prev_state), NULL, ctx->next_pid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
