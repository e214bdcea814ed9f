/* Constants of the tracked-thread map shared with the user side (only
 * __u32-style types; never includes vmlinux.h). */
#ifndef PERFGATE_FILTER_H
#define PERFGATE_FILTER_H

#ifdef __cplusplus
#include <linux/types.h>
#endif

/* Threads of the workload's process tree that can be tracked at once. */
#define PG_TRACKED_MAX 65536

/* Bumped after every change of the tracked map, so that a probe's per-CPU
 * answer for the current thread stays valid until the map changes: `kernel`
 * by the tracker's hooks (atomically), `user` by user space (its only
 * writer). */
struct pg_tracked_gen {
	__u64 kernel;
	__u64 user;
	/* Marks (struct pg_tracked_mark) of this epoch are the tracked threads
	 * exactly; user space starts a new one at every Clear(). 0 while the
	 * marks are incomplete (a thread could not be marked): then every
	 * check takes the hash map. */
	__u64 epoch;
};

/* A wait of a tracked thread on a run queue (runqlat). */
struct pg_runq_wait {
	__u64 since;         /* ktime when it became runnable; 0: not waiting */
	__u64 held_at_start; /* its CPU's held time then */
	__u32 cpu;           /* the CPU whose run queue it waits on */
	__u32 pad;
};

/* A tracked thread off the CPU (offcpu), when no stacks are captured. */
struct pg_offcpu_wait {
	__u64 since; /* ktime at switch-out; 0: on a CPU, or not followed */
	__u32 reason;
	__u32 tgid;
};

/* A tracked thread's mark in its task-local storage (bpf/filter.bpf.h).
 * It also holds the scheduler probes' state of the thread's wait in
 * progress, each part written by one probe: a tracked thread's switch or
 * wakeup then finds its state in the storage its mark was read from,
 * instead of a hash map's update and delete per wait (both missed the cache
 * on a machine whose switches are sparse). Zero in a fresh mark; read only
 * while the mark's epoch is current. */
struct pg_tracked_mark {
	__u64 epoch;
	struct pg_runq_wait runq;
	struct pg_offcpu_wait offcpu;
};

#endif
