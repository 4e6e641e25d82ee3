/* mpi_wildstress: wildcard receives racing arrivals, bounded in time.
 *
 * Rounds until PTL_TEST_SECONDS (default 3) pass or 20000 rounds: every
 * rank but 0 sends K messages to rank 0 - mostly eager, some rendezvous,
 * some zero-length, some synchronous, with random tags and random short
 * gaps - while rank 0 takes them with MPI_ANY_SOURCE/MPI_ANY_TAG receives,
 * alternately blocking (posted while the messages arrive) and pre-posted
 * in a batch before a round starts (so arrivals race the posting). Every
 * message carries (source, round, sequence, tag): rank 0 checks each one
 * is delivered exactly once, its status names its sender and tag, its
 * count is right, and per sender they come in send order (non-overtaking).
 * A round ends with an exchange on other tags (truncated eager receives
 * among them), so any message matched twice or lost shows within a round.
 */
#include "mpi_test.h"

#include <stdint.h>

enum { K = 12, BIG = 20000, MAXR = 64 };

struct msg {
	int src, round, seq, tag;
};

static unsigned long rng = 88172645463325252ull;
static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 11);
}

static void spin_us(int us)
{
	double t0 = MPI_Wtime();
	while ((MPI_Wtime() - t0) * 1e6 < us)
		;
}

