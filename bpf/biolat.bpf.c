// SPDX-License-Identifier: GPL-2.0
/* Block request latency: block_rq_issue (handed to the driver) to
 * block_rq_complete, in total and per disk, with request and byte counts.
 *
 * A request is known by its address, which is unique while it is in
 * flight, when every hook uses the tp_btf variant or every hook the raw_tp
 * one. The tracepoint records carry no address, and tp_btf programs can only
 * take it relative to another pointer, so otherwise every hook keys requests
 * by (dev, sector), read from struct request the way the tracepoints compute
 * them. Two requests in flight at once at the same sector of one disk (a
 * flush and a write at sector 0, say) then share a key: the later issue's
 * time wins and the other completion finds no start and is not counted.
 *
 * Workload scope. Completion runs in interrupt context and issue often runs
 * in a kblockd worker (an I/O scheduler dispatching later), so neither tells
 * whose request it is. A request counts for the workload when a tracked
 * thread inserts it into the scheduler (block_rq_insert) or issues it
 * itself (direct issue, or its plug flushed in its own context). That
 * covers direct I/O, reads that miss the page cache, and writeback the
 * workload starts itself (fsync, O_SYNC, sync_file_range). It does not cover
 * I/O done for the workload by other threads: background writeback of its
 * dirty pages by flusher kworkers, journal commits (jbd2) that its fsync
 * waits for, or I/O a stacked driver (dm, md) resubmits from its own
 * threads. A bio of a tracked thread merged into a request someone else
 * inserted, and a request whose start sector a front merge moved after it
 * was inserted, are not attributed. The mark of a request that was merged
 * into another before it was issued stays until its slot is taken or (with
 * address keys) another thread inserts a request at that address; a request
 * with its key issued by another thread meanwhile is attributed. System
 * scope counts every request. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "biolat.h"
#include "filter.bpf.h"
#include "function_hooks.bpf.h"
#include "hist.bpf.h"
#include "slot_table.bpf.h"
#include "trace_events.bpf.h"

/* In-flight requests: the slot table of slot_table.bpf.h, keyed (address,
 * 0) or (sector, dev), whose value is the request's size at issue. Request
 * addresses come from a small per-queue pool, so they also keep the slots in
 * use few and cache-hot. */
PG_SLOT_TABLE(in_flight);

/* Kernel dev_t: MKDEV(major, minor), as the block tracepoints record it. */
#define PG_MINORBITS 20
/* REQ_OP_MASK of include/linux/blk_types.h (a macro, so not in vmlinux.h). */
#define PG_REQ_OP_MASK 0xff

/* Whether requests are keyed by address: user space sets it when every hook
 * uses the same variant and that is not the tracepoint one. */
const volatile bool key_by_request = true;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_biolat_stats);
} biolat_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, PG_BIOLAT_DEVICES_MAX);
	__type(key, __u32); /* kernel dev_t of the disk */
	__type(value, struct pg_biolat_device_stats);
} biolat_device_stats SEC(".maps");

/* A zeroed value to create a disk's entry from: too large for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_biolat_device_stats);
} device_stats_zero SEC(".maps");

static __always_inline __u32 make_dev(__u32 major, __u32 first_minor)
{
	return (major << PG_MINORBITS) | first_minor;
}

/* What the block_rq_* tracepoints record as sector: blk_rq_trace_sector(),
 * which is 0 for passthrough requests (driver-private commands) and for a
 * start sector not set yet ((sector_t)-1), and blk_rq_pos() otherwise. */
static __always_inline __u64 trace_sector(__u32 cmd_flags, __u64 sector)
{
	__u32 op = cmd_flags & PG_REQ_OP_MASK;

	if (op == REQ_OP_DRV_IN || op == REQ_OP_DRV_OUT || sector == (__u64)-1)
		return 0;
	return sector;
}

/* The disk's dev_t (0 without a disk), as the tracepoints record it. tp_btf
 * programs follow BTF pointers with plain loads (a NULL disk reads as 0),
 * where raw_tp programs pay a helper call per field. */
