// SPDX-License-Identifier: GPL-2.0
/* TCP: retransmitted segments, the kernel's smoothed RTT, connect latency
 * (SYN_SENT to ESTABLISHED) and resets sent and received.
 *
 * Workload scope. Most TCP events run in softirq context: an ACK that
 * updates the RTT, a retransmit timer, a RST arriving, the SYN-ACK that
 * completes a connect. The current task then is whoever the interrupt
 * landed on, often another process (on veth and loopback, the sender of
 * the packet being received), so "is current tracked" would count other
 * processes' connections and miss the workload's. Events are attributed by
 * socket instead: a socket is the workload's when
 *  - a tracked thread connects it (CLOSE -> SYN_SENT, which only connect()
 *    and a Fast Open sendmsg() do, in the caller's context), or
 *  - it was accepted from a listener a tracked thread started (CLOSE ->
 *    LISTEN runs in listen()). The child socket is created in softirq
 *    (LISTEN -> SYN_RECV) with no pointer back to its listener, so
 *    listeners are known by (network namespace, local port), which the
 *    child shares.
 * Those sockets are kept in a map keyed by the struct sock pointer, and
 * every other hook counts an event only when its socket is in the map. Not attributed: sockets the workload got from elsewhere
 * (passed over a Unix socket, inherited from a parent that was not
 * tracked), children of a listener started without bind() (its port is
 * chosen after the LISTEN transition), and RSTs sent without a socket (to
 * a closed port). System scope counts every event. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "filter.bpf.h"
#include "function_hooks.bpf.h"
#include "hist.bpf.h"
#include "tcp.h"

/* Sockets of the workload open at once (workload scope), or connects in
 * progress (system scope). LRU: a socket whose close was missed must not
 * hold its slot forever. */
#define TCP_SOCKS_MAX 65536
#define TCP_LISTENERS_MAX 4096

struct tcp_sock_info {
	__u64 connect_ns; /* ktime at SYN_SENT; 0 once established or when not connecting */
	__u64 listener;   /* 1 for a listening socket of the workload */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TCP_SOCKS_MAX);
	__type(key, __u64); /* struct sock pointer */
	__type(value, struct tcp_sock_info);
} tcp_socks SEC(".maps");

struct listener_key {
	__u32 netns; /* inode number of the socket's network namespace */
	__u32 port;  /* local port, host order */
};

/* Workload listeners by (netns, port), with how many sockets listen there
 * (SO_REUSEPORT). Shrunk to one entry in system scope. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCP_LISTENERS_MAX);
	__type(key, struct listener_key);
	__type(value, __u64);
} tcp_listeners SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_tcp_stats);
} tcp_stats SEC(".maps");

static __always_inline struct pg_tcp_stats *stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&tcp_stats, &zero);
}

static __always_inline __u64 sock_key(const void *sk)
{
	return (__u64)(unsigned long)sk;
}

/* Whether an event on socket `sk` counts in this scope. */
static __always_inline bool counted(const void *sk)
{
	__u64 key = sock_key(sk);

	if (!pg_filter_tracked)
		return true;
	return sk && bpf_map_lookup_elem(&tcp_socks, &key) != NULL;
}

static __always_inline struct listener_key listener_of(const struct sock *sk)
{
	struct listener_key key = {};

	key.netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	key.port = BPF_CORE_READ(sk, __sk_common.skc_num);
	return key;
}

