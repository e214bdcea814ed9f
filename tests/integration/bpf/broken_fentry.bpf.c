// SPDX-License-Identifier: GPL-2.0
/* One hook, raw_syscalls:sys_enter, whose fentry program is broken on
 * purpose: it reads the syscall number one off, so it never counts the
 * getppid calls its siblings count. Every other variant is sound, the
 * kprobe included (a hook with fentry has one, or its plan cannot be
 * loaded): the test fails on the count alone. tests/vm/harness-test.sh
 * shows that the probe tests in the virtual machine catch such a program. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 target_tgid = 0;
const volatile long getppid_nr = 0;
__u64 getppid_calls = 0;

static __always_inline void on_enter(long nr)
{
	if ((bpf_get_current_pid_tgid() >> 32) == target_tgid && nr == getppid_nr)
		__sync_fetch_and_add(&getppid_calls, 1);
}

SEC("fentry")
int BPF_PROG(broken_enter_fentry, struct pt_regs *regs, unsigned int nr)
{
	on_enter(nr + 1); /* the deliberate bug */
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(broken_enter_kprobe, struct pt_regs *regs, unsigned int nr)
{
	on_enter(nr);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(broken_enter_tp_btf, struct pt_regs *regs, long id)
{
	on_enter(id);
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(broken_enter_raw_tp, struct pt_regs *regs, long id)
{
	on_enter(id);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int broken_enter_tracepoint(struct trace_event_raw_sys_enter *ctx)
{
	on_enter(ctx->id);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
