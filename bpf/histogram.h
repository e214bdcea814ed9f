/* Log-linear histogram layout shared by the BPF programs and the user side.
 * Values below 2^PG_HIST_SUB_BITS get one bucket each; above that, every power
 * of two is split into 2^PG_HIST_SUB_BITS equal sub-buckets, so a bucket is at
 * most 1/32 (3.1 %) wide relative to its lower bound. Only __u64-style types:
 * this header must compile both with vmlinux.h and with the C++ side. */
#ifndef PERFGATE_BPF_HISTOGRAM_H
#define PERFGATE_BPF_HISTOGRAM_H

#define PG_HIST_SUB_BITS 5
#define PG_HIST_SUB_COUNT (1u << PG_HIST_SUB_BITS)
/* 64-bit values: (64 - SUB_BITS) octaves above the linear range, plus the linear range. */
#define PG_HIST_BUCKETS ((64 - PG_HIST_SUB_BITS + 1) * PG_HIST_SUB_COUNT)

/* Index of the highest set bit; v must be non-zero. Branch-free binary search
 * so the BPF verifier sees a bounded, loop-free body. */
static inline unsigned int pg_log2_u64(unsigned long long v)
{
	unsigned int r = 0, shift;

	shift = (v > 0xFFFFFFFFULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xFFFFULL) << 4; v >>= shift; r |= shift;
	shift = (v > 0xFFULL) << 3; v >>= shift; r |= shift;
	shift = (v > 0xFULL) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3ULL) << 1; v >>= shift; r |= shift;
	r |= (unsigned int)(v >> 1);
	return r;
}

static inline unsigned int pg_hist_index(unsigned long long v)
{
	unsigned int msb;

	if (v < PG_HIST_SUB_COUNT)
		return (unsigned int)v;
	msb = pg_log2_u64(v);
	return ((msb - PG_HIST_SUB_BITS + 1) << PG_HIST_SUB_BITS) |
	       (unsigned int)((v >> (msb - PG_HIST_SUB_BITS)) & (PG_HIST_SUB_COUNT - 1));
}

#endif
