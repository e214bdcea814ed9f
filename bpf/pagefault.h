/* Shared by bpf/pagefault.bpf.c and gate/probes/pagefault.cpp. */
#ifndef PERFGATE_PAGEFAULT_H
#define PERFGATE_PAGEFAULT_H

#ifdef __cplusplus
#include <linux/types.h>
#endif

/* Threads counted at once (the system's threads, in system scope); a thread
 * forked when the map is full is not counted. */
#define PG_PAGEFAULT_THREADS_MAX 65536

/* A thread's fault counters at the start of the repetition. */
struct pg_fault_baseline {
	__u64 maj_flt;
	__u64 min_flt;
	__u32 reset_gen;
	__u32 pad;
};

/* Per-CPU aggregates, one map value per CPU: __u64 only. */
struct pg_pagefault_stats {
	__u64 major; /* growth of the threads' maj_flt */
	__u64 minor; /* growth of the threads' min_flt */
};

#endif
