// SPDX-License-Identifier: GPL-2.0
/* On-CPU profile: a perf_event program run by one sampling event per CPU
 * (cycles, or the cpu-clock software timer where the PMU is not exposed, as
 * on most virtual machines). Each sample of a tracked thread adds one to its
 * (process, kernel stack, user stack) entry; user space symbolizes them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "filter.bpf.h"
#include "profile.h"
#include "stacks.bpf.h"

#define PG_EEXIST 17

PG_STACK_MAP(profile_stacks);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct pg_stack_key);
	__type(value, __u64);
} profile_by_stack SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_profile_counts);
} profile_counts SEC(".maps");

/* Bytes of user stack copied per sample (a multiple of 8, at most
 * PG_USER_STACK_MAX); 0 copies nothing. */
const volatile __u32 pg_user_stack_bytes = 0;

/* Sized by user space when stacks are copied, and drained on a timer (no
 * wake-up per record: a sample must not wake a thread). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} profile_stack_copies SEC(".maps");

/* A record is assembled here: 16 KiB do not fit on the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_user_stack_copy);
} profile_copy_buffer SEC(".maps");

/* Copies the current thread's user registers and the top of its user stack
 * for unwinding after the run. The registers are those the thread entered
 * the kernel with (task_pt_regs): the user state whether the sample
 * interrupted user code or a system call. */
static __always_inline void copy_user_stack(const struct pg_stack_key *key, struct pg_profile_counts *counts)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pg_user_stack_copy *copy;
	struct pt_regs *regs;
	__u64 sp, top, size;
	__u32 slot = 0;

	copy = bpf_map_lookup_elem(&profile_copy_buffer, &slot);
	if (!copy)
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	copy->tgid = key->tgid;
	copy->kernel_stack = key->kernel_stack;
	copy->user_stack = key->user_stack;
#if defined(__TARGET_ARCH_arm64)
	/* The registers are DWARF's x86_64 set (profile.h), which arm64 does not
	 * have: only the stack pointer and the pc go in, for the stack copy;
	 * unwinding from registers is x86-64 only. */
	__builtin_memset(copy->regs, 0, sizeof(copy->regs));
	copy->regs[7] = sp = BPF_CORE_READ(regs, sp);
	copy->regs[16] = BPF_CORE_READ(regs, pc);
#else
	copy->regs[0] = BPF_CORE_READ(regs, ax);
	copy->regs[1] = BPF_CORE_READ(regs, dx);
	copy->regs[2] = BPF_CORE_READ(regs, cx);
	copy->regs[3] = BPF_CORE_READ(regs, bx);
	copy->regs[4] = BPF_CORE_READ(regs, si);
	copy->regs[5] = BPF_CORE_READ(regs, di);
	copy->regs[6] = BPF_CORE_READ(regs, bp);
	copy->regs[7] = sp = BPF_CORE_READ(regs, sp);
	copy->regs[8] = BPF_CORE_READ(regs, r8);
	copy->regs[9] = BPF_CORE_READ(regs, r9);
	copy->regs[10] = BPF_CORE_READ(regs, r10);
	copy->regs[11] = BPF_CORE_READ(regs, r11);
	copy->regs[12] = BPF_CORE_READ(regs, r12);
	copy->regs[13] = BPF_CORE_READ(regs, r13);
	copy->regs[14] = BPF_CORE_READ(regs, r14);
	copy->regs[15] = BPF_CORE_READ(regs, r15);
	copy->regs[16] = BPF_CORE_READ(regs, ip);
#endif
	/* The main thread's frames all lie below the stack pointer it started
	 * with (argc, then argv, the environment and the auxiliary vector up to
	 * the end of the mapping): reading past the mapping's end would fail. */
	size = pg_user_stack_bytes;
	top = BPF_CORE_READ(task, mm, start_stack);
	if (top > sp && top - sp + 64 < size)
		size = (top - sp + 64 + 7) & ~7ULL;
	if (size > PG_USER_STACK_MAX)
		size = PG_USER_STACK_MAX;
	if (size == 0 || bpf_probe_read_user(copy->stack, size, (void *)sp) != 0) {
		/* A thread's stack ends closer than its size: try less once. */
		size = (size / 2) & ~7ULL;
		if (size > PG_USER_STACK_MAX)
			size = PG_USER_STACK_MAX;
		if (size == 0 || bpf_probe_read_user(copy->stack, size, (void *)sp) != 0) {
			counts->copies_lost++;
			return;
		}
	}
	copy->size = size;
	if (bpf_ringbuf_output(&profile_stack_copies, copy,
			       __builtin_offsetof(struct pg_user_stack_copy, stack) + size,
			       BPF_RB_NO_WAKEUP) != 0) {
		counts->copies_lost++;
		return;
	}
	counts->copies++;
}

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	struct pg_stack_key key = {};
	struct pg_profile_counts *counts;
	__u64 *total, zero = 0, id;
	__u32 slot = 0;

	id = bpf_get_current_pid_tgid();
	/* Every CPU's idle task has tid 0. */
	if ((__u32)id == 0 || !pg_current_is_tracked())
		return 0;
	counts = bpf_map_lookup_elem(&profile_counts, &slot);
	if (!counts)
		return 0;
	counts->samples++;
	key.tgid = id >> 32;
	/* -EFAULT (nothing to walk: a sample in user mode has no kernel stack, a
	 * kernel thread no user stack) is not a loss; a collision is. */
	pg_capture_stacks(ctx, &profile_stacks, &key);
	if (key.kernel_stack == -PG_EEXIST || key.user_stack == -PG_EEXIST)
		counts->stacks++;
	total = pg_stack_sum(&profile_by_stack, &key, &zero);
	if (!total) {
		counts->stack_sums++;
		return 0;
	}
	/* Shared by every CPU. */
	__sync_fetch_and_add(total, 1);
	if (pg_user_stack_bytes > 0 && key.user_stack != -14 /* -EFAULT: no user stack */)
		copy_user_stack(&key, counts);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
