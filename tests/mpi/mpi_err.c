/* mpi_err: error paths. With no argument: MPI_ERRORS_RETURN gives each
 * invalid call's class and a message naming it. "fatal": an invalid rank
 * under MPI_ERRORS_ARE_FATAL ends the job; "abort": rank 1 calls
 * MPI_Abort(MPI_COMM_WORLD, 7); "stall": the collective deadline test
 * (run with PTL_TEST_STALL_RANK and PTL_COLL_TIMEOUT): the error names the
 * collective, the communicator, the step and the missing rank.
 * "melimit": receives past PTL_MPI_MAX_MES; "niearly": the same where the
 * program opened the network interface before MPI_Init, with
 * PTL_TEST_NI_MES match entries (below); "ownlimit": sends above the
 * eager limit past the library's own match entries; "pullroom": pulls
 * past their landings with every receive posted; "lateland": a
 * collective that timed out while its message was being pulled ("lateq":
 * its pull queued for a landing; "lateget": its get deferred);
 * "latesend": one that timed out while its sends waited for the peer
 * ("latebulk": while its eager part was still being read). */
#define _GNU_SOURCE /* MAP_NORESERVE */
#include "mpi_test.h"

#include <portals3.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static void expect(int rc, int cls, const char *what, const char *word)
{
	int c = -1;
	MPI_Error_class(rc, &c);
	CHECK(c == cls, "%s: class %d want %d", what, c, cls);
	char s[MPI_MAX_ERROR_STRING];
	int len;
	MPI_Error_string(rc, s, &len);
	CHECK(len > 0 && strstr(s, word), "%s: message '%s' lacks '%s'", what, s, word);
}

/* The layout user_add works on: an element is two runs of user_run ints,
 * user_gap bytes apart; elements are user_ext apart. */
static MPI_Aint user_gap, user_ext;
static int user_run;

static int *user_int(void *base, int i, int half, int j)
{
	return (int *)((char *)base + i * user_ext + half * user_gap + j * (MPI_Aint)sizeof(int));
}

/* inout += in, int by int */
static void user_add(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		for (int h = 0; h < 2; h++)
			for (int j = 0; j < user_run; j++)
				*user_int(inout, i, h, j) += *user_int(in, i, h, j);
}

/* A user op on a type whose ints lie far apart gets copies of the span
 * they cover, in the type's layout; with no memory for them (the address
 * space limited around the call) the call fails with MPI_ERR_NO_MEM and
 * does not pass the buffer off as the result. The op was skipped and the
 * call said MPI_SUCCESS: MPI_Reduce_local's inoutbuf stayed as it was,
 * MPI_Allreduce's recvbuf held this rank's input alone. */
static void user_op_no_memory(void)
{
	MPI_Op op;
	OK(MPI_Op_create(user_add, 1, &op));
	/* Two elements of two runs 512 MiB apart, each of 1 int (16 bytes to
	 * reduce: a direct allreduce's, or one element a block of the
	 * schedule's) or of 512 (8 KiB: the schedule's, whole elements a
	 * block). Every piece reduced spans 512 MiB. */
	static const int runs[2] = { 1, 512 };
	user_gap = (MPI_Aint)1 << 29;
	for (int k = 0; k < 2; k++) {
		int count = 2, bl[2] = { runs[k], runs[k] };
		MPI_Aint disp[2] = { 0, user_gap };
		MPI_Datatype t;
		OK(MPI_Type_create_hindexed(2, bl, disp, MPI_INT, &t));
		OK(MPI_Type_commit(&t));
		MPI_Aint lb;
		OK(MPI_Type_get_extent(t, &lb, &user_ext));
		user_run = runs[k];
		size_t span = (size_t)user_ext * (size_t)count;
		/* reserved, not committed: only the pages of the ints are touched */
		char *in = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		char *io = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		CHECK(in != MAP_FAILED && io != MAP_FAILED, "mmap of 2 x %zu bytes", span);
		if (in == MAP_FAILED || io == MAP_FAILED)
			return;
		for (int i = 0; i < count; i++)
			for (int h = 0; h < 2; h++)
				for (int j = 0; j < user_run; j++) {
					*user_int(in, i, h, j) = 1;
					*user_int(io, i, h, j) = 10;
				}
		int *first = user_int(io, 0, 0, 0), *last = user_int(io, count - 1, 1, user_run - 1);
		/* the limit: what is mapped now and 256 MiB, short of one copy */
		unsigned long pages = 0;
		FILE *f = fopen("/proc/self/statm", "r");
		CHECK(f && fscanf(f, "%lu", &pages) == 1, "reading /proc/self/statm");
		if (f)
			fclose(f);
		struct rlimit old, lim;
		getrlimit(RLIMIT_AS, &old);
		lim = old;
		lim.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)256 << 20);
		char what[64];
		/* The allreduce on 2 ranks only: both combine at their first
		 * step, and both fail. Elsewhere a rank whose first steps do
		 * not combine (a ring's, its block empty) waits for the failed
		 * rank's part until PTL_COLL_TIMEOUT. */
		if (pages && setrlimit(RLIMIT_AS, &lim) == 0) {
			int rl = MPI_Reduce_local(in, io, count, t, op);
			int ra = t_size == 2 ? MPI_Allreduce(in, io, count, t, op, MPI_COMM_WORLD) : MPI_SUCCESS;
			setrlimit(RLIMIT_AS, &old);
			snprintf(what, sizeof what, "reduce_local, user op, runs of %d", user_run);
			expect(rl, MPI_ERR_NO_MEM, what, "user operation");
			CHECK(*first == 10 && *last == 10, "%s: the result buffer changed (%d, %d) in a call that failed",
			      what, *first, *last);
			snprintf(what, sizeof what, "allreduce, user op, runs of %d", user_run);
			if (t_size == 2)
				expect(ra, MPI_ERR_NO_MEM, what, "user operation");
			CHECK(*first == 10 && *last == 10, "%s: the result buffer changed (%d, %d) in a call that failed",
			      what, *first, *last);
		}
		/* with the memory, the same calls reduce */
		OK(MPI_Reduce_local(in, io, count, t, op));
		OK(MPI_Allreduce(MPI_IN_PLACE, io, count, t, op, MPI_COMM_WORLD));
		CHECK(*first == 11 * t_size && *last == 11 * t_size, "runs of %d: got %d and %d, want %d", user_run,
		      *first, *last, 11 * t_size);
		OK(MPI_Type_free(&t));
		munmap(in, span);
		munmap(io, span);
	}
	OK(MPI_Op_free(&op));
}

/* The floods' message i of len bytes: i at its first byte, i + 3 at its
 * last, so one taken whole and in its place reads both back. */
static void flood_mark(char *m, int i, int len)
{
	m[0] = (char)i;
	m[len - 1] = (char)(i + 3);
}
static int flood_whole(const char *m, int i, int len)
{
	return m[0] == (char)i && m[len - 1] == (char)(i + 3);
}

/* The late_* floods: n marked messages of len bytes, the rows of base,
 * sent to peer with tag (each its request in q). */
static void flood_post(char *base, int n, int len, int peer, int tag, MPI_Request *q)
{
	for (int i = 0; i < n; i++) {
		flood_mark(base + (size_t)i * len, i, len);
		OK(MPI_Isend(base + (size_t)i * len, len, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &q[i]));
	}
}

/* ... received into the rows of base: by the receives of q, posted
 * already, or (q NULL) in order now. How many came whole, in place. */
