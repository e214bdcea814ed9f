// SPDX-License-Identifier: GPL-2.0
/* Time in hard-IRQ handlers (irq_handler_entry/exit, once per handler of a
 * possibly shared line) and in softirq handlers (softirq_entry/exit, once
 * per vector run). Interrupts run on behalf of no process, so this probe is
 * system-scope only: its programs never consult the tracked map (filter.bpf.h
 * is included only because every probe object carries it for BpfProbe).
 *
 * A CPU runs at most one hard-IRQ handler at a time (handlers run with
 * interrupts off) and at most one softirq at a time (a softirq may be
 * interrupted by a hard IRQ, which has its own slot), so one start slot per
 * CPU and kind suffices. Exit zeroes the slot: an exit whose entry was missed
 * (the probe attached in between, or a tracepoint program skipped because
 * another BPF program was running on the CPU) records nothing. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "filter.bpf.h"
#include "function_hooks.bpf.h"
#include "hist.bpf.h"
#include "irq.h"

#define KIND_HARDIRQ 0
#define KIND_SOFTIRQ 1

struct irq_clock {
	__u64 hardirq_start; /* ktime at irq_handler_entry; 0 outside a handler */
	__u64 softirq_start; /* ktime at softirq_entry; 0 outside a softirq */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_clock);
} irq_clock SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_irq_stats);
} irq_stats SEC(".maps");

/* kind is a constant at every call site. */
static __always_inline void on_entry(int kind)
{
	struct irq_clock *clock;
	__u32 zero = 0;

	clock = bpf_map_lookup_elem(&irq_clock, &zero);
	if (!clock)
		return;
	if (kind == KIND_HARDIRQ)
		clock->hardirq_start = bpf_ktime_get_ns();
	else
		clock->softirq_start = bpf_ktime_get_ns();
}

static __always_inline void on_exit(int kind)
{
	struct pg_irq_stats *stats;
	struct irq_clock *clock;
	__u64 start, delta;
	__u32 zero = 0;

	clock = bpf_map_lookup_elem(&irq_clock, &zero);
	if (!clock)
		return;
	start = kind == KIND_HARDIRQ ? clock->hardirq_start : clock->softirq_start;
	if (start == 0)
		return;
	delta = bpf_ktime_get_ns() - start;
	if (kind == KIND_HARDIRQ)
		clock->hardirq_start = 0;
	else
		clock->softirq_start = 0;
	stats = bpf_map_lookup_elem(&irq_stats, &zero);
	if (!stats)
		return;
	if (kind == KIND_HARDIRQ)
		pg_hist_add(stats->hardirq_hist, delta);
	else
		pg_hist_add(stats->softirq_hist, delta);
}

/* irq_handler_entry(int irq, struct irqaction *action) */
SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_hard_entry_tp_btf)
{
	on_entry(KIND_HARDIRQ);
	return 0;
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(irq_hard_entry_raw_tp)
{
	on_entry(KIND_HARDIRQ);
	return 0;
}

SEC("tracepoint/irq/irq_handler_entry")
int irq_hard_entry_tracepoint(void *ctx)
{
	on_entry(KIND_HARDIRQ);
	return 0;
}

/* irq_handler_exit(int irq, struct irqaction *action, int ret) */
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_hard_exit_tp_btf)
{
	on_exit(KIND_HARDIRQ);
	return 0;
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(irq_hard_exit_raw_tp)
{
	on_exit(KIND_HARDIRQ);
	return 0;
}

SEC("tracepoint/irq/irq_handler_exit")
int irq_hard_exit_tracepoint(void *ctx)
{
	on_exit(KIND_HARDIRQ);
	return 0;
}

/* softirq_entry(unsigned int vec_nr) */
SEC("tp_btf/softirq_entry")
int BPF_PROG(irq_soft_entry_tp_btf)
{
	on_entry(KIND_SOFTIRQ);
	return 0;
}

SEC("raw_tp/softirq_entry")
int BPF_PROG(irq_soft_entry_raw_tp)
{
	on_entry(KIND_SOFTIRQ);
	return 0;
}

SEC("tracepoint/irq/softirq_entry")
int irq_soft_entry_tracepoint(void *ctx)
{
	on_entry(KIND_SOFTIRQ);
	return 0;
}

/* softirq_exit(unsigned int vec_nr) */
SEC("tp_btf/softirq_exit")
int BPF_PROG(irq_soft_exit_tp_btf)
{
	on_exit(KIND_SOFTIRQ);
	return 0;
}

SEC("raw_tp/softirq_exit")
int BPF_PROG(irq_soft_exit_raw_tp)
{
	on_exit(KIND_SOFTIRQ);
	return 0;
}

SEC("tracepoint/irq/softirq_exit")
int irq_soft_exit_tracepoint(void *ctx)
{
	on_exit(KIND_SOFTIRQ);
	return 0;
}

/* __handle_irq_event_percpu(desc) runs a line's handlers, each between
 * irq_handler_entry and irq_handler_exit: on a shared line (rare with MSI)
 * the function variants time all its handlers as one. Softirqs have no such
 * function: the vectors run in a loop inside __do_softirq() (6.1) or
 * handle_softirqs() (6.12), so their hooks stay on tracepoints, as
 * libbpf-tools' softirqs does. */
PG_FUNCTION_ENTRY_HOOK(irq_hard_entry, on_entry(KIND_HARDIRQ))

PG_FUNCTION_RETURN_HOOK(irq_hard_exit, on_exit(KIND_HARDIRQ))

char LICENSE[] SEC("license") = "GPL";
