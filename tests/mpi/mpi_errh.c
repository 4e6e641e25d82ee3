/* mpi_errh.c: a program's own error handlers and error classes. A
 * handler made with MPI_Comm_create_errhandler is called once per error
 * with the communicator and the code, and the failing call returns that
 * code; duplicates inherit it; MPI_Comm_call_errhandler calls it;
 * freeing a handle leaves communicators using it working, while the freed
 * handle can no longer be set. MPI_Add_error_class/code/string: classes
 * and codes MPI_Error_class and MPI_Error_string answer for, the empty
 * string until one is given, MPI_LASTUSEDCODE covering them; every
 * refusal's class and message. With argument "fatal", MPI_Comm_call_errhandler
 * on MPI_COMM_WORLD (MPI_ERRORS_ARE_FATAL) ends the job with the code's
 * string (mpi_errh.sh checks it). */
#include "mpi_test.h"

static int calls;
static MPI_Comm seen_comm;
static int seen_code;

static void handler(MPI_Comm *comm, int *code, ...)
{
	calls++;
	seen_comm = *comm;
	seen_code = *code;
}

static void handlers(void)
{
	MPI_Errhandler eh, got;
	MPI_Comm c, d;
	OK(MPI_Comm_create_errhandler(handler, &eh));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_set_errhandler(c, eh));
	int x = 0, cls = -1;
	calls = 0;
	int rc = MPI_Send(&x, 1, MPI_INT, 9999, 0, c);
	MPI_Error_class(rc, &cls);
	CHECK(calls == 1 && seen_comm == c && seen_code == rc && cls == MPI_ERR_RANK,
	      "a bad rank: %d calls, comm %d (want %d), code %d (returned %d), class %d", calls, seen_comm, c, seen_code,
	      rc, cls);

	OK(MPI_Comm_dup(c, &d)); /* a duplicate inherits the handler */
	calls = 0;
	rc = MPI_Send(&x, -1, MPI_INT, 0, 0, d);
	MPI_Error_class(rc, &cls);
	CHECK(calls == 1 && seen_comm == d && cls == MPI_ERR_COUNT, "on the duplicate: %d calls, comm %d, class %d",
	      calls, seen_comm, cls);

	calls = 0;
	OK(MPI_Comm_call_errhandler(c, MPI_ERR_OTHER));
	CHECK(calls == 1 && seen_code == MPI_ERR_OTHER, "MPI_Comm_call_errhandler: %d calls, code %d", calls, seen_code);

	OK(MPI_Comm_get_errhandler(c, &got));
	CHECK(got == eh, "MPI_Comm_get_errhandler gave %d, want %d", got, eh);
	OK(MPI_Errhandler_free(&got)); /* the reference get gave: eh itself stays */
	CHECK(got == MPI_ERRHANDLER_NULL, "a freed handle is %d", got);
	MPI_Errhandler held = eh;
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
	OK(MPI_Errhandler_free(&eh));
	calls = 0;
	MPI_Send(&x, 1, MPI_INT, 9999, 0, c); /* communicators keep a freed handler */
	CHECK(calls == 1, "a communicator's handler after its handle was freed: %d calls", calls);

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	t_fails_with(MPI_Comm_set_errhandler(c, held), MPI_ERR_ARG, "freed error handler", "setting a freed handler");
	t_fails_with(MPI_Errhandler_free(&held), MPI_ERR_ARG, "freed error handler", "freeing it twice");
	t_fails_with(MPI_Comm_set_errhandler(c, 777), MPI_ERR_ARG, "unknown error handler 777", "an unknown handler");
	t_fails_with(MPI_Comm_create_errhandler(NULL, &eh), MPI_ERR_ARG, "the function is NULL", "a NULL function");
	t_fails_with(MPI_Comm_call_errhandler(4321, MPI_ERR_OTHER), MPI_ERR_COMM, "invalid communicator 4321",
		     "calling on a bad communicator");

	/* MPI_ERRORS_RETURN: the call returns, MPI_SUCCESS (the handler returned) */
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	OK(MPI_Comm_call_errhandler(c, MPI_ERR_OTHER));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));

	MPI_Errhandler old; /* MPI-1's names */
	OK(MPI_Errhandler_create(handler, &old));
	OK(MPI_Errhandler_set(d, old));
	OK(MPI_Errhandler_get(d, &got));
	CHECK(got == old, "MPI_Errhandler_get: %d, want %d", got, old);
	OK(MPI_Errhandler_free(&got));
	OK(MPI_Errhandler_free(&old));
	OK(MPI_Comm_free(&d));
	OK(MPI_Comm_free(&c));
}

