// SPDX-License-Identifier: GPL-2.0
/* Reclaim latency: direct reclaim (a thread's allocation had to free memory
 * itself) and memcg reclaim (a charge hit its memory cgroup's limit, or its
 * cgroup-v1 soft limit), timed from the vmscan *_begin to the matching *_end
 * event of the same thread, with the pages the end event says were reclaimed.
 * Both events run in the reclaiming thread's context, so workload scope is
 * that thread being tracked at begin. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "filter.bpf.h"
#include "function_hooks.bpf.h"
#include "hist.bpf.h"
#include "reclaim.h"
#include "trace_events.bpf.h"

/* Reclaims in progress at once, system-wide: at most one per thread and kind. */
#define IN_RECLAIM_MAX 16384

struct reclaim_key {
	__u32 tid;
	__u32 kind; /* PG_RECLAIM_* */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IN_RECLAIM_MAX);
	__type(key, struct reclaim_key);
	__type(value, __u64); /* ktime at *_begin */
} reclaim_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_reclaim_stats);
} reclaim_stats SEC(".maps");

/* kind is a constant at every call site, so each program keeps only its branch. */
static __always_inline void on_begin(__u32 kind)
{
	struct reclaim_key key = {.tid = pg_current_tid(), .kind = kind};
	__u64 now;

	if (!pg_current_is_tracked())
		return;
	now = bpf_ktime_get_ns();
	/* A begin whose end was lost (the probe attached in between) is overwritten. */
	bpf_map_update_elem(&reclaim_start, &key, &now, BPF_ANY);
}

static __always_inline void on_end(__u32 kind, __u64 nr_reclaimed)
{
	struct reclaim_key key = {.tid = pg_current_tid(), .kind = kind};
	struct pg_reclaim_stats *stats;
	__u32 zero = 0;
	__u64 *start, begin, delta;

	/* Only begins of tracked threads are stored: no second tracked check. */
	start = bpf_map_lookup_elem(&reclaim_start, &key);
	if (!start)
		return;
	begin = *start;
	delta = bpf_ktime_get_ns() - begin;
	bpf_map_delete_elem(&reclaim_start, &key);
	if (pg_trace_enabled)
		pg_trace_emit_current(PG_TRACE_RECLAIM, kind, begin, delta);
	stats = bpf_map_lookup_elem(&reclaim_stats, &zero);
	if (!stats)
		return;
	if (kind == PG_RECLAIM_DIRECT) {
		stats->direct++;
		stats->direct_pages += nr_reclaimed;
		pg_hist_add(stats->direct_hist, delta);
	} else {
		if (kind == PG_RECLAIM_MEMCG) {
			stats->memcg++;
			stats->memcg_pages += nr_reclaimed;
		} else {
			stats->softlimit++;
			stats->softlimit_pages += nr_reclaimed;
		}
		pg_hist_add(stats->memcg_hist, delta);
	}
}

/* Every hook below: tp_btf and raw_tp receive the tracepoint's arguments
 * (int order, gfp_t gfp_flags) or (unsigned long nr_reclaimed); the
 * tracepoint variant reads the same values from the event record. */

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(reclaim_direct_begin_tp_btf)
{
	on_begin(PG_RECLAIM_DIRECT);
	return 0;
}

