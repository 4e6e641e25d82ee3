/*
 * Handles: (kind, generation, index) packed in 64 bits, checked on every
 * use. A slot's generation changes when it is freed, so a stale handle no
 * longer matches and a forged one fails the kind, range or generation test;
 * nothing is dereferenced before those tests pass.
 *
 *   bits 63..56 kind   (PTL_HK_*; 0 never used, so handle 0 is invalid)
 *   bits 55..48 ni index
 *   bits 47..32 generation (1..65535)
 *   bits 31..0  slot index
 */
#ifndef PTL_HANDLE_H
#define PTL_HANDLE_H

#include <stddef.h>
#include <stdint.h>

enum ptl_hkind { PTL_HK_NI = 1, PTL_HK_EQ = 2, PTL_HK_MD = 3, PTL_HK_ME = 4 };

static inline uint64_t ptl_handle_make(unsigned kind, unsigned ni, unsigned gen, uint32_t idx)
{
	return ((uint64_t)(kind & 0xff) << 56) | ((uint64_t)(ni & 0xff) << 48) |
	       ((uint64_t)(gen & 0xffff) << 32) | idx;
}

static inline unsigned ptl_handle_kind(uint64_t h) { return (unsigned)(h >> 56); }
static inline unsigned ptl_handle_ni(uint64_t h) { return (unsigned)(h >> 48) & 0xff; }
static inline unsigned ptl_handle_gen(uint64_t h) { return (unsigned)(h >> 32) & 0xffff; }
static inline uint32_t ptl_handle_idx(uint64_t h) { return (uint32_t)h; }

/*
 * A table of fixed-size slots with a free list, sized once (the NI limit)
 * so allocation on the fast path is a pop, never a malloc. The object
 * itself lives in `objs`; the slots' states and the free list live beside
 * it. A slot's state is its generation, with PTL_HTAB_LIVE set while it is
 * in use: a lookup then tests kind and NI in one compare and liveness and
 * generation in another (every message looks up an MD and an EQ, every
 * poll used to look up its EQs).
 */
#define PTL_HTAB_LIVE 0x10000u
struct ptl_htab {
	unsigned kind;
	unsigned ni;
	uint32_t tag;      /* kind << 8 | ni: a handle's top 16 bits */
	uint32_t cap;      /* number of slots; 0 when objs is NULL */
	uint32_t used;     /* slots in use */
	size_t obj_size;
	unsigned char *objs;
	uint32_t *state;   /* generation of each slot, | PTL_HTAB_LIVE in use;
	                    * 0: never used yet */
	uint32_t *free;    /* stack of freed slot indexes */
	uint32_t nfree;
	uint32_t fresh;    /* slots [fresh, cap) were never used: taken in
	                    * ascending order when nothing freed waits, so a
	                    * table sized for a million MPI receives costs
	                    * nothing to set up or to walk past its high mark */
};

int ptl_htab_init(struct ptl_htab *t, unsigned kind, unsigned ni, uint32_t cap, size_t obj_size);
void ptl_htab_fini(struct ptl_htab *t);
/* Takes a slot as its last user left it; returns its object and handle, or
 * NULL when full. For constructors that set every field themselves: a
 * posted receive takes an ME and an MD, and zeroing both first cost a
 * fifth of PtlMEInsert and PtlMDAttach. Inline for the same reason. */
static inline void *ptl_htab_take(struct ptl_htab *t, uint64_t *handle)
{
	uint32_t i;
	if (t->nfree) {
		i = t->free[--t->nfree];
	} else if (t->fresh < t->cap) {
		i = t->fresh++;
		t->state[i] = 1; /* generation 1 */
	} else {
		return NULL;
	}
	uint32_t s = t->state[i] | PTL_HTAB_LIVE;
	t->state[i] = s;
	t->used++;
	*handle = (uint64_t)t->tag << 48 | (uint64_t)(s & 0xffff) << 32 | i;
	return t->objs + (size_t)i * t->obj_size;
}
/* Takes a zeroed slot; returns its object and handle, or NULL when full. */
void *ptl_htab_alloc(struct ptl_htab *t, uint64_t *handle);
/* Returns the object of a live handle of this table, or NULL. Inline:
 * every message looks up an MD and an EQ. A handle's generation is never
 * 0 and never has PTL_HTAB_LIVE, so a free slot never matches. */
static inline void *ptl_htab_lookup(const struct ptl_htab *t, uint64_t h)
{
	uint32_t i = ptl_handle_idx(h);
	if ((uint32_t)(h >> 48) != t->tag || i >= t->cap ||
	    t->state[i] != (ptl_handle_gen(h) | PTL_HTAB_LIVE))
		return NULL;
	return t->objs + (size_t)i * t->obj_size;
}
void ptl_htab_free(struct ptl_htab *t, void *obj);
/* Frees the slot of a live handle of this table (its index from the handle,
 * where ptl_htab_free divides by the object size); anything else is
 * ignored, as ptl_htab_free ignores a free slot. */
static inline void ptl_htab_release(struct ptl_htab *t, uint64_t h)
{
	uint32_t i = ptl_handle_idx(h);
	if (i >= t->cap || t->state[i] != (ptl_handle_gen(h) | PTL_HTAB_LIVE))
		return;
	t->used--;
	/* Generation 0 is never handed out, so a zeroed handle never matches. */
	uint32_t gen = (t->state[i] + 1) & 0xffff;
	t->state[i] = gen ? gen : 1;
	t->free[t->nfree++] = i;
}
uint32_t ptl_htab_index(const struct ptl_htab *t, const void *obj);
/* The object in slot i if it is in use, else NULL (for walking a table:
 * no slot at or past t->fresh is). */
void *ptl_htab_at(const struct ptl_htab *t, uint32_t i);

#endif
