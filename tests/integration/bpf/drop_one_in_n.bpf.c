// SPDX-License-Identifier: GPL-2.0
/* Test-only tc classifier: drops every n-th packet of at least min_len
 * bytes that leaves the interface it is attached to (clsact egress). The
 * kernels of the project machines have no netem, so this is how the tcp
 * probe's test injects loss. Small packets (SYN, pure ACKs, FIN) pass, so
 * that a lost handshake packet cannot stall the test for a one-second
 * SYN timeout.
 *
 * The packet is dropped as TC_ACT_STOLEN, which tells the sender it was
 * sent, like a loss on the wire. TC_ACT_SHOT would report NET_XMIT_DROP to
 * the sending socket, and TCP treats a local drop as a segment not sent
 * yet: it sends it again later as new data, and nothing is retransmitted. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define PG_TC_ACT_OK 0
#define PG_TC_ACT_STOLEN 4

const volatile __u64 n = 20;
const volatile __u32 min_len = 200;

__u64 seen = 0;
__u64 dropped = 0;

SEC("tc")
int drop_one_in_n(struct __sk_buff *skb)
{
	if (skb->len < min_len)
		return PG_TC_ACT_OK;
	if (__sync_fetch_and_add(&seen, 1) % n != n - 1)
		return PG_TC_ACT_OK;
	__sync_fetch_and_add(&dropped, 1);
	return PG_TC_ACT_STOLEN;
}

char LICENSE[] SEC("license") = "GPL";
