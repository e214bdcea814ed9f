// SPDX-License-Identifier: GPL-2.0
/* Scheduler event counts of tracked threads: context switches (counted when
 * the thread leaves the CPU), wakeups and migrations between CPUs. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "sched_stats.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_sched_stats);
} sched_stats SEC(".maps");

/* The stats of this CPU when thread `tid` (`task`, or NULL where the hook's
 * pointer is not trusted) counts; tid 0 is every CPU's idle task. */
static __always_inline struct pg_sched_stats *stats_for(struct task_struct *task, __u32 tid)
{
	__u32 zero = 0;

	if (tid == 0 || !pg_task_is_tracked(task, tid))
		return NULL;
	return bpf_map_lookup_elem(&sched_stats, &zero);
}

/* sched_switch runs in prev's context: prev is the current thread. */
static __always_inline void on_switch(struct task_struct *prev, __u32 prev_tid)
{
	struct pg_sched_stats *stats;
	__u32 zero = 0;

	if (prev_tid == 0 || !pg_current_task_is_tracked(prev))
		return;
	stats = bpf_map_lookup_elem(&sched_stats, &zero);
	if (stats)
		stats->switches++;
}

static __always_inline void on_wakeup(struct task_struct *task, __u32 tid)
{
	struct pg_sched_stats *stats = stats_for(task, tid);

	if (stats)
		stats->wakeups++;
}

static __always_inline void on_migrate(struct task_struct *task, __u32 tid)
{
	struct pg_sched_stats *stats = stats_for(task, tid);

	if (stats)
		stats->migrations++;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_tp_btf, bool preempt, struct task_struct *prev)
{
	on_switch(prev, prev->pid);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw_tp, bool preempt, struct task_struct *prev)
{
	on_switch(NULL, BPF_CORE_READ(prev, pid));
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int sched_switch_tracepoint(struct trace_event_raw_sched_switch *ctx)
{
	on_switch(NULL, ctx->prev_pid);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup_tp_btf, struct task_struct *p)
{
	on_wakeup(p, p->pid);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(sched_wakeup_raw_tp, struct task_struct *p)
{
	on_wakeup(NULL, BPF_CORE_READ(p, pid));
	return 0;
}

SEC("tracepoint/sched/sched_wakeup")
int sched_wakeup_tracepoint(struct trace_event_raw_sched_wakeup_template *ctx)
{
	on_wakeup(NULL, ctx->pid);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(sched_migrate_tp_btf, struct task_struct *p)
{
	on_migrate(p, p->pid);
	return 0;
}

SEC("raw_tp/sched_migrate_task")
int BPF_PROG(sched_migrate_raw_tp, struct task_struct *p)
{
	on_migrate(NULL, BPF_CORE_READ(p, pid));
	return 0;
}

SEC("tracepoint/sched/sched_migrate_task")
int sched_migrate_tracepoint(struct trace_event_raw_sched_migrate_task *ctx)
{
	on_migrate(NULL, ctx->pid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
