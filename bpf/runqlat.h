/* The "who held the CPU" part of the runqlat probe, shared with
 * gate/probes/runqlat.cpp. Only __u32/__u64-style types: this header compiles
 * with vmlinux.h and with the C++ side. */
#ifndef PERFGATE_RUNQLAT_H
#define PERFGATE_RUNQLAT_H

/* The BPF side has these types from vmlinux.h. */
#ifndef __bpf__
#include <linux/types.h>
#endif

/* What a CPU's current task is, as far as the holder accounting goes. */
#define PG_RUNQ_HOLDER_NONE 0    /* a tracked thread or the idle task: not counted */
#define PG_RUNQ_HOLDER_OTHER 1   /* a task of another process: counted */
#define PG_RUNQ_HOLDER_UNKNOWN 2 /* accounting began on another CPU (a wakeup); decided at the switch */

/* One per CPU, in an array indexed by CPU id rather than a per-CPU map: a
 * wakeup on one CPU starts a wait on another CPU's run queue. Fields written
 * from other CPUs are updated atomically (waiting) or are a hint that the
 * owner CPU overwrites at its next switch (since, holder). */
struct pg_runq_cpu {
	__s64 waiting; /* tracked threads queued here and not yet running (atomic) */
	__u64 since;   /* ktime from which the current task's run counts; 0 while no tracked thread waits */
	__u64 holder;  /* PG_RUNQ_HOLDER_* of the current task */
	__u64 held_ns; /* time this CPU ran other tasks while a tracked thread waited on it */
};

/* Key of the holders map: a task's comm, as the kernel keeps it (NUL-padded). */
struct pg_runq_holder_key {
	char comm[16];
};

#endif
