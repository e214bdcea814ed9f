// SPDX-License-Identifier: GPL-2.0
/* Run-queue latency: time from a thread becoming runnable (woken, or
 * preempted while still runnable) to it running on a CPU. And "who held the
 * CPU": of each such wait of a tracked thread, the time the CPU whose run
 * queue it waited on spent running tasks of other processes, summed per
 * holder's comm.
 *
 * The holder accounting costs a switch nothing beyond one array lookup
 * while no tracked thread waits on that CPU: it runs only when a tracked
 * thread starts or ends a wait, and at the switches of a CPU that a tracked
 * thread waits on. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "hist.bpf.h"
#include "runqlat.h"
#include "stats.h"
#include "task_state.bpf.h"
#include "trace_events.bpf.h"

/* Runnable threads at once, system-wide: far above any run-queue length. */
#define RUNNABLE_MAX 16384
/* Distinct comms that held a CPU a tracked thread waited for, per repetition. */
#define HOLDERS_MAX 1024
/* Resized to the possible CPUs before load. */
#define CPUS_MAX 4096
/* A wait whose CPU is not known (its CPU id was beyond the array). */
#define NO_CPU 0xffffffffu

/* A tracked thread's wait is kept in its mark (struct pg_tracked_mark)
 * where the hook has the thread's task_struct and the marks are kept; else
 * here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RUNNABLE_MAX);
	__type(key, __u32); /* thread id */
	__type(value, struct pg_runq_wait); /* cpu NO_CPU when not known */
} runnable_since SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CPUS_MAX);
	__type(key, __u32); /* CPU id */
	__type(value, struct pg_runq_cpu);
} runq_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HOLDERS_MAX);
	__type(key, struct pg_runq_holder_key);
	__type(value, __u64); /* ns it ran on CPUs a tracked thread waited for */
} runq_holders SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_runqlat_stats);
} runqlat_stats SEC(".maps");

static __always_inline struct pg_runqlat_stats *this_cpu_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&runqlat_stats, &zero);
}

/* NULL in system scope, where every task is the workload's and no CPU is
 * held by others: the verifier then drops the holder accounting. */
static __always_inline struct pg_runq_cpu *runq_cpu(__u32 cpu)
{
	if (!pg_filter_tracked)
		return NULL;
	return bpf_map_lookup_elem(&runq_cpus, &cpu);
}

/* The current task's comm (sched_switch runs in prev's context) is charged
 * `ns` of a CPU a tracked thread waited for. */
static __always_inline void add_holder(__u64 ns)
{
	struct pg_runq_holder_key key = {};
	struct pg_runqlat_stats *stats;
	__u64 *total, zero = 0;

	bpf_get_current_comm(key.comm, sizeof(key.comm));
	total = bpf_map_lookup_elem(&runq_holders, &key);
	if (!total) {
		bpf_map_update_elem(&runq_holders, &key, &zero, BPF_NOEXIST);
		total = bpf_map_lookup_elem(&runq_holders, &key);
	}
	if (total) {
		__sync_fetch_and_add(total, ns);
		return;
	}
	stats = this_cpu_stats();
	if (stats)
		stats->holder_drops++;
}

/* The held time of `c` at `now`: its closed stretches, plus the current
 * one when its task is known to be another process's. */
static __always_inline __u64 held_now(struct pg_runq_cpu *c, __u64 now)
{
	__u64 held = c->held_ns, since = c->since;

	if (since && c->holder == PG_RUNQ_HOLDER_OTHER && now > since)
		held += now - since;
	return held;
}

static __always_inline void leave_queue(__u32 cpu)
{
	struct pg_runq_cpu *c;

	if (cpu == NO_CPU)
		return;
	c = runq_cpu(cpu);
	if (c)
		__sync_fetch_and_add(&c->waiting, -1);
}

/* The wait of tracked thread `tid` in progress, or NULL: in `mark`, the
 * thread's mark, where the marks tell (see pg_task_mark()), else in the
 * hash map. */
