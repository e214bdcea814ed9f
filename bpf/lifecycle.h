/* Per-CPU aggregates of the lifecycle probe, shared with
 * gate/probes/lifecycle.cpp: __u64 only. */
#ifndef PERFGATE_LIFECYCLE_H
#define PERFGATE_LIFECYCLE_H

/* The BPF side has these types from vmlinux.h. */
#ifndef __bpf__
#include <linux/types.h>
#endif

#include "histogram.h"

struct pg_lifecycle_stats {
	__u64 forks;                 /* new processes created by a tracked thread */
	__u64 threads;               /* new threads created by a tracked thread */
	__u64 execs;                 /* execs by a tracked thread */
	__u64 exits;                 /* exits of processes counted in forks */
	__u64 lost;                  /* forks whose exit cannot be matched: too many alive */
	__u64 hist[PG_HIST_BUCKETS]; /* ns from fork to exit of each such process */
};

#endif
