/* In-kernel side of the log-linear histograms (layout in histogram.h). */
#ifndef PERFGATE_HIST_BPF_H
#define PERFGATE_HIST_BPF_H

#include "histogram.h"

/* hist is a PG_HIST_BUCKETS array inside a per-CPU map value, so a plain
 * increment is race-free: the program runs with migration disabled and does
 * not nest with itself. */
static __always_inline void pg_hist_add(__u64 *hist, __u64 value)
{
	__u64 index = pg_hist_index(value);

	/* One register for the check and the access. Left to itself clang
	 * zero-extends the index twice, checks one copy and indexes with the
	 * other; Linux 6.1's verifier (Debian 12's kernel) does not carry the
	 * bound across and rejects the program as "unbounded memory access". */
	asm volatile("" : "+r"(index));
	if (index < PG_HIST_BUCKETS)
		hist[index]++;
}

#endif
