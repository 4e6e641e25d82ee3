/* mpi_info.c: info objects (MPI-3.1 9): ordered (key, value) string pairs
 * a program hands to calls as hints. ptl's MPI takes two, on
 * communicators: ptl_coll_algo and ptl_coll_ports, each communicator's own
 * PTL_COLL_ALGO and PTL_COLL_PORTS (MPI_Comm_set_info,
 * MPI_Comm_dup_with_info; mpi_coll.c keeps them). Other keys are stored,
 * copied and read back, and the calls ignore them, which the standard
 * allows. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define INFO_MAX 4096

struct mpi_info {
	bool in_use;
	int n, cap;
	char **key, **val; /* in the order the keys were first set */
};

/* Slot 0 is MPI_INFO_NULL, never in use; MPI_INFO_ENV is slot 1: empty,
 * as ptl's launcher passes nothing the standard's keys describe. */
static struct mpi_info *infos;
static int ninfos;

/* The table, made on first use with MPI_INFO_ENV (empty) in it. */
static bool ready(void)
{
	if (ninfos)
		return true;
	infos = calloc(16, sizeof *infos);
	if (!infos)
		return false;
	ninfos = 16;
	infos[MPI_INFO_ENV].in_use = true;
	return true;
}

static struct mpi_info *info_get(MPI_Info h)
{
	return ready() && h > 0 && h < ninfos && infos[h].in_use ? &infos[h] : NULL;
}

static int info_arg(const char *fn, MPI_Info h, struct mpi_info **i)
{
	MPI_CHECK_INIT(fn);
	*i = info_get(h);
	return *i ? MPI_SUCCESS : mpi_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn, "invalid info object %d", h);
}

static int info_new(const char *fn, MPI_Info *out)
{
	if (!ready())
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	int h = MPI_INFO_ENV + 1;
	while (h < ninfos && infos[h].in_use)
		h++;
	if (h == ninfos) {
		int n = 2 * ninfos;
		struct mpi_info *t = n <= INFO_MAX ? realloc(infos, sizeof *t * (size_t)n) : NULL;
		if (!t)
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no room for another info object");
		memset(t + ninfos, 0, sizeof *t * (size_t)(n - ninfos));
		infos = t;
		ninfos = n;
	}
	infos[h] = (struct mpi_info){ .in_use = true };
	*out = h;
	return MPI_SUCCESS;
}

static void info_clear(struct mpi_info *i)
{
	for (int k = 0; k < i->n; k++) {
		free(i->key[k]);
		free(i->val[k]);
	}
	free(i->key);
	free(i->val);
	*i = (struct mpi_info){ 0 };
}

static int find(const struct mpi_info *i, const char *key)
{
	for (int k = 0; k < i->n; k++)
		if (!strcmp(i->key[k], key))
			return k;
	return -1;
}

static int check_key(const char *fn, const char *key)
{
	if (!key || !*key || strlen(key) > MPI_MAX_INFO_KEY)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn, "key %s%.40s%s is empty or longer than %d",
			       key ? "'" : "", key ? key : "NULL", key ? "'" : "", MPI_MAX_INFO_KEY);
	return MPI_SUCCESS;
}

/* The checks every keyed call makes: the object, the key; then where the
 * key is (-1: absent). */
static int info_key_arg(const char *fn, MPI_Info info, const char *key, struct mpi_info **i, int *k)
{
	int rc = info_arg(fn, info, i);
	if (!rc)
		rc = check_key(fn, key);
	if (!rc)
		*k = find(*i, key);
	return rc;
}

