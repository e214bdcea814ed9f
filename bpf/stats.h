/* Per-CPU aggregates of each probe, one map value per CPU (key 0 of a
 * BPF_MAP_TYPE_PERCPU_ARRAY), so an event costs one inlined array lookup and
 * a reset is one map update. Shared with the user side: __u64 only. */
#ifndef PERFGATE_STATS_H
#define PERFGATE_STATS_H

#include "histogram.h"

struct pg_runqlat_stats {
	__u64 hist[PG_HIST_BUCKETS]; /* ns from wakeup/preemption to running */
	__u64 wait_ns;               /* the same waits summed */
	__u64 behind_others_ns;      /* the part of them the CPU spent running other processes' tasks */
	__u64 holder_drops;          /* holder times not recorded: the holders map was full */
};

/* Syscall numbers counted one by one: above every native syscall of the
 * supported architectures (x86_64 has fewer than 512), and small enough that
 * the three tables per number share the per-CPU value with the histogram
 * (at most 32 KiB). */
#define PG_SYSCALL_SLOTS 512

struct pg_syscalls_stats {
	__u64 count;                   /* syscalls entered (counted at sys_enter) */
	__u64 hist[PG_HIST_BUCKETS];   /* ns from sys_enter to sys_exit of sampled syscalls */
	__u64 by_nr[PG_SYSCALL_SLOTS]; /* syscalls entered, per syscall number */
	/* Sampled syscalls that reached sys_exit, and their ns summed, per
	 * syscall number: with by_nr, each syscall's time is estimated. */
	__u64 sampled_by_nr[PG_SYSCALL_SLOTS];
	__u64 sampled_ns_by_nr[PG_SYSCALL_SLOTS];
};

struct pg_kmem_stats {
	__u64 pages;             /* pages allocated (sum of 1 << order) */
	__u64 page_allocs;       /* mm_page_alloc events that returned a page */
	__u64 kmalloc;           /* kmem:kmalloc events */
	__u64 kmem_cache_alloc;  /* kmem:kmem_cache_alloc events */
	__u64 pages_freed;       /* pages freed (sum of 1 << order of kmem:mm_page_free) */
	__u64 kfree;             /* kmem:kfree events of a non-NULL pointer */
	__u64 kmem_cache_free;   /* kmem:kmem_cache_free events */
};

#endif
