/* Per-CPU aggregates of the reclaim probe (bpf/reclaim.bpf.c), one map value
 * per CPU, shared with gate/probes/reclaim.cpp: __u64 only. */
#ifndef PERFGATE_RECLAIM_H
#define PERFGATE_RECLAIM_H

#ifdef __cplusplus
#include <linux/types.h>
#endif

#include "histogram.h"

/* The kinds of reclaim a begin/end pair can be; nested pairs of different
 * kinds (soft-limit reclaim runs inside direct reclaim) are timed apart. */
#define PG_RECLAIM_DIRECT 0
#define PG_RECLAIM_MEMCG 1
#define PG_RECLAIM_MEMCG_SOFTLIMIT 2

struct pg_reclaim_stats {
	__u64 direct;                      /* direct reclaims that ended */
	__u64 direct_pages;                /* their nr_reclaimed */
	__u64 memcg;                       /* memcg limit reclaims that ended */
	__u64 memcg_pages;                 /* their nr_reclaimed */
	__u64 softlimit;                   /* memcg soft-limit reclaims (cgroup v1) that ended */
	__u64 softlimit_pages;             /* their nr_reclaimed, already part of the enclosing reclaim's */
	__u64 direct_hist[PG_HIST_BUCKETS]; /* ns from direct_reclaim_begin to _end */
	__u64 memcg_hist[PG_HIST_BUCKETS];  /* ns from memcg (limit or soft-limit) reclaim begin to end */
};

#endif
