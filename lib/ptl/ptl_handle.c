/* Handle tables: see ptl_handle.h. Callers hold the library lock. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ptl/ptl_handle.h"

int ptl_htab_init(struct ptl_htab *t, unsigned kind, unsigned ni, uint32_t cap, size_t obj_size)
{
	memset(t, 0, sizeof *t);
	t->kind = kind;
	t->ni = ni;
	t->tag = (kind & 0xff) << 8 | (ni & 0xff);
	t->cap = cap;
	t->obj_size = obj_size;
	t->objs = calloc(cap ? cap : 1, obj_size);
	t->state = calloc(cap ? cap : 1, sizeof *t->state);
	t->free = calloc(cap ? cap : 1, sizeof *t->free);
	if (!t->objs || !t->state || !t->free) {
		ptl_htab_fini(t);
		return -1;
	}
	/* Nothing freed yet, every slot fresh: taken in ascending index
	 * order, which keeps tables compact and ptltool's listings stable. */
	t->nfree = 0;
	t->fresh = 0;
	return 0;
}

void ptl_htab_fini(struct ptl_htab *t)
{
	free(t->objs);
	free(t->state);
	free(t->free);
	memset(t, 0, sizeof *t);
}

void *ptl_htab_alloc(struct ptl_htab *t, uint64_t *handle)
{
	void *obj = ptl_htab_take(t, handle);
	if (obj)
		memset(obj, 0, t->obj_size);
	return obj;
}

uint32_t ptl_htab_index(const struct ptl_htab *t, const void *obj)
{
	return (uint32_t)(((const unsigned char *)obj - t->objs) / t->obj_size);
}

void ptl_htab_free(struct ptl_htab *t, void *obj)
{
	uint32_t i = ptl_htab_index(t, obj);
	if (i >= t->cap || !(t->state[i] & PTL_HTAB_LIVE))
		return;
	ptl_htab_release(t, ptl_handle_make(t->kind, t->ni, t->state[i] & 0xffff, i));
}

void *ptl_htab_at(const struct ptl_htab *t, uint32_t i)
{
	if (i >= t->cap || !(t->state[i] & PTL_HTAB_LIVE))
		return NULL;
	return t->objs + (size_t)i * t->obj_size;
}
