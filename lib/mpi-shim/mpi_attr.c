/* Attribute caching (MPI-3.1 6.7): keyvals, and the values programs and
 * libraries cache on communicators and datatypes under them.
 *
 * Objects are named by their handles (both are ints here), so the values
 * live in one table of this file rather than in each object: the objects
 * only tell it when they are duplicated (mpi_attr_copy) and freed
 * (mpi_attr_drop). A program caches a few attributes, so the table is
 * searched from the end (recent ones first) without an index.
 *
 * Callbacks may call MPI, including on the object whose attribute they
 * copy or delete (MPICH's attrdeleteget reads the attribute being
 * deleted), so no pointer into the table is kept across a callback: the
 * entry is found again by its key afterwards. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* Predefined communicator keys are 1..MPI_LASTUSEDCODE; user keyvals
 * start above, so a zeroed or predefined handle is never a user's. */
#define KEYVAL_BASE 16

enum attr_kind { ATTR_COMM, ATTR_TYPE };
static const char *const kind_name[] = { "communicator", "datatype" };

struct keyval {
	bool in_use;
	bool freed;  /* the program freed it; still valid for attributes set */
	enum attr_kind kind;
	int uses;    /* attributes set under it */
	MPI_Comm_copy_attr_function *copy;    /* NULL: the duplicate does not get it */
	MPI_Comm_delete_attr_function *del;   /* NULL: nothing to run */
	void *extra;
};

struct attr {
	enum attr_kind kind;
	int obj;     /* the communicator or datatype handle */
	int keyval;
	void *val;
};

static struct keyval *keyvals;
static int nkeyvals;
static struct attr *attrs;
static int nattrs, attrs_cap;

int ptl_mpi_attr_dup(int oldobj, int keyval, void *extra_state, void *in, void *out, int *flag)
{
	(void)oldobj, (void)keyval, (void)extra_state;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

/* Errors are reported on the communicator, or on MPI_COMM_WORLD for a
 * datatype (as mpi_dtype.c does). */
static MPI_Comm err_comm(enum attr_kind k, int obj)
{
	return k == ATTR_COMM ? obj : MPI_COMM_WORLD;
}

static struct keyval *keyval_get(enum attr_kind k, int obj, int keyval, const char *fn, int *rc)
{
	int i = keyval - KEYVAL_BASE;
	struct keyval *kv = i >= 0 && i < nkeyvals && keyvals[i].in_use ? &keyvals[i] : NULL;
	if (!kv || kv->kind != k) {
		*rc = mpi_err(err_comm(k, obj), MPI_ERR_KEYVAL, fn, "%d is not a %s keyval%s", keyval, kind_name[k],
			      kv ? " (it was made for another kind of object)" : "");
		return NULL;
	}
	return kv;
}

static int find(enum attr_kind k, int obj, int keyval)
{
	for (int i = nattrs - 1; i >= 0; i--)
		if (attrs[i].kind == k && attrs[i].obj == obj && attrs[i].keyval == keyval)
			return i;
	return -1;
}

static void keyval_unuse(int keyval)
{
	struct keyval *kv = &keyvals[keyval - KEYVAL_BASE];
	if (--kv->uses == 0 && kv->freed)
		kv->in_use = false;
}

/* Removes entry i, keeping the order in which the others were set. */
static void remove_at(int i)
{
	int keyval = attrs[i].keyval;
	memmove(&attrs[i], &attrs[i + 1], sizeof *attrs * (size_t)(nattrs - i - 1));
	nattrs--;
	keyval_unuse(keyval);
}

static int append(enum attr_kind k, int obj, int keyval, void *val)
{
	if (nattrs == attrs_cap) {
		int cap = attrs_cap ? 2 * attrs_cap : 16;
		struct attr *a = realloc(attrs, sizeof *a * (size_t)cap);
		if (!a)
			return MPI_ERR_NO_MEM;
		attrs = a;
		attrs_cap = cap;
	}
	attrs[nattrs++] = (struct attr){ .kind = k, .obj = obj, .keyval = keyval, .val = val };
	keyvals[keyval - KEYVAL_BASE].uses++;
	return MPI_SUCCESS;
}

/* Runs the delete function of entry i and, if it agrees, removes it; a
 * refusal leaves the attribute in place and is the caller's error. */
static int delete_at(int i, const char *fn)
{
	struct attr a = attrs[i];
	struct keyval *kv = &keyvals[a.keyval - KEYVAL_BASE];
	if (kv->del) {
		int urc = kv->del(a.obj, a.keyval, a.val, kv->extra);
		if (urc != MPI_SUCCESS)
			return mpi_err(err_comm(a.kind, a.obj), MPI_ERR_OTHER, fn,
				       "the delete function of keyval %d on %s %d returned %d; the attribute stays",
				       a.keyval, kind_name[a.kind], a.obj, urc);
	}
	i = find(a.kind, a.obj, a.keyval); /* the callback may have changed the table */
	if (i >= 0)
		remove_at(i);
	return MPI_SUCCESS;
}

static int keyval_create(enum attr_kind k, MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
			 int *keyval, void *extra, const char *fn)
{
	MPI_CHECK_INIT(fn);
	if (!keyval)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "keyval is NULL");
	int i = 0;
	while (i < nkeyvals && keyvals[i].in_use)
		i++;
	if (i == nkeyvals) {
		int n = nkeyvals ? 2 * nkeyvals : 16;
		struct keyval *kv = realloc(keyvals, sizeof *kv * (size_t)n);
		if (!kv)
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no memory for keyval %d", nkeyvals);
		memset(kv + nkeyvals, 0, sizeof *kv * (size_t)(n - nkeyvals));
		keyvals = kv;
		nkeyvals = n;
	}
	keyvals[i] = (struct keyval){ .in_use = true, .kind = k, .copy = copy, .del = del, .extra = extra };
	*keyval = i + KEYVAL_BASE;
	return MPI_SUCCESS;
}