static __always_inline __u32 request_dev_btf(struct request *rq)
{
	struct gendisk *disk = rq->q->disk;

	return make_dev(disk->major, disk->first_minor);
}

static __always_inline __u32 request_dev(struct request *rq)
{
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);

	return make_dev(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
}

/* address: the request's address as a number. In tp_btf programs the
 * verifier keeps rq a pointer, on which it allows no arithmetic but the
 * difference to another pointer: the address is taken relative to a map's. */
static __always_inline struct pg_slot_key address_key(__u64 address)
{
	struct pg_slot_key key = {.id = address};

	return key;
}

static __always_inline struct pg_slot_key sector_key(__u32 dev, __u64 sector)
{
	struct pg_slot_key key = {.id = sector, .tag = dev};

	return key;
}

static __always_inline struct pg_slot_key request_key_btf(struct request *rq)
{
	if (key_by_request)
		return address_key((__u64)rq - (__u64)&in_flight);
	return sector_key(request_dev_btf(rq), trace_sector(rq->cmd_flags, rq->__sector));
}

static __always_inline struct pg_slot_key request_key(struct request *rq)
{
	if (key_by_request)
		return address_key((__u64)rq);
	return sector_key(request_dev(rq), trace_sector(BPF_CORE_READ(rq, cmd_flags), BPF_CORE_READ(rq, __sector)));
}

static __always_inline void on_insert(struct pg_slot_key key)
{
	struct pg_slot *slot;

	/* System scope counts every request: nothing to remember. */
	if (!pg_filter_tracked)
		return;
	if (!pg_current_is_tracked()) {
		/* A request's memory is reused once it is freed: the mark of one
		 * merged into another before it was issued must not attribute
		 * the next request at that address. (Sector keys cannot tell a
		 * stale mark from another request at the same sector.) */
		if (key_by_request) {
			slot = pg_slot_find(&in_flight, key);
			if (slot && slot->state == PG_SLOT_MARKED)
				slot->state = PG_SLOT_FREE;
		}
		return;
	}
	slot = pg_slot_claim(&in_flight, key);
	/* A request already marked or started (inserted again after a
	 * requeue) keeps its slot as it is. */
	if (!slot || pg_slot_holds(slot, key))
		return;
	pg_slot_fill(slot, key, PG_SLOT_MARKED, 0, 0);
}

static __always_inline void on_issue(struct pg_slot_key key, __u64 bytes)
{
	struct pg_slot *slot = pg_slot_claim(&in_flight, key);

	if (!slot)
		return;
	/* In scope when a tracked thread inserted it (marked) or issued it
	 * before (a requeued request is issued again: its latency starts
	 * over), or when a tracked thread issues it now. */
	if (pg_filter_tracked && !pg_slot_holds(slot, key) && !pg_current_is_tracked())
		return;
	pg_slot_fill(slot, key, PG_SLOT_STARTED, bpf_ktime_get_ns(), bytes);
}

static __always_inline void add_device_latency(__u32 dev, __u64 delta)
{
	struct pg_biolat_device_stats *device, *zero_value;
	__u32 zero = 0;

	if (dev == 0)
		return;
	device = bpf_map_lookup_elem(&biolat_device_stats, &dev);
	if (!device) {
		zero_value = bpf_map_lookup_elem(&device_stats_zero, &zero);
		if (!zero_value)
			return;
		/* Fails once PG_BIOLAT_DEVICES_MAX disks are known: totals only. */
		bpf_map_update_elem(&biolat_device_stats, &dev, zero_value, BPF_NOEXIST);
		device = bpf_map_lookup_elem(&biolat_device_stats, &dev);
		if (!device)
			return;
	}
	pg_hist_add(device->hist, delta);
}

/* Ends key's request: its latency and size, false when it has no start
 * (only requests issued in scope have one). A request completed in parts
 * fires once per part; the first part ends its latency. */
