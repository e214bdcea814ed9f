// SPDX-License-Identifier: GPL-2.0
/* Block request latency: block_rq_issue (handed to the driver) to
 * block_rq_complete, in total and per disk, with request and byte counts.
 *
 * A request is known by (dev, sector) in every variant: the tracepoint
 * records carry nothing else, and the tp_btf/raw_tp variants read the same
 * two values from struct request the way the tracepoints compute them. Two
 * requests in flight at once at the same sector of one disk (a flush and a
 * write at sector 0, say) share a key: the later issue's time wins and the
 * other completion finds no start and is not counted.
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
 * was inserted, are not attributed. System scope counts every request. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "biolat.h"
#include "filter.bpf.h"
#include "hist.bpf.h"

/* Requests in flight at once, system-wide (queue depths times disks). LRU:
 * a request whose completion was missed must not hold its slot forever. */
#define IN_FLIGHT_MAX 16384

/* Kernel dev_t: MKDEV(major, minor), as the block tracepoints record it. */
#define PG_MINORBITS 20
/* REQ_OP_MASK of include/linux/blk_types.h (a macro, so not in vmlinux.h). */
#define PG_REQ_OP_MASK 0xff

struct rq_key {
	__u32 dev;
	__u32 pad;
	__u64 sector;
};

struct rq_start {
	__u64 ns;    /* ktime at issue */
	__u64 bytes; /* request size at issue */
};

/* Requests a tracked thread inserted, until they are issued (workload scope). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IN_FLIGHT_MAX);
	__type(key, struct rq_key);
	__type(value, __u8);
} tracked_inserts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IN_FLIGHT_MAX);
	__type(key, struct rq_key);
	__type(value, struct rq_start);
} in_flight SEC(".maps");

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

/* What the block_rq_* tracepoints record as dev and sector: the disk's
 * dev_t (0 without a disk) and blk_rq_trace_sector(), which is 0 for
 * passthrough requests (driver-private commands) and for a start sector not
 * set yet ((sector_t)-1), and blk_rq_pos() otherwise. */
static __always_inline struct rq_key request_key(struct request *rq)
{
	struct rq_key key = {};
	__u32 major = BPF_CORE_READ(rq, q, disk, major);
	__u32 first_minor = BPF_CORE_READ(rq, q, disk, first_minor);
	__u32 op = BPF_CORE_READ(rq, cmd_flags) & PG_REQ_OP_MASK;
	__u64 sector = BPF_CORE_READ(rq, __sector);

	key.dev = (major << PG_MINORBITS) | first_minor;
	if (op != REQ_OP_DRV_IN && op != REQ_OP_DRV_OUT && sector != (__u64)-1)
		key.sector = sector;
	return key;
}

/* The same, read directly: tp_btf programs may follow BTF pointers with
 * plain loads (a NULL disk reads as 0), where raw_tp programs pay a helper
 * call per field. */
static __always_inline struct rq_key request_key_btf(struct request *rq)
{
	struct rq_key key = {};
	struct gendisk *disk = rq->q->disk;
	__u32 op = rq->cmd_flags & PG_REQ_OP_MASK;
	__u64 sector = rq->__sector;

	key.dev = ((__u32)disk->major << PG_MINORBITS) | (__u32)disk->first_minor;
	if (op != REQ_OP_DRV_IN && op != REQ_OP_DRV_OUT && sector != (__u64)-1)
		key.sector = sector;
	return key;
}

static __always_inline struct rq_key tracepoint_key(__u32 dev, __u64 sector)
{
	struct rq_key key = {.dev = dev, .sector = sector};

	return key;
}

static __always_inline void on_insert(struct rq_key key)
{
	__u8 one = 1;

	/* System scope counts every request: nothing to remember. */
	if (!pg_filter_tracked || !pg_current_is_tracked())
		return;
	bpf_map_update_elem(&tracked_inserts, &key, &one, BPF_ANY);
}

static __always_inline void on_issue(struct rq_key key, __u64 bytes)
{
	struct rq_start start;

	if (pg_filter_tracked) {
		/* Deleting also consumes the mark, so a later request at the same
		 * sector is not attributed by it. */
		bool inserted_by_workload = bpf_map_delete_elem(&tracked_inserts, &key) == 0;

		if (!inserted_by_workload && !pg_current_is_tracked())
			return;
	}
	start.ns = bpf_ktime_get_ns();
	start.bytes = bytes;
	/* A requeued request is issued again: its latency starts over. */
	bpf_map_update_elem(&in_flight, &key, &start, BPF_ANY);
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

static __always_inline void on_complete(struct rq_key key)
{
	struct pg_biolat_stats *stats;
	struct rq_start *start;
	__u64 delta, bytes;
	__u32 zero = 0;

	/* Only requests issued in scope have a start. A request completed in
	 * parts fires once per part; the first part ends its latency. */
	start = bpf_map_lookup_elem(&in_flight, &key);
	if (!start)
		return;
	delta = bpf_ktime_get_ns() - start->ns;
	bytes = start->bytes;
	bpf_map_delete_elem(&in_flight, &key);
	stats = bpf_map_lookup_elem(&biolat_stats, &zero);
	if (!stats)
		return;
	stats->requests++;
	stats->bytes += bytes;
	pg_hist_add(stats->hist, delta);
	add_device_latency(key.dev, delta);
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
	on_insert(tracepoint_key(ctx->dev, ctx->sector));
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
	on_issue(tracepoint_key(ctx->dev, ctx->sector), ctx->bytes);
	return 0;
}

/* block_rq_complete(struct request *rq, blk_status_t error, unsigned int nr_bytes) */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(biolat_complete_tp_btf, struct request *rq)
{
	on_complete(request_key_btf(rq));
	return 0;
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(biolat_complete_raw_tp, struct request *rq)
{
	on_complete(request_key(rq));
	return 0;
}

SEC("tracepoint/block/block_rq_complete")
int biolat_complete_tracepoint(struct trace_event_raw_block_rq_completion *ctx)
{
	on_complete(tracepoint_key(ctx->dev, ctx->sector));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
