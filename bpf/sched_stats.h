/* Per-CPU counters of the sched probe, shared with gate/probes/sched.cpp:
 * __u64 only. (Not named sched.h: bpf/ is on the C++ include path, where
 * that name would shadow the C library's <sched.h>.) */
#ifndef PERFGATE_SCHED_STATS_H
#define PERFGATE_SCHED_STATS_H

/* The BPF side has these types from vmlinux.h. */
#ifndef __bpf__
#include <linux/types.h>
#endif

struct pg_sched_stats {
	__u64 switches;   /* sched_switch with a tracked thread leaving the CPU */
	__u64 wakeups;    /* sched_wakeup of a tracked thread */
	__u64 migrations; /* sched_migrate_task of a tracked thread */
};

#endif