/* MPI_TAG_UB .. MPI_LASTUSEDCODE: answered by mpi_env.c, never set or freed */
static bool predefined_key(int keyval)
{
	return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

static int keyval_free(enum attr_kind k, int *keyval, const char *fn)
{
	MPI_CHECK_INIT(fn);
	if (!keyval)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "keyval is NULL");
	if (k == ATTR_COMM && predefined_key(*keyval))
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_KEYVAL, fn, "keyval %d is predefined and cannot be freed",
			       *keyval);
	int rc;
	struct keyval *kv = keyval_get(k, MPI_COMM_WORLD, *keyval, fn, &rc);
	if (!kv)
		return rc;
	if (kv->freed)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_KEYVAL, fn, "keyval %d was freed already", *keyval);
	kv->freed = true;
	if (kv->uses == 0)
		kv->in_use = false;
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

static int set_attr(enum attr_kind k, int obj, int keyval, void *val, const char *fn)
{
	int rc;
	struct keyval *kv = keyval_get(k, obj, keyval, fn, &rc);
	if (!kv)
		return rc;
	if (kv->freed)
		return mpi_err(err_comm(k, obj), MPI_ERR_KEYVAL, fn, "keyval %d was freed", keyval);
	int i = find(k, obj, keyval);
	if (i >= 0 && (rc = delete_at(i, fn)))
		return rc;
	if (append(k, obj, keyval, val))
		return mpi_err(err_comm(k, obj), MPI_ERR_NO_MEM, fn, "no memory for another attribute");
	return MPI_SUCCESS;
}

static int get_attr(enum attr_kind k, int obj, int keyval, void *val, int *flag, const char *fn)
{
	int rc;
	if (!flag || !val)
		return mpi_err(err_comm(k, obj), MPI_ERR_ARG, fn, "%s is NULL", flag ? "attribute_val" : "flag");
	if (!keyval_get(k, obj, keyval, fn, &rc))
		return rc;
	int i = find(k, obj, keyval);
	*flag = i >= 0;
	if (i >= 0)
		*(void **)val = attrs[i].val;
	return MPI_SUCCESS;
}

static int delete_attr(enum attr_kind k, int obj, int keyval, const char *fn)
{
	int rc;
	if (!keyval_get(k, obj, keyval, fn, &rc))
		return rc;
	int i = find(k, obj, keyval);
	if (i < 0)
		return mpi_err(err_comm(k, obj), MPI_ERR_KEYVAL, fn, "%s %d has no attribute under keyval %d",
			       kind_name[k], obj, keyval);
	return delete_at(i, fn);
}

int mpi_attr_copy(bool type, int from, int to, const char *fn)
{
	enum attr_kind k = type ? ATTR_TYPE : ATTR_COMM;
	/* Only those set before the copy started: a copy function that sets
	 * attributes on the original must not make this loop chase them. */
	int n = nattrs;
	for (int i = 0; i < n && i < nattrs; i++) {
		if (attrs[i].kind != k || attrs[i].obj != from)
			continue;
		struct attr a = attrs[i];
		struct keyval *kv = &keyvals[a.keyval - KEYVAL_BASE];
		if (!kv->copy)
			continue;
		void *out = NULL;
		int flag = 0;
		int urc = kv->copy(from, a.keyval, kv->extra, a.val, &out, &flag);
		if (urc != MPI_SUCCESS)
			return mpi_err(err_comm(k, from), MPI_ERR_OTHER, fn,
				       "the copy function of keyval %d returned %d; no duplicate made", a.keyval, urc);
		if (flag && append(k, to, a.keyval, out))
			return mpi_err(err_comm(k, from), MPI_ERR_NO_MEM, fn, "no memory for the duplicate's attributes");
	}
	return MPI_SUCCESS;
}

