/* mpi_pool.h: objects of one size from slabs kept for the run, reused
 * through a free list chained by their first word, so a path that takes
 * and gives back one per message allocates nothing once its pool has
 * grown to what it holds at once: the unexpected index's records and
 * buckets (mpi_ux.c), small eager sends' copies (mpi_pt2pt.c). */
#ifndef MPI_POOL_H
#define MPI_POOL_H

#include <stdbool.h>
#include <stddef.h>

struct mpi_pool_slab;
struct mpi_pool {
	size_t size;  /* bytes an object (mpi_pool_grow rounds it up to max_align_t's alignment) */
	size_t per;   /* objects a slab */
	void *free;   /* objects to reuse */
	struct mpi_pool_slab *slabs;
};
#define MPI_POOL_INIT(sz, n) { .size = (sz), .per = (n), .free = NULL, .slabs = NULL }

/* Adds a slab's objects (not zeroed) to p's free list; false when there
 * is no memory. */
__attribute__((visibility("hidden"))) bool mpi_pool_grow(struct mpi_pool *p);
/* Frees every slab of p; none of its objects may be in use. */
__attribute__((visibility("hidden"))) void mpi_pool_fini(struct mpi_pool *p);

/* An object of p, or NULL when there is no memory for a slab. */
static inline void *mpi_pool_get(struct mpi_pool *p)
{
	if (!p->free && !mpi_pool_grow(p))
		return NULL;
	void *o = p->free;
	p->free = *(void **)o;
	return o;
}

static inline void mpi_pool_put(struct mpi_pool *p, void *o)
{
	*(void **)o = p->free;
	p->free = o;
}

#endif /* MPI_POOL_H */
