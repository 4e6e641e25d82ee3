/* mpi_uxorder: matching among thousands of queued unexpected messages.
 * Every rank but 0 sends rank 0 a long run of messages (mixed tags and
 * sizes: empty, ACK-free, eager, rendezvous; on MPI_COMM_WORLD and on a
 * duplicate with the same tags) before rank 0 receives any. Rank 0 then
 * takes them with every shape of receive - exact, any tag, any source,
 * both wildcards; blocking (small ones post no match entry), posted
 * (Irecv), and Probe/Iprobe followed by a receive of what the probe saw -
 * and checks each against a model of what was sent: a receive gets the
 * earliest message of its source that it matches (MPI's non-overtaking
 * rule), whatever else is queued, and a receive of the probed source and
 * tag gets the probed message. A receive of a tag nobody sent is
 * cancelled in the middle, and a message longer than its receive is
 * truncated (on a third communicator, so no wildcard takes it first),
 * both with the backlog queued. Then (late_wild) a backlog taken by exact
 * receives first, its first wildcard receive or probe coming only after
 * (the index keeps the wildcard ways only from then: mpi_ux.h), more
 * messages coming after that, twice, the index emptied between.
 * PTL_TEST_UX_COUNT: messages per sender (default 3000). */
#include "mpi_test.h"

#include <stdbool.h>
#include <stdint.h>

#define NTAGS 6
#define MAXLEN 6000
static const int lens[] = { 0, 4, 16, 200, 1024, 1500, 4096, MAXLEN };

struct msg {
	int tag, len;
	bool got;
};

/* The i-th message of sender s on comm c: deterministic, so rank 0 knows
 * it without being told. */
static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	return x ^ (x >> 16);
}
static struct msg msg_of(int s, int c, int i)
{
	uint32_t h = mix((uint32_t)(s * 7919 + c * 104729) ^ mix((uint32_t)i));
	/* tags skewed so some are rare and some common */
	struct msg m = { (int)((h & 0xff) % 16 < 10 ? 0 : 1 + (h >> 8) % (NTAGS - 1)), lens[(h >> 16) % 8], false };
	return m;
}

static void fill(unsigned char *b, int len, int s, int c, int i)
{
	int hdr[3] = { s, c, i };
	for (int k = 0; k < len; k++)
		b[k] = (unsigned char)(k * 31 + i);
	memcpy(b, hdr, len < (int)sizeof hdr ? (size_t)len : sizeof hdr);
}

static int n_per, nsend;
static struct msg *model; /* [c][s][i] */
static int *first;        /* [c][s]: first not yet received */
static struct msg *M(int c, int s, int i) { return &model[((size_t)c * (size_t)t_size + (size_t)s) * (size_t)n_per + (size_t)i]; }

/* The earliest pending message of source s (comm c) matching tag (or any). */
static int earliest(int c, int s, int tag)
{
	for (int i = first[c * t_size + s]; i < n_per; i++)
		if (!M(c, s, i)->got && (tag == MPI_ANY_TAG || M(c, s, i)->tag == tag))
			return i;
	return -1;
}

static bool pending_any(int c, int src, int tag)
{
	for (int s = 1; s < t_size; s++)
		if ((src == MPI_ANY_SOURCE || s == src) && earliest(c, s, tag) >= 0)
			return true;
	return false;
}

/* A received message: it must be the earliest of its source that the
 * receive (src, tag) matches; marks it taken. Returns its index. */
