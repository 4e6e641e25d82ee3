/* mpi_deadpeer: a rank that dies becomes an error naming it, never a hang
 * (driven by mpi_deadpeer.sh, 3 ranks; fatal: 2).
 *
 * Rank 1 leaves with _exit(0) without MPI_Finalize - gone as a crash would
 * be, but with exit status 0, so ptlrun lets the others run on - while the
 * survivors wait on it:
 *   p2p   rank 0 in MPI_Recv, rank 2 in a rendezvous MPI_Send; then, with
 *         the death known, receives, sends, an MPI_ANY_SOURCE receive, a
 *         communicator where it has another rank, Allreduce and Barrier
 *         all fail naming it, a message it sent before it died is still
 *         received, and the survivors still talk to each other.
 *   test  rank 0 polls MPI_Test, rank 2 sits in MPI_Waitany on an
 *         MPI_ANY_SOURCE receive.
 *   tall, tany, tsome  rank 0 polls MPI_Testall, MPI_Testany or
 *         MPI_Testsome.
 *   wall  rank 0 sits in MPI_Waitall on receives from rank 2, rank 1
 *         (between them) and rank 2 again: MPI_ERR_IN_STATUS, the dead
 *         one's status names the failure, the others' data came.
 *   coll  both survivors in MPI_Comm_idup, MPI_Allreduce, then MPI_Barrier and an
 *         MPI_Comm_idup once rank 1 is known dead.
 *   credit rank 1 sends rank 0 CREDIT_MSGS small messages and dies; rank 0
 *         receives them, waits until libptl has seen the death, and its next
 *         receive from rank 1 fails naming it. The credits rank 0 owes for
 *         the last of them go back once that receive's wait starts
 *         (mpi_pt2pt.c's acct), to a dead rank by then: no fatal error.
 *   overflow rank 0 sends rank 1 2 KiB MPI_Isends while rank 1 stays
 *         out of the library (run with little unexpected memory and many
 *         credits: most overflow, to wait for a pull) and then dies; rank
 *         0's MPI_Waitall ends, each send landed or failed naming it.
 *   pullany rank 1 sends rank 0 more 2 KiB messages than its unexpected
 *         memory holds (most overflow: their data stays at rank 1 until
 *         pulled) and then dies without answering a pull; rank 0's
 *         MPI_ANY_SOURCE receives take the buffered ones, and the first
 *         whose message is being pulled fails naming rank 1 (it hung: a
 *         matched wildcard receive was left to a pull that never came).
 *   landq rank 1 sends rank 0 LANDQ_N 2 KiB messages, most overflowing,
 *         then rank 2 one (overflowing too), and rank 1 dies without
 *         answering a pull: rank 0's receives of them all ask for more
 *         pulls at once than there are landings, rank 2's waiting behind
 *         rank 1's. Rank 0 waits for rank 2's first: it comes, whole (the
 *         wait asks after the senders holding the landings, and a dead
 *         one's go to the pulls waiting, past those of the dead rank
 *         that cannot start); then rank 1's that were not buffered fail
 *         naming it.
 *   fatal MPI_ERRORS_ARE_FATAL: rank 0's MPI_Recv ends the job, which exits
 *         non-zero with a message naming the dead rank. */
#include <time.h>
#include <unistd.h>

#include "mpi_test.h"

#define BIG (1 << 20) /* rendezvous */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* rc must be MPI_ERR_PROC_FAILED whose string has want, within limit s. */
static void expect_dead(const char *what, int rc, const char *want, double t0, double limit)
{
	double took = now_s() - t0;
	int cls = -1, len = 0;
	char s[MPI_MAX_ERROR_STRING] = "";
	MPI_Error_class(rc, &cls);
	MPI_Error_string(rc, s, &len);
	CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_PROC_FAILED, "%s: rc %d class %d, want MPI_ERR_PROC_FAILED (%s)",
	      what, rc, cls, s);
	CHECK(strstr(s, want) != NULL, "%s: error string \"%s\" lacks \"%s\"", what, s, want);
	CHECK(took < limit, "%s: took %.2f s, want under %.1f", what, took, limit);
	if (t_rank == 0 || t_fails)
		printf("rank %d: %s after %.2f s: %s\n", t_rank, what, took, s);
}

