/* CO-RE fixes for task_struct's state field, renamed from `state` to
 * `__state` in Linux 5.14, and its CPU, moved into thread_info in 5.16. */
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

struct task_struct___pre_5_16 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

/* The CPU whose run queue `task` is on (or last ran on). */
static __always_inline __u32 pg_task_cpu(struct task_struct *task)
{
	if (bpf_core_field_exists(task->thread_info.cpu))
		return BPF_CORE_READ(task, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___pre_5_16 *)task, cpu);
}

#endif
