/* Per-CPU aggregates of the irq probe (bpf/irq.bpf.c), one map value per
 * CPU, shared with gate/probes/irq.cpp: __u64 only. */
#ifndef PERFGATE_IRQ_H
#define PERFGATE_IRQ_H

#ifdef __cplusplus
#include <linux/types.h>
#endif

#include "histogram.h"

struct pg_irq_stats {
	__u64 hardirqs;                       /* irq_handler_exit events with a matching entry */
	__u64 softirqs;                       /* softirq_exit events with a matching entry */
	__u64 hardirq_hist[PG_HIST_BUCKETS];  /* ns per hard-IRQ handler invocation */
	__u64 softirq_hist[PG_HIST_BUCKETS];  /* ns per softirq handler invocation */
};

#endif
