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

/* A tracked thread's mark in its task-local storage (bpf/filter.bpf.h). */
struct pg_tracked_mark {
	__u64 epoch;
};

#endif
