/* mpi_err.c: error codes, classes, strings and handlers.
 *
 * A code is its class plus 64 times a number: 0 for a bare class; 1 +
 * the slot of a message kept in a small ring when the library had more to
 * say, so MPI_Error_string gives the sentence that named what failed (the
 * last MSG_SLOTS are kept); above the ring, the codes a program added
 * with MPI_Add_error_code, each with its own string. MPI_Error_class is
 * the code modulo 64, so the classes a program adds fit below 64, after
 * the predefined ones. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_impl.h"

#define MSG_SLOTS 64
static char msgs[MSG_SLOTS][MPI_MAX_ERROR_STRING];
static unsigned msg_next;

static const char *const class_names[] = {
	[MPI_SUCCESS] = "MPI_SUCCESS: no error",
	[MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
	[MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
	[MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype",
	[MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
	[MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
	[MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
	[MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
	[MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
	[MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
	[MPI_ERR_OP] = "MPI_ERR_OP: invalid operation",
	[MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid topology",
	[MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
	[MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
	[MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
	[MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated on receive",
	[MPI_ERR_OTHER] = "MPI_ERR_OTHER: other error",
	[MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error",
	[MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
	[MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
	[MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid attribute key",
	[MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
	[MPI_ERR_PROC_FAILED] = "MPI_ERR_PROC_FAILED: a peer process failed",
	[MPI_ERR_TIMEOUT] = "MPI_ERR_TIMEOUT: a collective's deadline passed",
	[MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
	[MPI_ERR_INFO_KEY] = "MPI_ERR_INFO_KEY: invalid info key",
	[MPI_ERR_INFO_VALUE] = "MPI_ERR_INFO_VALUE: invalid info value",
	[MPI_ERR_INFO_NOKEY] = "MPI_ERR_INFO_NOKEY: no such info key",
};

static const char *class_name(int cls)
{
	if (cls >= 0 && cls < (int)(sizeof class_names / sizeof *class_names) && class_names[cls])
		return class_names[cls];
	return "unknown error class";
}

void mpi_fatal(int code, const char *fmt, ...)
{
	char buf[MPI_MAX_ERROR_STRING];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "ptl-mpi: rank %d: fatal: %s (%s); aborting the job\n", mpi_g.wrank, buf, class_name(code % 64));
	fflush(stderr);
	fflush(stdout);
	_exit(code % 64 ? code % 64 : 1);
}

static int eh_raise(MPI_Comm c, int code, const char *what);

int mpi_err(MPI_Comm c, int cls, const char *fn, const char *fmt, ...)
{
	char buf[MPI_MAX_ERROR_STRING - 64];
	int n = snprintf(buf, sizeof buf, "%s: ", fn);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
	va_end(ap);
	cls %= 64;
	unsigned slot = msg_next++ % MSG_SLOTS;
	snprintf(msgs[slot], sizeof msgs[slot], "%s (%.60s)", buf, class_name(cls));
	return eh_raise(c, cls + 64 * (int)(slot + 1), msgs[slot]);
}

int mpi_err_comm(const char *fn, MPI_Comm comm)
{
	return mpi_err(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
}

/* ------------------------------------------------ classes and codes added */

#define USER_CLASS_FIRST (MPI_ERR_INFO_NOKEY + 1)
#define USER_CLASS_END MPI_ERR_LASTCODE   /* classes stay below 64: code % 64 */
static int user_classes = USER_CLASS_FIRST;
static char *class_strings[MPI_ERR_LASTCODE + 1];
static char **code_strings;  /* per added code, in order */
static int user_codes, code_strings_cap;
static int lastused = MPI_ERR_LASTCODE; /* MPI_LASTUSEDCODE */

static int user_code(int n)
{
	return 64 * (MSG_SLOTS + 1 + n);
}

/* The added code's number, or -1 if code is not one. */
static int user_code_index(int code)
{
	int n = code / 64 - 1 - MSG_SLOTS;
	return code >= 0 && n >= 0 && n < user_codes ? n : -1;
}

static bool valid_class(int cls)
{
	return cls >= 0 && cls < user_classes;
}

int mpi_err_lastused(void)
{
	return lastused;
}

