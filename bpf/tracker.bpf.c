// SPDX-License-Identifier: GPL-2.0
/* Follows the workload's process tree: a thread created by a tracked thread is
 * tracked (sched_process_fork runs in the parent's context, before the child
 * can run), and every thread leaves the map when it exits. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "function_hooks.bpf.h"

/* child: the new thread's task_struct where the hook has it trusted
 * (tp_btf), else NULL: only the tp_btf variant keeps the marks. */
static __always_inline void on_fork(struct task_struct *child, __u32 child_tid)
{
	struct pg_tracked_mark *mark;
	struct pg_tracked_gen *gen;
	__u32 zero = 0;
	__u64 parent = bpf_get_current_pid_tgid();
	__u32 parent_tid = (__u32)parent;
	__u32 *parent_tgid = bpf_map_lookup_elem(&pg_tracked, &parent_tid);
	__u32 value;

	if (!parent_tgid)
		return;
	/* The child's tgid is not known in every variant; record the parent's,
	 * which is the child's for a thread and informative for a process. */
	value = *parent_tgid;
	bpf_map_update_elem(&pg_tracked, &child_tid, &value, BPF_ANY);
	/* Before the child can run: the hook fires ahead of its first wakeup. */
	if (pg_tracked_marks && child) {
		gen = bpf_map_lookup_elem(&pg_tracked_gen, &zero);
		mark = bpf_task_storage_get(&pg_tracked_task, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (gen && mark)
			mark->epoch = gen->epoch;
		else if (gen)
			gen->epoch = 0; /* marks incomplete: the probes take the hash */
	}
	pg_tracked_changed();
}

/* The mark loses its epoch with the map entry: a dead thread still switches
 * out once, untracked. The mark itself stays until the task is freed, so
 * that a probe can still end there a wait the thread left open (offcpu: one
 * whose end the scheduler's tracepoint never reported). */
static __always_inline void on_exit(void)
{
	struct pg_tracked_mark *mark;
	__u32 tid = pg_current_tid();

	if (bpf_map_delete_elem(&pg_tracked, &tid) != 0)
		return;
	if (pg_tracked_marks) {
		mark = bpf_task_storage_get(&pg_tracked_task, bpf_get_current_task_btf(), 0, 0);
		if (mark)
			mark->epoch = 0;
	}
	pg_tracked_changed();
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tracker_fork_tp_btf, struct task_struct *parent, struct task_struct *child)
{
	on_fork(child, child->pid);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(tracker_fork_raw_tp, struct task_struct *parent, struct task_struct *child)
{
	on_fork(NULL, BPF_CORE_READ(child, pid));
	return 0;
}

SEC("tracepoint/sched/sched_process_fork")
int tracker_fork_tracepoint(struct trace_event_raw_sched_process_fork *ctx)
{
	on_fork(NULL, ctx->child_pid);
	return 0;
}

/* wake_up_new_task(p) runs in the parent's context for every new thread,
 * before the child first runs, like sched_process_fork just ahead of it. */
PG_FUNCTION_ENTRY_HOOK(tracker_fork, on_fork(NULL, BPF_CORE_READ(child, pid)), struct task_struct *child)

/* sched_process_exit runs in the exiting thread's context; so does
 * do_exit(), its caller. */
PG_FUNCTION_ENTRY_HOOK(tracker_exit, on_exit())

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tracker_exit_tp_btf)
{
	on_exit();
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(tracker_exit_raw_tp)
{
	on_exit();
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int tracker_exit_tracepoint(void *ctx)
{
	on_exit();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
