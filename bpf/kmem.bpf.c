// SPDX-License-Identifier: GPL-2.0
/* Page and slab allocation and free counts, attributed to the thread that
 * allocates or frees (frees deferred to RCU or a kworker are not the
 * workload's). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "filter.bpf.h"
#include "stats.h"
#include "trace_events.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_kmem_stats);
} kmem_stats SEC(".maps");

static __always_inline struct pg_kmem_stats *current_stats(void)
{
	__u32 zero = 0;

	if (!pg_current_is_tracked())
		return NULL;
	return bpf_map_lookup_elem(&kmem_stats, &zero);
}

/* A failed allocation fires the tracepoint too, with no page. */
static __always_inline void on_page_alloc(bool allocated, unsigned int order)
{
	struct pg_kmem_stats *stats;

	if (!allocated)
		return;
	stats = current_stats();
	if (!stats)
		return;
	stats->page_allocs++;
	stats->pages += 1ULL << (order & 63);
	if (pg_trace_enabled)
		pg_trace_emit_current(PG_TRACE_PAGE_ALLOC, order, bpf_ktime_get_ns(), 1ULL << (order & 63));
}

static __always_inline void on_kmalloc(void)
{
	struct pg_kmem_stats *stats = current_stats();

	if (stats)
		stats->kmalloc++;
}

static __always_inline void on_kmem_cache_alloc(void)
{
	struct pg_kmem_stats *stats = current_stats();

	if (stats)
		stats->kmem_cache_alloc++;
}

/* Every freed page passes free_pages_prepare(), which fires mm_page_free,
 * also when it is then freed in a batch (mm_page_free_batched). */
static __always_inline void on_page_free(unsigned int order)
{
	struct pg_kmem_stats *stats = current_stats();

	if (stats)
		stats->pages_freed += 1ULL << (order & 63);
}

/* kfree(NULL) fires the tracepoint too. */
static __always_inline void on_kfree(bool freed)
{
	struct pg_kmem_stats *stats;

	if (!freed)
		return;
	stats = current_stats();
	if (stats)
		stats->kfree++;
}

static __always_inline void on_kmem_cache_free(void)
{
	struct pg_kmem_stats *stats = current_stats();

	if (stats)
		stats->kmem_cache_free++;
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(kmem_page_alloc_tp_btf, struct page *page, unsigned int order)
{
	on_page_alloc(page != NULL, order);
	return 0;
}

SEC("raw_tp/mm_page_alloc")
int BPF_PROG(kmem_page_alloc_raw_tp, struct page *page, unsigned int order)
{
	on_page_alloc(page != NULL, order);
	return 0;
}

SEC("tracepoint/kmem/mm_page_alloc")
int kmem_page_alloc_tracepoint(struct trace_event_raw_mm_page_alloc *ctx)
{
	on_page_alloc(ctx->pfn != -1UL, ctx->order);
	return 0;
}

SEC("tp_btf/kmalloc")
int BPF_PROG(kmem_kmalloc_tp_btf)
{
	on_kmalloc();
	return 0;
}

SEC("raw_tp/kmalloc")
int BPF_PROG(kmem_kmalloc_raw_tp)
{
	on_kmalloc();
	return 0;
}

SEC("tracepoint/kmem/kmalloc")
int kmem_kmalloc_tracepoint(void *ctx)
{
	on_kmalloc();
	return 0;
}

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(kmem_cache_alloc_tp_btf)
{
	on_kmem_cache_alloc();
	return 0;
}

SEC("raw_tp/kmem_cache_alloc")
int BPF_PROG(kmem_cache_alloc_raw_tp)
{
	on_kmem_cache_alloc();
	return 0;
}

SEC("tracepoint/kmem/kmem_cache_alloc")
int kmem_cache_alloc_tracepoint(void *ctx)
{
	on_kmem_cache_alloc();
	return 0;
}

SEC("tp_btf/mm_page_free")
int BPF_PROG(kmem_page_free_tp_btf, struct page *page, unsigned int order)
{
	on_page_free(order);
	return 0;
}

SEC("raw_tp/mm_page_free")
int BPF_PROG(kmem_page_free_raw_tp, struct page *page, unsigned int order)
{
	on_page_free(order);
	return 0;
}

SEC("tracepoint/kmem/mm_page_free")
int kmem_page_free_tracepoint(struct trace_event_raw_mm_page_free *ctx)
{
	on_page_free(ctx->order);
	return 0;
}

SEC("tp_btf/kfree")
int BPF_PROG(kmem_kfree_tp_btf, unsigned long call_site, const void *ptr)
{
	on_kfree(ptr != NULL);
	return 0;
}

SEC("raw_tp/kfree")
int BPF_PROG(kmem_kfree_raw_tp, unsigned long call_site, const void *ptr)
{
	on_kfree(ptr != NULL);
	return 0;
}

SEC("tracepoint/kmem/kfree")
int kmem_kfree_tracepoint(struct trace_event_raw_kfree *ctx)
{
	on_kfree(ctx->ptr != NULL);
	return 0;
}

SEC("tp_btf/kmem_cache_free")
int BPF_PROG(kmem_cache_free_tp_btf)
{
	on_kmem_cache_free();
	return 0;
}

SEC("raw_tp/kmem_cache_free")
int BPF_PROG(kmem_cache_free_raw_tp)
{
	on_kmem_cache_free();
	return 0;
}

SEC("tracepoint/kmem/kmem_cache_free")
int kmem_cache_free_tracepoint(void *ctx)
{
	on_kmem_cache_free();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
