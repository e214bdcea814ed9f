// SPDX-License-Identifier: GPL-2.0
/* Process lifecycle of the workload tree: new processes and new threads made
 * by tracked threads, execs, and the exit and lifetime (fork to exit) of
 * every process forked in the tree.
 *
 * Exits are not filtered on the tracked map: the tracker's own
 * sched_process_exit program was attached first, so it runs first and has
 * already forgotten the exiting thread. A process counts at exit when its
 * fork was counted, which `born` remembers by tgid. The workload's root
 * process was forked before it was tracked, so its exit is not counted:
 * proc.exits matches proc.forks once every child has exited. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "function_hooks.bpf.h"
#include "hist.bpf.h"
#include "lifecycle.h"

/* Processes forked in the tree (the whole machine in system scope) alive at once. */
#define BORN_MAX 16384

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BORN_MAX);
	__type(key, __u32);   /* tgid of a process forked in the tree */
	__type(value, __u64); /* ktime at its fork */
} born SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_lifecycle_stats);
} lifecycle_stats SEC(".maps");

static __always_inline struct pg_lifecycle_stats *stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&lifecycle_stats, &zero);
}

/* Runs in the parent's context, and the tracker tracks the child only if the
 * parent is tracked: filter on the parent. */
static __always_inline void on_fork(__u32 child_pid, bool thread)
{
	struct pg_lifecycle_stats *s;
	__u64 now;

	if (!pg_current_is_tracked())
		return;
	s = stats();
	if (!s)
		return;
	if (thread) {
		s->threads++;
		return;
	}
	s->forks++;
	now = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&born, &child_pid, &now, BPF_ANY) != 0)
		s->lost++;
}

/* A non-leader thread that execs takes over its leader's pid (de_thread), so
 * current's tid may not be the one the tracker knows; old_pid is. */
static __always_inline void on_exec(__u32 old_pid)
{
	struct pg_lifecycle_stats *s;

	if (!pg_current_is_tracked() && !pg_is_tracked(old_pid))
		return;
	s = stats();
	if (s)
		s->execs++;
}

/* Runs in the exiting thread's context, once per thread. The process is gone
 * when its live-thread count has dropped to zero (decremented just before
 * the tracepoint). Threads exiting together may all see zero; only the one
 * whose delete succeeds counts the process. */
static __always_inline void on_exit(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pg_lifecycle_stats *s;
	__u32 tgid;
	__u64 *forked_at, lifetime;

	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return;
	tgid = bpf_get_current_pid_tgid() >> 32;
	forked_at = bpf_map_lookup_elem(&born, &tgid);
	if (!forked_at)
		return;
	lifetime = bpf_ktime_get_ns() - *forked_at;
	if (bpf_map_delete_elem(&born, &tgid) != 0)
		return;
	s = stats();
	if (!s)
		return;
	s->exits++;
	pg_hist_add(s->hist, lifetime);
}

/* The tracepoint names only the child's pid. A new process (not
 * CLONE_THREAD) has just been appended to the children of its parent,
 * current (unless CLONE_PARENT, which this counts as a thread); a new thread
 * is on no children list. */
static __always_inline bool is_last_child_of_current(__u32 pid)
{
	struct task_struct *parent = (struct task_struct *)bpf_get_current_task();
	struct list_head *last = BPF_CORE_READ(parent, children.prev);
	struct task_struct *child;

	if (!last || (void *)last == (void *)&parent->children)
		return false;
	child = (void *)last - bpf_core_field_offset(struct task_struct, sibling);
	return BPF_CORE_READ(child, pid) == pid;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(lifecycle_fork_tp_btf, struct task_struct *parent, struct task_struct *child)
{
	on_fork(child->pid, child->pid != child->tgid);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(lifecycle_fork_raw_tp, struct task_struct *parent, struct task_struct *child)
{
	on_fork(BPF_CORE_READ(child, pid), BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid));
	return 0;
}

SEC("tracepoint/sched/sched_process_fork")
int lifecycle_fork_tracepoint(struct trace_event_raw_sched_process_fork *ctx)
{
	on_fork(ctx->child_pid, !is_last_child_of_current(ctx->child_pid));
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(lifecycle_exec_tp_btf, struct task_struct *p, pid_t old_pid)
{
	on_exec(old_pid);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(lifecycle_exec_raw_tp, struct task_struct *p, pid_t old_pid)
{
	on_exec(old_pid);
	return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int lifecycle_exec_tracepoint(struct trace_event_raw_sched_process_exec *ctx)
{
	on_exec(ctx->old_pid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(lifecycle_exit_tp_btf)
{
	on_exit();
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(lifecycle_exit_raw_tp)
{
	on_exit();
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int lifecycle_exit_tracepoint(void *ctx)
{
	on_exit();
	return 0;
}

/* wake_up_new_task(child): in the parent, just after sched_process_fork. */
PG_FUNCTION_ENTRY_HOOK(lifecycle_fork,
		       on_fork(BPF_CORE_READ(child, pid), BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid)),
		       struct task_struct *child)

/* bprm_execve() returning 0: the exec succeeded, in the new program, where
 * sched_process_exec fires just before (from exec_binprm, which is inlined).
 * A thread that exec'd now has the leader's id, which the tracker had. */
PG_FUNCTION_RESULT_HOOK(lifecycle_exec, if (ret == 0) on_exec(pg_current_tid()))

/* taskstats_exit(task, group_dead): in do_exit() after signal->live was
 * decremented, as at sched_process_exit (on_exit reads it); do_exit()'s
 * entry is too early for that. */
PG_FUNCTION_ENTRY_HOOK(lifecycle_exit, on_exit())

char LICENSE[] SEC("license") = "GPL";
