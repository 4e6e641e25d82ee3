/* mpi_attr.c: attribute caching on communicators and datatypes. Values
 * set, read, replaced and deleted, each replacement and deletion running
 * the keyval's delete function once with the old value; duplicates
 * getting what the copy functions give (MPI_COMM_DUP_FN the same value,
 * MPI_COMM_NULL_COPY_FN nothing, a program's own a value of its own); a
 * freed object running its delete functions last set first; a keyval
 * freed while in use staying valid for its attributes; callbacks that
 * refuse (the call fails and nothing is lost: the attribute stays, a
 * failed duplicate is MPI_COMM_NULL); MPI_Finalize deleting MPI_COMM_SELF's
 * attributes before MPI_Finalized turns true; MPI-1's names; and every
 * refusal's class and message. */
#include "mpi_test.h"

/* What the delete functions saw, in order. */
static long deleted[64];
static int ndeleted;
static int refuse, refuse_copy; /* delete, copy functions fail while set */

static int record_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)extra;
	if (refuse)
		return MPI_ERR_OTHER;
	if (ndeleted < 64)
		deleted[ndeleted++] = (long)val;
	return MPI_SUCCESS;
}

/* A duplicate gets the value plus 1000, and *extra counts the copies. */
static int plus_1000(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)old, (void)keyval;
	if (refuse_copy)
		return MPI_ERR_OTHER;
	++*(int *)extra;
	*(void **)out = (void *)((long)in + 1000);
	*flag = 1;
	return MPI_SUCCESS;
}

static long get(MPI_Comm c, int key, int *flag)
{
	void *v = NULL;
	OK(MPI_Comm_get_attr(c, key, &v, flag));
	return (long)v;
}

static void set_get_delete(void)
{
	MPI_Comm c;
	int k, flag;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &k, NULL));
	get(c, k, &flag);
	CHECK(!flag, "an attribute never set is found");
	ndeleted = 0;
	OK(MPI_Comm_set_attr(c, k, (void *)11L));
	CHECK(get(c, k, &flag) == 11 && flag, "set 11, read back %ld (flag %d)", get(c, k, &flag), flag);
	OK(MPI_Comm_set_attr(c, k, (void *)12L)); /* replacing deletes the old value */
	CHECK(ndeleted == 1 && deleted[0] == 11, "replacing ran the delete function %d times (value %ld)", ndeleted,
	      deleted[0]);
	CHECK(get(c, k, &flag) == 12, "replaced value %ld", get(c, k, &flag));
	OK(MPI_Comm_delete_attr(c, k));
	CHECK(ndeleted == 2 && deleted[1] == 12, "deleting ran the delete function on %ld", deleted[1]);
	get(c, k, &flag);
	CHECK(!flag, "a deleted attribute is still found");
	/* another communicator's attributes are its own */
	OK(MPI_Comm_set_attr(c, k, (void *)13L));
	get(MPI_COMM_WORLD, k, &flag);
	CHECK(!flag, "an attribute of a duplicate is found on MPI_COMM_WORLD");
	ndeleted = 0;
	OK(MPI_Comm_free(&c));
	CHECK(ndeleted == 1 && deleted[0] == 13, "MPI_Comm_free ran %d delete functions", ndeleted);
	OK(MPI_Comm_free_keyval(&k));
	CHECK(k == MPI_KEYVAL_INVALID, "a freed keyval handle is %d", k);
}

