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
