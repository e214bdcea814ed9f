// SPDX-License-Identifier: GPL-2.0
/* mm lock waits: the time a tracked thread takes to get its process's
 * mmap_lock, from mmap_lock:mmap_lock_start_locking to
 * mmap_lock:mmap_lock_acquire_returned. Both fire around every acquisition,
 * read or write, contended or not (trylocks too), in the acquiring thread. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "filter.bpf.h"
#include "hist.bpf.h"
#include "mmaplock.h"

/* The start time lives in task-local storage (one lookup at each end, where
 * a hash map costs an insert and a delete per acquisition, and kernels
 * without per-VMA locks take the lock on every page fault). False where
 * tracing programs cannot use it; the thread-keyed hash holds it then. */
const volatile bool use_task_storage = true;

/* Threads acquiring an mm lock at once, system-wide, for the hash: at most
 * one per thread that is running or waiting for the lock. */
#define LOCKING_MAX 16384

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64); /* ktime at start_locking; 0 when none is open */
} locking_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LOCKING_MAX);
	__type(key, __u32);   /* thread id */
	__type(value, __u64); /* ktime at start_locking */
} locking_since SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_mmaplock_stats);
} mmaplock_stats SEC(".maps");

static __always_inline struct pg_mmaplock_stats *stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&mmaplock_stats, &zero);
}

static __always_inline void on_start_locking(void)
{
	struct pg_mmaplock_stats *s;
	__u64 now, *since;
	__u32 tid;

	if (!pg_current_is_tracked())
		return;
	now = bpf_ktime_get_ns();
	if (use_task_storage) {
		since = bpf_task_storage_get(&locking_task, bpf_get_current_task_btf(), 0,
					     BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (since)
			*since = now;
		else if ((s = stats()))
			s->lost++;
		return;
	}
	tid = pg_current_tid();
	if (bpf_map_update_elem(&locking_since, &tid, &now, BPF_ANY) != 0 && (s = stats()))
		s->lost++;
}

/* The current thread's start time, consumed; 0 when it has none (untracked:
 * only tracked threads ever get one, so no filter lookup here). */
static __always_inline __u64 take_start(void)
{
	__u64 *since, start;
	__u32 tid;

	if (use_task_storage) {
		since = bpf_task_storage_get(&locking_task, bpf_get_current_task_btf(), 0, 0);
		if (!since)
			return 0;
		start = *since;
		*since = 0;
		return start;
	}
	tid = pg_current_tid();
	since = bpf_map_lookup_elem(&locking_since, &tid);
	if (!since)
		return 0;
	start = *since;
	bpf_map_delete_elem(&locking_since, &tid);
	return start;
}

static __always_inline void on_acquire_returned(void)
{
	struct pg_mmaplock_stats *s;
	__u64 start, delta;

	start = take_start();
	if (!start)
		return;
	delta = bpf_ktime_get_ns() - start;
	s = stats();
	if (!s)
		return;
	s->waits++;
	s->time_ns += delta;
	pg_hist_add(s->hist, delta);
}

SEC("tp_btf/mmap_lock_start_locking")
int BPF_PROG(mmaplock_start_tp_btf)
{
	on_start_locking();
	return 0;
}

SEC("raw_tp/mmap_lock_start_locking")
int BPF_PROG(mmaplock_start_raw_tp)
{
	on_start_locking();
	return 0;
}

SEC("tracepoint/mmap_lock/mmap_lock_start_locking")
int mmaplock_start_tracepoint(void *ctx)
{
	on_start_locking();
	return 0;
}

SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(mmaplock_acquired_tp_btf)
{
	on_acquire_returned();
	return 0;
}

SEC("raw_tp/mmap_lock_acquire_returned")
int BPF_PROG(mmaplock_acquired_raw_tp)
{
	on_acquire_returned();
	return 0;
}

SEC("tracepoint/mmap_lock/mmap_lock_acquire_returned")
int mmaplock_acquired_tracepoint(void *ctx)
{
	on_acquire_returned();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
