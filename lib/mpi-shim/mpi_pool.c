/* mpi_pool.c: the slabs behind mpi_pool.h. */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>

#include "mpi_pool.h"

struct mpi_pool_slab {
	struct mpi_pool_slab *next;
	_Alignas(max_align_t) unsigned char mem[];
};

bool mpi_pool_grow(struct mpi_pool *p)
{
	/* each object aligned as the slab's start is, and room for the link */
	const size_t a = _Alignof(max_align_t);
	size_t sz = p->size < sizeof(void *) ? sizeof(void *) : p->size;
	p->size = (sz + a - 1) / a * a;
	struct mpi_pool_slab *s = malloc(sizeof *s + p->per * p->size);
	if (!s)
		return false;
	s->next = p->slabs;
	p->slabs = s;
	/* chained in address order: the first taken are the slab's first */
	for (size_t i = p->per; i-- > 0;)
		mpi_pool_put(p, s->mem + i * p->size);
	return true;
}

void mpi_pool_fini(struct mpi_pool *p)
{
	while (p->slabs) {
		struct mpi_pool_slab *s = p->slabs;
		p->slabs = s->next;
		free(s);
	}
	p->free = NULL;
}