static __always_inline struct pg_runq_wait *wait_of(struct pg_tracked_mark *mark, __u32 tid)
{
	if (mark)
		return mark->runq.since ? &mark->runq : NULL;
	return bpf_map_lookup_elem(&runnable_since, &tid);
}

/* Wait `w` of wait_of(mark, tid) is over. */
static __always_inline void wait_done(struct pg_tracked_mark *mark, struct pg_runq_wait *w, __u32 tid)
{
	if (mark)
		w->since = 0;
	else
		bpf_map_delete_elem(&runnable_since, &tid);
}

/* Thread `tid` (tracked; its mark as for wait_of()) waits on `cpu`'s run
 * queue from `now`. */
static __always_inline void start_wait(struct pg_tracked_mark *mark, __u32 tid, __u32 cpu, __u64 now)
{
	struct pg_runq_wait *w = wait_of(mark, tid);
	struct pg_runq_cpu *c = runq_cpu(cpu);
	struct pg_runq_wait fresh = {.since = now, .cpu = NO_CPU};

	/* Marked already: woken while still queued or running (a wakeup that
	 * raced its sleep). The wait starts again from here. */
	if (w)
		leave_queue(w->cpu);
	if (c) {
		if (!c->since) {
			/* Its current task is not at hand on this CPU; the switch
			 * that ends its run decides whether it counts. */
			c->holder = PG_RUNQ_HOLDER_UNKNOWN;
			c->since = now;
		}
		fresh.held_at_start = held_now(c, now);
		fresh.cpu = cpu;
		__sync_fetch_and_add(&c->waiting, 1);
	}
	if (w) {
		*w = fresh;
		return;
	}
	if (mark) {
		mark->runq = fresh;
		return;
	}
	if (bpf_map_update_elem(&runnable_since, &tid, &fresh, BPF_ANY) != 0)
		leave_queue(fresh.cpu);
}

/* A tracked thread going to sleep with a mark: from a wakeup that raced its
 * previous sleep, while it was still running. It is not waiting. */
static __always_inline void drop_stale_wait(struct pg_tracked_mark *mark, __u32 tid)
{
	struct pg_runq_wait *w = wait_of(mark, tid);

	if (!w)
		return;
	leave_queue(w->cpu);
	wait_done(mark, w, tid);
}

/* Thread `tid` runs on `cpu` (`here`) at `now` after waiting since w->since. */
static __always_inline void end_wait(struct pg_tracked_mark *mark, struct pg_runq_wait *w, __u32 tid, __u32 cpu,
				      struct pg_runq_cpu *here, __u64 now)
{
	struct pg_runqlat_stats *stats;
	struct pg_runq_cpu *c = NULL;
	__u64 delta = now - w->since, behind = 0, held;

	if (w->cpu == cpu)
		c = here;
	else if (w->cpu != NO_CPU)
		c = runq_cpu(w->cpu); /* migrated while it waited: its first CPU's closed stretches */
	if (c) {
		held = c->held_ns;
		if (held > w->held_at_start)
			behind = held - w->held_at_start;
		if (behind > delta)
			behind = delta;
		__sync_fetch_and_add(&c->waiting, -1);
	}
	wait_done(mark, w, tid);
	stats = this_cpu_stats();
	if (stats) {
		pg_hist_add(stats->hist, delta);
		stats->wait_ns += delta;
		stats->behind_others_ns += behind;
	}
	/* next's process is not at hand here; user space looks it up. */
	if (pg_trace_enabled)
		pg_trace_emit(PG_TRACE_RUNQ_LATENCY, 0, 0, tid, now, delta);
}

/* task: the thread's task_struct where the hook's pointer is trusted
 * (tp_btf), else NULL; the run queue it was put on is `cpu_of`'s CPU, or
 * `cpu` where the hook gives it (the tracepoint). Read only for tracked
 * threads: most wakeups of the machine are not theirs. */
static __always_inline void on_runnable(struct task_struct *task, __u32 tid, struct task_struct *cpu_of, __u32 cpu)
{
	struct pg_tracked_mark *mark;
	bool told;

	/* Every CPU's idle task has tid 0 and never waits on a run queue. */
	if (tid == 0)
		return;
	mark = pg_task_mark(task, &told);
	if (told ? !mark : !pg_is_tracked(tid))
		return;
	if (cpu_of)
		cpu = pg_task_cpu(cpu_of);
	start_wait(mark, tid, cpu, bpf_ktime_get_ns());
}

