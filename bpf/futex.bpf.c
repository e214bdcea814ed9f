// SPDX-License-Identifier: GPL-2.0
/* User lock waits: the time a tracked thread spends in a futex wait, from
 * sys_enter to sys_exit of futex(FUTEX_WAIT, _WAIT_BITSET, _LOCK_PI,
 * _LOCK_PI2, _WAIT_REQUEUE_PI), futex_wait() and futex_waitv().
 * glibc's mutexes, condition variables, semaphores and pthread_join() all
 * block there. A wait that fails at once with EAGAIN (the futex word changed
 * before the thread could sleep) is not a wait. The time is also summed per
 * futex word, and with `stacks` per waiting user stack.
 *
 * Two sets of hooks share the bodies:
 *  - per syscall, the syscalls:sys_{enter,exit}_futex tracepoints (and those
 *    of futex_wait and futex_waitv where the kernel has them): only futex
 *    calls run a program, and every other syscall of the machine pays the
 *    kernel's check of a bitmap (on a getppid loop, a quarter of what empty
 *    programs at raw_syscalls sys_enter and sys_exit cost);
 *  - raw_syscalls sys_enter/sys_exit, where those tracepoints are missing or
 *    another attach type is forced: every syscall of the machine runs the
 *    programs, and both ends return at once unless the syscall number is a
 *    futex wait. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "futex.h"
#include "hist.bpf.h"
#include "stacks.bpf.h"

/* The syscall number at sys_exit, from the saved user registers: read
 * directly through BTF (tp_btf) or with a probe read (raw_tp). */
#if defined(__TARGET_ARCH_x86)
#define PG_NR_FUTEX 202
#define PG_SYSCALL_NR_BTF(regs) ((regs)->orig_ax)
#define PG_SYSCALL_NR(regs) BPF_CORE_READ((regs), orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define PG_NR_FUTEX 98
#define PG_SYSCALL_NR_BTF(regs) ((regs)->syscallno)
#define PG_SYSCALL_NR(regs) BPF_CORE_READ((regs), syscallno)
#else
#error "futex.bpf.c: syscall numbers of this architecture are not known"
#endif
/* The same on every architecture (the generic table). */
#define PG_NR_FUTEX_WAITV 449
#define PG_NR_FUTEX_WAIT 455

/* futex(2) operations that block (include/uapi/linux/futex.h). */
#define PG_FUTEX_WAIT 0
#define PG_FUTEX_LOCK_PI 6
#define PG_FUTEX_WAIT_BITSET 9
#define PG_FUTEX_WAIT_REQUEUE_PI 11
#define PG_FUTEX_LOCK_PI2 13
#define PG_FUTEX_PRIVATE_FLAG 128
#define PG_FUTEX_CLOCK_REALTIME 256

#define PG_EAGAIN 11

/* Set by user space for the `stacks` parameter; false lets the verifier drop
 * the stack walk, and the stack map is shrunk to one entry. */
const volatile bool capture_stacks = false;

/* Threads in a futex wait at once that can be followed: every idle worker of
 * the machine in system scope. */
#define WAITING_MAX 16384
/* Distinct (process, futex word, stack) sums per repetition. */
#define ADDRESSES_MAX 4096

/* False where task-local storage is unavailable to tracepoint programs;
 * the thread-keyed hash then holds the waits. */
const volatile bool use_task_storage = true;

struct futex_start {
	__u64 ts;      /* ktime at sys_enter; 0 when no wait is open */
	__u64 uaddr;
	__u32 tgid;
	__s32 user_stack;
	/* Task storage only: the tracked map's generation (filter.h) when the
	 * thread was last found in it. While the map stays at that generation
	 * the thread is still tracked, and neither end of a wait looks it up:
	 * a waking thread finds its own slot in cache less often than not, and
	 * the hash lookup was two more cold lines at each end. */
	__u64 tracked_kernel_gen;
	__u64 tracked_user_gen;
};

/* The current wait of each thread: a task-local slot costs a pointer chase
 * where the hash took a bucket lock at both ends of every wait. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct futex_start);
} futex_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAITING_MAX);
	__type(key, __u32); /* thread id */
	__type(value, struct futex_start);
} futex_since SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_futex_stats);
} futex_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_futex_drops);
} futex_drops SEC(".maps");

PG_STACK_MAP(futex_stacks);

