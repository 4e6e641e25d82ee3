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
 * itself lives in `objs`; gen[] and the free list live beside it.
 */
struct ptl_htab {
	unsigned kind;
	unsigned ni;
	uint32_t cap;      /* number of slots */
	uint32_t used;     /* slots in use */
	size_t obj_size;
	unsigned char *objs;
	uint16_t *gen;     /* current generation of each slot */
	uint8_t *in_use;
	uint32_t *free;    /* stack of free slot indexes */
	uint32_t nfree;
};

int ptl_htab_init(struct ptl_htab *t, unsigned kind, unsigned ni, uint32_t cap, size_t obj_size);
void ptl_htab_fini(struct ptl_htab *t);
/* Takes a zeroed slot; returns its object and handle, or NULL when full. */
void *ptl_htab_alloc(struct ptl_htab *t, uint64_t *handle);
/* Returns the object of a live handle of this table, or NULL. Inline:
 * every message looks up an MD and an EQ, every poll an EQ. */
static inline void *ptl_htab_lookup(const struct ptl_htab *t, uint64_t h)
{
	if (!t->objs || ptl_handle_kind(h) != t->kind || ptl_handle_ni(h) != t->ni)
		return NULL;
	uint32_t i = ptl_handle_idx(h);
	if (i >= t->cap || !t->in_use[i] || t->gen[i] != ptl_handle_gen(h))
		return NULL;
	return t->objs + (size_t)i * t->obj_size;
}
void ptl_htab_free(struct ptl_htab *t, void *obj);
uint32_t ptl_htab_index(const struct ptl_htab *t, const void *obj);
/* The object in slot i if it is in use, else NULL (for walking a table). */
void *ptl_htab_at(const struct ptl_htab *t, uint32_t i);

#endif
