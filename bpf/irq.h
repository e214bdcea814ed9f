/* Per-CPU aggregates of the irq probe (bpf/irq.bpf.c), one map value per
 * CPU, shared with gate/probes/irq.cpp: __u64 only. The number of handler
 * runs is each histogram's total, not a counter of its own: user space
 * reads a CPU's value while that CPU's interrupts keep updating it, and a
 * counter copied before its histogram would disagree with it. */
#ifndef PERFGATE_IRQ_H
#define PERFGATE_IRQ_H

#ifdef __cplusplus
#include <linux/types.h>
#endif

#include "histogram.h"

struct pg_irq_stats {
	__u64 hardirq_hist[PG_HIST_BUCKETS];  /* ns per hard-IRQ handler invocation */
	__u64 softirq_hist[PG_HIST_BUCKETS];  /* ns per softirq handler invocation */
};

#endif
