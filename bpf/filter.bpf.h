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

static __always_inline bool pg_current_is_tracked(void)
{
	if (!pg_filter_tracked)
		return true;
	return pg_is_tracked(pg_current_tid());
}

#endif
