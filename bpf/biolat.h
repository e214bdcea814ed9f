/* Aggregates of the biolat probe (bpf/biolat.bpf.c), shared with
 * gate/probes/biolat.cpp: __u64 only. */
#ifndef PERFGATE_BIOLAT_H
#define PERFGATE_BIOLAT_H

#ifdef __cplusplus
#include <linux/types.h>
#endif

#include "histogram.h"

/* Disks whose latency is kept apart; requests of further disks count in the
 * totals only. */
#define PG_BIOLAT_DEVICES_MAX 64

/* One value per CPU (key 0 of a per-CPU array). */
struct pg_biolat_stats {
	__u64 requests;              /* requests completed (issue seen) */
	__u64 bytes;                 /* their size at issue (blk_rq_bytes: a discard's is the range discarded) */
	__u64 hist[PG_HIST_BUCKETS]; /* ns from block_rq_issue to block_rq_complete */
};

/* One value per CPU and disk (per-CPU hash keyed by the kernel dev_t, major << 20 | minor). */
struct pg_biolat_device_stats {
	__u64 hist[PG_HIST_BUCKETS]; /* ns from issue to completion on this disk */
};

#endif
