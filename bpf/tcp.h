/* Aggregates of the tcp probe (bpf/tcp.bpf.c), shared with
 * gate/probes/tcp.cpp: __u64 only. */
#ifndef PERFGATE_TCP_H
#define PERFGATE_TCP_H

/* The BPF side has these types from vmlinux.h. */
#ifndef __bpf__
#include <linux/types.h>
#endif

#include "histogram.h"

/* One value per CPU (key 0 of a per-CPU array): two histograms and the
 * counters fit the 32 KiB a per-CPU value may have. */
struct pg_tcp_stats {
	__u64 retransmits;                   /* segments retransmitted (tcp_retransmit_skb without error) */
	__u64 resets_sent;                   /* RSTs sent (tcp_send_reset) */
	__u64 resets_received;               /* RSTs received on a socket (tcp_receive_reset) */
	__u64 rtt_hist[PG_HIST_BUCKETS];     /* ns: smoothed RTT at each received packet while data is in flight */
	__u64 connect_hist[PG_HIST_BUCKETS]; /* ns from SYN_SENT to ESTABLISHED (connect()) */
};

#endif
