/* Constants of the tracked-thread map shared with the user side (only
 * __u32-style types; never includes vmlinux.h). */
#ifndef PERFGATE_FILTER_H
#define PERFGATE_FILTER_H

/* Threads of the workload's process tree that can be tracked at once. */
#define PG_TRACKED_MAX 65536

#endif
