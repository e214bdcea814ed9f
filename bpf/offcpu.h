/* Aggregates of the offcpu probe, shared with gate/probes/offcpu.cpp. Only
 * __u32/__u64-style types: this header compiles with vmlinux.h and with the
 * C++ side. */
#ifndef PERFGATE_OFFCPU_H
#define PERFGATE_OFFCPU_H

/* The BPF side has these types from vmlinux.h. */
#ifndef __bpf__
#include <linux/types.h>
#endif

#include "histogram.h"
#include "stacks.h"

/* Why a thread left the CPU, from its state at switch-out; the key of the
 * per-CPU stats array. */
#define PG_OFFCPU_SLEEP 0     /* TASK_INTERRUPTIBLE (S), or an idle wait (TASK_IDLE) */
#define PG_OFFCPU_IO 1        /* TASK_UNINTERRUPTIBLE (D), or in io_schedule() (in_iowait) */
#define PG_OFFCPU_PREEMPTED 2 /* still runnable: preempted, or yielded the CPU */
#define PG_OFFCPU_OTHER 3     /* stopped, traced, parked, frozen */
#define PG_OFFCPU_REASONS 4

/* One per reason and CPU. Four histograms do not fit one per-CPU value (32 KiB
 * at most), hence one array slot per reason. */
struct pg_offcpu_stats {
	__u64 time_ns;               /* off-CPU time summed over the waits that ended */
	__u64 hist[PG_HIST_BUCKETS]; /* ns of each wait */
};

/* Events the probe could not record (per CPU, slot 0). */
struct pg_offcpu_drops {
	__u64 starts;      /* switch-outs not recorded: too many threads off-CPU at once */
	__u64 stacks;      /* kernel stacks not captured: stack map full or colliding */
	__u64 stack_sums;  /* waits not added to a stack: too many distinct stacks */
};

/* With `stacks`: off-CPU time per process and (kernel, user) stack pair
 * (struct pg_stack_key). */
struct pg_offcpu_stack_total {
	__u64 time_ns;
	__u64 count;
};

#endif