static void die_later(void)
{
	usleep(300 * 1000); /* the survivors are waiting by now */
	fflush(stdout);
	_exit(0);
}

/* The two survivors (0 and 2) still exchange, small and rendezvous. */
static void survivors_talk(void)
{
	int other = 2 - t_rank;
	static int sb[BIG / 4], rb[BIG / 4];
	for (int i = 0; i < BIG / 4; i++)
		sb[i] = t_rank * 1000003 + i;
	for (int n = 1; n <= BIG / 4; n *= 512) {
		memset(rb, 0, sizeof rb);
		OK(MPI_Sendrecv(sb, n, MPI_INT, other, 40, rb, n, MPI_INT, other, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += rb[i] != other * 1000003 + i;
		CHECK(bad == 0, "%d of %d ints from rank %d wrong", bad, n, other);
	}
	MPI_Request rq;
	int v = t_rank, got = -1;
	OK(MPI_Irecv(&got, 1, MPI_INT, other, 41, MPI_COMM_WORLD, &rq));
	OK(MPI_Send(&v, 1, MPI_INT, other, 41, MPI_COMM_WORLD));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(got == other, "got %d from rank %d", got, other);
}

static void p2p(void)
{
	static char big[BIG];
	int v = 0, early = 0;
	MPI_Comm sub; /* world 1 first: rank 0 there */
	OK(MPI_Comm_split(MPI_COMM_WORLD, 0, t_rank == 1 ? -1 : t_rank, &sub));
	if (t_rank == 1) {
		int hello = 77;
		MPI_Send(&hello, 1, MPI_INT, 0, 3, MPI_COMM_WORLD); /* eager: lands before we die */
		die_later();
	}
	double t0 = now_s();
	if (t_rank == 0)
		expect_dead("MPI_Recv from a rank dying", MPI_Recv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
			    "MPI_Recv: rank 1 of MPI_COMM_WORLD died", t0, 5);
	else
		expect_dead("rendezvous MPI_Send to a rank dying", MPI_Send(big, BIG, MPI_BYTE, 1, 5, MPI_COMM_WORLD),
			    "MPI_Send: rank 1 of MPI_COMM_WORLD died", t0, 5);
	/* Known dead now: the next operations fail at once. */
	MPI_Request rq;
	t0 = now_s();
	OK(MPI_Irecv(&v, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &rq));
	expect_dead("MPI_Irecv+MPI_Wait", MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait: rank 1 of MPI_COMM_WORLD died", t0,
		    1);
	t0 = now_s();
	expect_dead("MPI_Send, large", MPI_Send(big, BIG, MPI_BYTE, 1, 6, MPI_COMM_WORLD),
		    "rank 1 of MPI_COMM_WORLD died", t0, 1);
	t0 = now_s();
	expect_dead("MPI_Send, small", MPI_Send(big, 8, MPI_BYTE, 1, 6, MPI_COMM_WORLD), "rank 1 of MPI_COMM_WORLD died",
		    t0, 1);
	t0 = now_s();
	expect_dead("MPI_Recv on a split communicator", MPI_Recv(&v, 1, MPI_INT, 0, 7, sub, MPI_STATUS_IGNORE),
		    "(rank 1 of MPI_COMM_WORLD) died", t0, 1);
	t0 = now_s();
	expect_dead("MPI_Recv(MPI_ANY_SOURCE)", MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
		    "rank 1 of MPI_COMM_WORLD died", t0, 5);
	t0 = now_s();
	MPI_Status st;
	expect_dead("MPI_Probe", MPI_Probe(1, 9, MPI_COMM_WORLD, &st), "MPI_Probe: rank 1 of MPI_COMM_WORLD died", t0, 5);
	if (t_rank == 0) {
		OK(MPI_Recv(&early, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(early == 77, "the message rank 1 sent before it died: %d, want 77", early);
	}
	int one = 1, sum = 0;
	t0 = now_s();
	expect_dead("MPI_Allreduce", MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
		    "rank 1 of MPI_COMM_WORLD died", t0, 1);
	t0 = now_s();
	expect_dead("MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD), "rank 1 of MPI_COMM_WORLD died", t0, 1);
	survivors_talk();
}

static void test_any(void)
{
	if (t_rank == 1)
		die_later();
	int v = 0, idx = -1;
	MPI_Request rq;
	double t0 = now_s();
	if (t_rank == 0) {
		OK(MPI_Irecv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq));
		int flag = 0, rc = MPI_SUCCESS;
		while (!flag && now_s() - t0 < 10) {
			rc = MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
			usleep(100);
		}
		CHECK(flag, "MPI_Test never completed the receive from the dead rank");
		expect_dead("MPI_Test", rc, "MPI_Test: rank 1 of MPI_COMM_WORLD died", t0, 5);
	} else {
		OK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &rq));
		expect_dead("MPI_Waitany(MPI_ANY_SOURCE)", MPI_Waitany(1, &rq, &idx, MPI_STATUS_IGNORE),
			    "MPI_Waitany: rank 1 of MPI_COMM_WORLD died", t0, 5);
	}
	survivors_talk();
}

/* A program that only polls with Testall, Testany or Testsome (mode
 * "tall", "tany", "tsome"): rank 0's poll must end with the death; rank 2
 * only waits to talk to rank 0 afterwards. */
static void test_family(const char *mode)
{
	if (t_rank == 1)
		die_later();
	if (t_rank == 0) {
		int v = 0, flag = 0, idx = -1, n = 0, rc = MPI_SUCCESS;
		MPI_Request rq[2];
		double t0 = now_s();
		OK(MPI_Irecv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[0]));
		rq[1] = MPI_REQUEST_NULL;
		while (!flag && now_s() - t0 < 10) {
			if (!strcmp(mode, "tall")) {
				rc = MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE);
			} else if (!strcmp(mode, "tany")) {
				rc = MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE);
			} else {
				rc = MPI_Testsome(2, rq, &n, &idx, MPI_STATUSES_IGNORE);
				flag = n > 0;
			}
			usleep(100);
		}
		CHECK(flag, "%s never completed the receive from the dead rank", mode);
		int cls = -1;
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_PROC_FAILED || cls == MPI_ERR_IN_STATUS, "%s: error class %d", mode, cls);
		CHECK(now_s() - t0 < 5, "%s took %.1f s to see the death", mode, now_s() - t0);
	}
	survivors_talk();
}

