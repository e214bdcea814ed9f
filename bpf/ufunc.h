/* Maps of the ufunc probe shared with the user side (only __u32/__u64-style
 * types). Functions are numbered 0..N-1 by the user side; every uprobe
 * attachment carries its function's number as its cookie. */
#ifndef PERFGATE_UFUNC_H
#define PERFGATE_UFUNC_H

/* The BPF side has the types from vmlinux.h; the user side includes this
 * header before anything else (it is ufunc.cpp's main header). */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Functions one probe may trace; a glob matching more is a suite error. */
#define PG_UFUNC_MAX_FUNCTIONS 5000
/* Probed calls one thread can have in flight (recursion, nesting); deeper
 * calls are counted but not timed. A power of two (the index is masked). */
#define PG_UFUNC_DEPTH 16
/* Threads with a call stack at once; least recently used ones are evicted. */
#define PG_UFUNC_THREADS 8192

/* Per function (per-CPU array indexed by function number). */
struct pg_ufunc_calls {
	__u64 calls; /* entries, counted at the uprobe */
};

/* Key of the latency histogram hash: one entry per non-empty bucket of each
 * function, so memory follows the buckets in use rather than functions times
 * PG_HIST_BUCKETS. */
struct pg_ufunc_bucket {
	__u32 func;   /* function number */
	__u32 bucket; /* log-linear bucket (histogram.h) */
};

/* Probe-wide losses (per-CPU, slot 0). */
struct pg_ufunc_drops {
	__u64 too_deep;  /* calls not timed: the thread's stack was full */
	__u64 no_stack;  /* calls not timed: no stack entry could be made */
	__u64 hist_full; /* returns not recorded: the histogram hash was full */
};

#endif