static int took(int c, int src, int tag, const MPI_Status *st, const unsigned char *buf, int cap, const char *how)
{
	int s = st->MPI_SOURCE, cnt;
	MPI_Get_count(st, MPI_BYTE, &cnt);
	CHECK(s >= 1 && s < t_size && (src == MPI_ANY_SOURCE || s == src), "%s: source %d for %d", how, s, src);
	if (s < 1 || s >= t_size)
		return -1;
	int i = earliest(c, s, tag);
	CHECK(i >= 0, "%s: nothing pending from %d tag %d", how, s, tag);
	if (i < 0)
		return -1;
	struct msg *m = M(c, s, i);
	CHECK(st->MPI_TAG == m->tag, "%s (%d,%d) comm %d: tag %d, want message %d of %d: tag %d", how, src, tag, c,
	      st->MPI_TAG, i, s, m->tag);
	CHECK(cnt == (m->len < cap ? m->len : cap), "%s: count %d, want message %d of %d: %d bytes", how, cnt, i, s,
	      m->len);
	if (buf && cnt >= 12) {
		int hdr[3];
		memcpy(hdr, buf, sizeof hdr);
		CHECK(hdr[0] == s && hdr[1] == c && hdr[2] == i, "%s (%d,%d): got message %d/%d/%d, want %d/%d/%d", how,
		      src, tag, hdr[0], hdr[1], hdr[2], s, c, i);
		int bad = 0;
		for (int k = 12; k < cnt; k++)
			bad += buf[k] != (unsigned char)(k * 31 + i);
		CHECK(bad == 0, "%s: %d bad bytes in message %d of %d", how, bad, i, s);
	}
	m->got = true;
	while (first[c * t_size + s] < n_per && M(c, s, first[c * t_size + s])->got)
		first[c * t_size + s]++;
	return i;
}

static void receiver(MPI_Comm comms[3])
{
	unsigned char *buf = malloc(MAXLEN);
	int left = 2 * (t_size - 1) * n_per;
	uint32_t rnd = 12345;
	int step = 0;
	/* A receive nobody matches, posted with the backlog queued: it must
	 * take nothing, and cancel. */
	MPI_Request cr;
	OK(MPI_Irecv(buf, 1, MPI_BYTE, MPI_ANY_SOURCE, NTAGS + 7, comms[0], &cr));
	while (left > 0) {
		rnd = mix(rnd + 1);
		int c = (int)(rnd >> 30) & 1;
		int src = rnd % 4 < 2 ? 1 + (int)((rnd >> 4) % (uint32_t)(t_size - 1)) : MPI_ANY_SOURCE;
		int tag = rnd % 3 ? (int)((rnd >> 12) % NTAGS) : MPI_ANY_TAG;
		if (!pending_any(c, src, tag))
			continue;
		int kind = step++ % 5;
		MPI_Status st;
		if (step == 1000) {
			int done = 0;
			OK(MPI_Cancel(&cr));
			OK(MPI_Wait(&cr, &st));
			MPI_Test_cancelled(&st, &done);
			CHECK(done, "a receive nobody matched was not cancelled");
		}
		if (kind == 0 && src != MPI_ANY_SOURCE) {
			/* blocking, sized to the expected message: up to 1 KiB it
			 * posts no match entry */
			int want = M(c, src, earliest(c, src, tag))->len;
			OK(MPI_Recv(buf, want, MPI_BYTE, src, tag, comms[c], &st));
			took(c, src, tag, &st, buf, want, "Recv");
		} else if (kind == 1) {
			OK(MPI_Recv(buf, MAXLEN, MPI_BYTE, src, tag, comms[c], &st));
			took(c, src, tag, &st, buf, MAXLEN, "Recv");
		} else if (kind == 2) {
			MPI_Request r;
			OK(MPI_Irecv(buf, MAXLEN, MPI_BYTE, src, tag, comms[c], &r));
			OK(MPI_Wait(&r, &st));
			took(c, src, tag, &st, buf, MAXLEN, "Irecv");
		} else {
			/* probe, then receive exactly what it saw */
			MPI_Status ps;
			if (kind == 3) {
				OK(MPI_Probe(src, tag, comms[c], &ps));
			} else {
				int flag = 0;
				while (!flag)
					OK(MPI_Iprobe(src, tag, comms[c], &flag, &ps));
			}
			int pc, i = earliest(c, ps.MPI_SOURCE >= 1 && ps.MPI_SOURCE < t_size ? ps.MPI_SOURCE : 1, tag);
			MPI_Get_count(&ps, MPI_BYTE, &pc);
			OK(MPI_Recv(buf, MAXLEN, MPI_BYTE, ps.MPI_SOURCE, ps.MPI_TAG, comms[c], &st));
			int j = took(c, src, tag, &st, buf, MAXLEN, kind == 3 ? "Probe+Recv" : "Iprobe+Recv");
			int rc_;
			MPI_Get_count(&st, MPI_BYTE, &rc_);
			CHECK(i == j && pc == rc_, "probe saw message %d (%d bytes), receive got %d", i, pc, j);
		}
		left--;
		if (left == (t_size - 1) * n_per) {
			/* Halfway: a message longer than its receive is truncated
			 * (each sender's one message on comm 2). */
			for (int s = 1; s < t_size; s++) {
				MPI_Comm_set_errhandler(comms[2], MPI_ERRORS_RETURN);
				int rc = MPI_Recv(buf, 100, MPI_BYTE, s, NTAGS, comms[2], &st), cls = 0;
				MPI_Error_class(rc, &cls);
				CHECK(cls == MPI_ERR_TRUNCATE, "a %d-byte message into 100 bytes gave class %d", MAXLEN, cls);
				int cnt;
				MPI_Get_count(&st, MPI_BYTE, &cnt);
				int hdr[3];
				memcpy(hdr, buf, sizeof hdr);
				CHECK(cnt == 100 && hdr[0] == s && hdr[2] == n_per, "truncated: %d bytes of message %d/%d", cnt,
				      hdr[0], hdr[2]);
				MPI_Comm_set_errhandler(comms[2], MPI_ERRORS_ARE_FATAL);
			}
		}
	}
	if (step < 1000) {
		MPI_Status st;
		int done = 0;
		OK(MPI_Cancel(&cr));
		OK(MPI_Wait(&cr, &st));
		MPI_Test_cancelled(&st, &done);
		CHECK(done, "a receive nobody matched was not cancelled");
	}
	free(buf);
}

