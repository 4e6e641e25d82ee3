/*
 * rt_kv.c - the process's table of published values, keyed by (rank, key).
 * Open addressing; a job of N ranks with a few keys each stays small, but
 * every rank looks up every other rank at start-up, so lookups are O(1).
 */
#include "config.h"

#include <pthread.h>

#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "rt_proto.h"

struct rt_kv {
	int rank;           /* -1: empty slot */
	char key[RT_KEY_MAX];
	size_t len;
	uint8_t *val;
};

/* The table has its own lock: rt_get reads it without rt.c's lock, which a
 * barrier holds while it waits for the other ranks. */
static pthread_mutex_t kv_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_kv *kv_tab;
static size_t kv_cap;   /* power of two */
static size_t kv_used;

static size_t kv_hash(int rank, const char *key)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)rank;

	for (const char *p = key; *p != '\0'; p++) {
		h ^= (uint8_t)*p;
		h *= 1099511628211ull;
	}
	return (size_t)(h ^ (h >> 29));
}

static struct rt_kv *kv_slot(struct rt_kv *tab, size_t cap, int rank,
			     const char *key)
{
	size_t i = kv_hash(rank, key) & (cap - 1);

	while (tab[i].rank != -1 &&
	       (tab[i].rank != rank || strcmp(tab[i].key, key) != 0))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int kv_grow(void)
{
	size_t cap = kv_cap != 0 ? kv_cap * 2 : 64;
	struct rt_kv *tab = malloc(cap * sizeof(*tab));

	if (tab == NULL)
		return -1;
	for (size_t i = 0; i < cap; i++)
		tab[i].rank = -1;
	for (size_t i = 0; i < kv_cap; i++)
		if (kv_tab[i].rank != -1)
			*kv_slot(tab, cap, kv_tab[i].rank, kv_tab[i].key) =
				kv_tab[i];
	free(kv_tab);
	kv_tab = tab;
	kv_cap = cap;
	return 0;
}

static int rt_kv_set_locked(int rank, const char *key, const void *val, size_t len)
{
	struct rt_kv *e;
	uint8_t *copy;

	if (kv_used + 1 > kv_cap / 2 && kv_grow() != 0)
		return -1;
	copy = malloc(len != 0 ? len : 1);
	if (copy == NULL)
		return -1;
	if (len != 0)
		memcpy(copy, val, len);
	e = kv_slot(kv_tab, kv_cap, rank, key);
	if (e->rank == -1) {
		e->rank = rank;
		strcpy(e->key, key);  /* rt_key_valid checked its length */
		kv_used++;
	} else {
		free(e->val);
	}
	e->val = copy;
	e->len = len;
	return 0;
}

static int rt_kv_get_locked(int rank, const char *key, void *val, size_t *len)
{
	struct rt_kv *e;

	if (kv_cap == 0)
		return -1;
	e = kv_slot(kv_tab, kv_cap, rank, key);
	if (e->rank == -1)
		return -1;
	if (e->len > *len) {
		*len = e->len;
		return -2;
	}
	if (e->len != 0)
		memcpy(val, e->val, e->len);
	*len = e->len;
	return 0;
}

int rt_kv_set(int rank, const char *key, const void *val, size_t len)
{
	pthread_mutex_lock(&kv_lock);
	int rc = rt_kv_set_locked(rank, key, val, len);
	pthread_mutex_unlock(&kv_lock);
	return rc;
}

int rt_kv_get(int rank, const char *key, void *val, size_t *len)
{
	pthread_mutex_lock(&kv_lock);
	int rc = rt_kv_get_locked(rank, key, val, len);
	pthread_mutex_unlock(&kv_lock);
	return rc;
}

void rt_kv_clear(void)
{
	pthread_mutex_lock(&kv_lock);
	for (size_t i = 0; i < kv_cap; i++)
		if (kv_tab[i].rank != -1)
			free(kv_tab[i].val);
	free(kv_tab);
	kv_tab = NULL;
	kv_cap = 0;
	kv_used = 0;
	pthread_mutex_unlock(&kv_lock);
}
