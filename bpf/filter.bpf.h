/* Workload scoping shared by every probe. The tracker object owns the map;
 * a workload-scope probe reuses its fd before load (bpf_map__reuse_fd), so
 * every object names it identically. Keys are thread ids, not tgids: the
 * tracepoint variants of sched_wakeup, sched_switch and sched_process_fork
 * only expose thread ids, and a thread-keyed map lets every variant filter the
 * same way with one hash lookup. */
#ifndef PERFGATE_FILTER_BPF_H
#define PERFGATE_FILTER_BPF_H

#include "filter.h"

/* Set to false through rodata in system scope; the verifier then drops the
 * lookup entirely. */
const volatile bool pg_filter_tracked = true;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PG_TRACKED_MAX);
	/* Entries are added at fork only; allocating them then is cheaper than
	 * preallocating 64k elements per object. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);   /* thread id */
	__type(value, __u32); /* its tgid, for inspection */
} pg_tracked SEC(".maps");

/* Shared like pg_tracked. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_tracked_gen);
} pg_tracked_gen SEC(".maps");

/* True when every tracked thread carries a mark in pg_tracked_task (shared
 * like pg_tracked): the tracker sets it for itself where task-local storage
 * works, and for a probe when its fork hook has the child's task_struct to
 * mark (tp_btf). A hook that holds a trusted task_struct then tells whether
 * that thread is tracked from the task itself: a thread never marked has no
 * storage, and the lookup ends at one pointer in a task_struct the
 * scheduler has just touched, where a lookup in the 64k-bucket hash map
 * missed the cache (sched_wakeup cost ~450 ns a run with the hash, on
 * every wakeup of the machine). */
const volatile bool pg_tracked_marks = false;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pg_tracked_mark);
} pg_tracked_task SEC(".maps");

/* Each object's last answer per CPU: whether thread `pid_tgid` was tracked
 * when the map was at generation (kernel_gen, user_gen). Events come in
 * bursts from one thread (a page fault allocating, a syscall loop), so most
 * checks end here instead of in the hash map. */
struct pg_tracked_answer {
	__u64 pid_tgid;
	__u64 tracked;
	__u64 kernel_gen;
	__u64 user_gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_tracked_answer);
} pg_tracked_answer SEC(".maps");

static __always_inline bool pg_is_tracked(__u32 tid)
{
	if (!pg_filter_tracked)
		return true;
	return bpf_map_lookup_elem(&pg_tracked, &tid) != NULL;
}

static __always_inline __u32 pg_current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* A program interrupted here may have the answer rewritten by one nested
 * in it (an interrupt's), for the same current thread and at the same or a
 * newer generation. The generation is written last, so a torn answer is
 * labelled with the older generation and looked up again next time. */
static __always_inline bool pg_current_is_tracked(void)
{
	struct pg_tracked_answer *answer;
	struct pg_tracked_gen *gen;
	__u64 id, kernel_gen, user_gen;
	__u32 zero = 0;
	bool tracked;

	if (!pg_filter_tracked)
		return true;
	id = bpf_get_current_pid_tgid();
	gen = bpf_map_lookup_elem(&pg_tracked_gen, &zero);
	answer = bpf_map_lookup_elem(&pg_tracked_answer, &zero);
	if (!gen || !answer)
		return pg_is_tracked((__u32)id);
	kernel_gen = *(volatile __u64 *)&gen->kernel;
	user_gen = *(volatile __u64 *)&gen->user;
	if (answer->pid_tgid == id && answer->kernel_gen == kernel_gen && answer->user_gen == user_gen)
		return answer->tracked;
	tracked = pg_is_tracked((__u32)id);
	answer->pid_tgid = id;
	answer->tracked = tracked;
	asm volatile("" ::: "memory");
	answer->kernel_gen = kernel_gen;
	answer->user_gen = user_gen;
	return tracked;
}

/* The mark of `task` where the marks tell whether it is tracked: its mark of
 * this epoch, or NULL for a thread not tracked; `*told` is false where they
 * cannot tell (not kept, incomplete, or `task` NULL: the variants whose task
 * pointer is not trusted pass NULL). */
static __always_inline struct pg_tracked_mark *pg_task_mark(struct task_struct *task, bool *told)
{
	struct pg_tracked_mark *mark;
	struct pg_tracked_gen *gen;
	__u32 zero = 0;
	__u64 epoch;

	*told = false;
	if (!pg_tracked_marks || !task)
		return NULL;
	gen = bpf_map_lookup_elem(&pg_tracked_gen, &zero);
	epoch = gen ? *(volatile __u64 *)&gen->epoch : 0;
	if (epoch == 0)
		return NULL;
	*told = true;
	mark = bpf_task_storage_get(&pg_tracked_task, task, 0, 0);
	return mark && mark->epoch == epoch ? mark : NULL;
}

/* Whether `task` is tracked by its mark: 1 or 0, or -1 when the marks
 * cannot tell (see pg_task_mark()). */
static __always_inline int pg_task_mark_verdict(struct task_struct *task)
{
	bool told;
	struct pg_tracked_mark *mark = pg_task_mark(task, &told);

	if (!told)
		return -1;
	return mark != NULL;
}

/* Whether `task` (thread id `tid`, any thread) is tracked. */
static __always_inline bool pg_task_is_tracked(struct task_struct *task, __u32 tid)
{
	int verdict;

	if (!pg_filter_tracked)
		return true;
	verdict = pg_task_mark_verdict(task);
	if (verdict >= 0)
		return verdict;
	return pg_is_tracked(tid);
}

/* The same for the current thread's `task` (sched_switch's prev), which
 * without marks has the per-CPU answer; `*mark` is its mark where the marks
 * tell (pg_task_mark()), else NULL. */
static __always_inline bool pg_current_task_tracked_mark(struct task_struct *task, struct pg_tracked_mark **mark)
{
	bool told;

	*mark = NULL;
	if (!pg_filter_tracked)
		return true;
	*mark = pg_task_mark(task, &told);
	if (told)
		return *mark != NULL;
	return pg_current_is_tracked();
}

static __always_inline bool pg_current_task_is_tracked(struct task_struct *task)
{
	struct pg_tracked_mark *mark;

	return pg_current_task_tracked_mark(task, &mark);
}

/* The tracker's hooks, after changing the map. */
static __always_inline void pg_tracked_changed(void)
{
	struct pg_tracked_gen *gen;
	__u32 zero = 0;

	gen = bpf_map_lookup_elem(&pg_tracked_gen, &zero);
	if (gen)
		__sync_fetch_and_add(&gen->kernel, 1);
}

#endif
