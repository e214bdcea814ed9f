/* Records of `perfgate run --trace`, streamed through the BPF ring buffer of
 * bpf/trace_events.bpf.h and read by gate/probes/trace_buffer.cpp. Only
 * __u32/__u64-style types: shared with the C++ side. */
#ifndef PERFGATE_TRACE_EVENTS_H
#define PERFGATE_TRACE_EVENTS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* What a record is. Slices carry their start in `ts` and their length in
 * `value`; samples carry their time in `ts`. */
#define PG_TRACE_RECLAIM 1       /* slice; arg = PG_RECLAIM_*, value = ns */
#define PG_TRACE_OFFCPU 2        /* slice; arg = PG_OFFCPU_*, value = ns */
#define PG_TRACE_SYSCALL 3       /* slice; arg = syscall number (PG_TRACE_NO_NR when unknown), value = ns */
#define PG_TRACE_PAGE_ALLOC 4    /* sample; value = pages allocated */
#define PG_TRACE_RUNQ_LATENCY 5  /* sample at the time the thread ran; value = ns it waited */
#define PG_TRACE_BLOCK_IO 6      /* slice, issue to completion of a request in scope; arg = bytes, value = ns;
                                  * tgid and tid 0 (completion runs in interrupt context) */

#define PG_TRACE_NO_NR 0xffffffffu

struct pg_trace_event {
	__u64 ts;    /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 value;
	__u32 tgid;
	__u32 tid;
	__u32 type;  /* PG_TRACE_* */
	__u32 arg;
};

/* Per CPU: records the probes tried to write, and those the ring buffer had
 * no room for. Every produced record is either read by user space or dropped. */
struct pg_trace_counts {
	__u64 produced;
	__u64 dropped;
};

#endif