/* Mode "wall": MPI_Waitall over live and dead peers must end once the
 * death is known, with every request done and each status its own. */
static void wait_all(void)
{
	if (t_rank == 1)
		die_later();
	if (t_rank == 2) {
		int a = 21, b = 22;
		OK(MPI_Send(&a, 1, MPI_INT, 0, 11, MPI_COMM_WORLD));
		OK(MPI_Send(&b, 1, MPI_INT, 0, 12, MPI_COMM_WORLD));
	} else if (t_rank == 0) {
		int v[3] = { 0, 0, 0 }, cls = -1;
		MPI_Request rq[3];
		MPI_Status st[3];
		double t0 = now_s();
		OK(MPI_Irecv(&v[0], 1, MPI_INT, 2, 11, MPI_COMM_WORLD, &rq[0]));
		OK(MPI_Irecv(&v[1], 1, MPI_INT, 1, 11, MPI_COMM_WORLD, &rq[1]));
		OK(MPI_Irecv(&v[2], 1, MPI_INT, 2, 12, MPI_COMM_WORLD, &rq[2]));
		int rc = MPI_Waitall(3, rq, st);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_IN_STATUS, "MPI_Waitall: error class %d, want MPI_ERR_IN_STATUS", cls);
		CHECK(now_s() - t0 < 5, "MPI_Waitall took %.1f s to see the death", now_s() - t0);
		MPI_Error_class(st[1].MPI_ERROR, &cls);
		CHECK(cls == MPI_ERR_PROC_FAILED, "the dead peer's status: error class %d", cls);
		CHECK(st[0].MPI_ERROR == MPI_SUCCESS && st[2].MPI_ERROR == MPI_SUCCESS, "live statuses: %d, %d",
		      st[0].MPI_ERROR, st[2].MPI_ERROR);
		CHECK(v[0] == 21 && v[2] == 22, "from rank 2: %d, %d", v[0], v[2]);
		for (int i = 0; i < 3; i++)
			CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed", i);
	}
	survivors_talk();
}

