/* mpi_mprobe.c: matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv,
 * MPI_Imrecv). Rank 0 receives, every other rank sends:
 *   sizes    0 B to above the rendezvous limit, by MPI_Send (eager up to
 *            64 KiB) and MPI_Isend (rendezvous above 8 KiB), probed with
 *            wildcards and received into exactly the size probed, by
 *            Mrecv, Imrecv+Wait and Imrecv+Test; non-contiguous receive;
 *            truncation.
 *   steal    a probed message is nobody else's: a receive posted after
 *            the Mprobe (lazy and posted, small and large) and probes get
 *            the next message of the same envelope, which arrives after the
 *            probe; Mprobe always takes the earliest (non-overtaking).
 *   flood    hundreds of eager messages queued unexpected (with a small
 *            PTL_MPI_UNEXPECTED_MEM some overflow and are pulled), taken
 *            in order with MPI_ANY_SOURCE.
 *   errors   MPI_PROC_NULL (MPI_MESSAGE_NO_PROC), MPI_MESSAGE_NULL, a
 *            handle received already, a garbage handle; Improbe with
 *            nothing there.
 * Mode "dead" (2 ranks): rank 1 sends an eager and a rendezvous message
 * and leaves with _exit(0); rank 0's Mprobe for a message that never
 * comes fails naming it, the eager one is still received, the rendezvous
 * one fails (its data went with its sender). */
#include <time.h>
#include <unistd.h>

#include "mpi_test.h"

#define BIG (100 * 1024) /* above every eager limit */

static unsigned char pat(int src, int seq, size_t i)
{
	return (unsigned char)(src * 31 + seq * 7 + (int)i);
}

static void fill(unsigned char *b, size_t n, int src, int seq)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(src, seq, i);
}

static int bad_bytes(const unsigned char *b, size_t n, int src, int seq)
{
	int bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += b[i] != pat(src, seq, i);
	return bad;
}

static int err_class(int rc)
{
	int cls = -1;
	MPI_Error_class(rc, &cls);
	return cls;
}

static const int sizes[] = { 0, 1, 1000, 1024, 1025, 4096, 8192, 8193, 65536, 65537, BIG };
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

/* Each sender: every size twice, by MPI_Send then by MPI_Isend, tag = the
 * message's sequence number. */
static void sizes_send(void)
{
	static unsigned char sb[2 * NSIZES][BIG];
	MPI_Request rq[NSIZES];
	for (int k = 0; k < NSIZES; k++) {
		fill(sb[2 * k], (size_t)sizes[k], t_rank, 2 * k);
		fill(sb[2 * k + 1], (size_t)sizes[k], t_rank, 2 * k + 1);
		OK(MPI_Send(sb[2 * k], sizes[k], MPI_BYTE, 0, 2 * k, MPI_COMM_WORLD));
		OK(MPI_Isend(sb[2 * k + 1], sizes[k], MPI_BYTE, 0, 2 * k + 1, MPI_COMM_WORLD, &rq[k]));
	}
	OK(MPI_Waitall(NSIZES, rq, MPI_STATUSES_IGNORE));
}

static void sizes_recv(void)
{
	static unsigned char rb[BIG + 16];
	int next[8] = { 0 }; /* per sender: the sequence number due */
	for (int m = 0; m < 2 * NSIZES * (t_size - 1); m++) {
		MPI_Message msg = MPI_MESSAGE_NULL;
		MPI_Status st;
		int count = -1;
		OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
		int src = st.MPI_SOURCE, seq = st.MPI_TAG;
		CHECK(src > 0 && src < t_size && src < 8 && seq >= 0 && seq < 2 * NSIZES, "source %d tag %d", src, seq);
		if (src <= 0 || src >= t_size || src >= 8 || seq < 0 || seq >= 2 * NSIZES)
			return;
		CHECK(seq == next[src], "from rank %d: message %d probed, %d due (overtaken)", src, seq, next[src]);
		next[src] = seq + 1;
		int want = sizes[seq / 2];
		OK(MPI_Get_count(&st, MPI_BYTE, &count));
		CHECK(count == want, "probed count %d, want %d", count, want);
		CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "message handle %d", msg);
		memset(rb, 0xee, sizeof rb);
		MPI_Status rs;
		switch (m % 3) { /* every way to receive it */
		case 0:
			OK(MPI_Mrecv(rb, count, MPI_BYTE, &msg, &rs));
			break;
		case 1: {
			MPI_Request rq;
			OK(MPI_Imrecv(rb, count, MPI_BYTE, &msg, &rq));
			OK(MPI_Wait(&rq, &rs));
			break;
		}
		default: {
			MPI_Request rq;
			int flag = 0;
			OK(MPI_Imrecv(rb, count, MPI_BYTE, &msg, &rq));
			while (!flag)
				OK(MPI_Test(&rq, &flag, &rs));
			CHECK(rq == MPI_REQUEST_NULL, "request not freed by MPI_Test");
		}
		}
		CHECK(msg == MPI_MESSAGE_NULL, "handle %d after the receive, want MPI_MESSAGE_NULL", msg);
		OK(MPI_Get_count(&rs, MPI_BYTE, &count));
		CHECK(rs.MPI_SOURCE == src && rs.MPI_TAG == seq && count == want, "received %d/%d %d B, want %d/%d %d B",
		      rs.MPI_SOURCE, rs.MPI_TAG, count, src, seq, want);
		CHECK(bad_bytes(rb, (size_t)want, src, seq) == 0, "%d B from rank %d seq %d: data wrong", want, src, seq);
		CHECK(rb[want] == 0xee, "%d B message wrote past its end", want);
	}
}