int mpi_attr_drop(bool type, int obj, const char *fn)
{
	enum attr_kind k = type ? ATTR_TYPE : ATTR_COMM;
	/* Last set first; searched afresh each time since a delete function
	 * may delete or set others on the same object. */
	for (;;) {
		int i = nattrs - 1;
		while (i >= 0 && (attrs[i].kind != k || attrs[i].obj != obj))
			i--;
		if (i < 0)
			return MPI_SUCCESS;
		int rc = delete_at(i, fn);
		if (rc)
			return rc;
	}
}

/* Values a failed duplicate took: no delete function runs (they were
 * never the program's to see on that object). */
void mpi_attr_forget(bool type, int obj)
{
	enum attr_kind k = type ? ATTR_TYPE : ATTR_COMM;
	for (int i = nattrs - 1; i >= 0; i--)
		if (attrs[i].kind == k && attrs[i].obj == obj)
			remove_at(i);
}

void mpi_attr_fini(void)
{
	free(attrs);
	free(keyvals);
	attrs = NULL;
	keyvals = NULL;
	nattrs = attrs_cap = nkeyvals = 0;
}

/* ------------------------------------------------------------ communicators */

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del, int *keyval,
			    void *extra)
{
	return keyval_create(ATTR_COMM, copy, del, keyval, extra, "MPI_Comm_create_keyval");
}

int PMPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval, void *extra)
{
	return keyval_create(ATTR_COMM, copy, del, keyval, extra, "MPI_Keyval_create");
}

int PMPI_Comm_free_keyval(int *keyval)
{
	return keyval_free(ATTR_COMM, keyval, "MPI_Comm_free_keyval");
}

int PMPI_Keyval_free(int *keyval)
{
	return keyval_free(ATTR_COMM, keyval, "MPI_Keyval_free");
}

static int comm_set(MPI_Comm comm, int keyval, void *val, const char *fn)
{
	MPI_COMM_VALID(fn, comm);
	if (predefined_key(keyval))
		return mpi_err(comm, MPI_ERR_KEYVAL, fn, "keyval %d is predefined: it cannot be set", keyval);
	return set_attr(ATTR_COMM, comm, keyval, val, fn);
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val)
{
	return comm_set(comm, keyval, val, "MPI_Comm_set_attr");
}

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *val)
{
	return comm_set(comm, keyval, val, "MPI_Attr_put");
}

static int comm_delete(MPI_Comm comm, int keyval, const char *fn)
{
	MPI_COMM_VALID(fn, comm);
	if (predefined_key(keyval))
		return mpi_err(comm, MPI_ERR_KEYVAL, fn, "keyval %d is predefined: it cannot be deleted", keyval);
	return delete_attr(ATTR_COMM, comm, keyval, fn);
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
	return comm_delete(comm, keyval, "MPI_Comm_delete_attr");
}

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
	return comm_delete(comm, keyval, "MPI_Attr_delete");
}

/* The predefined keys answer with the job's values (mpi_env.c). */
static int comm_get(MPI_Comm comm, int keyval, void *val, int *flag, const char *fn)
{
	MPI_COMM_VALID(fn, comm);
	if (predefined_key(keyval))
		return mpi_env_attr(keyval, val, flag);
	return get_attr(ATTR_COMM, comm, keyval, val, flag, fn);
}

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag)
{
	return comm_get(comm, keyval, val, flag, "MPI_Comm_get_attr");
}

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *val, int *flag)
{
	return comm_get(comm, keyval, val, flag, "MPI_Attr_get");
}

/* ------------------------------------------------------------ datatypes */

#define ATTR_TYPE_ARG(fn, dt)                                                                       \
	MPI_CHECK_INIT(fn);                                                                          \
	if (!mpi_dtype_get(dt))                                                                      \
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", dt)

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del, int *keyval,
			    void *extra)
{
	return keyval_create(ATTR_TYPE, copy, del, keyval, extra, "MPI_Type_create_keyval");
}

int PMPI_Type_free_keyval(int *keyval)
{
	return keyval_free(ATTR_TYPE, keyval, "MPI_Type_free_keyval");
}

int PMPI_Type_set_attr(MPI_Datatype dt, int keyval, void *val)
{
	ATTR_TYPE_ARG("MPI_Type_set_attr", dt);
	return set_attr(ATTR_TYPE, dt, keyval, val, "MPI_Type_set_attr");
}

int PMPI_Type_get_attr(MPI_Datatype dt, int keyval, void *val, int *flag)
{
	ATTR_TYPE_ARG("MPI_Type_get_attr", dt);
	return get_attr(ATTR_TYPE, dt, keyval, val, flag, "MPI_Type_get_attr");
}

int PMPI_Type_delete_attr(MPI_Datatype dt, int keyval)
{
	ATTR_TYPE_ARG("MPI_Type_delete_attr", dt);
	return delete_attr(ATTR_TYPE, dt, keyval, "MPI_Type_delete_attr");
}