static void duplicates(void)
{
	int kept, same, none, own, copies = 0, flag;
	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, record_delete, &kept, NULL));
	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &same, NULL));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &none, NULL));
	OK(MPI_Comm_create_keyval(plus_1000, record_delete, &own, &copies));
	MPI_Comm a, b;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
	OK(MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_attr(a, kept, (void *)4L)); /* copied before the refusal below */
	OK(MPI_Comm_set_attr(a, same, (void *)1L));
	OK(MPI_Comm_set_attr(a, none, (void *)2L));
	OK(MPI_Comm_set_attr(a, own, (void *)3L));
	OK(MPI_Comm_dup(a, &b));
	CHECK(get(b, same, &flag) == 1 && flag, "MPI_COMM_DUP_FN: %ld (flag %d)", get(b, same, &flag), flag);
	get(b, none, &flag);
	CHECK(!flag, "MPI_COMM_NULL_COPY_FN gave the duplicate the attribute");
	CHECK(get(b, own, &flag) == 1003 && copies == 1, "own copy function: %ld after %d copies",
	      get(b, own, &flag), copies);
	CHECK(get(a, own, &flag) == 3, "the original's value changed to %ld", get(a, own, &flag));

	/* a copy function that fails: no duplicate, and nothing it took is deleted */
	refuse_copy = 1;
	ndeleted = 0;
	MPI_Comm d = MPI_COMM_WORLD;
	t_fails_with(MPI_Comm_dup(a, &d), MPI_ERR_OTHER, "copy function of keyval", "a refusing copy function");
	refuse_copy = 0;
	CHECK(d == MPI_COMM_NULL, "a failed MPI_Comm_dup gave %d, want MPI_COMM_NULL", d);
	CHECK(ndeleted == 0, "a failed duplicate ran %d delete functions", ndeleted);

	/* freeing: last set first */
	ndeleted = 0;
	OK(MPI_Comm_free(&a));
	CHECK(ndeleted == 3 && deleted[0] == 3 && deleted[1] == 2 && deleted[2] == 4,
	      "delete order %ld %ld %ld (%d), want 3 2 4", deleted[0], deleted[1], deleted[2], ndeleted);
	ndeleted = 0;
	OK(MPI_Comm_free(&b));
	CHECK(ndeleted == 2 && deleted[0] == 1003 && deleted[1] == 4, "the duplicate's deletes: %ld %ld (%d)",
	      deleted[0], deleted[1], ndeleted);
	OK(MPI_Comm_free_keyval(&kept));
	OK(MPI_Comm_free_keyval(&same));
	OK(MPI_Comm_free_keyval(&none));
	OK(MPI_Comm_free_keyval(&own));
}

/* A delete function that refuses: the call fails and the attribute, or
 * the communicator, stays as it was. */
static void refusals(void)
{
	MPI_Comm c;
	int k, flag;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &k, NULL));
	OK(MPI_Comm_set_attr(c, k, (void *)21L));
	refuse = 1;
	t_fails_with(MPI_Comm_set_attr(c, k, (void *)22L), MPI_ERR_OTHER, "the attribute stays", "refused replace");
	t_fails_with(MPI_Comm_delete_attr(c, k), MPI_ERR_OTHER, "returned 16", "refused delete");
	t_fails_with(MPI_Comm_free(&c), MPI_ERR_OTHER, "delete function of keyval", "refused free");
	refuse = 0;
	CHECK(c != MPI_COMM_NULL && get(c, k, &flag) == 21 && flag, "after refusals: comm %d, value %ld", c,
	      get(c, k, &flag));
	int x = t_rank, y = -1;
	OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, c)); /* still whole */
	CHECK(y == t_size - 1, "allreduce on the kept communicator: %d", y);
	OK(MPI_Comm_free(&c));
	OK(MPI_Comm_free_keyval(&k));

	/* refusals of bad arguments, on a communicator that returns errors */
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
	int tk;
	OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
	t_fails_with(MPI_Comm_set_attr(c, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL, "predefined: it cannot be set",
		     "setting MPI_TAG_UB");
	t_fails_with(MPI_Comm_delete_attr(c, MPI_TAG_UB), MPI_ERR_KEYVAL, "cannot be deleted", "deleting MPI_TAG_UB");
	t_fails_with(MPI_Comm_set_attr(c, 9999, NULL), MPI_ERR_KEYVAL, "9999 is not a communicator keyval",
		     "an unknown keyval");
	t_fails_with(MPI_Comm_set_attr(c, tk, NULL), MPI_ERR_KEYVAL, "made for another kind of object",
		     "a datatype keyval on a communicator");
	t_fails_with(MPI_Comm_delete_attr(c, k), MPI_ERR_KEYVAL, "has no attribute under keyval",
		     "deleting what was never set");
	t_fails_with(MPI_Comm_get_attr(c, k, NULL, &flag), MPI_ERR_ARG, "attribute_val is NULL", "NULL value");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	t_fails_with(MPI_Comm_set_attr(12345, k, NULL), MPI_ERR_COMM, "invalid communicator 12345", "a bad comm");
	t_fails_with(MPI_Comm_get_attr(12346, k, &tk, &flag), MPI_ERR_COMM, "MPI_Comm_get_attr: invalid communicator 12346",
		     "reading from a bad comm");
	t_fails_with(MPI_Attr_delete(12347, k), MPI_ERR_COMM, "MPI_Attr_delete: invalid communicator 12347",
		     "deleting from a bad comm");
	int k2 = k;
	OK(MPI_Comm_free_keyval(&k));
	t_fails_with(MPI_Comm_free_keyval(&k2), MPI_ERR_KEYVAL, "is not a communicator keyval",
		     "freeing a keyval twice (no attribute held it)");
	int pre = MPI_TAG_UB;
	t_fails_with(MPI_Comm_free_keyval(&pre), MPI_ERR_KEYVAL, "predefined and cannot be freed", "freeing MPI_TAG_UB");
	t_fails_with(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL), MPI_ERR_ARG,
		     "keyval is NULL", "NULL keyval");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Type_free_keyval(&tk));
	OK(MPI_Comm_free(&c));
}

