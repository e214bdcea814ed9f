/* Per-CPU aggregates of the mmaplock probe (bpf/mmaplock.bpf.c), shared with
 * gate/probes/mmaplock.cpp: __u64 only. */
#ifndef PERFGATE_MMAPLOCK_H
#define PERFGATE_MMAPLOCK_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "histogram.h"

struct pg_mmaplock_stats {
	__u64 waits;                 /* acquisitions that returned (trylocks included) */
	__u64 time_ns;               /* their summed time, start_locking to acquire_returned */
	__u64 lost;                  /* start_locking events not recorded: too many threads at once */
	__u64 hist[PG_HIST_BUCKETS]; /* ns of each acquisition */
};

#endif