int PMPI_Add_error_class(int *errorclass)
{
	MPI_CHECK_INIT("MPI_Add_error_class");
	if (!errorclass)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_class", "errorclass is NULL");
	if (user_classes >= USER_CLASS_END)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Add_error_class",
			       "no more error classes (%d may be added)", USER_CLASS_END - USER_CLASS_FIRST);
	*errorclass = user_classes++;
	lastused = *errorclass > lastused ? *errorclass : lastused;
	return MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
	MPI_CHECK_INIT("MPI_Add_error_code");
	if (!errorcode)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code", "errorcode is NULL");
	if (!valid_class(errorclass))
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code", "%d is not an error class",
			       errorclass);
	if (user_codes == code_strings_cap) {
		int cap = code_strings_cap ? 2 * code_strings_cap : 16;
		char **p = realloc(code_strings, sizeof *p * (size_t)cap);
		if (!p)
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Add_error_code", "no memory for code %d",
				       user_codes);
		code_strings = p;
		code_strings_cap = cap;
	}
	code_strings[user_codes] = NULL;
	*errorcode = user_code(user_codes++) + errorclass;
	lastused = *errorcode > lastused ? *errorcode : lastused;
	return MPI_SUCCESS;
}

/* Strings go to added classes and codes only: the predefined keep theirs. */
int PMPI_Add_error_string(int errorcode, const char *string)
{
	MPI_CHECK_INIT("MPI_Add_error_string");
	if (!string)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string", "string is NULL");
	int n = user_code_index(errorcode);
	char **slot = n >= 0 ? &code_strings[n]
		      : errorcode >= USER_CLASS_FIRST && errorcode < user_classes ? &class_strings[errorcode] : NULL;
	if (!slot)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string",
			       "%d is not an error class or code added by the program", errorcode);
	char *copy = strndup(string, MPI_MAX_ERROR_STRING - 1);
	if (!copy)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Add_error_string", "no memory for the string");
	free(*slot);
	*slot = copy;
	return MPI_SUCCESS;
}

int PMPI_Error_class(int code, int *cls)
{
	if (code < 0 || !cls)
		return MPI_ERR_ARG;
	*cls = code % 64;
	return MPI_SUCCESS;
}

int PMPI_Error_string(int code, char *s, int *len)
{
	if (code < 0 || !s || !len)
		return MPI_ERR_ARG;
	int slot = code / 64 - 1, n = user_code_index(code), cls = code % 64;
	/* Added classes and codes without a string of their own have the
	 * empty one (MPI-3.1 8.5). */
	const char *m = n >= 0                                         ? (code_strings[n] ? code_strings[n] : "")
			: slot >= 0 && slot < MSG_SLOTS && msgs[slot][0] ? msgs[slot]
			: cls >= USER_CLASS_FIRST && cls < user_classes  ? (class_strings[cls] ? class_strings[cls] : "")
									 : class_name(cls);
	snprintf(s, MPI_MAX_ERROR_STRING, "%s", m);
	*len = (int)strlen(s);
	return MPI_SUCCESS;
}

/* ------------------------------------------------------------ handlers */

/* A program's handlers. Slots are not reused, so a communicator keeps a
 * working handler whatever the program freed; refs counts the program's
 * handles (create and get give one, free takes one) and says whether the
 * handle may still be set on a communicator. */
#define USER_EH_FIRST 8
struct user_eh {
	MPI_Comm_errhandler_function *fn;
	int refs;
};
static struct user_eh *handlers;
static int nhandlers;

static struct user_eh *user_eh(MPI_Errhandler eh)
{
	int i = eh - USER_EH_FIRST;
	return i >= 0 && i < nhandlers ? &handlers[i] : NULL;
}

static bool predefined_eh(MPI_Errhandler eh)
{
	return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh)
{
	MPI_CHECK_INIT("MPI_Comm_create_errhandler");
	if (!fn || !eh)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_create_errhandler", "%s is NULL",
			       fn ? "errhandler" : "the function");
	struct user_eh *p = realloc(handlers, sizeof *p * (size_t)(nhandlers + 1));
	if (!p)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler", "no memory");
	handlers = p;
	handlers[nhandlers] = (struct user_eh){ .fn = fn, .refs = 1 };
	*eh = USER_EH_FIRST + nhandlers++;
	return MPI_SUCCESS;
}

