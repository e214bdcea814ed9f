// SPDX-License-Identifier: GPL-2.0
/* Syscall count and latency from raw_syscalls sys_enter/sys_exit. This runs
 * on every syscall of the machine, so each path is kept to the filter lookup,
 * one per-task storage access and (on exit) one inlined per-CPU array lookup. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "filter.bpf.h"
#include "hist.bpf.h"
#include "stats.h"

/* False where task-local storage is unavailable to tracing programs; the
 * thread-keyed hash below then holds the start times instead. */
const volatile bool use_task_storage = true;

/* Threads inside a syscall at once, when the hash fallback is used. */
#define IN_SYSCALL_MAX 16384

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64); /* ktime at sys_enter; 0 when not in a syscall */
} start_by_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IN_SYSCALL_MAX);
	__type(key, __u32);   /* thread id */
	__type(value, __u64); /* ktime at sys_enter */
} start_by_tid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_syscalls_stats);
} syscalls_stats SEC(".maps");

static __always_inline void on_enter(void)
{
	__u64 now, *start;
	__u32 tid;

	if (!pg_current_is_tracked())
		return;
	now = bpf_ktime_get_ns();
	if (use_task_storage) {
		start = bpf_task_storage_get(&start_by_task, bpf_get_current_task_btf(), 0,
					     BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (start)
			*start = now;
		return;
	}
	tid = pg_current_tid();
	bpf_map_update_elem(&start_by_tid, &tid, &now, BPF_ANY);
}

/* Start time of the current thread's syscall, consumed; 0 when unknown (the
 * syscall began before the probe attached, or storage was unavailable). */
static __always_inline __u64 take_start(void)
{
	__u64 *start, value;
	__u32 tid;

	if (use_task_storage) {
		start = bpf_task_storage_get(&start_by_task, bpf_get_current_task_btf(), 0, 0);
		if (!start)
			return 0;
		value = *start;
		*start = 0;
		return value;
	}
	tid = pg_current_tid();
	start = bpf_map_lookup_elem(&start_by_tid, &tid);
	if (!start)
		return 0;
	value = *start;
	bpf_map_delete_elem(&start_by_tid, &tid);
	return value;
}

static __always_inline void on_exit(void)
{
	struct pg_syscalls_stats *stats;
	__u64 start;
	__u32 zero = 0;

	if (!pg_current_is_tracked())
		return;
	start = take_start();
	if (!start)
		return;
	stats = bpf_map_lookup_elem(&syscalls_stats, &zero);
	if (!stats)
		return;
	stats->count++;
	pg_hist_add(stats->hist, bpf_ktime_get_ns() - start);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(syscalls_enter_tp_btf)
{
	on_enter();
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(syscalls_enter_raw_tp)
{
	on_enter();
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int syscalls_enter_tracepoint(void *ctx)
{
	on_enter();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(syscalls_exit_tp_btf)
{
	on_exit();
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(syscalls_exit_raw_tp)
{
	on_exit();
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int syscalls_exit_tracepoint(void *ctx)
{
	on_exit();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