static __always_inline bool end_request(struct pg_slot_key key, __u64 *latency, __u64 *bytes)
{
	__u64 start, now;

	if (!pg_slot_take(&in_flight, key, &start, bytes))
		return false;
	now = bpf_ktime_get_ns();
	if (now < start)
		return false;
	*latency = now - start;
	return true;
}

/* dev: the request's disk, which an address key does not carry; read only
 * for requests in scope. */
static __always_inline void add_request(__u32 dev, __u64 latency, __u64 bytes)
{
	struct pg_biolat_stats *stats;
	__u32 zero = 0;

	stats = bpf_map_lookup_elem(&biolat_stats, &zero);
	if (!stats)
		return;
	stats->requests++;
	stats->bytes += bytes;
	pg_hist_add(stats->hist, latency);
	add_device_latency(dev, latency);
	/* Completion runs in interrupt context: the record names no thread. */
	if (pg_trace_enabled)
		pg_trace_emit(PG_TRACE_BLOCK_IO, (__u32)(bytes > 0xffffffffULL ? 0xffffffffULL : bytes), 0, 0,
			      bpf_ktime_get_ns() - latency, latency);
}

/* The completion of rq, read through BPF_CORE_READ (raw_tp, fentry, kprobe). */
static __always_inline void complete_request(struct request *rq)
{
	__u64 latency, bytes;

	if (end_request(request_key(rq), &latency, &bytes))
		add_request(request_dev(rq), latency, bytes);
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(biolat_insert_tp_btf, struct request *rq)
{
	on_insert(request_key_btf(rq));
	return 0;
}

SEC("raw_tp/block_rq_insert")
int BPF_PROG(biolat_insert_raw_tp, struct request *rq)
{
	on_insert(request_key(rq));
	return 0;
}

SEC("tracepoint/block/block_rq_insert")
int biolat_insert_tracepoint(struct trace_event_raw_block_rq *ctx)
{
	on_insert(sector_key(ctx->dev, ctx->sector));
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(biolat_issue_tp_btf, struct request *rq)
{
	on_issue(request_key_btf(rq), rq->__data_len);
	return 0;
}

SEC("raw_tp/block_rq_issue")
int BPF_PROG(biolat_issue_raw_tp, struct request *rq)
{
	on_issue(request_key(rq), BPF_CORE_READ(rq, __data_len));
	return 0;
}

SEC("tracepoint/block/block_rq_issue")
int biolat_issue_tracepoint(struct trace_event_raw_block_rq *ctx)
{
	on_issue(sector_key(ctx->dev, ctx->sector), ctx->bytes);
	return 0;
}

/* block_rq_complete(struct request *rq, blk_status_t error, unsigned int nr_bytes) */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(biolat_complete_tp_btf, struct request *rq)
{
	__u64 latency, bytes;

	if (end_request(request_key_btf(rq), &latency, &bytes))
		add_request(request_dev_btf(rq), latency, bytes);
	return 0;
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(biolat_complete_raw_tp, struct request *rq)
{
	complete_request(rq);
	return 0;
}

SEC("tracepoint/block/block_rq_complete")
int biolat_complete_tracepoint(struct trace_event_raw_block_rq_completion *ctx)
{
	__u64 latency, bytes;

	if (end_request(sector_key(ctx->dev, ctx->sector), &latency, &bytes))
		add_request(ctx->dev, latency, bytes);
	return 0;
}

/* block_rq_issue fires first thing in blk_mq_start_request(rq), and
 * block_rq_complete first thing in blk_update_request(rq, error, bytes)
 * (completions batched by blk_mq_end_request_batch() bypass it: polled
 * queues). block_rq_insert fires from several functions that differ between
 * kernel versions, some inlined: it stays on tracepoints (tp_btf), and the
 * plan's mixed types key requests by sector (gate/probes/biolat.cpp). */
PG_FUNCTION_ENTRY_HOOK(biolat_issue, on_issue(request_key(rq), BPF_CORE_READ(rq, __data_len)), struct request *rq)

PG_FUNCTION_ENTRY_HOOK(biolat_complete, complete_request(rq), struct request *rq)

char LICENSE[] SEC("license") = "GPL";