int PMPI_Info_create(MPI_Info *info)
{
	MPI_CHECK_INIT("MPI_Info_create");
	return info_new("MPI_Info_create", info);
}

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	struct mpi_info *i;
	int k;
	int rc = info_key_arg("MPI_Info_set", info, key, &i, &k);
	if (rc)
		return rc;
	if (!value || strlen(value) > MPI_MAX_INFO_VAL)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, "MPI_Info_set", "the value of '%s' is NULL or longer than %d",
			       key, MPI_MAX_INFO_VAL);
	char *v = strdup(value);
	if (!v)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_set", "out of memory");
	if (k >= 0) {
		free(i->val[k]);
		i->val[k] = v;
		return MPI_SUCCESS;
	}
	if (i->n == i->cap) {
		int n = i->cap ? 2 * i->cap : 4;
		char **nk = realloc(i->key, sizeof *nk * (size_t)n);
		if (nk)
			i->key = nk;
		char **nv = nk ? realloc(i->val, sizeof *nv * (size_t)n) : NULL;
		if (!nv) {
			free(v);
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_set", "out of memory");
		}
		i->val = nv;
		i->cap = n;
	}
	i->key[i->n] = strdup(key);
	if (!i->key[i->n]) {
		free(v);
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_set", "out of memory");
	}
	i->val[i->n++] = v;
	return MPI_SUCCESS;
}

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
	struct mpi_info *i;
	int k;
	int rc = info_key_arg("MPI_Info_get", info, key, &i, &k);
	if (rc)
		return rc;
	if (valuelen < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get", "valuelen %d < 0", valuelen);
	*flag = k >= 0;
	if (k >= 0) { /* as much as fits, and a terminator (valuelen excludes it) */
		size_t n = strlen(i->val[k]);
		if (n > (size_t)valuelen)
			n = (size_t)valuelen;
		memcpy(value, i->val[k], n);
		value[n] = '\0';
	}
	return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
	struct mpi_info *i;
	int k;
	int rc = info_key_arg("MPI_Info_get_valuelen", info, key, &i, &k);
	if (rc)
		return rc;
	*flag = k >= 0;
	if (k >= 0)
		*valuelen = (int)strlen(i->val[k]);
	return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char *key)
{
	struct mpi_info *i;
	int k;
	int rc = info_key_arg("MPI_Info_delete", info, key, &i, &k);
	if (rc)
		return rc;
	if (k < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "no key '%s'", key);
	free(i->key[k]);
	free(i->val[k]);
	i->n--;
	memmove(i->key + k, i->key + k + 1, sizeof *i->key * (size_t)(i->n - k));
	memmove(i->val + k, i->val + k + 1, sizeof *i->val * (size_t)(i->n - k));
	return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	struct mpi_info *i;
	int rc = info_arg("MPI_Info_get_nkeys", info, &i);
	if (!rc)
		*nkeys = i->n;
	return rc;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	struct mpi_info *i;
	int rc = info_arg("MPI_Info_get_nthkey", info, &i);
	if (rc)
		return rc;
	if (n < 0 || n >= i->n)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nthkey", "key %d of %d", n, i->n);
	strcpy(key, i->key[n]);
	return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
	struct mpi_info *i;
	int rc = info_arg("MPI_Info_dup", info, &i);
	if (!rc)
		rc = info_new("MPI_Info_dup", newinfo);
	/* info_new may move the table: i again from the handle */
	for (int k = 0; !rc && k < info_get(info)->n; k++)
		rc = PMPI_Info_set(*newinfo, info_get(info)->key[k], info_get(info)->val[k]);
	return rc;
}

int PMPI_Info_free(MPI_Info *info)
{
	struct mpi_info *i;
	int rc = info_arg("MPI_Info_free", info ? *info : MPI_INFO_NULL, &i);
	if (rc)
		return rc;
	if (*info == MPI_INFO_ENV)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_INFO, "MPI_Info_free", "MPI_INFO_ENV cannot be freed");
	info_clear(i);
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}

int mpi_info_check(const char *fn, MPI_Info info)
{
	struct mpi_info *i;
	return info == MPI_INFO_NULL ? MPI_SUCCESS : info_arg(fn, info, &i);
}

void mpi_info_hints(MPI_Info info, const char **algo, const char **ports)
{
	struct mpi_info *i = info == MPI_INFO_NULL ? NULL : info_get(info);
	int ka = i ? find(i, "ptl_coll_algo") : -1, kp = i ? find(i, "ptl_coll_ports") : -1;
	*algo = ka < 0 ? NULL : i->val[ka];
	*ports = kp < 0 ? NULL : i->val[kp];
}

/* Hints on a communicator (MPI-4.0 7.4.4): collective, the same values on
 * every rank (a rank whose algorithm differed would wait for messages of
 * a schedule the others do not run); the keys info leaves out keep their
 * values. */
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
	const char *fn = "MPI_Comm_set_info";
	struct mpi_info *i;
	struct mpi_coll_choice *ch;
	const char *algo, *ports;
	int rc = info_arg(fn, info, &i);
	struct mpi_comm *c = rc ? NULL : mpi_comm_get(comm);
	if (!rc && !c)
		rc = mpi_err_comm(fn, comm);
	if (rc)
		return rc;
	mpi_info_hints(info, &algo, &ports);
	if (!(rc = mpi_coll_hints_make(c, comm, algo, ports, fn, &ch)))
		mpi_coll_hints_put(c, ch);
	return rc;
}

/* The hints in use: those set on comm. */
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
	const char *fn = "MPI_Comm_get_info";
	MPI_COMM_ARG(fn, comm, c);
	int rc = info_new(fn, info_used), ports;
	if (rc)
		return rc;
	const char *algo;
	mpi_coll_hints_get(c, &algo, &ports);
	char buf[16];
	snprintf(buf, sizeof buf, "%d", ports);
	if (algo)
		rc = PMPI_Info_set(*info_used, "ptl_coll_algo", algo);
	if (!rc && ports)
		rc = PMPI_Info_set(*info_used, "ptl_coll_ports", buf);
	if (rc)
		PMPI_Info_free(info_used);
	return rc;
}

void mpi_info_fini(void)
{
	for (int h = 0; h < ninfos; h++)
		info_clear(&infos[h]);
	free(infos);
	infos = NULL;
	ninfos = 0;
}