static __always_inline void add_listener(const struct sock *sk)
{
	struct tcp_sock_info info = {.listener = 1};
	struct listener_key key = listener_of(sk);
	__u64 one = 1, *count, sk_key = sock_key(sk);

	/* Port 0: listen() without bind(), the port is picked after this
	 * transition; its children cannot be recognised. */
	if (key.port == 0) {
		bpf_map_delete_elem(&tcp_socks, &sk_key);
		return;
	}
	count = bpf_map_lookup_elem(&tcp_listeners, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		bpf_map_update_elem(&tcp_listeners, &key, &one, BPF_NOEXIST);
	bpf_map_update_elem(&tcp_socks, &sk_key, &info, BPF_ANY);
}

static __always_inline void remove_listener(const struct sock *sk)
{
	struct listener_key key = listener_of(sk);
	__u64 *count = bpf_map_lookup_elem(&tcp_listeners, &key);

	if (count && __sync_fetch_and_add(count, -1) <= 1)
		bpf_map_delete_elem(&tcp_listeners, &key);
}

/* A socket accepted by a listener of the workload becomes the workload's;
 * any other new socket must not inherit the entry of a closed workload
 * socket that had the same address. */
static __always_inline void adopt_child(const struct sock *sk)
{
	struct tcp_sock_info info = {};
	struct listener_key key = listener_of(sk);
	__u64 sk_key = sock_key(sk);

	if (bpf_map_lookup_elem(&tcp_listeners, &key))
		bpf_map_update_elem(&tcp_socks, &sk_key, &info, BPF_ANY);
	else
		bpf_map_delete_elem(&tcp_socks, &sk_key);
}

static __always_inline void on_state(const struct sock *sk, int oldstate, int newstate, __u16 protocol)
{
	struct tcp_sock_info *info, start = {};
	struct pg_tcp_stats *s;
	__u64 key = sock_key(sk);

	if (protocol != IPPROTO_TCP)
		return;
	/* A socket's life starts with one of three transitions: connect(),
	 * listen() or being accepted. Each either makes it the workload's or
	 * drops what a closed socket at the same address left behind. */
	if (oldstate == TCP_CLOSE && newstate == TCP_SYN_SENT) {
		/* connect(): process context, current is the caller. */
		if (!pg_current_is_tracked()) {
			bpf_map_delete_elem(&tcp_socks, &key);
			return;
		}
		start.connect_ns = bpf_ktime_get_ns();
		bpf_map_update_elem(&tcp_socks, &key, &start, BPF_ANY);
		return;
	}
	if (pg_filter_tracked) {
		if (oldstate == TCP_CLOSE && newstate == TCP_LISTEN) {
			/* listen(): process context too. */
			if (pg_current_is_tracked())
				add_listener(sk);
			else
				bpf_map_delete_elem(&tcp_socks, &key);
			return;
		}
		/* A child is cloned from its listener in state LISTEN and moves to
		 * SYN_RECV in softirq. */
		if (oldstate == TCP_LISTEN && newstate == TCP_SYN_RECV) {
			adopt_child(sk);
			return;
		}
	}
	info = bpf_map_lookup_elem(&tcp_socks, &key);
	if (!info)
		return;
	if (oldstate == TCP_SYN_SENT && newstate == TCP_ESTABLISHED && info->connect_ns) {
		s = stats();
		if (s)
			pg_hist_add(s->connect_hist, bpf_ktime_get_ns() - info->connect_ns);
		info->connect_ns = 0;
		/* System scope keeps sockets only while they connect. */
		if (!pg_filter_tracked)
			bpf_map_delete_elem(&tcp_socks, &key);
		return;
	}
	if (newstate == TCP_CLOSE) {
		if (info->listener) {
			remove_listener(sk);
			info->listener = 0;
		}
		/* Workload scope keeps a closed socket: the kernel may still send
		 * a RST for it (close() with unread data moves to CLOSE first,
		 * then aborts). Its entry goes when a socket that is not the
		 * workload's starts a life at the same address (above), at the
		 * next repetition, or as the least recently used. */
		if (!pg_filter_tracked)
			bpf_map_delete_elem(&tcp_socks, &key);
	}
}

/* tcp_probe fires for every packet received on an established socket,
 * before the packet is processed. Only while the socket has unacknowledged
 * data does the packet (an ACK) give the kernel an RTT sample; a receiver
 * with nothing in flight keeps reporting the RTT of its handshake and would
 * drown the sender's samples. */
static __always_inline void on_rtt(const struct sock *sk, __u32 srtt_us, __u32 snd_una, __u32 snd_nxt)
{
	struct pg_tcp_stats *s;

	if (srtt_us == 0 || snd_una == snd_nxt || !counted(sk))
		return;
	s = stats();
	if (s)
		pg_hist_add(s->rtt_hist, (__u64)srtt_us * 1000);
}

/* Kernels that report failed attempts say so in `err`; older ones trace
 * only segments that went out. */
static __always_inline void on_retransmit(const struct sock *sk, int err)
{
	struct pg_tcp_stats *s;

	if (err != 0 || !counted(sk))
		return;
	s = stats();
	if (s)
		s->retransmits++;
}

/* A RST sent for a packet that found no socket has sk NULL: counted in
 * system scope only. */
static __always_inline void on_reset_sent(const struct sock *sk)
{
	struct pg_tcp_stats *s;

	if (!counted(sk))
		return;
	s = stats();
	if (s)
		s->resets_sent++;
}

static __always_inline void on_reset_received(const struct sock *sk)
{
	struct pg_tcp_stats *s;

	if (!counted(sk))
		return;
	s = stats();
	if (s)
		s->resets_received++;
}

/* Tracepoint records as newer kernels lay them out: Linux 6.1 has no
 * trace_event_raw_tcp_retransmit_skb and no skaddr in tcp_probe's. Declared
 * here (CO-RE finds each field by name in the running kernel; the ___pg
 * flavour keeps them apart from vmlinux.h's), so that the programs compile
 * against the BTF of any kernel, an arm64 6.1 one included. Without skaddr
 * in tcp_probe's record tcp_rtt_tracepoint does not load (its relocation
 * fails): an RTT sample would belong to no socket, and the plan takes
 * tp_btf, raw_tp or a function there. */
struct trace_event_raw_tcp_retransmit_skb___pg {
	const void *skaddr;
	int err;
} __attribute__((preserve_access_index));

struct trace_event_raw_tcp_probe___pg {
	__u32 snd_nxt;
	__u32 snd_una;
	__u32 srtt;
	const void *skaddr;
} __attribute__((preserve_access_index));

/* tcp_send_reset and tcp_receive_reset: the same, only the socket is read. */
struct trace_event_raw_tcp_send_reset___pg {
	const void *skaddr;
} __attribute__((preserve_access_index));

/* Before tcp_retransmit_skb and tcp_send_reset had records of their own,
 * they were events of the class tcp_event_sk_skb, whose record is this
 * type: Debian's 6.1 has neither record of its own, its 6.12 only
 * tcp_send_reset's. */
struct trace_event_raw_tcp_event_sk_skb___pg {
	const void *skaddr;
} __attribute__((preserve_access_index));

struct trace_event_raw_tcp_event_sk___pg {
	const void *skaddr;
} __attribute__((preserve_access_index));

/* The srtt the tcp_probe tracepoint records: tp->srtt_us is kept << 3. */
static __always_inline void on_probe(const struct sock *sk)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;

	on_rtt(sk, BPF_CORE_READ(tp, srtt_us) >> 3, BPF_CORE_READ(tp, snd_una), BPF_CORE_READ(tp, snd_nxt));
}

