/* Aggregates of the futex probe (bpf/futex.bpf.c), shared with
 * gate/probes/futex.cpp. Only __u32/__u64-style types: this header compiles
 * with vmlinux.h and with the C++ side. */
#ifndef PERFGATE_FUTEX_H
#define PERFGATE_FUTEX_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "histogram.h"

/* Per CPU, slot 0. */
struct pg_futex_stats {
	__u64 waits;                 /* futex waits that returned */
	__u64 time_ns;               /* their summed time, sys_enter to sys_exit */
	__u64 hist[PG_HIST_BUCKETS]; /* ns of each wait */
};

/* Events the probe could not record (per CPU, slot 0). */
struct pg_futex_drops {
	__u64 starts;     /* waits not timed: too many threads waiting at once */
	__u64 stacks;     /* user stacks not captured: stack map full or colliding */
	__u64 addresses;  /* waits not added to an address: too many distinct addresses */
};

/* Wait time per process, futex word and (with `stacks`) waiting user stack. */
struct pg_futex_address_key {
	__u64 uaddr;      /* the futex word's user address; 0 for futex_waitv */
	__u32 tgid;
	__s32 user_stack; /* id in the stack map; negative when not captured */
};

struct pg_futex_address_total {
	__u64 time_ns;
	__u64 count;
};

#endif