SEC("raw_tp/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(reclaim_direct_begin_raw_tp)
{
	on_begin(PG_RECLAIM_DIRECT);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_direct_reclaim_begin")
int reclaim_direct_begin_tracepoint(void *ctx)
{
	on_begin(PG_RECLAIM_DIRECT);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(reclaim_direct_end_tp_btf, unsigned long nr_reclaimed)
{
	on_end(PG_RECLAIM_DIRECT, nr_reclaimed);
	return 0;
}

SEC("raw_tp/mm_vmscan_direct_reclaim_end")
int BPF_PROG(reclaim_direct_end_raw_tp, unsigned long nr_reclaimed)
{
	on_end(PG_RECLAIM_DIRECT, nr_reclaimed);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_direct_reclaim_end")
int reclaim_direct_end_tracepoint(struct trace_event_raw_mm_vmscan_direct_reclaim_end_template *ctx)
{
	on_end(PG_RECLAIM_DIRECT, ctx->nr_reclaimed);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(reclaim_memcg_begin_tp_btf)
{
	on_begin(PG_RECLAIM_MEMCG);
	return 0;
}

SEC("raw_tp/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(reclaim_memcg_begin_raw_tp)
{
	on_begin(PG_RECLAIM_MEMCG);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_memcg_reclaim_begin")
int reclaim_memcg_begin_tracepoint(void *ctx)
{
	on_begin(PG_RECLAIM_MEMCG);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(reclaim_memcg_end_tp_btf, unsigned long nr_reclaimed)
{
	on_end(PG_RECLAIM_MEMCG, nr_reclaimed);
	return 0;
}

SEC("raw_tp/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(reclaim_memcg_end_raw_tp, unsigned long nr_reclaimed)
{
	on_end(PG_RECLAIM_MEMCG, nr_reclaimed);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_memcg_reclaim_end")
int reclaim_memcg_end_tracepoint(struct trace_event_raw_mm_vmscan_direct_reclaim_end_template *ctx)
{
	on_end(PG_RECLAIM_MEMCG, ctx->nr_reclaimed);
	return 0;
}

/* Soft-limit reclaim exists only with cgroup-v1 memory controllers; user space
 * leaves these programs out (autoload off) on kernels without the events. */

SEC("tp_btf/mm_vmscan_memcg_softlimit_reclaim_begin")
int BPF_PROG(reclaim_softlimit_begin_tp_btf)
{
	on_begin(PG_RECLAIM_MEMCG_SOFTLIMIT);
	return 0;
}

SEC("raw_tp/mm_vmscan_memcg_softlimit_reclaim_begin")
int BPF_PROG(reclaim_softlimit_begin_raw_tp)
{
	on_begin(PG_RECLAIM_MEMCG_SOFTLIMIT);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_memcg_softlimit_reclaim_begin")
int reclaim_softlimit_begin_tracepoint(void *ctx)
{
	on_begin(PG_RECLAIM_MEMCG_SOFTLIMIT);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_softlimit_reclaim_end")
int BPF_PROG(reclaim_softlimit_end_tp_btf, unsigned long nr_reclaimed)
{
	on_end(PG_RECLAIM_MEMCG_SOFTLIMIT, nr_reclaimed);
	return 0;
}

SEC("raw_tp/mm_vmscan_memcg_softlimit_reclaim_end")
int BPF_PROG(reclaim_softlimit_end_raw_tp, unsigned long nr_reclaimed)
{
	on_end(PG_RECLAIM_MEMCG_SOFTLIMIT, nr_reclaimed);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_memcg_softlimit_reclaim_end")
int reclaim_softlimit_end_tracepoint(struct trace_event_raw_mm_vmscan_direct_reclaim_end_template *ctx)
{
	on_end(PG_RECLAIM_MEMCG_SOFTLIMIT, ctx->nr_reclaimed);
	return 0;
}

/* The functions that fire the events first and last thing (libbpf-tools'
 * drsnoop stays on the tracepoints): try_to_free_pages() for direct reclaim
 * (a call throttled before it reclaims counts here, not at the tracepoint),
 * try_to_free_mem_cgroup_pages() for memcg reclaim, mem_cgroup_shrink_node()
 * for soft-limit reclaim. Each returns the pages reclaimed. */
PG_FUNCTION_ENTRY_HOOK(reclaim_direct_begin, on_begin(PG_RECLAIM_DIRECT))
PG_FUNCTION_RESULT_HOOK(reclaim_direct_end, on_end(PG_RECLAIM_DIRECT, ret))
PG_FUNCTION_ENTRY_HOOK(reclaim_memcg_begin, on_begin(PG_RECLAIM_MEMCG))
PG_FUNCTION_RESULT_HOOK(reclaim_memcg_end, on_end(PG_RECLAIM_MEMCG, ret))
PG_FUNCTION_ENTRY_HOOK(reclaim_softlimit_begin, on_begin(PG_RECLAIM_MEMCG_SOFTLIMIT))
PG_FUNCTION_RESULT_HOOK(reclaim_softlimit_end, on_end(PG_RECLAIM_MEMCG_SOFTLIMIT, ret))

char LICENSE[] SEC("license") = "GPL";