/* Truncation and a non-contiguous receive type, eager and rendezvous. */
static void types(void)
{
	static int ib[2 * BIG / 4], ob[BIG / 4];
	const int n[2] = { 64, BIG / 4 };
	if (t_rank == 1) {
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < n[k]; i++)
				ob[i] = i * 3 + k;
			OK(MPI_Send(ob, n[k], MPI_INT, 0, 60 + k, MPI_COMM_WORLD)); /* into the vector */
			OK(MPI_Send(ob, n[k], MPI_INT, 0, 62 + k, MPI_COMM_WORLD)); /* truncated */
		}
		return;
	}
	if (t_rank != 0)
		return;
	MPI_Datatype every2;
	OK(MPI_Type_vector(BIG / 4, 1, 2, MPI_INT, &every2));
	OK(MPI_Type_commit(&every2));
	for (int k = 0; k < 2; k++) {
		MPI_Message msg;
		MPI_Status st;
		/* calls that complete one operation leave MPI_ERROR as it was (MPI-3.1 3.2.5) */
		st.MPI_ERROR = MPI_ERR_DIMS;
		OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
		CHECK(st.MPI_ERROR == MPI_ERR_DIMS && st.MPI_SOURCE == MPI_PROC_NULL && msg == MPI_MESSAGE_NO_PROC,
		      "MPI_Mprobe of MPI_PROC_NULL: MPI_ERROR %d, source %d", st.MPI_ERROR, st.MPI_SOURCE);
		OK(MPI_Mprobe(1, 60 + k, MPI_COMM_WORLD, &msg, &st));
		CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "MPI_Mprobe set MPI_ERROR to %d", st.MPI_ERROR);
		memset(ib, 0, sizeof ib);
		MPI_Datatype t;
		OK(MPI_Type_vector(n[k], 1, 2, MPI_INT, &t));
		OK(MPI_Type_commit(&t));
		st.MPI_ERROR = MPI_ERR_TOPOLOGY;
		OK(MPI_Mrecv(ib, 1, t, &msg, &st));
		CHECK(st.MPI_ERROR == MPI_ERR_TOPOLOGY, "MPI_Mrecv set MPI_ERROR to %d", st.MPI_ERROR);
		OK(MPI_Type_free(&t));
		int bad = 0;
		for (int i = 0; i < n[k]; i++)
			bad += ib[2 * i] != i * 3 + k || ib[2 * i + 1] != 0;
		CHECK(bad == 0, "vector receive of %d ints: %d wrong", n[k], bad);
		OK(MPI_Mprobe(MPI_ANY_SOURCE, 62 + k, MPI_COMM_WORLD, &msg, &st));
		int rc = MPI_Mrecv(ib, n[k] / 2, MPI_INT, &msg, &st);
		CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "%d ints into %d: rc %d, want MPI_ERR_TRUNCATE", n[k], n[k] / 2,
		      rc);
		CHECK(msg == MPI_MESSAGE_NULL, "truncated message's handle %d stays", msg);
		CHECK(ib[0] == k && ib[n[k] / 2 - 1] == (n[k] / 2 - 1) * 3 + k, "truncated receive: data wrong");
	}
	OK(MPI_Type_free(&every2));
}

