/* Per-CPU aggregates of the pagefault probe (bpf/pagefault.bpf.c), one map
 * value per CPU, shared with gate/probes/pagefault.cpp: __u64 only. */
#ifndef PERFGATE_PAGEFAULT_H
#define PERFGATE_PAGEFAULT_H

#ifdef __cplusplus
#include <linux/types.h>
#endif

struct pg_pagefault_stats {
	__u64 faults; /* exceptions:page_fault_user events */
	__u64 major;  /* growth of the threads' maj_flt, see bpf/pagefault.bpf.c */
	__u64 minor;  /* growth of the threads' min_flt */
};

#endif