static __always_inline bool retransmit_reports_err(void)
{
	return bpf_core_field_exists(struct trace_event_raw_tcp_retransmit_skb___pg, err);
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(tcp_state_tp_btf, const struct sock *sk, int oldstate, int newstate)
{
	on_state(sk, oldstate, newstate, BPF_CORE_READ(sk, sk_protocol));
	return 0;
}

SEC("raw_tp/inet_sock_set_state")
int BPF_PROG(tcp_state_raw_tp, const struct sock *sk, int oldstate, int newstate)
{
	on_state(sk, oldstate, newstate, BPF_CORE_READ(sk, sk_protocol));
	return 0;
}

SEC("tracepoint/sock/inet_sock_set_state")
int tcp_state_tracepoint(struct trace_event_raw_inet_sock_set_state *ctx)
{
	on_state(ctx->skaddr, ctx->oldstate, ctx->newstate, ctx->protocol);
	return 0;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(tcp_rtt_tp_btf, struct sock *sk)
{
	on_probe(sk);
	return 0;
}

SEC("raw_tp/tcp_probe")
int BPF_PROG(tcp_rtt_raw_tp, struct sock *sk)
{
	on_probe(sk);
	return 0;
}

SEC("tracepoint/tcp/tcp_probe")
int tcp_rtt_tracepoint(struct trace_event_raw_tcp_probe___pg *ctx)
{
	on_rtt(ctx->skaddr, ctx->srtt, ctx->snd_una, ctx->snd_nxt);
	return 0;
}

/* tcp_retransmit_skb(const struct sock *sk, const struct sk_buff *skb[, int err]) */
SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(tcp_retransmit_tp_btf, const struct sock *sk)
{
	on_retransmit(sk, retransmit_reports_err() ? (int)ctx[2] : 0);
	return 0;
}

SEC("raw_tp/tcp_retransmit_skb")
int BPF_PROG(tcp_retransmit_raw_tp, const struct sock *sk)
{
	on_retransmit(sk, retransmit_reports_err() ? (int)ctx[2] : 0);
	return 0;
}

SEC("tracepoint/tcp/tcp_retransmit_skb")
int tcp_retransmit_tracepoint(void *ctx)
{
	const struct trace_event_raw_tcp_retransmit_skb___pg *own = ctx;
	const struct trace_event_raw_tcp_event_sk_skb___pg *class = ctx;

	if (bpf_core_type_exists(struct trace_event_raw_tcp_retransmit_skb___pg))
		on_retransmit(own->skaddr, retransmit_reports_err() ? own->err : 0);
	else
		on_retransmit(class->skaddr, 0);
	return 0;
}

SEC("tp_btf/tcp_send_reset")
int BPF_PROG(tcp_reset_sent_tp_btf, const struct sock *sk)
{
	on_reset_sent(sk);
	return 0;
}

SEC("raw_tp/tcp_send_reset")
int BPF_PROG(tcp_reset_sent_raw_tp, const struct sock *sk)
{
	on_reset_sent(sk);
	return 0;
}

SEC("tracepoint/tcp/tcp_send_reset")
int tcp_reset_sent_tracepoint(void *ctx)
{
	const struct trace_event_raw_tcp_send_reset___pg *own = ctx;
	const struct trace_event_raw_tcp_event_sk_skb___pg *class = ctx;

	if (bpf_core_type_exists(struct trace_event_raw_tcp_send_reset___pg))
		on_reset_sent(own->skaddr);
	else
		on_reset_sent(class->skaddr);
	return 0;
}

SEC("tp_btf/tcp_receive_reset")
int BPF_PROG(tcp_reset_received_tp_btf, struct sock *sk)
{
	on_reset_received(sk);
	return 0;
}

SEC("raw_tp/tcp_receive_reset")
int BPF_PROG(tcp_reset_received_raw_tp, struct sock *sk)
{
	on_reset_received(sk);
	return 0;
}

SEC("tracepoint/tcp/tcp_receive_reset")
int tcp_reset_received_tracepoint(struct trace_event_raw_tcp_event_sk___pg *ctx)
{
	on_reset_received(ctx->skaddr);
	return 0;
}

/* tcp_probe fires first thing in tcp_rcv_established(sk, skb) (libbpf-tools'
 * tcprtt hooks the function), tcp_receive_reset first thing in
 * tcp_reset(sk, skb). The other events have no such function:
 * inet_sock_set_state fires from tcp_set_state() and from the listen and
 * accept paths, tcp_send_reset from three functions (IPv4, IPv6, active),
 * and tcp_retransmit_skb needs the socket at the return (a kretprobe has
 * only the result); they stay on tracepoints. */
PG_FUNCTION_ENTRY_HOOK(tcp_rtt, on_probe(sk), struct sock *sk)

PG_FUNCTION_ENTRY_HOOK(tcp_reset_received, on_reset_received(sk), struct sock *sk)

char LICENSE[] SEC("license") = "GPL";
