/* CO-RE fix for task_struct's state field, renamed from `state` to `__state`
 * in Linux 5.14. */
#ifndef PERFGATE_TASK_STATE_BPF_H
#define PERFGATE_TASK_STATE_BPF_H

#include <bpf/bpf_core_read.h>

#ifndef TASK_RUNNING
#define TASK_RUNNING 0
#endif

/* sched_switch's tracepoint format reports a preempted thread with this bit
 * (TASK_REPORT_MAX), which is a macro and so not in vmlinux.h. */
#define PG_TASK_REPORT_PREEMPTED 0x100

struct task_struct___pre_5_14 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long pg_task_state(struct task_struct *task)
{
	if (bpf_core_field_exists(task->__state))
		return BPF_CORE_READ(task, __state);
	return BPF_CORE_READ((struct task_struct___pre_5_14 *)task, state);
}

#endif