/* Freed while an attribute uses it: valid for that attribute until it is
 * deleted; then the keyval is gone. */
static void freed_keyval_in_use(void)
{
	MPI_Comm c;
	int k, flag;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, record_delete, &k, NULL));
	int held = k;
	OK(MPI_Comm_set_attr(c, k, (void *)31L));
	OK(MPI_Comm_free_keyval(&k));
	CHECK(get(c, held, &flag) == 31 && flag, "a freed keyval's attribute: %ld (flag %d)", get(c, held, &flag), flag);
	t_fails_with(MPI_Comm_set_attr(c, held, NULL), MPI_ERR_KEYVAL, "was freed", "setting under a freed keyval");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)); /* keyval calls report there */
	t_fails_with(MPI_Comm_free_keyval(&held), MPI_ERR_KEYVAL, "was freed already", "freeing it again");
	MPI_Comm d;
	OK(MPI_Comm_dup(c, &d)); /* its copy function still runs */
	CHECK(get(d, held, &flag) == 31 && flag, "copied under a freed keyval: %ld", get(d, held, &flag));
	ndeleted = 0;
	OK(MPI_Comm_free(&c));
	OK(MPI_Comm_free(&d));
	CHECK(ndeleted == 2 && deleted[0] == 31 && deleted[1] == 31, "deletes under a freed keyval: %d", ndeleted);
	void *v;
	t_fails_with(MPI_Comm_get_attr(MPI_COMM_WORLD, held, &v, &flag), MPI_ERR_KEYVAL, "is not a communicator keyval",
		     "the keyval after its last attribute went");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* MPI-1's names, and the predefined attributes still answered. */
static void old_names_and_predefined(void)
{
	int k, flag, *ub = NULL;
	OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k, NULL));
	OK(MPI_Attr_put(MPI_COMM_WORLD, k, (void *)41L));
	void *v = NULL;
	OK(MPI_Attr_get(MPI_COMM_WORLD, k, &v, &flag));
	CHECK(flag && (long)v == 41, "MPI_Attr_get: %ld", (long)v);
	OK(MPI_Attr_delete(MPI_COMM_WORLD, k));
	OK(MPI_Keyval_free(&k));
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
	CHECK(flag && ub && *ub >= 32767, "MPI_TAG_UB: %d", ub ? *ub : -1);
	int *last = NULL;
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
	CHECK(flag && last && *last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE: %d", last ? *last : -1);
}