static __always_inline void on_switch(struct task_struct *prev, __u32 prev_tid, bool prev_runnable,
				      struct task_struct *next, __u32 next_tid)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct pg_runq_cpu *here = runq_cpu(cpu);
	__u64 holder = PG_RUNQ_HOLDER_UNKNOWN, now = 0, since;
	struct pg_tracked_mark *prev_mark = NULL, *next_mark;
	int prev_tracked = -1;
	struct pg_runq_wait *w;
	bool next_told;

	/* A tracked thread waits on this CPU: prev ran while it did. */
	if (here && (since = here->since)) {
		now = bpf_ktime_get_ns();
		holder = here->holder;
		/* Closed before a wait can start below, which reads it. */
		here->since = 0;
		if (holder == PG_RUNQ_HOLDER_UNKNOWN) {
			prev_tracked = prev_tid == 0 || pg_current_task_tracked_mark(prev, &prev_mark);
			holder = prev_tracked ? PG_RUNQ_HOLDER_NONE : PG_RUNQ_HOLDER_OTHER;
		}
		if (holder == PG_RUNQ_HOLDER_OTHER && now > since) {
			here->held_ns += now - since;
			add_holder(now - since);
		}
		holder = PG_RUNQ_HOLDER_UNKNOWN;
	}
	/* sched_switch runs in prev's context: prev is the current thread. */
	if (prev_tid != 0 && (prev_runnable || (here && here->waiting > 0))) {
		if (prev_tracked < 0)
			prev_tracked = pg_current_task_tracked_mark(prev, &prev_mark);
		if (prev_tracked && prev_runnable) {
			if (!now)
				now = bpf_ktime_get_ns();
			start_wait(prev_mark, prev_tid, cpu, now);
		} else if (prev_tracked) {
			drop_stale_wait(prev_mark, prev_tid);
		}
	}
	/* Most threads of the machine are not tracked, and their mark says so
	 * without the hash lookup below. */
	next_mark = pg_task_mark(next, &next_told);
	if (next_tid == 0) {
		holder = PG_RUNQ_HOLDER_NONE;
	} else if (next_told && !next_mark) {
		holder = PG_RUNQ_HOLDER_OTHER;
	} else {
		w = wait_of(next_mark, next_tid);
		if (w) {
			if (!now)
				now = bpf_ktime_get_ns();
			end_wait(next_mark, w, next_tid, cpu, here, now);
			holder = PG_RUNQ_HOLDER_NONE;
		} else if (next_told) {
			holder = PG_RUNQ_HOLDER_NONE;
		}
	}
	if (here && here->waiting > 0) {
		if (!now)
			now = bpf_ktime_get_ns();
		here->holder = holder;
		here->since = now;
	}
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(runqlat_wakeup_tp_btf, struct task_struct *p)
{
	on_runnable(p, p->pid, p, 0);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(runqlat_wakeup_raw_tp, struct task_struct *p)
{
	on_runnable(NULL, BPF_CORE_READ(p, pid), p, 0);
	return 0;
}

SEC("tracepoint/sched/sched_wakeup")
int runqlat_wakeup_tracepoint(struct trace_event_raw_sched_wakeup_template *ctx)
{
	on_runnable(NULL, ctx->pid, NULL, ctx->target_cpu);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(runqlat_wakeup_new_tp_btf, struct task_struct *p)
{
	on_runnable(p, p->pid, p, 0);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(runqlat_wakeup_new_raw_tp, struct task_struct *p)
{
	on_runnable(NULL, BPF_CORE_READ(p, pid), p, 0);
	return 0;
}

SEC("tracepoint/sched/sched_wakeup_new")
int runqlat_wakeup_new_tracepoint(struct trace_event_raw_sched_wakeup_template *ctx)
{
	on_runnable(NULL, ctx->pid, NULL, ctx->target_cpu);
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