/* Rank 1 queues LATE_N messages at rank 0 (batch A: tags 0-3 in turn,
 * each its index), rank 0 takes the first by an exact receive, the next
 * by its first wildcard receive or probe, and tells rank 1, which sends
 * LATE_N more (batch B, after A's, listed while the wildcard ways are
 * kept); then rank 0 takes the rest with wildcards and exact receives,
 * each the earliest it matches: A's rest in order, then B's. Twice: the
 * second round after the first has emptied the index. */
#define LATE_N 40
#define LATE_GO 99
/* The value of message i of the round's two batches (B: i >= LATE_N). */
static int late_val(int round, int i)
{
	return round * 1000 + (i < LATE_N ? i : 500 + i - LATE_N);
}

static void late_send(int round, int from)
{
	static int v[2 * LATE_N];
	for (int i = from; i < from + LATE_N; i++) {
		v[i] = late_val(round, i);
		OK(MPI_Send(&v[i], 1, MPI_INT, 0, i % 4, MPI_COMM_WORLD));
	}
}

/* Rank 0's side of late_wild's round. */
static void late_take(int round)
{
	int seen[2 * LATE_N] = { 0 }, x, go = 1;
	MPI_Status st;
	/* messages 0 - 3 are queued once message 3 is (one sender's messages
	 * arrive in order): an exact probe waits for it */
	OK(MPI_Probe(1, 3, MPI_COMM_WORLD, &st));
	OK(MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &st));
	CHECK(x == late_val(round, 0), "late_wild %d: exact receive of tag 0 got %d", round, x);
	/* the first wildcard: message 1 (tag 1) is the earliest left */
	if (round == 0) {
		OK(MPI_Recv(&x, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
	} else {
		OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
		CHECK(st.MPI_TAG == 1, "late_wild %d: the first wildcard probe saw tag %d, want 1", round, st.MPI_TAG);
		OK(MPI_Recv(&x, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
	}
	CHECK(x == late_val(round, 1) && st.MPI_TAG == 1, "late_wild %d: first wildcard got %d tag %d", round, x,
	      st.MPI_TAG);
	OK(MPI_Send(&go, 1, MPI_INT, 1, LATE_GO, MPI_COMM_WORLD));
	/* any source, tag 3: message 3; any source, any tag: message 2 */
	OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st));
	CHECK(x == late_val(round, 3), "late_wild %d: (any, 3) got %d, want %d", round, x, late_val(round, 3));
	OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
	CHECK(x == late_val(round, 2), "late_wild %d: (any, any) got %d, want %d", round, x, late_val(round, 2));
	seen[0] = seen[1] = seen[2] = seen[3] = 1;
	/* the rest, alternating exact and wildcard receives, in order (B's
	 * tags go on from A's: LATE_N is a multiple of 4) */
	for (int i = 4; i < 2 * LATE_N; i++) {
		if (i % 2)
			OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
		else
			OK(MPI_Recv(&x, 1, MPI_INT, 1, i % 4, MPI_COMM_WORLD, &st));
		CHECK(x == late_val(round, i) && st.MPI_TAG == i % 4, "late_wild %d: receive %d got %d tag %d, want %d",
		      round, i, x, st.MPI_TAG, late_val(round, i));
		for (int j = 0; j < 2 * LATE_N; j++)
			if (x == late_val(round, j))
				seen[j] = 1;
	}
	for (int i = 0; i < 2 * LATE_N; i++)
		CHECK(seen[i], "late_wild %d: message %d never received", round, i);
}

static void late_wild(void)
{
	for (int round = 0; round < 2; round++) {
		if (t_rank == 1)
			late_send(round, 0);
		MPI_Barrier(MPI_COMM_WORLD);
		if (t_rank == 0) {
			late_take(round);
		} else if (t_rank == 1) {
			int go;
			OK(MPI_Recv(&go, 1, MPI_INT, 0, LATE_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			late_send(round, LATE_N);
		}
		/* the next round's backlog comes after this one is gone */
		MPI_Barrier(MPI_COMM_WORLD);
	}
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	const char *e = getenv("PTL_TEST_UX_COUNT");
	n_per = e ? atoi(e) : 3000;
	if (n_per < 10)
		n_per = 10;
	MPI_Comm comms[3] = { MPI_COMM_WORLD, MPI_COMM_NULL, MPI_COMM_NULL };
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[2]));
	model = calloc((size_t)2 * (size_t)t_size * (size_t)n_per, sizeof *model);
	first = calloc((size_t)2 * (size_t)t_size, sizeof *first);
	for (int c = 0; c < 2; c++)
		for (int s = 1; s < t_size; s++)
			for (int i = 0; i < n_per; i++)
				*M(c, s, i) = msg_of(s, c, i);
	if (t_rank == 0) {
		MPI_Barrier(MPI_COMM_WORLD); /* everything is on its way */
		receiver(comms);
	} else {
		nsend = 2 * n_per + 1;
		MPI_Request *rq = malloc(sizeof *rq * (size_t)nsend);
		size_t total = MAXLEN, off = 0;
		for (int i = 0; i < n_per; i++)
			for (int c = 0; c < 2; c++)
				total += (size_t)msg_of(t_rank, c, i).len;
		unsigned char *bufs = malloc(total);
		int k = 0;
		/* interleave the two communicators, as an application's
		 * library traffic would */
		for (int i = 0; i < n_per; i++)
			for (int c = 0; c < 2; c++, k++) {
				struct msg m = msg_of(t_rank, c, i);
				fill(bufs + off, m.len, t_rank, c, i);
				OK(MPI_Isend(bufs + off, m.len, MPI_BYTE, 0, m.tag, comms[c], &rq[k]));
				off += (size_t)m.len;
			}
		fill(bufs + off, MAXLEN, t_rank, 2, n_per);
		OK(MPI_Isend(bufs + off, MAXLEN, MPI_BYTE, 0, NTAGS, comms[2], &rq[k]));
		MPI_Barrier(MPI_COMM_WORLD);
		OK(MPI_Waitall(nsend, rq, MPI_STATUSES_IGNORE));
		free(rq);
		free(bufs);
	}
	late_wild();
	MPI_Comm_free(&comms[1]);
	MPI_Comm_free(&comms[2]);
	free(model);
	free(first);
	return t_finish("mpi_uxorder");
}
