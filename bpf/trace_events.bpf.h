/* The ring buffer of `perfgate run --trace`, shared by every probe that
 * writes trace records (infrastructure, not a probe). Like the tracked map
 * (filter.bpf.h), every object declares it under the same name and user space
 * points all of them at one map before load (bpf_map__reuse_fd).
 *
 * pg_trace_enabled is rodata: in an untraced load the verifier sees it false
 * and removes every trace path and the branch to it; what the measured
 * repetitions still run is the flag's load, a few instructions per program. */
#ifndef PERFGATE_TRACE_EVENTS_BPF_H
#define PERFGATE_TRACE_EVENTS_BPF_H

#include "trace_events.h"

const volatile bool pg_trace_enabled = false;
/* Syscalls and off-CPU waits at least this long become slices. */
const volatile __u64 pg_trace_slow_syscall_ns = 1000000;
const volatile __u64 pg_trace_long_offcpu_ns = 1000000;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	/* Replaced before load: by the shared buffer when traced, else by one
	 * page (or a one-slot array where the kernel has no ring buffers). */
	__uint(max_entries, 4096);
} pg_trace_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_trace_counts);
} pg_trace_counts SEC(".maps");

/* Writes one record without waking the reader (it polls on a timer: a
 * wake-up per record would cost more than the record). Atomic adds because a
 * program in an interrupt may nest on this CPU. */
static __always_inline void pg_trace_emit(__u32 type, __u32 arg, __u32 tgid, __u32 tid, __u64 ts, __u64 value)
{
	struct pg_trace_counts *counts;
	struct pg_trace_event *event;
	__u32 zero = 0;

	counts = bpf_map_lookup_elem(&pg_trace_counts, &zero);
	if (counts)
		__sync_fetch_and_add(&counts->produced, 1);
	event = bpf_ringbuf_reserve(&pg_trace_events, sizeof(*event), 0);
	if (!event) {
		if (counts)
			__sync_fetch_and_add(&counts->dropped, 1);
		return;
	}
	event->ts = ts;
	event->value = value;
	event->tgid = tgid;
	event->tid = tid;
	event->type = type;
	event->arg = arg;
	bpf_ringbuf_submit(event, BPF_RB_NO_WAKEUP);
}

/* For records about the current thread. */
static __always_inline void pg_trace_emit_current(__u32 type, __u32 arg, __u64 ts, __u64 value)
{
	__u64 id = bpf_get_current_pid_tgid();

	pg_trace_emit(type, arg, id >> 32, (__u32)id, ts, value);
}

#endif