static void coll(void)
{
	if (t_rank == 1)
		die_later();
	/* a duplicate whose rounds wait for the dying rank */
	MPI_Comm dup = MPI_COMM_WORLD;
	MPI_Request rq;
	double t0 = now_s();
	OK(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &rq));
	expect_dead("MPI_Comm_idup with a rank dying", MPI_Wait(&rq, MPI_STATUS_IGNORE),
		    "MPI_Comm_idup on MPI_COMM_WORLD (3 ranks, call 2): rank 1 of MPI_COMM_WORLD died", t0, 5);
	CHECK(dup == MPI_COMM_NULL && rq == MPI_REQUEST_NULL, "after a failed idup: comm %d, request %d", dup, rq);
	double one = 1, sum = 0;
	t0 = now_s();
	expect_dead("MPI_Allreduce with a rank dying", MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
		    "MPI_Allreduce: MPI_Allreduce on MPI_COMM_WORLD (3 ranks, call 3): rank 1 of MPI_COMM_WORLD died", t0, 5);
	t0 = now_s();
	expect_dead("MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD), "rank 1 of MPI_COMM_WORLD died", t0, 1);
	t0 = now_s(); /* known dead: fails at once */
	OK(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &rq));
	expect_dead("MPI_Comm_idup", MPI_Wait(&rq, MPI_STATUS_IGNORE), "rank 1 of MPI_COMM_WORLD died", t0, 1);
	survivors_talk();
}

/* Enough ACK-free messages that the last one's arrival owes its sender
 * a batch of credits back (mpi_pt2pt.c: half of a peer's 256 at 3 ranks). */
#define CREDIT_MSGS 128