static void datatypes(void)
{
	MPI_Datatype t, u;
	int k, copies = 0, flag;
	OK(MPI_Type_contiguous(2, MPI_INT, &t));
	OK(MPI_Type_create_keyval((MPI_Type_copy_attr_function *)plus_1000, (MPI_Type_delete_attr_function *)record_delete,
				  &k, &copies));
	OK(MPI_Type_set_attr(t, k, (void *)51L));
	void *v = NULL;
	OK(MPI_Type_get_attr(t, k, &v, &flag));
	CHECK(flag && (long)v == 51, "type attribute: %ld", (long)v);
	OK(MPI_Type_dup(t, &u));
	OK(MPI_Type_get_attr(u, k, &v, &flag));
	CHECK(flag && (long)v == 1051 && copies == 1, "MPI_Type_dup's copy: %ld (%d copies)", (long)v, copies);
	OK(MPI_Type_set_attr(MPI_INT, k, (void *)52L)); /* predefined types take them too */
	ndeleted = 0;
	OK(MPI_Type_free(&u));
	OK(MPI_Type_delete_attr(t, k));
	OK(MPI_Type_delete_attr(MPI_INT, k));
	CHECK(ndeleted == 3 && deleted[0] == 1051 && deleted[1] == 51 && deleted[2] == 52, "type deletes %d: %ld %ld %ld",
	      ndeleted, deleted[0], deleted[1], deleted[2]);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	int ck;
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));
	t_fails_with(MPI_Type_set_attr(t, ck, NULL), MPI_ERR_KEYVAL, "is not a datatype keyval",
		     "a communicator keyval on a datatype");
	t_fails_with(MPI_Type_get_attr(4242, k, &v, &flag), MPI_ERR_TYPE, "invalid datatype 4242", "a bad datatype");
	refuse = refuse_copy = 1;
	OK(MPI_Type_set_attr(t, k, (void *)53L));
	t_fails_with(MPI_Type_dup(t, &u), MPI_ERR_OTHER, "copy function", "a refusing type copy function");
	t_fails_with(MPI_Type_free(&t), MPI_ERR_OTHER, "delete function", "a refusing type delete function");
	refuse = refuse_copy = 0;
	CHECK(t != MPI_DATATYPE_NULL, "the type went although its delete function refused");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Type_free(&t));
	OK(MPI_Comm_free_keyval(&ck));
	OK(MPI_Type_free_keyval(&k));
}

/* MPI_COMM_SELF's attributes go at the start of MPI_Finalize, last set
 * first, while MPI is still usable. */
static int at_exit[3], nexit, finalized_seen;
static int at_finalize(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)extra;
	int f = 1;
	MPI_Finalized(&f);
	finalized_seen |= f;
	if (nexit < 3)
		at_exit[nexit++] = (int)(long)val;
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	set_get_delete();
	duplicates();
	refusals();
	freed_keyval_in_use();
	old_names_and_predefined();
	datatypes();

	for (long i = 1; i <= 3; i++) {
		int k;
		OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &k, NULL));
		OK(MPI_Comm_set_attr(MPI_COMM_SELF, k, (void *)i));
		OK(MPI_Comm_free_keyval(&k)); /* valid for its attribute until MPI_Finalize deletes it */
	}
	int all = 0;
	MPI_Allreduce(&t_fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	if (nexit != 3 || at_exit[0] != 3 || at_exit[1] != 2 || at_exit[2] != 1 || finalized_seen) {
		fprintf(stderr, "rank %d: MPI_COMM_SELF's delete functions at MPI_Finalize: %d calls (%d %d %d), want 3 2 1;"
				" MPI_Finalized %d in them\n",
			t_rank, nexit, at_exit[0], at_exit[1], at_exit[2], finalized_seen);
		all++;
	}
	if (t_rank == 0)
		printf("mpi_attr: %d ranks: %s (%d failed checks)\n", t_size, all ? "FAIL" : "ok", all);
	return all ? 1 : 0;
}