/* Rank 1 sends seq 0 of each size, waits for rank 0's go (sent once it has
 * matched seq 0), then sends seq 1 and 2 with the same envelope. */
static void steal(void)
{
	static int buf[3][BIG / 4];
	const int n[3] = { 4, 2000, BIG / 4 }; /* lazy receive, posted receive, rendezvous */
	for (int k = 0; k < 3; k++) {
		int tag = 70 + k;
		if (t_rank == 1) {
			MPI_Request rq[3];
			for (int s = 0; s < 3; s++) {
				for (int i = 0; i < n[k]; i++)
					buf[s][i] = s * 100000 + i;
				if (s == 1)
					OK(MPI_Recv(NULL, 0, MPI_INT, 0, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
				OK(MPI_Isend(buf[s], n[k], MPI_INT, 0, tag, MPI_COMM_WORLD, &rq[s]));
			}
			OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
		} else if (t_rank == 0) {
			MPI_Message m0, m2;
			MPI_Status st;
			int flag = 1;
			OK(MPI_Mprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &m0, &st));
			CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == tag, "probed %d/%d, want 1/%d", st.MPI_SOURCE,
			      st.MPI_TAG, tag);
			OK(MPI_Iprobe(1, tag, MPI_COMM_WORLD, &flag, &st));
			CHECK(!flag, "MPI_Iprobe still sees the matched message");
			OK(MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &m2, &st));
			CHECK(!flag && m2 == MPI_MESSAGE_NULL, "MPI_Improbe took the matched message again");
			OK(MPI_Send(NULL, 0, MPI_INT, 1, 79, MPI_COMM_WORLD));
			/* A receive posted now gets the next one, not the probed. */
			memset(buf[1], 0, sizeof buf[1]);
			OK(MPI_Recv(buf[1], n[k], MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
			CHECK(buf[1][0] == 100000 && buf[1][n[k] - 1] == 100000 + n[k] - 1,
			      "size %d: MPI_Recv after MPI_Mprobe got message %d, want 1", n[k], buf[1][0] / 100000);
			OK(MPI_Mprobe(1, tag, MPI_COMM_WORLD, &m2, &st));
			memset(buf[0], 0, sizeof buf[0]);
			OK(MPI_Mrecv(buf[0], n[k], MPI_INT, &m0, &st));
			CHECK(buf[0][0] == 0 && buf[0][n[k] - 1] == n[k] - 1, "size %d: probed message 0 got %d", n[k],
			      buf[0][n[k] - 1]);
			memset(buf[2], 0, sizeof buf[2]);
			OK(MPI_Mrecv(buf[2], n[k], MPI_INT, &m2, &st));
			CHECK(buf[2][0] == 200000 && buf[2][n[k] - 1] == 200000 + n[k] - 1, "size %d: message 2 got %d",
			      n[k], buf[2][0]);
		}
	}
}

enum { FLOOD = 400, FLOOD_LEN = 8192 };

static void flood(void)
{
	static unsigned char b[FLOOD][FLOOD_LEN];
	if (t_rank > 0) {
		static MPI_Request rq[FLOOD];
		for (int s = 0; s < FLOOD; s++) {
			fill(b[s], FLOOD_LEN, t_rank, s);
			OK(MPI_Isend(b[s], FLOOD_LEN, MPI_BYTE, 0, 90, MPI_COMM_WORLD, &rq[s]));
		}
		OK(MPI_Send(NULL, 0, MPI_BYTE, 0, 91, MPI_COMM_WORLD));
		OK(MPI_Waitall(FLOOD, rq, MPI_STATUSES_IGNORE));
		return;
	}
	for (int r = 1; r < t_size; r++) /* everything is queued before we probe */
		OK(MPI_Recv(NULL, 0, MPI_BYTE, r, 91, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	int next[8] = { 0 };
	for (int m = 0; m < FLOOD * (t_size - 1); m++) {
		MPI_Message msg;
		MPI_Status st;
		OK(MPI_Mprobe(MPI_ANY_SOURCE, 90, MPI_COMM_WORLD, &msg, &st));
		int src = st.MPI_SOURCE;
		if (src <= 0 || src >= t_size || src >= 8) {
			CHECK(0, "flood: source %d", src);
			return;
		}
		unsigned char *rb = b[m % FLOOD];
		OK(MPI_Mrecv(rb, FLOOD_LEN, MPI_BYTE, &msg, &st));
		CHECK(bad_bytes(rb, FLOOD_LEN, src, next[src]) == 0, "flood: rank %d's message %d wrong or out of order",
		      src, next[src]);
		next[src]++;
	}
}

static void errors(void)
{
	MPI_Message msg = 12345, old;
	MPI_Status st;
	MPI_Request rq;
	int flag = 0, v = 0, count = -1;
	OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
	CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) gave %d", msg);
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0, "MPI_PROC_NULL status %d/%d/%d",
	      st.MPI_SOURCE, st.MPI_TAG, count);
	OK(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st));
	CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Mrecv(MPI_MESSAGE_NO_PROC): %d, %d", msg,
	      st.MPI_SOURCE);
	OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
	CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL): flag %d message %d", flag, msg);
	OK(MPI_Imrecv(&v, 1, MPI_INT, &msg, &rq));
	OK(MPI_Wait(&rq, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Imrecv(MPI_MESSAGE_NO_PROC) status source %d", st.MPI_SOURCE);
	OK(MPI_Improbe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &msg, &st));
	CHECK(!flag, "MPI_Improbe found a message nobody sent");

	msg = MPI_MESSAGE_NULL;
	CHECK(err_class(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st)) == MPI_ERR_REQUEST, "MPI_Mrecv(MPI_MESSAGE_NULL)");
	CHECK(err_class(MPI_Imrecv(&v, 1, MPI_INT, &msg, &rq)) == MPI_ERR_REQUEST, "MPI_Imrecv(MPI_MESSAGE_NULL)");
	msg = 12345;
	CHECK(err_class(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st)) == MPI_ERR_REQUEST, "MPI_Mrecv of a garbage handle");
	/* A message to ourselves: received once, its old handle is no more. */
	v = 42;
	OK(MPI_Send(&v, 1, MPI_INT, t_rank, 98, MPI_COMM_WORLD));
	OK(MPI_Mprobe(t_rank, 98, MPI_COMM_WORLD, &msg, &st));
	old = msg;
	CHECK(err_class(MPI_Mrecv(&v, -1, MPI_INT, &msg, &st)) == MPI_ERR_COUNT && msg == old,
	      "MPI_Mrecv with count -1 must fail and keep the message");
	v = 0;
	OK(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st));
	CHECK(v == 42, "self message: %d", v);
	CHECK(err_class(MPI_Mrecv(&v, 1, MPI_INT, &old, &st)) == MPI_ERR_REQUEST, "MPI_Mrecv of a received handle");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int dead(void)
{
	static char big[BIG];
	int v = 0;
	if (t_rank == 1) {
		v = 77;
		MPI_Request rq;
		OK(MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
		OK(MPI_Isend(big, BIG, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &rq));
		usleep(300 * 1000);
		fflush(stdout);
		_exit(0);
	}
	MPI_Message msg;
	MPI_Status st;
	double t0 = now_s();
	int rc = MPI_Mprobe(1, 5, MPI_COMM_WORLD, &msg, &st);
	CHECK(err_class(rc) == MPI_ERR_PROC_FAILED && now_s() - t0 < 5, "MPI_Mprobe from a dead rank: rc %d after %.1f s",
	      rc, now_s() - t0);
	OK(MPI_Mprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &msg, &st));
	OK(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st));
	CHECK(v == 77, "the eager message rank 1 sent before it died: %d", v);
	OK(MPI_Mprobe(1, 4, MPI_COMM_WORLD, &msg, &st));
	t0 = now_s();
	rc = MPI_Mrecv(big, BIG, MPI_BYTE, &msg, &st);
	CHECK(err_class(rc) == MPI_ERR_PROC_FAILED && now_s() - t0 < 5,
	      "MPI_Mrecv of a dead rank's rendezvous message: rc %d after %.1f s", rc, now_s() - t0);
	printf("mpi_mprobe dead: rank %d: %s (%d failed checks)\n", t_rank, t_fails ? "FAIL" : "ok", t_fails);
	MPI_Finalize();
	return t_fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (argc > 1 && !strcmp(argv[1], "dead"))
		return dead();
	errors();
	if (t_size > 1) {
		/* Phase by phase: rank 0's wildcards take only this phase's messages. */
		if (t_rank == 0)
			sizes_recv();
		else
			sizes_send();
		MPI_Barrier(MPI_COMM_WORLD);
		types();
		steal();
		MPI_Barrier(MPI_COMM_WORLD);
		flood();
	}
	return t_finish("mpi_mprobe");
}
