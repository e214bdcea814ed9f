/* A table of slots for things in flight between two events (a block request
 * from issue to completion): a plain array indexed by a hash of the key. An array lookup is inlined by the verifier,
 * where every hash-map update or delete costs a helper call, a bucket lock
 * and an element allocation; an update and a delete per request made most
 * of biolat's cost on fio.
 *
 * A key has two candidate slots, the one its hash names and the next. A key
 * whose two slots both hold other keys takes the slot of the one started
 * earlier (a mark before any start), so an entry whose end was missed
 * cannot hold a slot forever; the entry pushed out is lost, and as the
 * oldest it is the one with the longest wait so far. With 2^14 slots and a
 * few hundred entries in flight that is rare.
 *
 * Slots are shared by every CPU. Writers free a slot before refilling it and
 * set its state last, and pg_slot_take() checks the key again after reading
 * the start, so an entry taken over meanwhile by another key is dropped, not
 * mismatched. Only compiler barriers order this (BPF has no cheaper fence):
 * on a weakly ordered CPU two keys racing for one slot at the same instant
 * may still, rarely, pair a start with the wrong key. One key's own start
 * and end are ordered by the kernel (a request is handed to the device and
 * completed through barriers). */
#ifndef PERFGATE_SLOT_TABLE_BPF_H
#define PERFGATE_SLOT_TABLE_BPF_H

#define PG_SLOT_BITS 14
#define PG_SLOT_COUNT (1u << PG_SLOT_BITS)

enum pg_slot_state {
	PG_SLOT_FREE = 0,
	PG_SLOT_MARKED = 1,  /* known, not started (biolat: inserted by a tracked thread) */
	PG_SLOT_STARTED = 2, /* ns and value are set */
};

struct pg_slot_key {
	__u64 id;
	__u32 tag;
};

struct pg_slot {
	__u64 id;
	__u32 tag;
	__u32 state; /* enum pg_slot_state */
	__u64 ns;    /* ktime at the start */
	__u64 value; /* the user's, set with the start */
};

#define PG_SLOT_TABLE(name)                                   \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_ARRAY);             \
		__uint(max_entries, PG_SLOT_COUNT);           \
		__type(key, __u32);                           \
		__type(value, struct pg_slot);                \
	} name SEC(".maps")

#define pg_compiler_barrier() asm volatile("" ::: "memory")

static __always_inline bool pg_slot_holds(const struct pg_slot *slot, struct pg_slot_key key)
{
	return slot->state != PG_SLOT_FREE && slot->id == key.id && slot->tag == key.tag;
}

/* The two candidate slots of key (Fibonacci hash of the key). */
static __always_inline bool pg_slot_pair(void *table, struct pg_slot_key key, struct pg_slot **first,
					 struct pg_slot **second)
{
	__u64 hash = (key.id ^ ((__u64)key.tag << 40)) * 0x9E3779B97F4A7C15ULL;
	__u32 index = (__u32)(hash >> (64 - PG_SLOT_BITS));
	__u32 next = (index + 1) & (PG_SLOT_COUNT - 1);

	*first = bpf_map_lookup_elem(table, &index);
	*second = bpf_map_lookup_elem(table, &next);
	return *first && *second;
}

/* Of key's two slots, the one holding it, or NULL. */
static __always_inline struct pg_slot *pg_slot_holding(struct pg_slot *first, struct pg_slot *second,
						       struct pg_slot_key key)
{
	if (pg_slot_holds(first, key))
		return first;
	if (pg_slot_holds(second, key))
		return second;
	return NULL;
}

/* The slot holding key, or NULL. */
static __always_inline struct pg_slot *pg_slot_find(void *table, struct pg_slot_key key)
{
	struct pg_slot *first, *second;

	if (!pg_slot_pair(table, key, &first, &second))
		return NULL;
	return pg_slot_holding(first, second, key);
}

/* The slot to keep key in: the one holding it, else a free one, else the
 * one started earlier (a mark has ns 0). */
static __always_inline struct pg_slot *pg_slot_claim(void *table, struct pg_slot_key key)
{
	struct pg_slot *first, *second, *held;

	if (!pg_slot_pair(table, key, &first, &second))
		return NULL;
	held = pg_slot_holding(first, second, key);
	if (held)
		return held;
	if (first->state == PG_SLOT_FREE)
		return first;
	if (second->state == PG_SLOT_FREE)
		return second;
	return second->ns < first->ns ? second : first;
}

/* Rewrites a slot (from pg_slot_claim) for key. */
static __always_inline void pg_slot_fill(struct pg_slot *slot, struct pg_slot_key key, __u32 state, __u64 ns,
					 __u64 value)
{
	slot->state = PG_SLOT_FREE;
	pg_compiler_barrier();
	slot->id = key.id;
	slot->tag = key.tag;
	slot->ns = ns;
	slot->value = value;
	pg_compiler_barrier();
	slot->state = state;
}

/* Ends key's entry: its start and value, and frees the slot. False when key
 * has no started entry. */
static __always_inline bool pg_slot_take(void *table, struct pg_slot_key key, __u64 *ns, __u64 *value)
{
	struct pg_slot *slot = pg_slot_find(table, key);

	if (!slot || slot->state != PG_SLOT_STARTED)
		return false;
	*ns = slot->ns;
	*value = slot->value;
	pg_compiler_barrier();
	/* Taken over by another key meanwhile (pg_slot_fill). */
	if (slot->state != PG_SLOT_STARTED || slot->id != key.id || slot->tag != key.tag)
		return false;
	slot->state = PG_SLOT_FREE;
	return true;
}

#endif