/* Per CPU: the threads contending one futex word wait on every CPU, and
 * shared sums would move their cache line between the CPUs at every wait. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, ADDRESSES_MAX);
	__type(key, struct pg_futex_address_key);
	__type(value, struct pg_futex_address_total);
} futex_by_address SEC(".maps");

static __always_inline struct pg_futex_drops *drops(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&futex_drops, &zero);
}

static __always_inline bool is_wait_syscall(long id)
{
	return id == PG_NR_FUTEX || id == PG_NR_FUTEX_WAIT || id == PG_NR_FUTEX_WAITV;
}

/* futex_wait() and futex_waitv() always wait; futex() for the waiting ops. */
static __always_inline bool blocks(long id, unsigned long op)
{
	unsigned long cmd = op & ~(unsigned long)(PG_FUTEX_PRIVATE_FLAG | PG_FUTEX_CLOCK_REALTIME);

	if (id != PG_NR_FUTEX)
		return true;
	return cmd == PG_FUTEX_WAIT || cmd == PG_FUTEX_WAIT_BITSET || cmd == PG_FUTEX_LOCK_PI ||
	       cmd == PG_FUTEX_LOCK_PI2 || cmd == PG_FUTEX_WAIT_REQUEUE_PI;
}

static __always_inline struct pg_tracked_gen *tracked_gen(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&pg_tracked_gen, &zero);
}

/* Whether `slot` says its thread is tracked at the map's generation now. */
static __always_inline bool tracked_as_of_now(const struct futex_start *slot, const struct pg_tracked_gen *gen)
{
	return slot && gen && slot->tracked_kernel_gen == *(volatile __u64 *)&gen->kernel &&
	       slot->tracked_user_gen == *(volatile __u64 *)&gen->user;
}

/* The current thread's slot when it is tracked (created on its first
 * wait); NULL when it is not tracked or no slot could be made. */