int PMPI_Errhandler_create(MPI_Handler_function *fn, MPI_Errhandler *eh)
{
	return PMPI_Comm_create_errhandler(fn, eh);
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
	MPI_COMM_ARG("MPI_Comm_set_errhandler", comm, c);
	struct user_eh *u = user_eh(eh);
	if (!predefined_eh(eh) && !(u && u->refs > 0))
		return mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "%s error handler %d",
			       u ? "freed" : "unknown", eh);
	c->errh = eh;
	return MPI_SUCCESS;
}

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler eh)
{
	return PMPI_Comm_set_errhandler(comm, eh);
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *eh)
{
	MPI_COMM_ARG("MPI_Comm_get_errhandler", comm, c);
	struct user_eh *u = user_eh(c->errh);
	if (u)
		u->refs++;
	*eh = c->errh;
	return MPI_SUCCESS;
}

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *eh)
{
	return PMPI_Comm_get_errhandler(comm, eh);
}

int PMPI_Errhandler_free(MPI_Errhandler *eh)
{
	MPI_CHECK_INIT("MPI_Errhandler_free");
	if (!eh)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free", "errhandler is NULL");
	struct user_eh *u = user_eh(*eh);
	if (!predefined_eh(*eh) && !(u && u->refs > 0))
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free", "%s error handler %d",
			       u ? "freed" : "unknown", *eh);
	if (u)
		u->refs--;
	*eh = MPI_ERRHANDLER_NULL;
	return MPI_SUCCESS;
}

/* What happens to code on c: the program's handler is called (and the
 * code returned to the caller when it returns); MPI_ERRORS_RETURN gives
 * it back; otherwise the job ends. */
static int eh_raise(MPI_Comm c, int code, const char *what)
{
	MPI_Comm on = c == MPI_COMM_NULL ? MPI_COMM_WORLD : c;
	struct mpi_comm *cm = mpi_comm_get(on);
	MPI_Errhandler eh = cm ? cm->errh : MPI_ERRORS_ARE_FATAL;
	if (!mpi_g.initialized || mpi_g.finalized)
		eh = MPI_ERRORS_ARE_FATAL;
	struct user_eh *u = user_eh(eh);
	if (u) {
		u->fn(&on, &code);
		return code;
	}
	if (eh == MPI_ERRORS_RETURN)
		return code;
	int cls = code % 64;
	fprintf(stderr, "ptl-mpi: rank %d: %s on %s; MPI_ERRORS_ARE_FATAL: aborting the job\n", mpi_g.wrank, what,
		cm ? mpi_comm_name(on) : "an invalid communicator");
	fflush(stderr);
	fflush(stdout);
	/* Through the launcher, so it stops every rank at once and says
	 * why; before MPI_Init or after MPI_Finalize there is no job to end. */
	if (mpi_g.initialized && !mpi_g.finalized)
		PtlRtAbort(cls ? cls : 1, what);
	_exit(cls ? cls : 1);
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
	MPI_COMM_VALID("MPI_Comm_call_errhandler", comm);
	char what[MPI_MAX_ERROR_STRING + 64];
	int len;
	char s[MPI_MAX_ERROR_STRING];
	PMPI_Error_string(errorcode, s, &len);
	snprintf(what, sizeof what, "MPI_Comm_call_errhandler: error code %d (%s)", errorcode, s);
	eh_raise(comm, errorcode, what);
	return MPI_SUCCESS;
}

void mpi_err_fini(void)
{
	for (int n = 0; n < user_codes; n++)
		free(code_strings[n]);
	free(code_strings);
	code_strings = NULL;
	user_codes = code_strings_cap = 0;
	for (int c = 0; c <= MPI_ERR_LASTCODE; c++) {
		free(class_strings[c]);
		class_strings[c] = NULL;
	}
	user_classes = USER_CLASS_FIRST;
	lastused = MPI_ERR_LASTCODE;
	free(handlers);
	handlers = NULL;
	nhandlers = 0;
}