static int flood_take(char *base, int n, int len, int peer, int tag, MPI_Request *q)
{
	int whole = 0;
	if (q)
		OK(MPI_Waitall(n, q, MPI_STATUSES_IGNORE));
	for (int i = 0; i < n; i++) {
		if (!q)
			OK(MPI_Recv(base + (size_t)i * len, len, MPI_CHAR, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		whole += flood_whole(base + (size_t)i * len, i, len);
	}
	return whole;
}

/* How many of p's len bytes are c. */
static size_t count_byte(const char *p, size_t len, char c)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += p[i] == c;
	return n;
}

/* Run with PTL_MPI_MAX_MES=256, 2 ranks. Rank 0 first takes IDLE
 * messages in receives posted for them, whose entries the library keeps
 * (idle, for later receives like them). Then it posts receives (tag 5,
 * from rank 1) until one fails: MPI_ERR_NO_MEM, "cannot post the
 * receive", after exactly 256 (the idle entries made way). Then an MPI_Sendrecv of 600
 * bytes each way (from 512 B received its send goes first) before rank 1
 * has sent its part: the receive cannot be posted, and the error says
 * the message went, which rank 1 receives whole. Then rank 1 floods it
 * with FLOOD messages of FLEN bytes, more than an unexpected buffer
 * holds: a buffer filled leaves the match list and, once emptied, goes
 * back in while rank 0 has all the receives it may post posted, and
 * asks for more once the flood is in (where receives and the library
 * shared the entries, the receives took the room the buffers went back
 * into), and the flood is taken whole, in order. With the
 * posted receives cancelled (none matched), rank 1 sends its part and
 * rank 0's receive takes it; and rank 1's tag 5 messages sent after that
 * land in receives posted anew, in order: nothing lost at the limit.
 * Last, at the limit again, a message that has come into the first of
 * the posted receives (rank 0 asleep meanwhile, its event not taken)
 * leaves room for one more receive: the refusal takes the events first. */
/* ME_LIMIT_TRIES: more than an NI's entries where receives and the library
 * shared them (niearly's 67,584): that old way ran out of entries, not tries */
enum { ME_LIMIT_TRIES = 1 << 17, XLEN = 600, AFTER = 8, FLOOD = 400, FLEN = 8000, IDLE = 60 };

/* rank 0: receives (tag 5 from rank 1) posted into rq[n...] until one is
 * refused; returns the new count, the refusal checked */
static int post_until_refused(MPI_Request *rq, int *slot, int n)
{
	int rc = MPI_SUCCESS;
	while (n < ME_LIMIT_TRIES && (rc = MPI_Irecv(&slot[n], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[n])) == MPI_SUCCESS)
		n++;
	t_fails_with(rc, MPI_ERR_NO_MEM,
		     "cannot post the receive (no memory, or PTL_MPI_MAX_MES receives posted already)",
		     "MPI_Irecv past the limit");
	return n;
}
static int receives_past_limit(void)
{
	char out[XLEN], in[XLEN];
	int peer = 1 - t_rank, got = 0, v = -1;
	for (int i = 0; i < XLEN; i++)
		out[i] = (char)(t_rank * 100 + i);
	if (t_rank == 0) {
		static MPI_Request rq[ME_LIMIT_TRIES];
		static int slot[ME_LIMIT_TRIES];
		for (int i = 0; i < IDLE; i++)
			OK(MPI_Irecv(&slot[i], 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &rq[i]));
		OK(MPI_Send(&v, 1, MPI_INT, peer, 12, MPI_COMM_WORLD)); /* they come to posted receives */
		OK(MPI_Waitall(IDLE, rq, MPI_STATUSES_IGNORE));
		int n = post_until_refused(rq, slot, 0);
		/* the limit: PTL_MPI_MAX_MES's, or where the network interface
		 * was opened before MPI_Init what its entries leave, which
		 * mpi_err.sh compares with what the library said */
		const char *lim_s = getenv("PTL_MPI_MAX_MES");
		int lim = lim_s ? atoi(lim_s) : n >= 256 ? n : 256;
		CHECK(n == lim, "%d receives posted with PTL_MPI_MAX_MES=%d", n, lim);
		printf("rank 0: %d receives posted, the limit %d\n", n, lim);
		/* not at the limit, the exchange below would wait for rank 1,
		 * which waits for it: a failure here, not a hang */
		if (n != lim)
			MPI_Abort(MPI_COMM_WORLD, 3);
		int rc = MPI_Sendrecv(out, XLEN, MPI_CHAR, peer, 6, in, XLEN, MPI_CHAR, peer, 6, MPI_COMM_WORLD,
				      MPI_STATUS_IGNORE);
		/* and rank 1 waits for the message that went */
		if (!t_fails_with(rc, MPI_ERR_NO_MEM, "the message sent went out", "MPI_Sendrecv past the limit"))
			MPI_Abort(MPI_COMM_WORLD, 3);
		/* the flood, all of it here (its tag 10 last), and no more
		 * receives than before */
		static char fl[FLEN];
		OK(MPI_Send(&v, 1, MPI_INT, peer, 8, MPI_COMM_WORLD));
		OK(MPI_Probe(peer, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		n = post_until_refused(rq, slot, n);
		CHECK(n == lim, "%d receives posted once the flood came", n);
		int whole = 0;
		for (int i = 0; i < FLOOD; i++) {
			OK(MPI_Recv(fl, FLEN, MPI_CHAR, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			whole += flood_whole(fl, i, FLEN);
		}
		CHECK(whole == FLOOD, "%d of %d flood messages came whole and in order", whole, FLOOD);
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < n; i++) {
			MPI_Status st;
			int c = 0;
			OK(MPI_Cancel(&rq[i]));
			OK(MPI_Wait(&rq[i], &st));
			OK(MPI_Test_cancelled(&st, &c));
			CHECK(c, "posted receive %d matched a message nobody sent", i);
		}
		OK(MPI_Send(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
		OK(MPI_Recv(in, XLEN, MPI_CHAR, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < XLEN; i++)
			got += in[i] == (char)(peer * 100 + i);
		CHECK(got == XLEN, "rank 1's part arrived with %d of %d bytes right", got, XLEN);
		for (int i = 0; i < AFTER; i++) {
			OK(MPI_Recv(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(v == i, "tag 5 message %d read %d", i, v);
		}
		slot[0] = -1;
		n = post_until_refused(rq, slot, 0);
		CHECK(n == lim, "%d receives posted again", n);
		OK(MPI_Send(&v, 1, MPI_INT, peer, 13, MPI_COMM_WORLD));
		usleep(200000); /* its tag 5 message comes meanwhile (a blocking receive would need an entry) */
		OK(MPI_Irecv(&slot[n], 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &rq[n]));
		int first = 0;
		OK(MPI_Test(&rq[0], &first, MPI_STATUS_IGNORE));
		CHECK(first && slot[0] == 55, "the first posted receive: done %d, read %d", first, slot[0]);
		for (int i = 1; i <= n; i++) {
			OK(MPI_Cancel(&rq[i]));
			OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
		}
	} else {
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < IDLE; i++)
			OK(MPI_Send(&i, 1, MPI_INT, peer, 11, MPI_COMM_WORLD));
		OK(MPI_Recv(in, XLEN, MPI_CHAR, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < XLEN; i++)
			got += in[i] == (char)(peer * 100 + i);
		CHECK(got == XLEN, "rank 0's exchange, whose receive failed, arrived with %d of %d bytes right", got,
		      XLEN);
		static char fl[FLEN];
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < FLOOD; i++) {
			flood_mark(fl, i, FLEN);
			OK(MPI_Send(fl, FLEN, MPI_CHAR, peer, 9, MPI_COMM_WORLD));
		}
		OK(MPI_Send(&v, 1, MPI_INT, peer, 10, MPI_COMM_WORLD));
		/* once rank 0 cancelled its receives: its exchange's part,
		 * then messages that find receives of their own, not the
		 * cancelled ones */
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Send(out, XLEN, MPI_CHAR, peer, 6, MPI_COMM_WORLD));
		for (int i = 0; i < AFTER; i++)
			OK(MPI_Send(&i, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
		/* once rank 0 is at the limit again (tag 13): a message into its
		 * first receive, while it sleeps */
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		v = 55;
		OK(MPI_Send(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
	}
	return t_finish("mpi_err melimit");
}

/* Run with PTL_MPI_MAX_MES=256 and 1 MiB of unexpected memory, 2 ranks
 * ("ownlimit"). Rank 0 sends rank 1, which does not receive yet, messages
 * above the eager limit (each exposes its buffer in a match entry of the
 * library's own until rank 1 has the data) until one is refused:
 * MPI_ERR_NO_MEM saying why, with the library's own room (65,536 less its
 * unexpected buffers) nearly all taken. Then, rank 0 away for 300 ms,
 * rank 1 sends it more eager messages than its unexpected memory holds
 * (MPI_Isend of 3000 B: from its buffer, acknowledged): taken whole and
 * in order, those that overflowed pulled into landing entries of their
 * own (when pulls were refused as one of the library's own, a pull
 * failed its receive, and rank 1 waited in MPI_Waitall for ever), and
 * each buffer emptied going back into the match list (where the sends
 * had taken the entries the first one aborted the job). Then rank 1
 * receives every message sent, whole, rank 0's sends complete, and as
 * many sends go again before the refusal: the entries all came back. */
enum { OWN_TRIES = 70000, OWN_LEN = 9000, OWN_FLOOD = 2000, OWN_FLEN = 3000, OWN_GLEN = 16384 };
/* At the room's end again: a collective whose receive must post an entry
 * (16 KiB blocks) fails on rank 0 saying why, blocking and nonblocking
 * (an internal error before); rank 1's, its part never coming, passes
 * its deadline (PTL_COLL_TIMEOUT), or completes where rank 0's send went
 * before its receive was refused */
static void colls_at_the_end(void)
{
	static char gin[OWN_GLEN], gout[2 * OWN_GLEN];
	const char *why = "cannot post a transfer of the schedule (no memory, or the library's own match entries all in use)";
	MPI_Request q;
	int rc = MPI_Allgather(gin, OWN_GLEN, MPI_CHAR, gout, OWN_GLEN, MPI_CHAR, MPI_COMM_WORLD), irc, cls = -1;
	if ((irc = MPI_Iallgather(gin, OWN_GLEN, MPI_CHAR, gout, OWN_GLEN, MPI_CHAR, MPI_COMM_WORLD, &q)) == MPI_SUCCESS)
		irc = MPI_Wait(&q, MPI_STATUS_IGNORE);
	if (t_rank == 0) {
		t_fails_with(rc, MPI_ERR_NO_MEM, why, "MPI_Allgather at the room's end");
		t_fails_with(irc, MPI_ERR_NO_MEM, why, "MPI_Iallgather at the room's end");
		return;
	}
	for (int k = 0; k < 2; k++) {
		MPI_Error_class(k ? irc : rc, &cls);
		CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TIMEOUT, "rank 1's %s: class %d", k ? "MPI_Iallgather" : "MPI_Allgather", cls);
	}
}
/* rank 0: sends of buf into rq until one is refused, the refusal checked */
static int send_until_refused(const char *buf, MPI_Request *rq)
{
	int n = 0, rc = MPI_SUCCESS;
	while (n < OWN_TRIES && (rc = MPI_Isend(buf, OWN_LEN, MPI_CHAR, 1, 20, MPI_COMM_WORLD, &rq[n])) == MPI_SUCCESS)
		n++;
	t_fails_with(rc, MPI_ERR_NO_MEM, "the library's own match entries all in use", "MPI_Isend past the room");
	if (n >= OWN_TRIES)
		MPI_Abort(MPI_COMM_WORLD, 3); /* rank 1 would wait for messages never sent */
	OK(MPI_Send(&n, 1, MPI_INT, 1, 21, MPI_COMM_WORLD));
	return n;
}
/* rank 1: the n messages of a round, whole */
static void take_round(const char *buf, int n)
{
	static char in[OWN_LEN];
	int whole = 0;
	for (int i = 0; i < n; i++) {
		in[0] = in[OWN_LEN - 1] = 0;
		OK(MPI_Recv(in, OWN_LEN, MPI_CHAR, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		whole += in[0] == buf[0] && in[OWN_LEN - 1] == buf[OWN_LEN - 1];
	}
	CHECK(whole == n, "%d of %d messages above the eager limit came whole", whole, n);
}
static int own_entries_limit(void)
{
	static char buf[OWN_LEN], fl[OWN_FLEN];
	static MPI_Request rq[OWN_TRIES];
	int peer = 1 - t_rank, n = 0, again = 0, whole = 0;
	for (int i = 0; i < OWN_LEN; i++)
		buf[i] = (char)(i * 7 + 1);
	if (t_rank == 0) {
		n = send_until_refused(buf, rq);
		CHECK(n > 60000 && n < 65536, "%d sends above the eager limit in flight before the refusal", n);
		printf("rank 0: %d sends in flight, the next refused\n", n);
		/* away once rank 1 has the count (its flood starts then) */
		OK(MPI_Recv(&whole, 1, MPI_INT, peer, 25, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		whole = 0;
		usleep(300000);
		for (int i = 0; i < OWN_FLOOD; i++) {
			OK(MPI_Recv(fl, OWN_FLEN, MPI_CHAR, peer, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			whole += flood_whole(fl, i, OWN_FLEN);
		}
		CHECK(whole == OWN_FLOOD, "%d of %d flood messages came whole and in order", whole, OWN_FLOOD);
		OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
		again = send_until_refused(buf, rq);
		CHECK(again >= n - 8 && again <= n + 8, "%d sends in flight the second time, %d the first", again, n);
		colls_at_the_end();
		OK(MPI_Waitall(again, rq, MPI_STATUSES_IGNORE));
	} else {
		static char fls[OWN_FLOOD][OWN_FLEN];
		static MPI_Request fq[OWN_FLOOD];
		OK(MPI_Recv(&n, 1, MPI_INT, peer, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Send(&n, 1, MPI_INT, peer, 25, MPI_COMM_WORLD));
		for (int i = 0; i < OWN_FLOOD; i++) {
			flood_mark(fls[i], i, OWN_FLEN);
			OK(MPI_Isend(fls[i], OWN_FLEN, MPI_CHAR, peer, 22, MPI_COMM_WORLD, &fq[i]));
		}
		OK(MPI_Waitall(OWN_FLOOD, fq, MPI_STATUSES_IGNORE));
		take_round(buf, n);
		OK(MPI_Recv(&again, 1, MPI_INT, peer, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		colls_at_the_end();
		take_round(buf, again);
	}
	return t_finish("mpi_err ownlimit");
}

/* Run with PTL_MPI_MAX_MES=256, the least unexpected memory and credits
 * for PULL_N messages, 2 ranks ("pullroom"). Rank 0 fills the library's
 * own room with sends above the eager limit (as ownlimit) and then posts
 * receives until one is refused: every match entry but the pulls' taken.
 * Rank 1 then sends it PULL_N messages of 3000 B, most of them
 * overflowing, and, once rank 0 has them all, is away for 300 ms while
 * rank 0 receives them: more pulls at once than they have landing
 * entries (mpi_pt2pt.c's MPI_PULL_LANDINGS), the rest waiting for one.
 * Every message comes whole and in order, then the posted receives take
 * theirs, and rank 1 the sends. Where pulls landed in room the others
 * had taken they failed (MPI_ERR_NO_MEM) and rank 1 waited for ever. */
enum { PULL_N = 3000, PULL_LEN = 3000 };
static int pulls_past_landings(void)
{
	static MPI_Request rq[ME_LIMIT_TRIES], fq[PULL_N], sq[OWN_TRIES];
	static int slot[ME_LIMIT_TRIES];
	static char fl[PULL_N][PULL_LEN], buf[OWN_LEN];
	int peer = 1 - t_rank, n = 0, whole = 0, right = 0, sent = 0;
	for (int i = 0; i < OWN_LEN; i++)
		buf[i] = (char)(i * 5 + 2);
	if (t_rank == 0) {
		sent = send_until_refused(buf, sq);
		n = post_until_refused(rq, slot, 0);
		CHECK(n == 256, "%d receives posted with PTL_MPI_MAX_MES=256", n);
		OK(MPI_Send(&n, 1, MPI_INT, peer, 31, MPI_COMM_WORLD));
		/* all of them in (a probe: a receive not matched at once needs
		 * an entry, and none is left) */
		OK(MPI_Probe(peer, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		int posted = 0, rc = MPI_SUCCESS;
		while (posted < PULL_N &&
		       (rc = MPI_Irecv(fl[posted], PULL_LEN, MPI_CHAR, peer, 22, MPI_COMM_WORLD, &fq[posted])) == MPI_SUCCESS)
			posted++;
		CHECK(posted == PULL_N, "receive %d of the pulled messages failed: class %d", posted, rc);
		if (posted < PULL_N)
			MPI_Abort(MPI_COMM_WORLD, 3); /* rank 1 would wait for the pulls */
		OK(MPI_Waitall(PULL_N, fq, MPI_STATUSES_IGNORE));
		OK(MPI_Recv(&whole, 1, MPI_INT, peer, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		whole = 0;
		for (int i = 0; i < PULL_N; i++)
			whole += flood_whole(fl[i], i, PULL_LEN);
		CHECK(whole == PULL_N, "%d of %d messages pulled came whole and in order", whole, PULL_N);
		OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
		for (int i = 0; i < n; i++)
			right += slot[i] == i;
		CHECK(right == n, "%d of %d posted receives took theirs, in order", right, n);
		OK(MPI_Waitall(sent, sq, MPI_STATUSES_IGNORE));
		printf("rank 0: %d sends in flight, %d receives posted, %d messages pulled and received whole\n", sent,
		       n, whole);
	} else {
		OK(MPI_Recv(&sent, 1, MPI_INT, peer, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Recv(&n, 1, MPI_INT, peer, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		flood_post(fl[0], PULL_N, PULL_LEN, peer, 22, fq);
		OK(MPI_Send(&n, 1, MPI_INT, peer, 23, MPI_COMM_WORLD));
		usleep(300000);
		OK(MPI_Waitall(PULL_N, fq, MPI_STATUSES_IGNORE));
		for (int i = 0; i < n; i++)
			OK(MPI_Send(&i, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
		take_round(buf, sent);
	}
	return t_finish("mpi_err pullroom");
}

/* Run with the least unexpected memory, every message acknowledged and
 * PTL_COLL_TIMEOUT=0.5, 2 ranks ("lateland"). Rank 0 fills rank 1's
 * unexpected memory, starts an MPI_Iallreduce of 4 KiB (its part goes,
 * and overflows: its data stays until rank 1 pulls it) and is away for 3
 * s. Rank 1's MPI_Iallreduce matches that part and asks for it, and its
 * wait passes the deadline: MPI_ERR_TIMEOUT; rank 1 then writes its
 * result buffer. Rank 0, back, answers the pull (before those of the
 * flood, which rank 1 receives next): rank 1's buffer still holds what
 * it wrote (where failed collectives only cancelled their receives, the
 * pulled part landed in it, or in the collective's scratch), the flood
 * all comes, and rank 0's sends all finish (a pull
 * left unanswered would hold MPI_Finalize: mpi_common.sh's run).
 * "lateq": rank 1 first posts a receive for each message of the flood,
 * whose pulls take every landing (MPI_PULL_LANDINGS, 1024, fewer than the
 * flood's): the collective's pull waits in the queue for one when the
 * deadline passes, and starts, of no bytes, once rank 0 answers. */
enum { LATE_LEN = 4096, LATE_FLOOD = 3000, LATE_FLEN = 2048 };
static int late_landing(int queued)
{
	static char fl[LATE_FLOOD][LATE_FLEN];
	static MPI_Request fq[LATE_FLOOD];
	static char in[LATE_LEN], out[LATE_LEN];
	int peer = 1 - t_rank, v = 0;
	if (t_rank == 0) {
		MPI_Request q;
		flood_post(fl[0], LATE_FLOOD, LATE_FLEN, peer, 50, fq);
		memset(in, 0x11, sizeof in);
		OK(MPI_Iallreduce(in, out, LATE_LEN, MPI_CHAR, MPI_BXOR, MPI_COMM_WORLD, &q));
		OK(MPI_Send(&v, 1, MPI_INT, peer, 51, MPI_COMM_WORLD)); /* all of it sent (the part at the start) */
		sleep(3);
		int rc = MPI_Wait(&q, MPI_STATUS_IGNORE), cls = -1; /* answers the pull */
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TIMEOUT, "rank 0's MPI_Iallreduce: class %d", cls);
		OK(MPI_Send(&v, 1, MPI_INT, peer, 52, MPI_COMM_WORLD));
		OK(MPI_Waitall(LATE_FLOOD, fq, MPI_STATUSES_IGNORE));
	} else {
		OK(MPI_Probe(peer, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; queued && i < LATE_FLOOD; i++)
			OK(MPI_Irecv(fl[i], LATE_FLEN, MPI_CHAR, peer, 50, MPI_COMM_WORLD, &fq[i]));
		MPI_Request q;
		memset(in, 0x22, sizeof in);
		OK(MPI_Iallreduce(in, out, LATE_LEN, MPI_CHAR, MPI_BXOR, MPI_COMM_WORLD, &q));
		t_fails_with(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_ERR_TIMEOUT, "PTL_COLL_TIMEOUT",
			     "MPI_Iallreduce whose part is being pulled");
		memset(out, 0x5a, sizeof out);
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		int whole = flood_take(fl[0], LATE_FLOOD, LATE_FLEN, peer, 50, queued ? fq : NULL);
		CHECK(whole == LATE_FLOOD, "%d of %d flood messages in order", whole, LATE_FLOOD);
		size_t kept = count_byte(out, sizeof out, 0x5a);
		CHECK(kept == sizeof out, "%zu of %zu bytes of the failed call's result buffer as written after it", kept,
		      sizeof out);
	}
	return t_finish(queued ? "mpi_err lateq" : "mpi_err lateland");
}

/* Run as lateland ("latesend"). Rank 1's collective to rank 0 passes
 * its deadline while rank 0 is away: its part waits for rank 0, which
 * comes once rank 1 has told it (tag 62) that the call failed and its
 * buffer is gone or rewritten, and takes the part. First an MPI_Gather
 * part above the eager sizes (a rendezvous: rank 0 gets it from the
 * buffer rank 1 exposed), in memory rank 1 then unmaps; then, rank 0's
 * unexpected memory filled by a flood from rank 1, an eager part (from
 * the caller's buffer: 16 KiB) that overflows and waits for rank 0's
 * pull, its buffer rewritten; then an MPI_Ibcast from rank 1 of a
 * vector type, whose packed image (the library's, of the request) goes
 * back to the library at the failure and is taken and rewritten by the
 * next nonblocking call. Rank 0 gets each part as it was when rank 1
 * sent it (where a failed collective dropped its sends as they were,
 * the first was read from unmapped memory, the second pulled from the
 * rewritten buffer, the third's image was left to the send for good).
 * Last, a rendezvous part with no memory left for the library's copy
 * (rank 1's address space held short of it): the part is taken back,
 * and rank 0's MPI_Gather, which asks for it later, fails at once with
 * MPI_ERR_OTHER, the transfer with rank 1 failed (not "rank 1 died", nor
 * a read of the unmapped buffer).
 * "latebulk", run with PTL_PROGRESS_THREAD=0: an MPI_Gather part of 32
 * KiB, eager from the caller's buffer and too long to go inline (a bulk
 * move, which rank 0 reads from rank 1's buffer as it takes the part),
 * put while rank 0 is away for 3 s reading nothing: rank 1's failed call
 * waits for the move to end before it returns (and rewrites the buffer),
 * and past its deadline more (0.5 s) says whom it waits for; where it
 * did not wait, rank 0 read the rewritten bytes. */
enum { LS_RNDV = 256 * 1024, LS_EAGER = 16 * 1024, LS_FLOOD = 1500, LS_FLEN = 2048 };
enum { LS_GATHER, LS_GATHER_FLOOD, LS_IBCAST, LS_NOMEM, LS_BULK };
enum { LS_BIG = 64 << 20, LS_BULKLEN = 32 * 1024 };
static void late_send_part(size_t len, int how)
{
	static char fl[LS_FLOOD][LS_FLEN];
	static MPI_Request fq[LS_FLOOD];
	int peer = 1 - t_rank, v = 0, flood = how == LS_GATHER_FLOOD;
	/* rank 1's buffer, once its call failed: unmapped, or rewritten */
	int unmap = how == LS_GATHER || how == LS_NOMEM;
	size_t span = how == LS_IBCAST ? 2 * len : len;
	char *mine = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *all = how == LS_NOMEM ? mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
				    : malloc(2 * len);
	CHECK(mine != MAP_FAILED && all && all != MAP_FAILED, "memory for %zu bytes", len);
	if (t_rank == 1 || how != LS_NOMEM)
		memset(mine, 0x22 + t_rank, span);
	if (t_rank == 1) {
		if (flood)
			flood_post(fl[0], LS_FLOOD, LS_FLEN, peer, 60, fq);
		if (how == LS_IBCAST) {
			/* len bytes as 32-byte runs 64 bytes apart */
			MPI_Datatype vec;
			MPI_Request q;
			OK(MPI_Type_vector((int)len / 32, 32, 64, MPI_CHAR, &vec));
			OK(MPI_Type_commit(&vec));
			OK(MPI_Ibcast(mine, 1, vec, 1, MPI_COMM_WORLD, &q));
			t_fails_with(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_ERR_TIMEOUT, "PTL_COLL_TIMEOUT",
				     "MPI_Ibcast whose part waits for rank 0");
			memset(mine, 0x5a, span);
			OK(MPI_Ibcast(mine, 1, vec, 0, MPI_COMM_SELF, &q));
			OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
			OK(MPI_Type_free(&vec));
		} else {
			/* LS_NOMEM: what is mapped now and 32 MiB, short of the
			 * copy */
			unsigned long pages = 0;
			struct rlimit old, lim;
			FILE *f = how == LS_NOMEM ? fopen("/proc/self/statm", "r") : NULL;
			if (f) {
				CHECK(fscanf(f, "%lu", &pages) == 1, "reading /proc/self/statm");
				fclose(f);
				getrlimit(RLIMIT_AS, &old);
				lim = old;
				lim.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)32 << 20);
				CHECK(pages && setrlimit(RLIMIT_AS, &lim) == 0, "address space limit");
			}
			t_fails_with(MPI_Gather(mine, (int)len, MPI_CHAR, NULL, 0, MPI_CHAR, 0, MPI_COMM_WORLD),
				     MPI_ERR_TIMEOUT, "PTL_COLL_TIMEOUT", "MPI_Gather whose part waits for the root");
			if (f)
				setrlimit(RLIMIT_AS, &old);
			if (unmap)
				munmap(mine, len);
			else
				memset(mine, 0x5a, len);
		}
		OK(MPI_Send(&v, 1, MPI_INT, peer, 62, MPI_COMM_WORLD));
		if (flood)
			OK(MPI_Waitall(LS_FLOOD, fq, MPI_STATUSES_IGNORE));
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	} else {
		if (how == LS_BULK)
			sleep(3); /* away, reading nothing (PTL_PROGRESS_THREAD=0) */
		else
			OK(MPI_Recv(&v, 1, MPI_INT, peer, 62, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		const char *got = all + len;
		if (how == LS_IBCAST) {
			MPI_Request q;
			OK(MPI_Ibcast(all, (int)len, MPI_CHAR, 1, MPI_COMM_WORLD, &q));
			OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
			got = all;
		} else if (how == LS_NOMEM) {
			t_fails_with(MPI_Gather(MPI_IN_PLACE, (int)len, MPI_CHAR, all, (int)len, MPI_CHAR, 0,
						MPI_COMM_WORLD),
				     MPI_ERR_OTHER, "a transfer with rank 1 failed",
				     "MPI_Gather whose part rank 1 took back");
		} else {
			OK(MPI_Gather(mine, (int)len, MPI_CHAR, all, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD));
		}
		size_t same = how == LS_NOMEM ? len : count_byte(got, len, 0x23);
		CHECK(same == len, "%zu-byte part (%s): %zu bytes as rank 1 sent them", len,
		      how == LS_IBCAST ? "MPI_Ibcast" : flood ? "MPI_Gather, eager" : "MPI_Gather", same);
		int whole = flood ? flood_take(fl[0], LS_FLOOD, LS_FLEN, peer, 60, NULL) : LS_FLOOD;
		CHECK(whole == LS_FLOOD, "%d of %d flood messages in order", whole, LS_FLOOD);
		if (how == LS_BULK)
			OK(MPI_Recv(&v, 1, MPI_INT, peer, 62, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Send(&v, 1, MPI_INT, peer, 61, MPI_COMM_WORLD));
	}
	if (t_rank == 0 || !unmap)
		munmap(mine, span);
	if (how == LS_NOMEM)
		munmap(all, 2 * len);
	else
		free(all);
}
static int late_send(void)
{
	late_send_part(LS_RNDV, LS_GATHER);
	late_send_part(LS_EAGER, LS_GATHER_FLOOD);
	late_send_part(LS_RNDV, LS_IBCAST);
	late_send_part(LS_BIG, LS_NOMEM);
	return t_finish("mpi_err latesend");
}
static int late_bulk(void)
{
	late_send_part(LS_BULKLEN, LS_BULK);
	return t_finish("mpi_err latebulk");
}

/* Run with PTL_PROGRESS_THREAD=0, at most 4 sends queued in libptl
 * (PTL_TEST_TX_REQ_MAX=4), PTL_COLL_TIMEOUT=0.5, 2 ranks ("lateget").
 * Rank 0 starts an MPI_Ibcast to rank 1 (above the eager sizes: a
 * rendezvous) and is away for 3 s, reading nothing. Rank 1 floods it
 * until its sends are refused, then its MPI_Bcast matches rank 0's part
 * and asks for it: the get, refused too, waits in rank 1's deferred
 * list, and the deadline passes; rank 1 then writes its buffer. Once
 * rank 0 is back the get goes, and lands in the library's memory, not in
 * the buffer (where a failed collective kept a deferred get's buffer,
 * half of it read what rank 0 sent). Rank 0's wait has no deadline
 * (main): its call ends once its part was taken, before tag 52. */
enum { LG_LEN = 256 * 1024, LG_FLOOD = 1000, LG_FLEN = 8192 };
static int late_get(void)
{
	static char fl[LG_FLOOD][LG_FLEN], in[LG_LEN], out[LG_LEN];
	static MPI_Request fq[LG_FLOOD];
	int peer = 1 - t_rank, v = 0;
	memset(in, 0x11 + t_rank, sizeof in);
	if (t_rank == 0) {
		MPI_Request q;
		OK(MPI_Ibcast(in, LG_LEN, MPI_CHAR, 0, MPI_COMM_WORLD, &q));
		OK(MPI_Send(&v, 1, MPI_INT, peer, 51, MPI_COMM_WORLD));
		sleep(3);
		OK(MPI_Wait(&q, MPI_STATUS_IGNORE)); /* its part taken: the get went */
		OK(MPI_Send(&v, 1, MPI_INT, peer, 52, MPI_COMM_WORLD));
		int whole = flood_take(fl[0], LG_FLOOD, LG_FLEN, peer, 50, NULL);
		CHECK(whole == LG_FLOOD, "%d of %d flood messages in order", whole, LG_FLOOD);
	} else {
		OK(MPI_Probe(peer, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		flood_post(fl[0], LG_FLOOD, LG_FLEN, peer, 50, fq);
		t_fails_with(MPI_Bcast(out, LG_LEN, MPI_CHAR, 0, MPI_COMM_WORLD), MPI_ERR_TIMEOUT,
			     "PTL_COLL_TIMEOUT", "MPI_Bcast whose get waits for room");
		memset(out, 0x5a, sizeof out);
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Recv(&v, 1, MPI_INT, peer, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Waitall(LG_FLOOD, fq, MPI_STATUSES_IGNORE));
		size_t kept = count_byte(out, sizeof out, 0x5a);
		CHECK(kept == sizeof out, "%zu of %zu bytes of the failed call's result buffer as written after it", kept,
		      sizeof out);
	}
	return t_finish("mpi_err lateget");
}

/* "niearly": the network interface opened before MPI_Init, with
 * PTL_TEST_NI_MES match entries (and list length), the rest as the MPI
 * layer asks; MPI_Init finds it (PTL_IFACE_DUP) */
static void ni_early(void)
{
	int nif = 0;
	const char *m = getenv("PTL_TEST_NI_MES"), *d = getenv("PTL_TEST_NI_MDS");
	int mes = m ? atoi(m) : 0, mds = d ? atoi(d) : 2 * mes;
	ptl_ni_limits_t want = { .max_mes = mes, .max_mds = mds, .max_eqs = 4, .max_pt_index = 15,
				 .max_me_list = mes },
			got;
	ptl_handle_ni_t ni;
	ptl_handle_me_t me;
	/* and one entry of the program's own, which the MPI layer counts */
	ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY };
	if (mes < 1 || PtlInit(&nif) != PTL_OK || PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, &want, &got, &ni) != PTL_OK ||
	    got.max_mes != mes || got.max_mds != mds || PtlMEAttach(ni, 3, any, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me) != PTL_OK) {
		fprintf(stderr, "mpi_err niearly: cannot open the network interface with PTL_TEST_NI_MES=%s\n", m ? m : "");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "niearly"))
		ni_early();
	/* lateget: rank 0's collectives wait without a deadline (the run's
	 * PTL_COLL_TIMEOUT is rank 1's) */
	const char *wr = getenv("PTL_RT_RANK");
	if (!strcmp(mode, "lateget") && wr && !strcmp(wr, "0"))
		setenv("PTL_COLL_TIMEOUT", "0", 1);
	t_init(&argc, &argv);
	mode = argc > 1 ? argv[1] : "";
	int v = 0;
	if (!strcmp(mode, "fatal")) {
		MPI_Send(&v, 1, MPI_INT, t_size + 5, 0, MPI_COMM_WORLD);
		fprintf(stderr, "still running after a fatal error\n");
		return 0;
	}
	if (!strcmp(mode, "abort")) {
		if (t_rank == 1 % t_size)
			MPI_Abort(MPI_COMM_WORLD, 7);
		for (;;)
			MPI_Barrier(MPI_COMM_WORLD); /* the others wait in a collective */
	}
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	if (!strcmp(mode, "melimit") || !strcmp(mode, "niearly"))
		return receives_past_limit();
	if (!strcmp(mode, "ownlimit"))
		return own_entries_limit();
	if (!strcmp(mode, "pullroom"))
		return pulls_past_landings();
	if (!strcmp(mode, "lateget"))
		return late_get();
	if (!strcmp(mode, "lateland") || !strcmp(mode, "lateq"))
		return late_landing(!strcmp(mode, "lateq"));
	if (!strcmp(mode, "latesend"))
		return late_send();
	if (!strcmp(mode, "latebulk"))
		return late_bulk();
	if (!strcmp(mode, "stall")) {
		int in = t_rank, out = 0;
		int rc = MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		char s[MPI_MAX_ERROR_STRING];
		int len = 0, cls = -1;
		MPI_Error_string(rc, s, &len);
		MPI_Error_class(rc, &cls);
		printf("rank %d: %s\n", t_rank, rc ? s : "no error");
		const char *stall = getenv("PTL_TEST_STALL_RANK");
		int sr = stall ? atoi(stall) : -1;
		CHECK(cls == MPI_ERR_TIMEOUT, "class %d", cls);
		CHECK(strstr(s, "MPI_Allreduce") && strstr(s, "MPI_COMM_WORLD") && strstr(s, "step"), "message '%s'", s);
		if (t_rank != sr) {
			/* someone waits for the stalled rank: some rank names it */
		}
		int names = 0;
		char want[32];
		snprintf(want, sizeof want, "rank(s) %d", sr);
		names = strstr(s, want) != NULL;
		/* report with exit status: no collectives after a timeout */
		fflush(stdout);
		MPI_Finalize();
		return t_fails ? 1 : (t_rank == (sr + 1) % t_size && !names) ? 1 : 0;
	}
	/* Before any reduction passed its checks (they keep the last good op
	 * and type): the null ones, each refused, no crash. */
	int w2[2] = { 0, 0 }, *cnts = calloc((size_t)t_size, sizeof *cnts);
	expect(MPI_Allreduce(&v, w2, 1, MPI_DATATYPE_NULL, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_TYPE,
	       "first allreduce, null type and op", "datatype");
	expect(MPI_Reduce_scatter(&v, w2, cnts, MPI_DATATYPE_NULL, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_TYPE,
	       "first reduce_scatter, null type and op", "datatype");
	expect(MPI_Allreduce(&v, w2, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP, "null op", "operation");
	/* MPI_REPLACE and MPI_NO_OP: the one-sided accumulates' only */
	expect(MPI_Allreduce(&v, w2, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP, "allreduce MPI_REPLACE",
	       "one-sided");
	expect(MPI_Reduce(&v, w2, 1, MPI_INT, MPI_NO_OP, 0, MPI_COMM_WORLD), MPI_ERR_OP, "reduce MPI_NO_OP", "one-sided");
	expect(MPI_Scan(&v, w2, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP, "scan MPI_REPLACE", "one-sided");
	expect(MPI_Exscan(&v, w2, 1, MPI_INT, MPI_NO_OP, MPI_COMM_WORLD), MPI_ERR_OP, "exscan MPI_NO_OP", "one-sided");
	expect(MPI_Reduce_scatter_block(&v, w2, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP,
	       "reduce_scatter_block MPI_REPLACE", "one-sided");
	/* (and once a good pair is cached, the next call still checks its own) */
	OK(MPI_Allreduce(&v, w2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	expect(MPI_Allreduce(&v, w2, 1, MPI_INT, MPI_NO_OP, MPI_COMM_WORLD), MPI_ERR_OP, "allreduce MPI_NO_OP after SUM",
	       "one-sided");
	MPI_Datatype unc;
	OK(MPI_Type_contiguous(2, MPI_INT, &unc));
	for (int j = 0; j < t_size; j++)
		cnts[j] = 1;
	expect(MPI_Reduce_scatter(w2, w2 + 1, cnts, unc, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE,
	       "reduce_scatter uncommitted type", "uncommitted");
	/* A NULL buffer (MPI_BOTTOM) whose data would start in the null
	 * page: MPI_ERR_BUFFER before anything goes (a receive aborted the
	 * job, sends said MPI_ERR_PROC_FAILED or MPI_ERR_NO_MEM); none leaves
	 * a message behind. Zero counts and MPI_BOTTOM with a type of
	 * absolute addresses are fine. */
	{
		int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size, flag = 1;
		MPI_Request nr = MPI_REQUEST_NULL;
		expect(MPI_Send(NULL, 1, MPI_INT, to, 77, MPI_COMM_WORLD), MPI_ERR_BUFFER, "send NULL, eager", "NULL");
		expect(MPI_Send(NULL, 100000, MPI_BYTE, to, 77, MPI_COMM_WORLD), MPI_ERR_BUFFER, "send NULL, rendezvous",
		       "NULL");
		expect(MPI_Isend(NULL, 1, MPI_INT, to, 77, MPI_COMM_WORLD, &nr), MPI_ERR_BUFFER, "isend NULL", "NULL");
		expect(MPI_Ssend(NULL, 2, MPI_INT, to, 77, MPI_COMM_WORLD), MPI_ERR_BUFFER, "ssend NULL", "NULL");
		expect(MPI_Recv(NULL, 1, MPI_INT, from, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_BUFFER,
		       "recv NULL", "NULL");
		expect(MPI_Irecv(NULL, 1, MPI_INT, from, 77, MPI_COMM_WORLD, &nr), MPI_ERR_BUFFER, "irecv NULL", "NULL");
		expect(MPI_Sendrecv(&v, 1, MPI_INT, to, 77, NULL, 1, MPI_INT, from, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
		       MPI_ERR_BUFFER, "sendrecv NULL recvbuf", "NULL");
		CHECK(nr == MPI_REQUEST_NULL, "a refused call set a request");
		OK(MPI_Sendrecv(NULL, 0, MPI_INT, to, 78, NULL, 0, MPI_INT, from, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		int src = 4200 + t_rank, dst = -1, one = 1;
		MPI_Aint at;
		MPI_Datatype abs_src, abs_dst, in = MPI_INT;
		OK(MPI_Get_address(&src, &at));
		OK(MPI_Type_create_struct(1, &one, &at, &in, &abs_src));
		OK(MPI_Get_address(&dst, &at));
		OK(MPI_Type_create_struct(1, &one, &at, &in, &abs_dst));
		OK(MPI_Type_commit(&abs_src));
		OK(MPI_Type_commit(&abs_dst));
		OK(MPI_Sendrecv(MPI_BOTTOM, 1, abs_src, to, 79, MPI_BOTTOM, 1, abs_dst, from, 79, MPI_COMM_WORLD,
				MPI_STATUS_IGNORE));
		CHECK(dst == 4200 + from, "MPI_BOTTOM with absolute addresses: got %d want %d", dst, 4200 + from);
		MPI_Type_free(&abs_src);
		MPI_Type_free(&abs_dst);
		OK(MPI_Barrier(MPI_COMM_WORLD));
		OK(MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
		CHECK(!flag, "a refused send with a NULL buffer went out");
	}
	/* Allgather's and Alltoall's send side: type, count, and as long as a received block */
	int *ag = calloc((size_t)t_size * 2, sizeof *ag);
	expect(MPI_Allgather(&v, 1, 12345, ag, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE, "allgather bad sendtype",
	       "datatype");
	expect(MPI_Allgather(&v, 1, unc, ag, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE, "allgather uncommitted sendtype",
	       "uncommitted");
	expect(MPI_Allgather(&v, -1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT, "allgather sendcount -1",
	       "count");
	expect(MPI_Alltoall(ag, 1, 12345, ag + t_size, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE, "alltoall bad sendtype",
	       "datatype");
	expect(MPI_Alltoall(ag, -1, MPI_INT, ag + t_size, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
	       "alltoall sendcount -1", "count");
	expect(MPI_Alltoall(ag, 2, MPI_INT, ag + t_size, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE,
	       "alltoall 8 bytes sent a block, 4 received", "a block");
	/* the nonblocking forms check the same, before any request (a short
	 * sendcount once let Ialltoall read past the sender's blocks) */
	MPI_Request nrq = MPI_REQUEST_NULL;
	expect(MPI_Ialltoall(ag, 1, 12345, ag + t_size, 1, MPI_INT, MPI_COMM_WORLD, &nrq), MPI_ERR_TYPE,
	       "ialltoall bad sendtype", "datatype");
	expect(MPI_Ialltoall(ag, 2, MPI_INT, ag + t_size, 1, MPI_INT, MPI_COMM_WORLD, &nrq), MPI_ERR_TRUNCATE,
	       "ialltoall 8 bytes sent a block, 4 received", "a block");
	expect(MPI_Ialltoall(ag, 0, MPI_INT, ag + t_size, 1, MPI_INT, MPI_COMM_WORLD, &nrq), MPI_ERR_TRUNCATE,
	       "ialltoall 0 bytes sent a block, 4 received", "a block");
	expect(MPI_Iallgather(&v, 2, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, &nrq), MPI_ERR_TRUNCATE,
	       "iallgather 8 bytes sent a block, 4 received", "a block");
	/* Iallgatherv's own block against recvcounts, as Allgatherv's (it
	 * once packed sendcount elements into a temporary sized by
	 * recvcounts: past its end from the last rank) */
	int *steps = calloc((size_t)t_size, sizeof *steps);
	for (int j = 0; j < t_size; j++)
		steps[j] = j;
	expect(MPI_Allgatherv(&v, 2, MPI_INT, ag, cnts, steps, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE,
	       "allgatherv 8 bytes sent, recvcounts 4", "recvcounts");
	expect(MPI_Iallgatherv(&v, 2, MPI_INT, ag, cnts, steps, MPI_INT, MPI_COMM_WORLD, &nrq), MPI_ERR_TRUNCATE,
	       "iallgatherv 8 bytes sent, recvcounts 4", "recvcounts");
	expect(MPI_Iallgatherv(&v, 0, MPI_INT, ag, cnts, steps, MPI_INT, MPI_COMM_WORLD, &nrq), MPI_ERR_TRUNCATE,
	       "iallgatherv 0 bytes sent, recvcounts 4", "recvcounts");
	CHECK(nrq == MPI_REQUEST_NULL, "a refused nonblocking collective made a request");
	OK(MPI_Type_free(&unc));
	/* one buffer as both sendbuf and recvbuf: MPI_IN_PLACE is how */
	expect(MPI_Allreduce(w2, w2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER, "allreduce aliased",
	       "MPI_IN_PLACE");
	expect(MPI_Allgather(ag, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER, "allgather aliased",
	       "MPI_IN_PLACE");
	expect(MPI_Alltoall(ag, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER, "alltoall aliased",
	       "MPI_IN_PLACE");
	/* (Ialltoall read a contiguous sendbuf where it is: aliased, what
	 * arrived overwrote blocks not yet sent, and it said nothing) */
	expect(MPI_Ialltoall(ag, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, &nrq), MPI_ERR_BUFFER, "ialltoall aliased",
	       "MPI_IN_PLACE");
	expect(MPI_Iallgather(ag, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, &nrq), MPI_ERR_BUFFER,
	       "iallgather aliased", "MPI_IN_PLACE");
	/* the v forms too (Alltoallv and Ialltoallv read a packed sendbuf
	 * where it is and receive into a packed recvbuf, so one buffer as
	 * both would be overwritten while it is sent) */
	expect(MPI_Alltoallv(ag, cnts, steps, MPI_INT, ag, cnts, steps, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER,
	       "alltoallv aliased", "MPI_IN_PLACE");
	expect(MPI_Ialltoallv(ag, cnts, steps, MPI_INT, ag, cnts, steps, MPI_INT, MPI_COMM_WORLD, &nrq),
	       MPI_ERR_BUFFER, "ialltoallv aliased", "MPI_IN_PLACE");
	expect(MPI_Allgatherv(ag, 1, MPI_INT, ag, cnts, steps, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER,
	       "allgatherv aliased", "MPI_IN_PLACE");
	expect(MPI_Iallgatherv(ag, 1, MPI_INT, ag, cnts, steps, MPI_INT, MPI_COMM_WORLD, &nrq), MPI_ERR_BUFFER,
	       "iallgatherv aliased", "MPI_IN_PLACE");
	CHECK(nrq == MPI_REQUEST_NULL, "a refused nonblocking collective made a request");
	expect(MPI_Scan(w2, w2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER, "scan aliased", "MPI_IN_PLACE");
	expect(MPI_Reduce_scatter(ag, ag, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER,
	       "reduce_scatter aliased", "MPI_IN_PLACE");
	if (t_rank == 0)
		expect(MPI_Gather(ag, 1, MPI_INT, ag, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "gather aliased at root",
		       "MPI_IN_PLACE");
	/* MPI_IN_PLACE only at the root of Reduce, Gather (sendbuf) and
	 * Scatter (recvbuf): refused elsewhere, before anything moves (the
	 * root, not called, waits for nothing) */
	if (t_rank != 0) {
		expect(MPI_Reduce(MPI_IN_PLACE, NULL, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
		       "reduce MPI_IN_PLACE at a non-root", "only the root");
		expect(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, NULL, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
		       "gather MPI_IN_PLACE at a non-root", "only the root");
		expect(MPI_Scatter(NULL, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
		       "scatter MPI_IN_PLACE at a non-root", "only the root");
	}
	free(ag);
	free(cnts);
	free(steps);
	/* the communicator still works after all of that */
	v = 1;
	OK(MPI_Allreduce(&v, w2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(w2[0] == t_size, "allreduce after the refused calls: %d want %d", w2[0], t_size);
	v = 0;
	/* a refused MPI_Sendrecv leaves no receive behind to take a later
	 * message: rank 1's, sent once the call has returned (the barrier: one
	 * that came before would rightly match the receive at once), goes to
	 * the MPI_Recv after it */
	{
		double big;
		int x = -1, y = -1;
		if (t_rank == 0)
			expect(MPI_Sendrecv(&big, 1 << 29, MPI_DOUBLE, 1, 0, &x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD,
					    MPI_STATUS_IGNORE),
			       MPI_ERR_COUNT, "sendrecv of 4 GiB", "MPI_Sendrecv");
		OK(MPI_Barrier(MPI_COMM_WORLD));
		if (t_rank == 0) {
			OK(MPI_Recv(&y, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(y == 42 && x == -1, "after a refused sendrecv: the next receive got %d, its receive %d", y, x);
		} else if (t_rank == 1) {
			y = 42;
			OK(MPI_Send(&y, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
		}
	}
	/* Waitall's MPI_ERR_IN_STATUS goes to the request's communicator's
	 * handler: MPI_ERRORS_RETURN on a dup, while MPI_COMM_WORLD's is
	 * fatal (the old code aborted the job here) */
	MPI_Comm d;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
	OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	if (t_rank <= 1) {
		int two[2] = { 1, 2 }, one = 0;
		MPI_Request rq[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
		MPI_Status sts[2];
		if (t_rank == 0)
			OK(MPI_Irecv(&one, 1, MPI_INT, 1, 9, d, &rq[0]));
		else
			OK(MPI_Isend(two, 2, MPI_INT, 0, 9, d, &rq[1]));
		int rc = MPI_Waitall(2, rq, sts);
		if (t_rank == 0) {
			expect(rc, MPI_ERR_IN_STATUS, "waitall of a truncated receive on a dup", "failed");
			int c2 = -1;
			MPI_Error_class(sts[0].MPI_ERROR, &c2);
			CHECK(c2 == MPI_ERR_TRUNCATE, "waitall's status: class %d", c2);
		} else {
			CHECK(rc == MPI_SUCCESS, "waitall of the send: %d", rc);
		}
	}
	/* MPI_Request_get_status returns a failed request's error as MPI_Test
	 * would, on the same handler, and leaves the request for the call that
	 * completes it (the old code said MPI_SUCCESS) */
	if (t_rank <= 1) {
		int two[2] = { 1, 2 }, one = 0, flag = 0, rc;
		MPI_Request rq;
		if (t_rank == 0) {
			OK(MPI_Irecv(&one, 1, MPI_INT, 1, 10, d, &rq));
			do
				rc = MPI_Request_get_status(rq, &flag, MPI_STATUS_IGNORE);
			while (rc == MPI_SUCCESS && !flag);
			expect(rc, MPI_ERR_TRUNCATE, "request_get_status of a truncated receive", "MPI_Request_get_status");
			CHECK(flag && rq != MPI_REQUEST_NULL, "request_get_status: flag %d, request %s", flag,
			      rq == MPI_REQUEST_NULL ? "freed" : "kept");
			expect(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "wait after request_get_status", "MPI_Wait");
		} else {
			OK(MPI_Send(two, 2, MPI_INT, 0, 10, d));
		}
	}
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_free(&d));
	/* Only the Wait and Test calls take MPI_REQUEST_NULL (MPI-3.1 2.5.1) */
	MPI_Request nul = MPI_REQUEST_NULL;
	expect(MPI_Cancel(&nul), MPI_ERR_REQUEST, "cancel MPI_REQUEST_NULL", "MPI_REQUEST_NULL");
	expect(MPI_Request_free(&nul), MPI_ERR_REQUEST, "request_free MPI_REQUEST_NULL", "MPI_REQUEST_NULL");
	/* An invalid handle in Testsome or Waitsome is refused before a request
	 * is completed: the one done before it (a send to MPI_PROC_NULL) stays
	 * active for a later wait, not completed and freed unreported */
	{
		int (*some[2])(int, MPI_Request[], int *, int[], MPI_Status[]) = { MPI_Testsome, MPI_Waitsome };
		for (int k = 0; k < 2; k++) {
			MPI_Request rq[2] = { MPI_REQUEST_NULL, 4242 };
			int oc = 0, ix[2];
			OK(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[0]));
			expect(some[k](2, rq, &oc, ix, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST, k ? "waitsome" : "testsome",
			       "index 1");
			CHECK(rq[0] != MPI_REQUEST_NULL, "%s completed a request of the call it refused",
			      k ? "waitsome" : "testsome");
			if (rq[0] != MPI_REQUEST_NULL)
				OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
		}
	}
	/* The same of Testany and Waitany, whose first done request came
	 * before the invalid handle: it was completed and freed, the call said
	 * MPI_SUCCESS and index 0. The index stays MPI_UNDEFINED. */
	{
		for (int k = 0; k < 2; k++) {
			const char *fn = k ? "waitany" : "testany";
			MPI_Request rq[3] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL, 4242 };
			int ix = -7, fl = -7;
			OK(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[0]));
			int rc = k ? MPI_Waitany(3, rq, &ix, MPI_STATUS_IGNORE) : MPI_Testany(3, rq, &ix, &fl, MPI_STATUS_IGNORE);
			expect(rc, MPI_ERR_REQUEST, fn, "index 2");
			CHECK(rq[0] != MPI_REQUEST_NULL && ix == MPI_UNDEFINED,
			      "%s completed a request (index %d) of the call it refused", fn, ix);
			if (rq[0] != MPI_REQUEST_NULL)
				OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
		}
	}
	/* A refused send leaves nothing behind: more refused rendezvous sends
	 * (a NULL buffer, whose MD libptl refuses) than the NI has match
	 * entries (2^18: mpi_pt2pt.c's PtlNIInit), and the next one still
	 * goes. Rank 0 says whether it went (an eager send: no match entry),
	 * so that rank 1 does not wait in vain when it did not. */
	if (t_rank <= 1) {
		int went = 0, x = 0;
		if (t_rank == 0) {
			int refused = 0, n = (1 << 18) + 1000;
			for (int i = 0; i < n; i++) {
				MPI_Request rq = MPI_REQUEST_NULL;
				refused += MPI_Issend(NULL, 1, MPI_BYTE, 1, 11, MPI_COMM_WORLD, &rq) != MPI_SUCCESS;
			}
			CHECK(refused == n, "%d of %d MPI_Issend of a NULL buffer refused", refused, n);
			v = 6;
			went = MPI_Ssend(&v, 1, MPI_INT, 1, 11, MPI_COMM_WORLD) == MPI_SUCCESS;
			CHECK(went, "a rendezvous send after %d refused ones failed", n);
			OK(MPI_Send(&went, 1, MPI_INT, 1, 12, MPI_COMM_WORLD));
			v = 0;
		} else {
			MPI_Request rq;
			OK(MPI_Irecv(&x, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &rq));
			OK(MPI_Recv(&went, 1, MPI_INT, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			if (!went)
				OK(MPI_Cancel(&rq));
			OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
			CHECK(!went || x == 6, "the rendezvous send after the refused ones: got %d", x);
		}
	}
	/* counts past an int, and the other request calls' arguments */
	MPI_Status big_st;
	OK(MPI_Status_set_elements_x(&big_st, MPI_BYTE, 3000000000LL));
	int cnt = 0;
	OK(MPI_Get_count(&big_st, MPI_BYTE, &cnt));
	CHECK(cnt == MPI_UNDEFINED, "MPI_Get_count of 3e9 bytes: %d, want MPI_UNDEFINED", cnt);
	expect(MPI_Get_count(NULL, MPI_BYTE, &cnt), MPI_ERR_ARG, "get_count NULL status", "NULL");
	int idx = 0, fl = 0, oc = 0, ids[1];
	MPI_Request none[1] = { MPI_REQUEST_NULL };
	expect(MPI_Waitany(-1, none, &idx, MPI_STATUS_IGNORE), MPI_ERR_COUNT, "waitany count -1", "count");
	expect(MPI_Testany(-1, none, &idx, &fl, MPI_STATUS_IGNORE), MPI_ERR_COUNT, "testany count -1", "count");
	expect(MPI_Waitsome(-1, none, &oc, ids, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, "waitsome count -1", "count");
	expect(MPI_Testsome(-1, none, &oc, ids, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, "testsome count -1", "count");
	int *ub = NULL, has = 0;
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &has));
	CHECK(has && ub, "MPI_TAG_UB");
	MPI_Request pr = MPI_REQUEST_NULL;
	if (has && ub) {
		expect(MPI_Send_init(&v, 1, MPI_INT, 0, *ub + 1, MPI_COMM_WORLD, &pr), MPI_ERR_TAG, "send_init tag past UB",
		       "MPI_TAG_UB");
		expect(MPI_Recv_init(&v, 1, MPI_INT, 0, *ub + 1, MPI_COMM_WORLD, &pr), MPI_ERR_TAG, "recv_init tag past UB",
		       "MPI_TAG_UB");
	}
	/* The persistent inits refuse what MPI_Start's send or receive would,
	 * as the blocking calls do, and set no request: a NULL buffer with
	 * data to move was taken and refused only at every MPI_Start. */
	{
		int (*init[4])(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = {
			MPI_Send_init, MPI_Ssend_init, MPI_Rsend_init, MPI_Bsend_init
		};
		const char *name[5] = { "MPI_Send_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Bsend_init", "MPI_Recv_init" };
		struct { const void *buf; int count; MPI_Datatype dt; int peer, tag; MPI_Comm comm; const char *what; } bad[] = {
			{ NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, "NULL buffer" },
			{ &v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, "count -1" },
			{ &v, 1, 12345, 0, 0, MPI_COMM_WORLD, "bad type" },
			{ &v, 1, MPI_INT, t_size, 0, MPI_COMM_WORLD, "bad rank" },
			{ &v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, "bad tag" },
			{ &v, 1, MPI_INT, 0, 0, 777, "bad comm" },
		};
		for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
			/* the class the blocking call gives; the message names the init */
			int want = -1;
			MPI_Error_class(MPI_Send(bad[b].buf, bad[b].count, bad[b].dt, bad[b].peer, bad[b].tag, bad[b].comm),
					&want);
			CHECK(want != MPI_SUCCESS, "MPI_Send with %s succeeded", bad[b].what);
			for (int k = 0; k < 5; k++) {
				MPI_Request pq = MPI_REQUEST_NULL;
				int rc = k < 4 ? init[k](bad[b].buf, bad[b].count, bad[b].dt, bad[b].peer, bad[b].tag, bad[b].comm, &pq)
					       : MPI_Recv_init((void *)bad[b].buf, bad[b].count, bad[b].dt, bad[b].peer, bad[b].tag,
							       bad[b].comm, &pq);
				char what[64];
				snprintf(what, sizeof what, "%s with %s", name[k], bad[b].what);
				expect(rc, want, what, name[k]);
				CHECK(pq == MPI_REQUEST_NULL, "%s set a request", what);
				if (pq != MPI_REQUEST_NULL)
					MPI_Request_free(&pq);
			}
		}
		/* MPI_BOTTOM with a type of absolute addresses, and NULL with
		 * nothing to move, are fine, started and completed */
		int src = 99, one = 1;
		MPI_Aint at;
		MPI_Datatype abs_t, in = MPI_INT;
		OK(MPI_Get_address(&src, &at));
		OK(MPI_Type_create_struct(1, &one, &at, &in, &abs_t));
		OK(MPI_Type_commit(&abs_t));
		MPI_Request pq[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
		OK(MPI_Send_init(MPI_BOTTOM, 1, abs_t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pq[0]));
		OK(MPI_Recv_init(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pq[1]));
		OK(MPI_Startall(2, pq));
		OK(MPI_Waitall(2, pq, MPI_STATUSES_IGNORE));
		for (int k = 0; k < 2; k++)
			if (pq[k] != MPI_REQUEST_NULL)
				OK(MPI_Request_free(&pq[k]));
		MPI_Type_free(&abs_t);
	}
	/* a replace of more than an int's bytes (2 GiB + 4) to and from no one:
	 * valid, nothing moves, nothing is copied */
	int *huge = calloc((1u << 29) + 1, sizeof *huge);
	if (huge) {
		OK(MPI_Sendrecv_replace(huge, (1 << 29) + 1, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
					MPI_STATUS_IGNORE));
		free(huge);
	}
	expect(MPI_Send(&v, 1, MPI_INT, t_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "bad rank", "MPI_Send");
	expect(MPI_Send(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG, "bad tag", "tag");
	expect(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "bad count", "count");
	expect(MPI_Send(&v, 1, 12345, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "bad type", "datatype");
	expect(MPI_Recv(&v, 1, MPI_INT, 0, 0, 777, MPI_STATUS_IGNORE), MPI_ERR_COMM, "bad comm", "communicator");
	/* MPI_Irecv's own post takes none of these: the long way reports them. */
	MPI_Request ir = MPI_REQUEST_NULL;
	expect(MPI_Irecv(&v, 1, MPI_INT, t_size, 0, MPI_COMM_WORLD, &ir), MPI_ERR_RANK, "irecv bad rank", "MPI_Irecv");
	expect(MPI_Irecv(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &ir), MPI_ERR_TAG, "irecv bad tag", "tag");
	expect(MPI_Irecv(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &ir), MPI_ERR_COUNT, "irecv bad count", "count");
	expect(MPI_Irecv(&v, 1, 12345, 0, 0, MPI_COMM_WORLD, &ir), MPI_ERR_TYPE, "irecv bad type", "datatype");
	expect(MPI_Irecv(&v, 1, MPI_INT, 0, 0, 777, &ir), MPI_ERR_COMM, "irecv bad comm", "communicator");
	CHECK(ir == MPI_REQUEST_NULL, "a refused MPI_Irecv set its request");
	/* The same of MPI_Isend's own put. */
	expect(MPI_Isend(&v, 1, MPI_INT, t_size, 0, MPI_COMM_WORLD, &ir), MPI_ERR_RANK, "isend bad rank", "MPI_Isend");
	expect(MPI_Isend(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &ir), MPI_ERR_TAG, "isend bad tag", "tag");
	expect(MPI_Isend(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &ir), MPI_ERR_COUNT, "isend bad count", "count");
	expect(MPI_Isend(&v, 1, 12345, 0, 0, MPI_COMM_WORLD, &ir), MPI_ERR_TYPE, "isend bad type", "datatype");
	expect(MPI_Isend(&v, 1, MPI_INT, 0, 0, 777, &ir), MPI_ERR_COMM, "isend bad comm", "communicator");
	CHECK(ir == MPI_REQUEST_NULL, "a refused MPI_Isend set its request");
	OK(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &ir));
	CHECK(ir != MPI_REQUEST_NULL, "MPI_Isend to MPI_PROC_NULL: no request");
	OK(MPI_Wait(&ir, MPI_STATUS_IGNORE));
	CHECK(ir == MPI_REQUEST_NULL, "MPI_Isend to MPI_PROC_NULL: the handle stays after its wait");
	/* ... and posts what is valid but not its case: MPI_PROC_NULL. */
	MPI_Status st;
	v = 5;
	OK(MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &ir));
	CHECK(ir != MPI_REQUEST_NULL, "MPI_Irecv from MPI_PROC_NULL: no request");
	OK(MPI_Wait(&ir, &st));
	int got = -1;
	OK(MPI_Get_count(&st, MPI_INT, &got));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && got == 0 && v == 5,
	      "MPI_Irecv from MPI_PROC_NULL: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, got);
	expect(MPI_Bcast(&v, 1, MPI_INT, t_size, MPI_COMM_WORLD), MPI_ERR_ROOT, "bad root", "root");
	expect(MPI_Allreduce(&v, &v, 1, MPI_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP, "bad op", "operation");
	/* MPI-3.1 5.9.2's table of predefined operations and types: a pair
	 * outside it is MPI_ERR_OP on every rank, naming the op and the type,
	 * before anything moves (the collective after it finds every rank
	 * there); pairs in it reduce. MPI_WCHAR is text, in no group (MPI_CHAR
	 * reduces as an integer, MPICH's extension); MPI_C_BOOL and MPI_LOGICAL are logical (LAND, LOR, LXOR
	 * only); MPI_BYTE takes BAND, BOR, BXOR only; MPI_AINT is a
	 * multi-language type (no logical ops). All of them went through. */
	{
		static const struct { MPI_Datatype t; MPI_Op op; const char *tn, *on; } refused[] = {
			{ MPI_WCHAR, MPI_SUM, "MPI_WCHAR", "MPI_SUM" },     { MPI_WCHAR, MPI_MAX, "MPI_WCHAR", "MPI_MAX" },
			{ MPI_WCHAR, MPI_BAND, "MPI_WCHAR", "MPI_BAND" },   { MPI_WCHAR, MPI_LOR, "MPI_WCHAR", "MPI_LOR" },     { MPI_C_BOOL, MPI_SUM, "MPI_C_BOOL", "MPI_SUM" },
			{ MPI_C_BOOL, MPI_PROD, "MPI_C_BOOL", "MPI_PROD" }, { MPI_C_BOOL, MPI_MIN, "MPI_C_BOOL", "MPI_MIN" },
			{ MPI_C_BOOL, MPI_BOR, "MPI_C_BOOL", "MPI_BOR" },   { MPI_LOGICAL, MPI_MAX, "MPI_LOGICAL", "MPI_MAX" },
			{ MPI_BYTE, MPI_LAND, "MPI_BYTE", "MPI_LAND" },     { MPI_BYTE, MPI_SUM, "MPI_BYTE", "MPI_SUM" },
			{ MPI_PACKED, MPI_BXOR, "MPI_PACKED", "MPI_BXOR" }, { MPI_AINT, MPI_LXOR, "MPI_AINT", "MPI_LXOR" },
		};
		long long in[2] = { 1, 1 }, out[2] = { 0, 0 };
		for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
			char what[80], word[64];
			snprintf(word, sizeof word, "%s does not apply to %s", refused[i].on, refused[i].tn);
			snprintf(what, sizeof what, "%s on %s, reduce_local", refused[i].on, refused[i].tn);
			expect(MPI_Reduce_local(in, out, 1, refused[i].t, refused[i].op), MPI_ERR_OP, what, word);
			snprintf(what, sizeof what, "%s on %s, allreduce", refused[i].on, refused[i].tn);
			expect(MPI_Allreduce(in, out, 1, refused[i].t, refused[i].op, MPI_COMM_WORLD), MPI_ERR_OP, what, word);
			snprintf(what, sizeof what, "%s on %s, reduce", refused[i].on, refused[i].tn);
			expect(MPI_Reduce(in, out, 1, refused[i].t, refused[i].op, 0, MPI_COMM_WORLD), MPI_ERR_OP, what, word);
			snprintf(what, sizeof what, "%s on %s, scan", refused[i].on, refused[i].tn);
			expect(MPI_Scan(in, out, 1, refused[i].t, refused[i].op, MPI_COMM_WORLD), MPI_ERR_OP, what, word);
			MPI_Request rq = MPI_REQUEST_NULL;
			snprintf(what, sizeof what, "%s on %s, iallreduce", refused[i].on, refused[i].tn);
			expect(MPI_Iallreduce(in, out, 1, refused[i].t, refused[i].op, MPI_COMM_WORLD, &rq), MPI_ERR_OP, what,
			       word);
			CHECK(rq == MPI_REQUEST_NULL, "%s left a request", what);
		}
		/* a derived type goes by its elements' type */
		MPI_Datatype two_chars;
		OK(MPI_Type_contiguous(2, MPI_WCHAR, &two_chars));
		OK(MPI_Type_commit(&two_chars));
		expect(MPI_Allreduce(in, out, 1, two_chars, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP, "MPI_SUM on 2 MPI_WCHAR",
		       "of MPI_WCHAR");
		MPI_Type_free(&two_chars);
		/* every rank refused and left: the next collective is whole */
		int one = 1, all = 0;
		OK(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		CHECK(all == t_size, "allreduce after the refused pairs: %d want %d", all, t_size);
		/* ... and what the table allows reduces */
		_Bool b = t_rank == 0, bor = 0, band = 1;
		OK(MPI_Allreduce(&b, &bor, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD));
		OK(MPI_Allreduce(&b, &band, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD));
		CHECK(bor && (t_size == 1 ? band : !band), "MPI_C_BOOL: LOR %d LAND %d", bor, band);
		signed char sc = 3, scs = 0;
		unsigned char by = (unsigned char)(1u << (t_rank % 8)), bys = 0;
		OK(MPI_Allreduce(&sc, &scs, 1, MPI_SIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD));
		OK(MPI_Allreduce(&by, &bys, 1, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD));
		CHECK(scs == 3 * t_size && bys == (t_size >= 8 ? 0xff : (1u << t_size) - 1),
		      "MPI_SIGNED_CHAR sum %d, MPI_BYTE bor %#x", scs, bys);
		MPI_Aint ai = 5, ais = 0;
		OK(MPI_Allreduce(&ai, &ais, 1, MPI_AINT, MPI_MAX, MPI_COMM_WORLD));
		CHECK(ais == 5, "MPI_AINT max %ld", (long)ais);
		char ch = 2, chs = 0, chmax = 0, chr = (char)(t_rank + 1);
		OK(MPI_Allreduce(&ch, &chs, 1, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD));
		OK(MPI_Allreduce(&chr, &chmax, 1, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD));
		CHECK(chs == 2 * t_size && chmax == t_size, "MPI_CHAR (MPICH's extension) sum %d max %d", chs, chmax);
	}
	user_op_no_memory();
	/* a negative block, the last rank's, refused on every rank before anything moves */
	int *negs = calloc((size_t)t_size, sizeof *negs), w[1];
	char neg_msg[64];
	negs[t_size - 1] = -1;
	snprintf(neg_msg, sizeof neg_msg, "recvcounts[%d] = -1 < 0", t_size - 1);
	expect(MPI_Reduce_scatter(&v, w, negs, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT,
	       "reduce_scatter negative count", neg_msg);
	MPI_Request nr = MPI_REQUEST_NULL;
	expect(MPI_Ireduce_scatter(&v, w, negs, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nr), MPI_ERR_COUNT,
	       "ireduce_scatter negative count", neg_msg);
	CHECK(nr == MPI_REQUEST_NULL, "a refused MPI_Ireduce_scatter left a request");
	free(negs);
	MPI_Request r = 4242;
	expect(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "bad request", "request");
	MPI_Datatype t;
	OK(MPI_Type_contiguous(2, MPI_INT, &t));
	expect(MPI_Send(&v, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "uncommitted", "uncommitted");
	MPI_Type_free(&t);
	MPI_Datatype pre = MPI_INT;
	expect(MPI_Type_free(&pre), MPI_ERR_TYPE, "free predefined", "predefined");
	char s[MPI_MAX_ERROR_STRING];
	int len;
	OK(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len));
	CHECK(strstr(s, "truncat") != NULL, "class string '%s'", s);
	int eh;
	OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "errhandler %d", eh);
	int prov, flag, ver, sub;
	OK(MPI_Query_thread(&prov));
	OK(MPI_Initialized(&flag));
	CHECK(flag, "initialized");
	OK(MPI_Get_version(&ver, &sub));
	CHECK(ver == 3, "version %d.%d", ver, sub);
	char name[MPI_MAX_PROCESSOR_NAME];
	OK(MPI_Get_processor_name(name, &len));
	CHECK(len > 0, "processor name");
	double t0 = MPI_Wtime();
	CHECK(MPI_Wtime() >= t0 && MPI_Wtick() > 0, "wtime");
	return t_finish("mpi_err");
}
