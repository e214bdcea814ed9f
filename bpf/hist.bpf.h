/* In-kernel side of the log-linear histograms (layout in histogram.h). */
#ifndef PERFGATE_HIST_BPF_H
#define PERFGATE_HIST_BPF_H

#include "histogram.h"

/* hist is a PG_HIST_BUCKETS array inside a per-CPU map value, so a plain
 * increment is race-free: the program runs with migration disabled and does
 * not nest with itself. */
static __always_inline void pg_hist_add(__u64 *hist, __u64 value)
{
	unsigned int index = pg_hist_index(value);

	if (index < PG_HIST_BUCKETS)
		hist[index]++;
}

#endif
