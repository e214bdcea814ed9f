// SPDX-License-Identifier: GPL-2.0
/* Run-queue latency: time from a thread becoming runnable (woken, or
 * preempted while still runnable) to it running on a CPU. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "hist.bpf.h"
#include "stats.h"
#include "task_state.bpf.h"
#include "trace_events.bpf.h"

/* Runnable threads at once, system-wide: far above any run-queue length. */
#define RUNNABLE_MAX 16384

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RUNNABLE_MAX);
	__type(key, __u32);   /* thread id */
	__type(value, __u64); /* ktime when it became runnable */
} runnable_since SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_runqlat_stats);
} runqlat_stats SEC(".maps");

static __always_inline void mark_runnable(__u32 tid)
{
	__u64 now = bpf_ktime_get_ns();

	bpf_map_update_elem(&runnable_since, &tid, &now, BPF_ANY);
}

/* task: the thread's task_struct where the hook's pointer is trusted
 * (tp_btf), else NULL. */
static __always_inline void on_runnable(struct task_struct *task, __u32 tid)
{
	/* Every CPU's idle task has tid 0 and never waits on a run queue. */
	if (tid != 0 && pg_task_is_tracked(task, tid))
		mark_runnable(tid);
}

static __always_inline void on_switch(struct task_struct *prev, __u32 prev_tid, bool prev_runnable,
				      struct task_struct *next, __u32 next_tid)
{
	struct pg_runqlat_stats *stats;
	__u32 zero = 0;
	__u64 *since, now, delta;

	/* sched_switch runs in prev's context: prev is the current thread. */
	if (prev_runnable && prev_tid != 0 && pg_current_task_is_tracked(prev))
		mark_runnable(prev_tid);
	/* Most threads of the machine are not tracked, and their mark says so
	 * without the hash lookup below. */
	if (pg_task_mark_verdict(next) == 0)
		return;
	since = bpf_map_lookup_elem(&runnable_since, &next_tid);
	if (!since)
		return;
	now = bpf_ktime_get_ns();
	delta = now - *since;
	bpf_map_delete_elem(&runnable_since, &next_tid);
	stats = bpf_map_lookup_elem(&runqlat_stats, &zero);
	if (stats)
		pg_hist_add(stats->hist, delta);
	/* next's process is not at hand here; user space looks it up. */
	if (pg_trace_enabled)
		pg_trace_emit(PG_TRACE_RUNQ_LATENCY, 0, 0, next_tid, now, delta);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(runqlat_wakeup_tp_btf, struct task_struct *p)
{
	on_runnable(p, p->pid);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(runqlat_wakeup_raw_tp, struct task_struct *p)
{
	on_runnable(NULL, BPF_CORE_READ(p, pid));
	return 0;
}

SEC("tracepoint/sched/sched_wakeup")
int runqlat_wakeup_tracepoint(struct trace_event_raw_sched_wakeup_template *ctx)
{
	on_runnable(NULL, ctx->pid);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(runqlat_wakeup_new_tp_btf, struct task_struct *p)
{
	on_runnable(p, p->pid);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(runqlat_wakeup_new_raw_tp, struct task_struct *p)
{
	on_runnable(NULL, BPF_CORE_READ(p, pid));
	return 0;
}

SEC("tracepoint/sched/sched_wakeup_new")
int runqlat_wakeup_new_tracepoint(struct trace_event_raw_sched_wakeup_template *ctx)
{
	on_runnable(NULL, ctx->pid);
	return 0;
}

/* A preempted thread never left the run queue, whatever its state says. */
SEC("tp_btf/sched_switch")
int BPF_PROG(runqlat_switch_tp_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(prev, prev->pid, preempt || pg_task_state(prev) == TASK_RUNNING, next, next->pid);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(runqlat_switch_raw_tp, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(NULL, BPF_CORE_READ(prev, pid), preempt || pg_task_state(prev) == TASK_RUNNING, NULL,
		  BPF_CORE_READ(next, pid));
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int runqlat_switch_tracepoint(struct trace_event_raw_sched_switch *ctx)
{
	/* The tracepoint reports a preempted thread as TASK_REPORT_MAX (0x100)
	 * and a runnable one as 0. */
	on_switch(NULL, ctx->prev_pid, (ctx->prev_state & ~PG_TASK_REPORT_PREEMPTED) == 0, NULL, ctx->next_pid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