static __always_inline struct futex_start *tracked_slot(__u32 tid, struct pg_futex_drops **lost)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pg_tracked_gen *gen;
	struct futex_start *slot;
	__u64 kernel_gen, user_gen;

	if (!pg_filter_tracked) {
		slot = bpf_task_storage_get(&futex_task, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		goto out;
	}
	slot = bpf_task_storage_get(&futex_task, task, 0, 0);
	gen = tracked_gen();
	if (tracked_as_of_now(slot, gen))
		return slot;
	/* Read before the lookup: a change in between makes the next check
	 * look again. */
	kernel_gen = gen ? *(volatile __u64 *)&gen->kernel : 0;
	user_gen = gen ? *(volatile __u64 *)&gen->user : 0;
	if (!pg_is_tracked(tid))
		return NULL;
	if (!slot)
		slot = bpf_task_storage_get(&futex_task, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (slot) {
		slot->tracked_kernel_gen = kernel_gen;
		slot->tracked_user_gen = user_gen;
	}
out:
	if (!slot && (*lost = drops()))
		(*lost)->starts++;
	return slot;
}

/* arg0 is the futex word of futex() and futex_wait(), the waiter array of
 * futex_waitv(), whose words are not read. */
static __always_inline void on_enter(void *ctx, long id, unsigned long arg0, unsigned long arg1)
{
	struct futex_start start = {}, *slot = NULL;
	struct pg_futex_drops *lost;
	__u64 id_tgid;
	__u32 tid;

	if (!blocks(id, arg1))
		return;
	id_tgid = bpf_get_current_pid_tgid();
	tid = (__u32)id_tgid;
	if (use_task_storage) {
		slot = tracked_slot(tid, &lost);
		if (!slot)
			return;
	} else if (!pg_current_is_tracked()) {
		return;
	}
	start.ts = bpf_ktime_get_ns();
	start.uaddr = id == PG_NR_FUTEX_WAITV ? 0 : arg0;
	start.tgid = id_tgid >> 32;
	start.user_stack = -1;
	if (capture_stacks) {
		start.user_stack = pg_user_stack(ctx, &futex_stacks);
		if (start.user_stack < 0 && (lost = drops()))
			lost->stacks++;
	}
	if (slot) {
		slot->uaddr = start.uaddr;
		slot->tgid = start.tgid;
		slot->user_stack = start.user_stack;
		slot->ts = start.ts;
		return;
	}
	if (bpf_map_update_elem(&futex_since, &tid, &start, BPF_ANY) != 0 && (lost = drops()))
		lost->starts++;
}

static __always_inline void add_to_address(const struct futex_start *start, __u64 delta)
{
	struct pg_futex_address_key key = {};
	struct pg_futex_address_total *total, zero = {};
	struct pg_futex_drops *lost;

	key.uaddr = start->uaddr;
	key.tgid = start->tgid;
	key.user_stack = start->user_stack;
	total = bpf_map_lookup_elem(&futex_by_address, &key);
	if (!total) {
		bpf_map_update_elem(&futex_by_address, &key, &zero, BPF_NOEXIST);
		total = bpf_map_lookup_elem(&futex_by_address, &key);
	}
	if (!total) {
		if ((lost = drops()))
			lost->addresses++;
		return;
	}
	total->time_ns += delta;
	total->count++;
}

static __always_inline void on_exit(long id, long ret)
{
	struct futex_start start, *slot;
	struct pg_futex_stats *stats;
	__u32 tid, zero = 0;
	__u64 delta;

	if (!is_wait_syscall(id))
		return;
	tid = pg_current_tid();
	/* Taken out of its slot first: a copy, as the slot is reused. */
	if (use_task_storage) {
		slot = bpf_task_storage_get(&futex_task, bpf_get_current_task_btf(), 0, 0);
		if (!slot || !slot->ts)
			return;
		start = *slot;
		slot->ts = 0;
	} else {
		slot = bpf_map_lookup_elem(&futex_since, &tid);
		if (!slot)
			return;
		start = *slot;
		bpf_map_delete_elem(&futex_since, &tid);
	}
	if (ret == -PG_EAGAIN)
		return;
	/* The tracker may have forgotten the thread since (a new repetition):
	 * unless its map is still at the generation the wait began in. */
	if (!(use_task_storage && tracked_as_of_now(&start, tracked_gen())) && !pg_is_tracked(tid))
		return;
	delta = bpf_ktime_get_ns() - start.ts;
	stats = bpf_map_lookup_elem(&futex_stats, &zero);
	if (stats) {
		stats->waits++;
		stats->time_ns += delta;
		pg_hist_add(stats->hist, delta);
	}
	add_to_address(&start, delta);
}

/* Per syscall: args[] are the syscall's arguments. */
SEC("tracepoint/syscalls/sys_enter_futex")
int futex_enter_futex_tracepoint(struct syscall_trace_enter *ctx)
{
	on_enter(ctx, PG_NR_FUTEX, ctx->args[0], ctx->args[1]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit_futex_tracepoint(struct syscall_trace_exit *ctx)
{
	on_exit(PG_NR_FUTEX, ctx->ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_futex_wait")
int futex_enter_futex_wait_tracepoint(struct syscall_trace_enter *ctx)
{
	on_enter(ctx, PG_NR_FUTEX_WAIT, ctx->args[0], 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex_wait")
int futex_exit_futex_wait_tracepoint(struct syscall_trace_exit *ctx)
{
	on_exit(PG_NR_FUTEX_WAIT, ctx->ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_futex_waitv")
int futex_enter_futex_waitv_tracepoint(struct syscall_trace_enter *ctx)
{
	on_enter(ctx, PG_NR_FUTEX_WAITV, 0, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex_waitv")
int futex_exit_futex_waitv_tracepoint(struct syscall_trace_exit *ctx)
{
	on_exit(PG_NR_FUTEX_WAITV, ctx->ret);
	return 0;
}

/* Every syscall. */
SEC("tp_btf/sys_enter")
int BPF_PROG(futex_enter_tp_btf, struct pt_regs *regs, long id)
{
	if (is_wait_syscall(id))
		on_enter(ctx, id, PT_REGS_PARM1_CORE_SYSCALL(regs), PT_REGS_PARM2_CORE_SYSCALL(regs));
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(futex_enter_raw_tp, struct pt_regs *regs, long id)
{
	if (is_wait_syscall(id))
		on_enter(ctx, id, PT_REGS_PARM1_CORE_SYSCALL(regs), PT_REGS_PARM2_CORE_SYSCALL(regs));
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int futex_enter_tracepoint(struct trace_event_raw_sys_enter *ctx)
{
	if (is_wait_syscall(ctx->id))
		on_enter(ctx, ctx->id, ctx->args[0], ctx->args[1]);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(futex_exit_tp_btf, struct pt_regs *regs, long ret)
{
	on_exit(PG_SYSCALL_NR_BTF(regs), ret);
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(futex_exit_raw_tp, struct pt_regs *regs, long ret)
{
	on_exit(PG_SYSCALL_NR(regs), ret);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int futex_exit_tracepoint(struct trace_event_raw_sys_exit *ctx)
{
	on_exit(ctx->id, ctx->ret);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