static char bigbuf[MAXR][BIG];

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	if (t_size < 2 || t_size > MAXR) {
		fprintf(stderr, "mpi_wildstress: needs 2-%d ranks\n", MAXR);
		MPI_Finalize();
		return 77;
	}
	const char *e = getenv("PTL_TEST_SECONDS");
	double secs = e ? atof(e) : 3;
	rng += (unsigned long)t_rank * 7919;
	int nsend = t_size - 1, go = 1, rounds = 0;
	double t0 = MPI_Wtime();
	int lastseq[MAXR];
	static char rbuf[K * MAXR][BIG];
	MPI_Request rq[K * MAXR];
	long total = 0;
	MPI_Comm ring;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &ring));
	MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
	for (;;) {
		int nr = K * nsend;
		int prepost = rounds % 2;
		if (t_rank == 0 && prepost)
			for (int i = 0; i < nr; i++)
				OK(MPI_Irecv(rbuf[i], BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[i]));
		/* start together, so arrivals race the posting */
		MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
		if (!go) {
			if (t_rank == 0 && prepost)
				for (int i = 0; i < nr; i++) {
					OK(MPI_Cancel(&rq[i]));
					OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
				}
			break;
		}
		if (t_rank == 0) {
			int seen[MAXR][K];
			memset(seen, 0, sizeof seen);
			for (int s = 0; s < MAXR; s++)
				lastseq[s] = -1;
			for (int i = 0; i < nr; i++) {
				MPI_Status st;
				char *b = prepost ? rbuf[i] : rbuf[0];
				if (prepost)
					OK(MPI_Wait(&rq[i], &st));
				else
					OK(MPI_Recv(b, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
				int cnt = -1;
				MPI_Get_count(&st, MPI_BYTE, &cnt);
				struct msg m = { -1, -1, -1, -1 };
				if (cnt >= (int)sizeof m)
					memcpy(&m, b, sizeof m);
				else if (cnt == 0)
					m.src = st.MPI_SOURCE, m.round = rounds, m.tag = st.MPI_TAG, m.seq = -2;
				if (st.MPI_SOURCE < 1 || st.MPI_SOURCE > nsend) {
					CHECK(0, "round %d: status source %d", rounds, st.MPI_SOURCE);
					continue;
				}
				CHECK(m.src == st.MPI_SOURCE && m.tag == st.MPI_TAG && m.round == rounds,
				      "round %d: message (src %d round %d seq %d tag %d) with status source %d tag %d count %d",
				      rounds, m.src, m.round, m.seq, m.tag, st.MPI_SOURCE, st.MPI_TAG, cnt);
				if (m.seq >= 0 && m.seq < K && m.src == st.MPI_SOURCE) {
					CHECK(seen[m.src][m.seq] == 0,
					      "round %d: message %d of rank %d (tag %d, %d bytes, receive %d%s) matched twice",
					      rounds, m.seq, m.src, m.tag, cnt, i, prepost ? ", pre-posted" : "");
					seen[m.src][m.seq]++;
					CHECK(m.seq > lastseq[m.src], "round %d: rank %d's message %d after its %d", rounds,
					      m.src, m.seq, lastseq[m.src]);
					lastseq[m.src] = m.seq;
				} else if (m.seq == -2) {
					/* a zero-length one: its sequence number is its tag's */
					int q = st.MPI_TAG % 1000;
					if (q >= 0 && q < K) {
						CHECK(seen[st.MPI_SOURCE][q] == 0, "round %d: empty message %d of rank %d twice",
						      rounds, q, st.MPI_SOURCE);
						seen[st.MPI_SOURCE][q]++;
						CHECK(q > lastseq[st.MPI_SOURCE], "round %d: rank %d's message %d after its %d",
						      rounds, st.MPI_SOURCE, q, lastseq[st.MPI_SOURCE]);
						lastseq[st.MPI_SOURCE] = q;
					}
				}
				total++;
			}
			for (int s = 1; s <= nsend; s++)
				for (int q = 0; q < K; q++)
					CHECK(seen[s][q] == 1, "round %d: message %d of rank %d seen %d times", rounds, q, s,
					      seen[s][q]);
		} else {
			for (int q = 0; q < K; q++) {
				unsigned r = rnd();
				int kind = r % 16;
				int tag = (int)((r >> 8) % 5) * 1000 + q; /* tag % 1000 = sequence */
				struct msg m = { t_rank, rounds, q, tag };
				char *b = bigbuf[t_rank];
				memcpy(b, &m, sizeof m);
				if (kind == 0)
					OK(MPI_Send(b, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
				else if (kind == 1)
					OK(MPI_Send(b, BIG, MPI_BYTE, 0, tag, MPI_COMM_WORLD)); /* rendezvous */
				else if (kind == 2)
					OK(MPI_Ssend(b, (int)sizeof m, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
				else
					OK(MPI_Send(b, (int)sizeof m + (int)(r >> 20) % 64, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
				if ((r >> 4) % 4 == 0)
					spin_us((int)((r >> 12) % 50));
			}
		}
		/* Other traffic between rounds: a ring on a communicator of its
		 * own (on WORLD the ANY_TAG receives above could rightly take
		 * it), with a truncated eager receive (its sender must still
		 * finish). */
		int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
		int out[4] = { t_rank, rounds, 7, 7 }, in[2] = { -1, -1 };
		MPI_Status st;
		int rc = MPI_Sendrecv(out, 4, MPI_INT, right, 5, in, 2, MPI_INT, left, 5, ring, &st);
		int cls = MPI_SUCCESS;
		MPI_Error_class(rc, &cls);
		CHECK((cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_IN_STATUS) && in[0] == left && in[1] == rounds,
		      "round %d: ring gave class %d, %d %d", rounds, cls, in[0], in[1]);
		if (t_rank == 0) {
			/* nobody sends again before the next Bcast */
			int flag = 1;
			OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
			CHECK(!flag, "round %d: a message left over", rounds);
		}
		rounds++;
		/* rank 0 decides; it stops at the first bad round */
		if (t_rank == 0 && (MPI_Wtime() - t0 > secs || rounds >= 20000 || t_fails))
			go = 0;
	}
	OK(MPI_Comm_free(&ring));
	if (t_rank == 0)
		fprintf(stderr, "mpi_wildstress: %d ranks: %d rounds, %ld wildcard receives in %.1f s\n", t_size,
			rounds, total, MPI_Wtime() - t0);
	return t_finish("mpi_wildstress");
}
