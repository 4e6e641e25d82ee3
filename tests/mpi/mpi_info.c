/* mpi_info.c: info objects keep their keys in the order first set, replace
 * a value set again, give back as much of a value as fits, duplicate and
 * delete; MPI_INFO_ENV is there without being created; the calls that take
 * an info accept one; bad keys, missing keys and freed objects are errors
 * of the info classes. */
#include "mpi_test.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Info info, copy, gone;
	char key[MPI_MAX_INFO_KEY + 1], val[64], longkey[MPI_MAX_INFO_KEY + 2];
	int n = -1, flag = -1, len = -1;

	OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "cb_nodes", "4"));
	OK(MPI_Info_set(info, "striping_unit", "1048576"));
	OK(MPI_Info_set(info, "cb_nodes", "8")); /* replaced, keeps its place */
	OK(MPI_Info_get_nkeys(info, &n));
	CHECK(n == 2, "%d keys", n);
	OK(MPI_Info_get_nthkey(info, 0, key));
	CHECK(!strcmp(key, "cb_nodes"), "key 0 is '%s'", key);
	OK(MPI_Info_get(info, "cb_nodes", sizeof val - 1, val, &flag));
	CHECK(flag && !strcmp(val, "8"), "cb_nodes: flag %d '%s'", flag, val);
	OK(MPI_Info_get_valuelen(info, "striping_unit", &len, &flag));
	CHECK(flag && len == 7, "valuelen %d", len);
	OK(MPI_Info_get(info, "striping_unit", 3, val, &flag)); /* 3 characters and a terminator */
	CHECK(flag && !strcmp(val, "104"), "truncated value '%s'", val);
	OK(MPI_Info_get(info, "no_such_key", sizeof val - 1, val, &flag));
	CHECK(!flag, "a missing key was found");
	/* A duplicate is independent. */
	OK(MPI_Info_dup(info, &copy));
	OK(MPI_Info_delete(info, "cb_nodes"));
	OK(MPI_Info_get_nkeys(info, &n));
	CHECK(n == 1, "%d keys after a delete", n);
	OK(MPI_Info_get(copy, "cb_nodes", sizeof val - 1, val, &flag));
	CHECK(flag && !strcmp(val, "8"), "the duplicate lost cb_nodes (flag %d)", flag);
	/* Calls that take an info accept one. */
	MPI_Comm dup;
	OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, copy, &dup));
	int same;
	OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &same));
	CHECK(same == MPI_CONGRUENT, "Comm_dup_with_info: compare gives %d", same);
	/* No hint is taken: the hints in use are none, whatever was set. */
	MPI_Info used;
	OK(MPI_Comm_set_info(dup, copy));
	OK(MPI_Comm_get_info(dup, &used));
	OK(MPI_Info_get_nkeys(used, &n));
	CHECK(n == 0, "MPI_Comm_get_info gave %d hints in use", n);
	OK(MPI_Info_free(&used));
	t_fails_with(MPI_Comm_set_info(dup, 4242), MPI_ERR_INFO, "invalid info object", "set_info of a bad info");
	t_fails_with(MPI_Comm_get_info(4242, &used), MPI_ERR_COMM, "invalid communicator", "get_info of a bad comm");
	OK(MPI_Comm_free(&dup));
	/* Errors. */
	memset(longkey, 'k', sizeof longkey - 1);
	longkey[sizeof longkey - 1] = '\0';
	t_fails_with(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY, "is empty or longer than 255", "a key of 256 characters");
	t_fails_with(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY, "is empty or longer than 255", "an empty key");
	t_fails_with(MPI_Info_delete(info, "cb_nodes"), MPI_ERR_INFO_NOKEY, "no key 'cb_nodes'", "deleting a missing key");
	t_fails_with(MPI_Info_get_nthkey(info, 5, key), MPI_ERR_ARG, "key 5 of 1", "key 5 of 1");
	gone = copy;
	OK(MPI_Info_free(&copy));
	CHECK(copy == MPI_INFO_NULL, "a freed info is not MPI_INFO_NULL");
	t_fails_with(MPI_Info_get_nkeys(gone, &n), MPI_ERR_INFO, "invalid info object", "a freed info");
	t_fails_with(MPI_Info_free(&gone), MPI_ERR_INFO, "invalid info object", "freeing twice");
	OK(MPI_Info_free(&info));
	return t_finish("mpi_info");
}