static void classes(void)
{
	int cls, code, code2, got, len;
	char s[MPI_MAX_ERROR_STRING];
	OK(MPI_Add_error_class(&cls));
	CHECK(cls > MPI_ERR_INFO_NOKEY, "a new class %d overlaps the predefined ones", cls);
	OK(MPI_Error_class(cls, &got));
	CHECK(got == cls, "MPI_Error_class of the new class: %d", got);
	OK(MPI_Error_string(cls, s, &len));
	CHECK(len == 0 && !s[0], "a class without a string: '%s'", s);
	OK(MPI_Add_error_code(cls, &code));
	OK(MPI_Add_error_code(MPI_ERR_ARG, &code2)); /* predefined classes take codes too */
	CHECK(code != cls && code != code2, "codes %d and %d, class %d", code, code2, cls);
	OK(MPI_Error_class(code, &got));
	CHECK(got == cls, "class of the new code: %d, want %d", got, cls);
	OK(MPI_Error_class(code2, &got));
	CHECK(got == MPI_ERR_ARG, "class of the code added to MPI_ERR_ARG: %d", got);
	OK(MPI_Add_error_string(cls, "the library's class"));
	OK(MPI_Add_error_string(code, "the library's code"));
	OK(MPI_Error_string(code, s, &len));
	CHECK(!strcmp(s, "the library's code") && len == (int)strlen(s), "code string '%s'", s);
	OK(MPI_Error_string(cls, s, &len));
	CHECK(!strcmp(s, "the library's class"), "class string '%s'", s);
	OK(MPI_Add_error_string(code, "replaced"));
	OK(MPI_Error_string(code, s, &len));
	CHECK(!strcmp(s, "replaced"), "replaced string '%s'", s);
	OK(MPI_Error_string(code2, s, &len));
	CHECK(len == 0, "a code without a string: '%s'", s);
	int *last = NULL, flag = 0;
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
	CHECK(flag && last && *last >= code && *last >= code2, "MPI_LASTUSEDCODE %d below the codes %d %d",
	      last ? *last : -1, code, code2);

	/* a handler sees the program's own code */
	MPI_Errhandler eh;
	OK(MPI_Comm_create_errhandler(handler, &eh));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
	calls = 0;
	OK(MPI_Comm_call_errhandler(MPI_COMM_SELF, code));
	CHECK(calls == 1 && seen_code == code && seen_comm == MPI_COMM_SELF, "handler saw code %d on %d", seen_code,
	      seen_comm);
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Errhandler_free(&eh));

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	t_fails_with(MPI_Add_error_string(MPI_ERR_ARG, "mine"), MPI_ERR_ARG, "not an error class or code added",
		     "a string for a predefined class");
	t_fails_with(MPI_Add_error_code(99999, &code), MPI_ERR_ARG, "99999 is not an error class", "a bad class");
	t_fails_with(MPI_Add_error_class(NULL), MPI_ERR_ARG, "errorclass is NULL", "NULL class");
	t_fails_with(MPI_Add_error_string(code, NULL), MPI_ERR_ARG, "string is NULL", "NULL string");
	/* classes stay below 64: the supply ends with a clear error */
	int n = 1, rc;
	while ((rc = MPI_Add_error_class(&cls)) == MPI_SUCCESS && n < 100)
		n++;
	t_fails_with(rc, MPI_ERR_OTHER, "no more error classes (35 may be added)", "the last class");
	CHECK(n == 35, "%d classes could be added, want 35", n);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	if (argc > 1 && !strcmp(argv[1], "fatal")) {
		int cls, code;
		MPI_Add_error_class(&cls);
		MPI_Add_error_code(cls, &code);
		MPI_Add_error_string(code, "the library gave up");
		if (t_rank == 1)
			MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
		MPI_Barrier(MPI_COMM_WORLD);
		return 0;
	}
	handlers();
	classes();
	return t_finish("mpi_errh");
}