static void credit(void)
{
	int v[CREDIT_MSGS], go = 1;
	/* Rank 1 dies only once rank 0 has all its messages, told so through
	 * rank 2 (a message from rank 0 itself could carry the credits back
	 * before the death): a fixed delay was not always enough for the last
	 * ones to arrive under emulation (verbs in the VM, where rank 1's exit
	 * dropped them and rank 0's receives rightly failed). */
	if (t_rank == 1) {
		for (int i = 0; i < CREDIT_MSGS; i++)
			OK(MPI_Send(&i, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
		OK(MPI_Recv(&go, 1, MPI_INT, 2, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		die_later();
	}
	if (t_rank == 2) {
		OK(MPI_Recv(&go, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Send(&go, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
		return;
	}
	for (int i = 0; i < CREDIT_MSGS; i++) {
		OK(MPI_Recv(&v[i], 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(v[i] == i, "message %d carried %d", i, v[i]);
	}
	OK(MPI_Send(&go, 1, MPI_INT, 2, 7, MPI_COMM_WORLD));
	/* libptl's progress thread polls while we do not, and finds rank 1
	 * gone (shm: within SHM_DEAD_NS of its last sign of life) */
	usleep(2500 * 1000);
	double t0 = now_s();
	int x;
	expect_dead("MPI_Recv after credits owed", MPI_Recv(&x, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
		    "rank 1 of MPI_COMM_WORLD died", t0, 5);
}

/* An overflowed eager message is answered with no ACK; its sender waits
 * for the receiver's pull, which a dead receiver never makes. */
static void overflow(void)
{
	enum { N = 4000, LEN = 2048 };
	if (t_rank == 1) {
		usleep(1000 * 1000);
		die_later();
	}
	if (t_rank == 2)
		return;
	static char b[N][LEN];
	static MPI_Request rq[N];
	static MPI_Status st[N];
	for (int i = 0; i < N; i++)
		OK(MPI_Isend(b[i], LEN, MPI_CHAR, 1, 8, MPI_COMM_WORLD, &rq[i]));
	double t0 = now_s();
	int rc = MPI_Waitall(N, rq, st), failed = 0, other = 0;
	double took = now_s() - t0;
	for (int i = 0; i < N; i++) {
		int cls = -1;
		MPI_Error_class(st[i].MPI_ERROR, &cls);
		failed += cls == MPI_ERR_PROC_FAILED;
		other += st[i].MPI_ERROR != MPI_SUCCESS && cls != MPI_ERR_PROC_FAILED;
	}
	printf("rank 0: MPI_Waitall of %d sends to a rank that died after %.2f s: %d failed, %d other errors\n", N,
	       took, failed, other);
	int cls = -1;
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_IN_STATUS, "MPI_Waitall: error class %d, want MPI_ERR_IN_STATUS", cls);
	CHECK(failed > 0 && other == 0, "%d sends failed naming the death, %d otherwise", failed, other);
	CHECK(took < 10, "MPI_Waitall took %.2f s", took);
}

/* Rank 1 has sent rank 0 all it sends (tag `last` its last): it leaves
 * the library for good once rank 0 has them all, and dies. A fixed delay
 * alone lost its last messages under emulation (verbs in the VM, its
 * exit dropping what had not gone: rank 0's probe of tag `last` failed).
 * Rank 0 says so (tag 17), rank 1 answers through rank 2 (tags 18, 19:
 * rank 0's unexpected memory is full, and its answer would be pulled)
 * and is out of the library from then: no pull asked after that is
 * answered. */
static void die_once_received(void)
{
	int go = 0;
	OK(MPI_Recv(&go, 1, MPI_INT, 0, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Send(&go, 1, MPI_INT, 2, 18, MPI_COMM_WORLD));
	usleep(700 * 1000); /* the answer on its way before the exit */
	die_later();
}
static void relay_received(void)
{
	int go = 0;
	OK(MPI_Recv(&go, 1, MPI_INT, 1, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Send(&go, 1, MPI_INT, 0, 19, MPI_COMM_WORLD));
}
/* rank 0's side: tag `last` from rank 1 (all before it in), then the
 * handshake */
static void all_received(int last)
{
	int go = 0;
	OK(MPI_Probe(1, last, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Send(&go, 1, MPI_INT, 1, 17, MPI_COMM_WORLD));
	OK(MPI_Recv(&go, 1, MPI_INT, 2, 19, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void pull_any(void)
{
	enum { N = 2000, LEN = 2048 };
	static char b[N][LEN];
	if (t_rank == 1) {
		static MPI_Request rq[N];
		for (int i = 0; i < N; i++) {
			b[i][0] = (char)i;
			OK(MPI_Isend(b[i], LEN, MPI_CHAR, 0, 9, MPI_COMM_WORLD, &rq[i]));
		}
		OK(MPI_Send(b[0], 1, MPI_CHAR, 0, 10, MPI_COMM_WORLD));
		die_once_received();
	}
	if (t_rank == 2) {
		relay_received();
		return;
	}
	/* every message in (their order kept), and then the wildcard
	 * receives */
	all_received(10);
	int got = 0, rc = MPI_SUCCESS;
	double t0 = now_s();
	while (got < N && (rc = MPI_Recv(b[got], LEN, MPI_CHAR, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) ==
				  MPI_SUCCESS) {
		CHECK(b[got][0] == (char)got, "message %d read %d", got, b[got][0]);
		got++;
	}
	CHECK(got > 0 && got < N, "%d of %d messages received before the failure (some buffered, not all)", got, N);
	expect_dead("MPI_Recv(MPI_ANY_SOURCE) of a message being pulled", rc,
		    "rank 1 of MPI_COMM_WORLD died (the MPI_ANY_SOURCE receive had matched a message of it", t0, 8);
}

static void land_queue(void)
{
	enum { LANDQ_N = 4000, LEN = 2048 };
	static char b[LANDQ_N][LEN], y[LEN];
	static MPI_Request rq[LANDQ_N];
	static MPI_Status st[LANDQ_N];
	int go = 0;
	if (t_rank == 1) {
		for (int i = 0; i < LANDQ_N; i++) {
			b[i][0] = (char)i;
			OK(MPI_Isend(b[i], LEN, MPI_CHAR, 0, 11, MPI_COMM_WORLD, &rq[i]));
		}
		OK(MPI_Send(&go, 1, MPI_INT, 0, 12, MPI_COMM_WORLD));
		die_once_received();
	}
	if (t_rank == 2) {
		MPI_Request q;
		relay_received();
		OK(MPI_Recv(&go, 1, MPI_INT, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); /* rank 0's memory full */
		y[0] = 42;
		y[LEN - 1] = 43;
		OK(MPI_Isend(y, LEN, MPI_CHAR, 0, 14, MPI_COMM_WORLD, &q));
		OK(MPI_Wait(&q, MPI_STATUS_IGNORE)); /* answering rank 0's pull */
		return;
	}
	MPI_Request yq;
	all_received(12);
	OK(MPI_Send(&go, 1, MPI_INT, 2, 13, MPI_COMM_WORLD));
	OK(MPI_Probe(2, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	for (int i = 0; i < LANDQ_N; i++)
		OK(MPI_Irecv(b[i], LEN, MPI_CHAR, 1, 11, MPI_COMM_WORLD, &rq[i]));
	OK(MPI_Irecv(y, LEN, MPI_CHAR, 2, 14, MPI_COMM_WORLD, &yq));
	double t0 = now_s();
	OK(MPI_Wait(&yq, MPI_STATUS_IGNORE));
	double took = now_s() - t0;
	CHECK(y[0] == 42 && y[LEN - 1] == 43, "rank 2's message read %d .. %d", y[0], y[LEN - 1]);
	CHECK(took < 8, "rank 2's message, its pull behind the dead rank's, took %.2f s", took);
	int rc = MPI_Waitall(LANDQ_N, rq, st), ok = 0, failed = 0, cls = -1;
	for (int i = 0; i < LANDQ_N; i++) {
		MPI_Error_class(st[i].MPI_ERROR, &cls);
		ok += st[i].MPI_ERROR == MPI_SUCCESS && b[i][0] == (char)i;
		failed += cls == MPI_ERR_PROC_FAILED;
	}
	MPI_Error_class(rc, &cls);
	printf("rank 0: rank 2's message after %.2f s; of rank 1's %d, %d received, %d failed naming its death\n", took,
	       LANDQ_N, ok, failed);
	CHECK(cls == MPI_ERR_IN_STATUS, "MPI_Waitall: error class %d, want MPI_ERR_IN_STATUS", cls);
	CHECK(ok > 0 && failed > 2 * 1024 && ok + failed == LANDQ_N,
	      "of %d messages from the dead rank %d received, %d failed naming it (want some buffered, over 2048 pulled)",
	      LANDQ_N, ok, failed);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "p2p";
	t_init(&argc, &argv);
	if (strcmp(mode, "fatal") != 0)
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Barrier(MPI_COMM_WORLD);
	if (!strcmp(mode, "p2p")) {
		p2p();
	} else if (!strcmp(mode, "test")) {
		test_any();
	} else if (!strcmp(mode, "tall") || !strcmp(mode, "tany") || !strcmp(mode, "tsome")) {
		test_family(mode);
	} else if (!strcmp(mode, "wall")) {
		wait_all();
	} else if (!strcmp(mode, "coll")) {
		coll();
	} else if (!strcmp(mode, "credit")) {
		credit();
	} else if (!strcmp(mode, "overflow")) {
		overflow();
	} else if (!strcmp(mode, "pullany")) {
		pull_any();
	} else if (!strcmp(mode, "landq")) {
		land_queue();
	} else if (!strcmp(mode, "fatal")) {
		if (t_rank == 1)
			die_later();
		int v;
		MPI_Recv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		printf("rank %d: MPI_Recv from the dead rank returned under MPI_ERRORS_ARE_FATAL\n", t_rank);
		return 1;
	} else {
		fprintf(stderr, "usage: mpi_deadpeer p2p|test|tall|tany|tsome|wall|coll|credit|overflow|pullany|landq|fatal\n");
		return 2;
	}
	printf("mpi_deadpeer %s: rank %d: %s (%d failed checks)\n", mode, t_rank, t_fails ? "FAIL" : "ok", t_fails);
	MPI_Finalize();
	return t_fails ? 1 : 0;
}
