/* coll_cost.c: alpha-beta-gamma model of a schedule run as a DAG with port
 * contention (seed 002, V4).
 *
 * List scheduling in time order: a command is ready when its dependencies
 * have finished; a transfer when its send and its receive are both ready.
 * Ready work goes through a min-heap on ready time; a transfer takes the
 * earliest free port of its sending rank, so with one port the two
 * directions of ring_bidir (or two tree halves) take turns, while with two
 * they overlap. Everything pushed has a ready time no earlier than what was
 * just popped, so ports are handed out in time order.
 *
 * The software terms give each rank a CPU, handed out in the same time
 * order: a send takes o of the sender's CPU before its port, and the
 * receive is a second event at the transfer's end (so a CPU is never booked
 * ahead of work that becomes ready earlier) taking o, plus the reduction,
 * of the receiver's. With every software term 0 the CPU only makes a
 * rank's reductions take turns (one thread adds one vector at a time);
 * otherwise the model is the plain alpha-beta-gamma one.
 *
 * With rndv, a transfer above rndv_min is ptl's rendezvous: header, the
 * receiver's request, and the copy on the sender's CPU (EV_RTS, EV_GET),
 * so a rank that serves a get cannot add or ask for its own data then,
 * but from the peer it copies to (an exchange's other half: it asks
 * between its pieces).
 * A copy of split_min bytes and up is split as ptl's shm NAL splits it:
 * the second half on the receiver's CPU once the sender's request reaches
 * it (EV_HELP), and the copy is done when both halves are (EV_COPIED).
 * With move rates, a copy that goes one way is shm's bounce move instead:
 * the sender's CPU copies the bytes out into the segment while the
 * receiver's, from when the first piece is out (EV_BOUNCE), copies them
 * in; an exchange's copies stay the sender's CPU's at the exchange rates.
 * A move's hand-overs take time beyond its copies (move_gap, latency that
 * books no CPU), which the rank's other work, or other ranks', can fill;
 * so do an exchange's whole copies' (xch_gap), after the copy's end.
 * Bound, exchange copies that follow each other on a core are one run
 * (xch_turns): the core passes between them piece by piece, so each is
 * done when the run ends, or when it would be alone from the run's
 * start (its copy and gap) if that is later.
 * Which of the three a copy is (whole, split, moved) goes by its size:
 * the bulk steps when given (shm chooses per peer and size class), else
 * split_min and whether there are move rates.
 *
 * With fewer cores than ranks (cores), a rank's CPU work also needs a
 * core: each piece goes to the core where it can start first, and a rank
 * that had been waiting pays the switch first (ptl's waiting ranks yield
 * at every poll), so the ranks' work takes turns per core rather than
 * every rank running at a fraction of one. With cpu_copies an eager
 * message's bytes are the sender's CPU work, not its port's; above
 * inline_max the receiver's, on arrival, at the rate measured for such
 * reads (read: an exchange's, both ranks reading at once).
 *
 * Each term is a mechanism of ptl's, measured on its own: a message up to
 * small_max goes request-free (its own o and alpha); a rendezvous copy
 * moves at the rate measured for its message's size (rates), else at
 * beta; taking a request-free message costs its receiver more by its
 * size (small_recv), an inline one with requests up to the sizes
 * measured (recv); a local copy takes its rank's CPU at the rate
 * measured for its size (local); a rank pays wake_cost for each message
 * it takes (its wait's way back into the collective); a message that
 * crossed one its receiver sent back costs that receiver more when its
 * receive posted nothing (cross);
 * a receiver's read of an eager message too large to go inline moves at
 * the rate measured for reads of its size (read), by the method shm
 * picked for it (read_bulk: one copy on the receiver's CPU; split, half
 * on each; moved through the segment, the sender's CPU copies out and
 * the receiver's in, a piece behind, as a one-way bounce move; or, still
 * inline, through the ring: the sender's copy as it sends, the
 * receiver's as it takes it). On shared cores a waiting rank
 * sees its message core_wait after it came (its core passing round the
 * waiting ranks); ranks bound to cores that share one copy between
 * themselves at their own rates (same: the lines stay in its caches).
 *
 * With calls, the calls run back to back as a benchmark's loop runs
 * them: command i of a rank is command i % ncmds of call i / ncmds, and
 * a call's first commands wait for the rank's part of the call before.
 * With unexpected, a send goes when its sender is ready and a message
 * that comes before its receive is ready is held until it is. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

struct hent {
	double key;
	uint64_t tie;   /* command id: equal times go in schedule order */
	int rank;
	size_t idx;
	unsigned char ev;  /* EV_READY, or a transfer's EV_ARRIVAL or EV_ACK */
	double aux;        /* by event, below (EV_HELP: when the sender's half is done) */
	double sent;       /* EV_ARRIVAL: when its transfer began (crossing); EV_COPIED:
	                    * the copy's end if it is in a run (xch_turns), else 0;
	                    * EV_GET: when it came, if it has waited for its core
	                    * (EV_DEFERRED) behind the core's run of exchange copies
	                    * only; -1 if behind other work; else 0 */
};

/* EV_RTS: a rendezvous header reached the receiver (idx: its receive);
 * EV_GET: the receiver's request reached the sender (idx: its send);
 * EV_HELP: a split copy's request for the second half reached the
 * receiver (idx: its receive); EV_COPIED: the bytes are in place (idx:
 * the send; aux: an exchange's gap still to pass, -1 once the copy's
 * end is booked and the gap passing; sent: the copy's end where it is
 * in a run of its core's exchange copies, xch_turns, which may end
 * later); EV_BOUNCE: a one-way bounce
 * move's first piece is in the segment, the receiver copies the pieces
 * in (idx: its receive; aux: when the sender's copy out ends). An eager
 * read the sender serves once asked (read_bulk split or move): EV_RDREQ,
 * the receiver's request reached the sender (idx: the send; aux: when
 * the receiver's own half is done, split), which copies out or its half;
 * EV_RDIN, the receiver's part after that (idx: its receive; sent: its
 * copy in, seconds; aux: when the read can be done at the earliest). */
/* bound cores: an event put back once, after its core's holder's work
 * of that time (or-ed into hent.ev) */
#define EV_DEFERRED 0x80
enum { EV_READY, EV_ARRIVAL, EV_ACK, EV_RTS, EV_GET, EV_HELP, EV_COPIED, EV_BOUNCE, EV_RDREQ, EV_RDIN };

struct heap {
	struct hent *v;
	size_t n, cap;
};

static bool hless(const struct hent *a, const struct hent *b)
{
	return a->key < b->key || (a->key == b->key && a->tie < b->tie);
}

static int hpush(struct heap *h, struct hent e)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 1024;
		struct hent *v = realloc(h->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	size_t i = h->n++;
	while (i && hless(&e, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = e;
	return 0;
}

static struct hent hpop(struct heap *h)
{
	struct hent top = h->v[0], last = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && hless(&h->v[c + 1], &h->v[c]))
			c++;
		if (!hless(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

struct sim {
	const struct coll_sched *s;
	const struct coll_cost_params *p;  /* the event's: base, or same for a pair of one core */
	const struct coll_cost_params *base;
	struct coll_cost_params same;      /* base with the same-core rates (nsame) */
	bool same_on;
	struct coll_pairs pairs;
	struct coll_dag *dag;
	double **rdy;       /* max finish time of the dependencies so far */
	double *ports;      /* ports free time, nports per rank */
	double *busy;       /* port-seconds per rank */
	double *cpu;        /* when each rank's CPU is next free */
	double *cpu_busy;   /* CPU-seconds per rank */
	int calls;          /* back to back; command i of rank r is call i / ncmds's */
	uint32_t **nwait;   /* per rank and call: dependencies left (the DAG's, and for a
	                     * call's first commands the rank's part of the call before) */
	size_t *left;       /* per rank: its commands of its current call not finished */
	double *call_end;   /* per call: when its last command finished */
	struct hent **held; /* unexpected: per rank and command, a message (EV_ARRIVAL or
	                     * EV_RTS) that came before its receive was ready; key < 0: none */
	size_t *split;      /* per rank: the send whose copy is split now, or SIZE_MAX */
	double k;           /* slowdown of CPU work: ranks per core, >= 1 */
	int ncores;         /* > 0: ranks share these cores (core_free, core_last) */
	double *core_free;  /* when each core is next free */
	double *xch_from, *xch_to;  /* bound: each core's latest run of exchange copies (xch_turns) */
	int *core_last;     /* the rank each core ran last, -1: none yet */
	double turns;       /* bound: switches made, all cores */
	uint64_t rng;       /* bound: the switches' jitter sequence */
	double *step_sw;    /* per step: its switch (switch_shift, _exch or _cost) */
	double sw;          /* the switch of the step being simulated */
	int nports;
	/* per rank: its latest eager transfer (to xpeer, from xstart to
	 * xend), which a message from xpeer crosses if their times overlap */
	int *xpeer;
	double *xstart, *xend;
	/* per rank: rendezvous sends in flight (header out, copy not done)
	 * and the peer of the latest; a copy to a rank with one of its own
	 * in flight to the copy's sender is an exchange's (only the latest
	 * peer is kept: a rank with sends in flight to several peers, as a
	 * 4-rank ring_bidir's, may be taken for a one-way move) */
	int *rv_n, *rv_peer;
	/* per rank: the peer of the latest copy it served (-1: none) and
	 * when that copy ends (EV_RTS: a rank still copying to the header's
	 * sender asks between its pieces) */
	int *copy_peer;
	double *copy_end;
	/* per rank: the step (call << 32 | step, plus one; 0: none) of its
	 * latest send that paid the eager rate (eager_copy) */
	uint64_t *eager_step;
	struct heap h;
	double end;
	uint64_t nfin;
};

static bool is_xfer(const struct coll_cmd *c)
{
	return c->kind == COLL_SEND || c->kind == COLL_RECV
	       || (c->kind == COLL_REDUCE && c->peer >= 0);
}

/* Command i of rank r (of call i / ncmds), its heap tie (equal times go
 * in schedule order, call by call) and its partner's index. */
static const struct coll_cmd *cmd_at(const struct sim *m, int r, size_t i)
{
	return &m->s->ranks[r].cmds[i % m->s->ranks[r].ncmds];
}

static uint64_t tie_of(const struct sim *m, int r, size_t i)
{
	return cmd_at(m, r, i)->id + ((uint64_t)(i / m->s->ranks[r].ncmds) << 48);
}

static void partner(const struct sim *m, int r, size_t i, int *pr, size_t *pi)
{
	size_t n = m->s->ranks[r].ncmds;
	*pr = m->pairs.rank[r][i % n];
	*pi = m->pairs.idx[r][i % n] + i / n * m->s->ranks[*pr].ncmds;
}

static double cpu_run(struct sim *m, int r, double t, double w);
static bool small(const struct coll_cost_params *p, size_t len);

/* transfer command (r, i) is posted as soon as it has no dependencies
 * left: the rank's CPU pays cmd_cost, and for a receive that posts an ME
 * recv_post (then it can match). A send's o comes when it can go. A
 * request-free message (small) pays no cmd_cost at either end: its
 * small_o, a blocking send's and receive's CPU, holds what its ends do
 * for it (ptl's MPI sends a schedule's short messages so too). */
static void post(struct sim *m, int r, size_t i)
{
	const struct coll_cmd *c = cmd_at(m, r, i);
	double w = small(m->p, c->len) ? 0.0 : m->p->cmd_cost;
	if (c->kind != COLL_SEND && c->len > m->p->lazy_max)
		w += m->p->recv_post;
	if (w > 0)
		m->rdy[r][i] = cpu_run(m, r, m->rdy[r][i], w);
}

/* command (r, i) has no dependencies left */
static int became_ready(struct sim *m, int r, size_t i)
{
	const struct coll_cmd *c = cmd_at(m, r, i);
	if (!is_xfer(c))
		return hpush(&m->h, (struct hent){ m->rdy[r][i], tie_of(m, r, i), r, i, EV_READY, 0, 0 });
	post(m, r, i);
	if (m->p->unexpected) {
		/* a send goes at once; a receive takes a message that came
		 * before it was ready (held) now */
		if (c->kind == COLL_SEND)
			return hpush(&m->h, (struct hent){ m->rdy[r][i], tie_of(m, r, i), r, i, EV_READY, 0, 0 });
		struct hent *h = &m->held[r][i];
		if (h->key < 0)
			return 0;
		if (h->key < m->rdy[r][i])
			h->key = m->rdy[r][i];
		return hpush(&m->h, *h);
	}
	int pr;
	size_t pi;
	partner(m, r, i, &pr, &pi);
	if (m->nwait[pr][pi])
		return 0;  /* the partner is not ready: it pushes the pair */
	int sr = c->kind == COLL_SEND ? r : pr;
	size_t si = c->kind == COLL_SEND ? i : pi;
	double t = m->rdy[r][i] > m->rdy[pr][pi] ? m->rdy[r][i] : m->rdy[pr][pi];
	return hpush(&m->h, (struct hent){ t, tie_of(m, sr, si), sr, si, EV_READY, 0, 0 });
}

/* Rank r, its part of a call done at t, enters the next (its commands
 * from base): the call's own CPU, then its first commands are ready. */
static int next_call(struct sim *m, int r, size_t base, double t)
{
	size_t n = m->s->ranks[r].ncmds;
	m->left[r] = n;
	double in = cpu_run(m, r, t, m->p->call);
	for (size_t j = 0; j < n; j++)
		if (m->dag[r].nwait[j] == 0) {
			m->rdy[r][base + j] = in;
			if (--m->nwait[r][base + j] == 0) {
				int rc = became_ready(m, r, base + j);
				if (rc)
					return rc;
			}
		}
	return 0;
}

static int finish(struct sim *m, int r, size_t i, double t)
{
	size_t n = m->s->ranks[r].ncmds, base = i / n * n;
	m->nfin++;
	if (m->p->on_finish)
		m->p->on_finish(m->p->on_finish_ctx, (int)(i / n), r, cmd_at(m, r, i), t);
	if (t > m->end)
		m->end = t;
	if (t > m->call_end[i / n])
		m->call_end[i / n] = t;
	const struct coll_dag *d = &m->dag[r];
	for (size_t k = d->dep_off[i - base]; k < d->dep_off[i - base + 1]; k++) {
		size_t j = base + d->dep_idx[k];
		if (t > m->rdy[r][j])
			m->rdy[r][j] = t;
		if (--m->nwait[r][j] == 0) {
			int rc = became_ready(m, r, j);
			if (rc)
				return rc;
		}
	}
	if (--m->left[r] == 0 && i / n + 1 < (size_t)m->calls)
		return next_call(m, r, base + n, t);
	return 0;
}

/* whether a transfer of len bytes goes by rendezvous */
static bool rndv(const struct coll_cost_params *p, size_t len)
{
	return p->rndv && len > p->rndv_min;
}

/* whether the receiver's CPU copies an eager message of len bytes on its
 * arrival (too large for the sender to put inline) */
static bool recv_copies(const struct coll_cost_params *p, size_t len)
{
	return p->cpu_copies && p->inline_max && len > p->inline_max && !rndv(p, len);
}

/* whether a message of len bytes goes request-free (small_max) */
static bool small(const struct coll_cost_params *p, size_t len)
{
	return len > 0 && len <= p->small_max && !rndv(p, len);
}

/* the CPU a message of len bytes costs each end, and its time between */
static double o_of(const struct coll_cost_params *p, size_t len)
{
	return small(p, len) ? p->small_o : p->o;
}

/* The value at len of n points, lengths ascending, stride bytes apart with
 * the value val_off bytes past each length: interpolated linearly between
 * the two points around len, beyond the ends the end's; none without
 * points. */
static double interp(const void *pts, size_t stride, size_t val_off, int n, size_t len, double none)
{
	const char *b = pts;
#define PT_LEN(i) (*(const size_t *)(const void *)(b + (size_t)(i) * stride))
#define PT_VAL(i) (*(const double *)(const void *)(b + (size_t)(i) * stride + val_off))
	double v = none;
	if (n > 0 && len <= PT_LEN(0))
		v = PT_VAL(0);
	else if (n > 0 && len >= PT_LEN(n - 1))
		v = PT_VAL(n - 1);
	else
		for (int i = 1; i < n; i++)
			if (len < PT_LEN(i)) {
				double f = (double)(len - PT_LEN(i - 1)) / (double)(PT_LEN(i) - PT_LEN(i - 1));
				v = PT_VAL(i - 1) + f * (PT_VAL(i) - PT_VAL(i - 1));
				break;
			}
#undef PT_LEN
#undef PT_VAL
	return v;
}

/* a time table's time for len (interp; none: 0) */
static double table_at(const struct coll_cost_table *t, size_t len)
{
	return interp(t->pt, sizeof t->pt[0], offsetof(struct coll_cost_point, time), t->n, len, 0.0);
}

static double alpha_of(const struct coll_cost_params *p, size_t len)
{
	return small(p, len) ? p->small_alpha : p->alpha;
}

static double rndv_copy(const struct coll_cost_params *p, size_t len, size_t bytes);

/* How an eager read of len bytes goes (COLL_BULK_*): by the read steps,
 * else one copy by the receiver */
static int read_how(const struct coll_cost_params *p, size_t len)
{
	int k = 0;

	if (p->nread_bulk <= 0)
		return COLL_BULK_COPY;
	while (k + 1 < p->nread_bulk && len >= p->read_bulk[k + 1].len)
		k++;
	return p->read_bulk[k].how;
}

/* whether the receiver takes an eager read of len bytes without asking
 * its sender: it copies it whole (COLL_BULK_COPY), or out of the ring the
 * sender copied it into as it sent (COLL_BULK_RING) */
static bool read_unasked(const struct coll_cost_params *p, size_t len)
{
	int how = read_how(p, len);
	return how == COLL_BULK_COPY || how == COLL_BULK_RING;
}

/* Seconds a receiver's read of an eager message of len bytes (too large
 * to go inline) takes its CPU: at the rate measured for reads of its size
 * (read) up to the largest size measured, else at a rendezvous copy's
 * rate for it (rates), else recv_copy_cost and the bytes at beta. A rate
 * measured so holds the copy's fixed cost (its system call): each comes
 * from exchanges, bytes over the time beyond the model's with an instant
 * copy. ptl's reads in an exchange (each rank reads the other's put into
 * its own receive) are faster than its unsplit rendezvous copies (each
 * rank writes into the other's buffer): 2 pinned ranks, 16 KiB 5.5
 * against 5.0 GB/s, 64 KiB 10.3 against 8.5. From split_min a rendezvous
 * exchange has each CPU copy as many bytes from the other's memory as a
 * read does, and takes as long (128 KiB 15.4 us either way, 256 KiB
 * 26.8 against 27.7, the reads by blocking sends with the eager limit
 * raised), so past the read table (only a 2-rank allreduce's
 * MPI_MODE_PULL reads past 8 times the eager limit) that copy's rate
 * stands in. That held for CMA copies; through shm's bounce area (its
 * default) a read exchange is the slower (512 KiB 100 us against 65-70),
 * so bench/mpi_bench.sh measures the reads up to 1 MiB (launches with
 * the eager limit raised) and this stand-in is for tables without them. */
static double read_copy(const struct coll_cost_params *p, size_t len)
{
	int n = p->nread < COLL_COST_RATES ? p->nread : COLL_COST_RATES;
	if (n <= 0 || len > p->read[n - 1].len)
		return (p->nrates > 0 ? 0.0 : p->recv_copy_cost) + rndv_copy(p, len, len);
	double rate = interp(p->read, sizeof p->read[0], offsetof(struct coll_copy_rate, rate), n, len, p->beta);
	return rate > 0 ? (double)len / rate : 0.0;
}

/* Seconds one copy of `bytes` of an eager read of len bytes takes: its
 * share of read_copy's (a split read's halves, a moved read's copy out
 * and copy in each at the read's rate) */
static double read_part(const struct coll_cost_params *p, size_t len, size_t bytes)
{
	return len ? read_copy(p, len) * ((double)bytes / (double)len) : 0.0;
}

/* the part of a split read the receiver copies itself: the first half,
 * rounded down to 4 KiB as shm_bulk.c splits */
static size_t read_own(size_t len)
{
	return (len / 2) & ~(size_t)4095;
}

/* what taking a message of len bytes costs its receiver: o, and the read
 * when it makes it (read_copy); a request-free one, small_o and the lines
 * it pulls over (small_recv); an inline one with requests, o and the
 * lines it pulls over up to recv's largest size (past it the eager
 * rates hold them) */
static double take_cost(const struct coll_cost_params *p, size_t len)
{
	const struct coll_cost_table *t = &p->small_recv, *l = &p->recv;
	if (small(p, len))
		return p->small_o + table_at(t, len);
	if (!recv_copies(p, len))
		return o_of(p, len) + (l->n > 0 && !rndv(p, len) && len <= l->pt[l->n - 1].len
					       ? table_at(l, len)
					       : 0.0);
	return p->o + (read_unasked(p, len) ? read_copy(p, len) : 0.0);
}

/* Seconds a receiver's copy (rendezvous, or an eager message too large
 * to go inline) of `bytes` of a len-byte message takes: at the measured
 * rate for len (rates, interpolated between the two points around it),
 * else at beta. */
static double rndv_copy(const struct coll_cost_params *p, size_t len, size_t bytes)
{
	int n = p->nrates < COLL_COST_RATES ? p->nrates : COLL_COST_RATES;
	double rate = interp(p->rates, sizeof p->rates[0], offsetof(struct coll_copy_rate, rate), n, len, p->beta);
	return rate > 0 ? (double)bytes / rate : 0.0;
}

/* Seconds each CPU copies for a one-way bounce move of len bytes (out on
 * the sender's, in on the receiver's): at the move rate measured for its
 * size (move, interpolated). */
static double move_copy(const struct coll_cost_params *p, size_t len)
{
	int n = p->nmove < COLL_COST_RATES ? p->nmove : COLL_COST_RATES;
	double rate = interp(p->move, sizeof p->move[0], offsetof(struct coll_copy_rate, rate), n, len, 0.0);
	return rate > 0 ? (double)len / rate : 0.0;
}

/* The part of a bounce move one hand-over carries (move_piece, 64 KiB by
 * default, as shm's SHM_PIECE): the receiver's copy starts that far into
 * the sender's, and ends that far after it at the earliest. */
static double piece_share(const struct coll_cost_params *p, size_t len)
{
	size_t piece = p->move_piece ? p->move_piece : (size_t)64 << 10;
	return len > piece ? (double)piece / (double)len : 1.0;
}

static double local_copy(const struct coll_cost_params *p, size_t len);

/* Seconds the sender's CPU copies an eager message of len bytes (with
 * cpu_copies): at the rate measured for its size (eager, interpolated),
 * else at beta. A request-free one (small) keeps beta: its costs by size
 * are small_recv's, measured on its own path (blocking ping-pongs), not
 * by the requests' shifts the eager rates come from. */
static double eager_copy(const struct coll_cost_params *p, size_t len)
{
	int n = small(p, len) ? 0 : p->neager < COLL_COST_RATES ? p->neager : COLL_COST_RATES;
	double rate = interp(p->eager, sizeof p->eager[0], offsetof(struct coll_copy_rate, rate), n, len, p->beta);
	return rate > 0 ? (double)len / rate : 0.0;
}

/* Seconds the sender's CPU spends on eager send c (event e) beyond o:
 * the first of the rank's sends in a step pays the eager rate, the
 * others only their copy at beta (copy). Where the ranks outnumber the
 * cores the measured rates (4-rank shifts: one send a step) hold more
 * than a copy: a wait for the receivers' core that a step's sends ride
 * together. A 4-rank ring_bidir's steps, two sends each against the
 * ring's one, took as long as the ring's (22-25 us a call at 32 KiB,
 * four steps, against the ring's 31-38 for six: kept run s40/b2), where
 * a rate charged to every send predicted that row 1.37-1.49x in each of
 * nine kept runs (s36/q1-q4, s39/b1-b3, s40/b1-b2); each step's first
 * send alone: 1.07-1.17x, and 8 rows more of the runs' 315 within 10%. */
static double step_copy(struct sim *m, const struct hent *e, const struct coll_cmd *c, double copy)
{
	uint64_t key = ((uint64_t)(e->idx / m->s->ranks[e->rank].ncmds) << 32 | c->step) + 1;
	if (m->eager_step[e->rank] == key)
		return copy;
	m->eager_step[e->rank] = key;
	return eager_copy(m->p, c->len);
}

/* What taking the message of arrival e costs its receiver's CPU: first
 * wake_cost, the way back from the collective's wait (the poll that saw
 * it, the pass over what the collective waits for). Every message pays
 * it, not only one that came while its rank idled: ptl's MPI takes each
 * through that wait, and a rank busy when it came (posting its next
 * receives) goes the same way after. Charged only to idle ranks, the
 * 2-rank tree's rows (two trees of half the vector: a rank posts its
 * second tree's receive before the first message comes, which then
 * found it busy) read 0.81-0.88x at 64 B-4 KiB against the ring's
 * 0.91-0.98x for the same exchanges (three kept runs, 2026-12-01);
 * charged to every message, 0.92-0.99x. */
static double arrival_cost(const struct sim *m, const struct hent *e, size_t len)
{
	double wake = m->p->wake_cost;
	/* an eager message held as unexpected (aux) is copied out of the
	 * unexpected buffer when its receive takes it, and so is one a lazy
	 * receive (up to lazy_max: no ME) takes whenever it came: it lands
	 * in the unexpected buffer too. Without the lazy one's copy direct
	 * recursive doubling's 2-rank 4 KiB rows (lazy since 2026-12-04)
	 * read 0.82x */
	double out = e->ev == EV_ARRIVAL && (e->aux > 0 || len <= m->p->lazy_max) ? local_copy(m->p, len) : 0.0;
	/* a message that crossed one its receiver sent back (an exchange)
	 * and came inline: cross is measured by exchanges whose receives
	 * find their message there (both ranks send first), and a posted
	 * receive (an ME) pays it as well: the 2-rank ring's 512 B rows
	 * (256 B messages, MEs) read 0.88-0.89x without it, 0.94-0.95x with
	 * it (keep0, 2026-12-01). A read (recv_copies) or a rendezvous has
	 * it in its rates, measured by exchanges. Past the table's largest
	 * size none: not measured there, and the request-free exchanges'
	 * 4 KiB point (0.12 us) overstated the 2 KiB messages of the 2-rank
	 * 4 KiB rows (1.12-1.16x against 1.03-1.05x without). A request-free
	 * message takes small_cross when given, measured on its own path up
	 * to 4 KiB: direct recursive doubling's 4 KiB rows (4 KiB exchanges)
	 * read 0.79-0.81x without a point there. */
	const struct coll_cost_table *x = small(m->p, len) && m->p->small_cross.n > 0 ? &m->p->small_cross
										      : &m->p->cross;
	double cross = 0.0;
	if (x->n > 0 && e->ev == EV_ARRIVAL && len <= x->pt[x->n - 1].len && !recv_copies(m->p, len)
	    && !rndv(m->p, len)) {
		int pr;
		size_t pi;
		partner(m, e->rank, e->idx, &pr, &pi);
		if (m->xpeer[e->rank] == pr && m->xstart[e->rank] < e->key && m->xend[e->rank] > e->sent)
			cross = table_at(x, len);
	}
	return wake + out + cross + take_cost(m->p, len);
}

/* Seconds a local copy of len bytes takes its rank's CPU: at the rate
 * measured for its size (local), or nothing without one. */
static double local_copy(const struct coll_cost_params *p, size_t len)
{
	int n = p->nlocal < COLL_COST_RATES ? p->nlocal : COLL_COST_RATES;
	double rate = interp(p->local, sizeof p->local[0], offsetof(struct coll_copy_rate, rate), n, len, 0.0);
	return rate > 0 ? (double)len / rate : 0.0;
}

/* whether a send of len bytes is done only on its ACK */
static bool acked(const struct coll_cost_params *p, size_t len)
{
	return p->acked_sends && len > 0 && len > p->noack_max && !rndv(p, len);
}

/* How a rendezvous copy of len bytes goes (COLL_BULK_*): by the steps
 * shm's chooser's picks gave, else split from split_min and below it a
 * move where there are move rates */
static int bulk_how(const struct coll_cost_params *p, size_t len)
{
	if (p->nbulk > 0) {
		int k = 0;

		while (k + 1 < p->nbulk && len >= p->bulk[k + 1].len)
			k++;
		return p->bulk[k].how;
	}
	if (p->split_min && len >= p->split_min)
		return COLL_BULK_SPLIT;
	return p->nmove > 0 ? COLL_BULK_MOVE : COLL_BULK_COPY;
}

/* the part of a rendezvous copy of len bytes the sender copies itself:
 * all of it, or when split (ptl's shm_bulk.c) half, rounded down to 4 KiB */
static size_t own_part(const struct coll_cost_params *p, size_t len)
{
	return bulk_how(p, len) == COLL_BULK_SPLIT ? (len / 2) & ~(size_t)4095 : len;
}

/* Bound cores: the next of the switch jitter's fixed sequence, in
 * [-1, 1) (a 64-bit LCG's top 53 bits) */
static double jitter_next(struct sim *m)
{
	m->rng = m->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(m->rng >> 11) / 4503599627370496.0 - 1.0;
}

/* Bound cores (coll.h): rank r's work of w seconds, ready at start, on
 * core r % cores. The rank that had the core goes on if the work came
 * within poll_window of its last piece; otherwise the core passes round
 * its ranks from then, a switch a turn (each switch switch_cost, jittered),
 * and r's work starts on r's first turn at or after start. Returns when
 * it starts. */
static double bound_take(struct sim *m, int r, double start, double w)
{
	const struct coll_cost_params *p = m->p;
	int nc = m->ncores, c = r % nc, n = m->s->req.nranks, last = m->core_last[c];
	int per = n / nc + (c < n % nc);  /* the core's ranks: c, c + nc, ... */
	double free_at = m->core_free[c], at = start > free_at ? start : free_at;
	/* a rank alone on its core yields to nobody: no turns */
	if (per > 1 && last >= 0 && (last != r || start > free_at + p->poll_window)) {
		/* the holder polls on for poll_window, then yields; turns go
		 * round the core's ranks in rank order, r's the d-th after
		 * the holder's (a whole round when r had it) */
		int d = ((r - last) / nc % per + per) % per;
		at = free_at + p->poll_window;
		for (int k = 1;; k++) {
			at += p->switch_cost * (1.0 + p->switch_jitter * jitter_next(m));
			m->turns++;
			if (k % per == d % per && at >= start)
				break;
			if (p->switch_cost <= 0) {
				/* free switches: r's turn is there when its work is */
				at = at > start ? at : start;
				break;
			}
		}
	}
	m->core_free[c] = at + w;
	m->core_last[c] = r;
	return at;
}

/* Shared cores: rank r's work of w seconds, ready at start, goes to the
 * core where it can start first (the one it ran on last when that is as
 * early). A rank that was waiting (wake) gets a core back only after a
 * switch: ptl's waiting ranks yield at every poll, so a core with nothing
 * to run passes between its waiting ranks, and a rank whose message came
 * waits for the one that has the core to yield. A rank that goes on from
 * its own last piece keeps its core. Returns when the work starts. */
static double core_take(struct sim *m, int r, double start, double w, bool wake)
{
	if (m->p->bound)
		return bound_take(m, r, start, w);
	int best = 0;
	double best_at = 0;
	for (int c = 0; c < m->ncores; c++) {
		double at = start > m->core_free[c] ? start : m->core_free[c];
		if (c == 0 || at < best_at || (at == best_at && m->core_last[c] == r)) {
			best = c;
			best_at = at;
		}
	}
	if (wake && m->p->core_wait_set) {
		/* While the core's ranks all wait it passes round them at
		 * every poll, so the rank sees its message core_wait after it
		 * came: what bench/mpi_bench.sh measures it as (pp4idle less
		 * the 2-rank ping-pong: what each message of a ping-pong pays
		 * on average, whatever the phase of its receiver's polls).
		 * Looks on a grid from when the rank began to wait instead
		 * cost a message anything from 0 to core_wait by when it came
		 * (and the model's own pp4idle two grid steps a message, not
		 * one), which the calibration does not say. After the core's
		 * own work, a switch later at the earliest. */
		double look = start + m->p->core_wait, after = m->core_free[best] + m->sw;
		best_at = look > after ? look : after;
	} else if (wake) {
		best_at += m->sw;
	}
	m->core_free[best] = best_at + w;
	m->core_last[best] = r;
	return best_at;
}

/* w seconds (before the slowdown) of rank r's CPU, from t at the earliest;
 * returns when they end. */
static double cpu_run(struct sim *m, int r, double t, double w)
{
	double start = t > m->cpu[r] ? t : m->cpu[r];
	/* bound, a rank does nothing off its core, not even what costs no time */
	if (m->ncores && (w > 0 || m->p->bound))
		start = core_take(m, r, start, w, t > m->cpu[r]);
	m->cpu[r] = start + m->k * w;
	m->cpu_busy[r] += m->k * w;
	return m->cpu[r];
}

/* A receive whose bytes are in place at t: the acknowledgement back to
 * its sender (ack), then the rank's reduction of them, if any. */
static int received(struct sim *m, const struct hent *e, const struct coll_cmd *c, double t, bool ack)
{
	const struct coll_cost_params *p = m->p;
	int rc = 0;

	if (ack) {
		int sr;
		size_t si;
		partner(m, e->rank, e->idx, &sr, &si);
		double trip = p->ack_alpha > 0 ? p->ack_alpha : p->alpha;
		rc = hpush(&m->h, (struct hent){ t + trip, tie_of(m, sr, si), sr, si, EV_ACK, 0, 0 });
	}
	if (rc)
		return rc;
	/* a reduction from INPUT reads it in its one pass over the bytes
	 * received into its destination (coll_reduce_from_input): gamma, as
	 * in place */
	double w = c->kind == COLL_REDUCE ? (double)c->len * p->gamma : 0.0;
	return finish(m, e->rank, e->idx, cpu_run(m, e->rank, t, w));
}

/* The parameters for event e of command c: bound, a transfer between two
 * ranks of one core copies at the same-core rates (coll.h, same). */
static const struct coll_cost_params *pair_params(const struct sim *m, const struct hent *e,
						  const struct coll_cmd *c)
{
	if (!m->same_on || !is_xfer(c) || c->peer < 0)
		return m->base;
	int pr;
	size_t pi;
	partner(m, e->rank, e->idx, &pr, &pi);
	return pr % m->ncores == e->rank % m->ncores ? &m->same : m->base;
}

/* Bound: the latest a copy may start (or its get come) on core c and
 * still join the core's run of exchange copies (xch_turns): within a turn
 * of the run's end, a poll window and a switch jittered at most twice */
static double xch_joins_by(const struct sim *m, int c)
{
	return m->xch_to[c] + m->p->poll_window + 2 * m->sw;
}

/* Bound cores: rank r's whole exchange copy, from start to end on r's
 * core. Two pairs exchanging at once each wait on their peers' pieces
 * and yield between them, so a core passes piece by piece between their
 * copies and both end when the later one does: on the Zen 4 guest, 4
 * ranks bound two to a core, a 4-rank halving-doubling's last step
 * (pairs 0-1 and 2-3 across the cores, 512 KiB each) ended within 12 us
 * on all four ranks in 14 of 15 calls, where copies one after the
 * other had one pair done 25 us (a copy) before the other and on into
 * its next call. A copy joins the run when it starts within a turn of
 * the run's end (a poll window and a switch, jittered at most twice), a
 * pair of one core's first copy too (its second, served once the first
 * has ended, is one-way: not an exchange's), or when its get came (got)
 * by then: the model books a copy whole, so a get that came while the
 * core's other rank copied waits for that copy's end (EV_DEFERRED), but
 * that rank yields between its pieces and the two copies share the core.
 * Joining by the copy's start alone, a core-mate's get answered late
 * (after the jittered switches of its deferral) started a run of its
 * own and paid its gap from there: a copy and a gap after the other
 * pair was done (test_coll_cost.c, test_sw_xch_turns). Returns
 * whether the copy is in a run: EV_COPIED then asks xch_done, once the
 * copies served after it are booked (its gap's end; without a gap, only
 * those booked by its own end). A copy's time alone counts from the
 * run's start, also for one that follows the run within a turn, its get
 * come after the run's end: counted from its own start instead (its gap
 * paid in full), the 4-rank rows within 10% of seven kept runs (s64/k1 -
 * k5, s65/m1 - m2) read 150 of 245 against 168, halving-doubling's and
 * recursive doubling's steps of 256 KiB - 1 MiB too slow. */
static bool xch_turns(struct sim *m, int r, double start, double end, double got)
{
	const struct coll_cost_params *p = m->p;
	if (!m->ncores || !p->bound)
		return false;
	int c = r % m->ncores;
	if ((got < start ? got : start) > xch_joins_by(m, c))
		m->xch_from[c] = start;
	if (end > m->xch_to[c])
		m->xch_to[c] = end;
	return true;
}

/* When a copy of a run (xch_turns) that ended at end is done: at the end
 * of the run it began in, if that went on past it */
static double xch_done(const struct sim *m, int r, double end)
{
	int c = r % m->ncores;
	return m->xch_from[c] < end && m->xch_to[c] > end ? m->xch_to[c] : end;
}

static int simulate(struct sim *m)
{
	const struct coll_cost_params *p = m->p;
	int rc = 0;
	for (int r = 0; r < m->s->nheld && !rc; r++)
		for (size_t i = 0; i < m->s->ranks[r].ncmds && !rc; i++)
			if (m->nwait[r][i] == 0) {
				/* a pair whose both sides start ready is pushed once, by its receive */
				const struct coll_cmd *c = cmd_at(m, r, i);
				if (c->kind == COLL_SEND && !p->unexpected
				    && m->nwait[m->pairs.rank[r][i]][m->pairs.idx[r][i]] == 0)
					post(m, r, i);
				else
					rc = became_ready(m, r, i);
			}
	while (!rc && m->h.n) {
		struct hent e = hpop(&m->h);
		const struct coll_cmd *c = cmd_at(m, e.rank, e.idx);
		if (m->step_sw)
			m->sw = m->step_sw[c->step];
		/* what follows from the event (finish, the next commands'
		 * posting) reads none of the tables that differ */
		m->p = p = pair_params(m, &e, c);
		if (p->unexpected && (e.ev == EV_ARRIVAL || e.ev == EV_RTS) && m->nwait[e.rank][e.idx]) {
			e.aux = 1;
			m->held[e.rank][e.idx] = e;  /* unexpected: taken when the receive is ready */
			continue;
		}
		if (m->ncores && p->bound) {
			/* bound cores: a rank sees an event only on its core.
			 * While another rank has the core, the event waits
			 * until that one's work ends, and once more past the
			 * work that one goes on with at that very time (the
			 * holder keeps its core while it has work) */
			int cr = e.rank % m->ncores;
			double f = m->core_free[cr] + p->poll_window;
			if (m->core_last[cr] >= 0 && m->core_last[cr] != e.rank
			    && (f > e.key || (f == e.key && !(e.ev & EV_DEFERRED)))) {
				/* xch_turns: when a get came, while it waits
				 * behind the core's run of exchange copies only */
				if ((e.ev & ~EV_DEFERRED) == EV_GET)
					e.sent = m->core_free[cr] > xch_joins_by(m, cr) ? -1.0
						 : e.sent != 0 ? e.sent : e.key;
				e.key = f + f * 1e-12 + 1e-18;  /* just after f */
				e.ev |= EV_DEFERRED;
				rc = hpush(&m->h, e);
				continue;
			}
			e.ev &= (unsigned char)~EV_DEFERRED;
		}
		if (e.ev == EV_ACK) {
			/* the sender takes the acknowledgement: its send is done.
			 * With ranks bound, that takes a turn of its core;
			 * finishing the send at the ACK without one (its o paid
			 * at the rank's next work) moved the 4-rank tree's 32 KiB
			 * row 0.2% (33.39 -> 33.45 us, 13.3 -> 13.4 switches a
			 * core a call; s60/f2's parameters, 2026-12-06), so the
			 * ACKs' turns are not why the model switches more than
			 * the cores do on that row (13.2 against 5.0 a core a
			 * call in run s61/g1) */
			rc = finish(m, e.rank, e.idx, cpu_run(m, e.rank, e.key, p->o));
			continue;
		}
		if (e.ev == EV_RTS || e.ev == EV_GET) {
			/* the other end of the pair (receive for RTS, send for GET) */
			int pr;
			size_t pi;
			partner(m, e.rank, e.idx, &pr, &pi);
			uint64_t ptie = tie_of(m, pr, pi);
			if (e.ev == EV_RTS) {
				/* the receiver asks for the data. One still
				 * copying to the sender (an exchange whose other
				 * half comes late) asks between its pieces (shm
				 * moves a piece at a time from the progress loop),
				 * not after its whole copy: asked after, its copy
				 * was over when the sender's began, which then went
				 * one way (a move, its own gap), and the pairs of
				 * back-to-back exchanges fell apart from call to
				 * call (test_coll_cost.c, test_sw_xch_back_to_back).
				 * Its o is left off the CPU already booked for the
				 * copy: small beside it, and the copy's end is
				 * scheduled already */
				double asked;
				if (m->copy_peer[e.rank] == pr && m->copy_end[e.rank] > e.key)
					asked = e.key + m->k * p->o;
				else
					asked = cpu_run(m, e.rank, e.key, p->o);
				rc = hpush(&m->h, (struct hent){ asked + p->alpha, ptie, pr, pi, EV_GET, 0, 0 });
				continue;
			}
			/* the sender serves the get and copies (its part of) the bytes */
			size_t own = m->split[e.rank] == SIZE_MAX ? own_part(p, c->len) : c->len;
			double asked = cpu_run(m, e.rank, e.key, p->rndv_cost);
			/* an exchange's: the receiver has a send of its own in flight to us */
			bool xch = m->rv_n[pr] > 0 && m->rv_peer[pr] == e.rank;
			if (own == c->len && p->nmove > 0 && bulk_how(p, c->len) == COLL_BULK_MOVE && !xch) {
				/* one way: a bounce move, out by our CPU, in by the
				 * receiver's from when the first piece is out */
				double w = move_copy(p, c->len), out = cpu_run(m, e.rank, asked, w);
				double first = asked + m->k * w * piece_share(p, c->len);
				m->copy_peer[e.rank] = pr;
				m->copy_end[e.rank] = out;
				rc = hpush(&m->h, (struct hent){ first, ptie, pr, pi, EV_BOUNCE, out, 0 });
				continue;
			}
			double w = rndv_copy(p, c->len, own), mine = cpu_run(m, e.rank, asked, w);
			m->copy_peer[e.rank] = pr;
			m->copy_end[e.rank] = mine;
			if (own == c->len) {
				/* an exchange's hand-overs beyond its copy (xch_gap):
				 * EV_COPIED ends the send the gap after the copy's
				 * end, or in a run of its core's (xch_turns; sent: the
				 * copy's end) at the later of the run's end and the
				 * copy and its gap from the run's start */
				double gap = 0.0;
				bool run = false;
				if (xch) {
					gap = table_at(&p->xch_gap, c->len);
					run = xch_turns(m, e.rank, mine - m->k * w, mine, e.sent > 0 ? e.sent : e.key);
					if (run) {
						/* in a run, the gap is what the copy
						 * would take alone from the run's start
						 * beyond the copy's end: the pair's waits
						 * on each other's pieces pass while the
						 * core copies for the run's other pairs */
						double alone = m->xch_from[e.rank % m->ncores] + m->k * w + gap;
						gap = alone > mine ? alone - mine : 0.0;
					}
				}
				rc = hpush(&m->h, (struct hent){ mine, tie_of(m, e.rank, e.idx), e.rank, e.idx, EV_COPIED,
								  gap, run ? mine : 0 });
				continue;
			}
			/* split: the receiver is asked for the rest before our half */
			m->split[e.rank] = e.idx;
			rc = hpush(&m->h, (struct hent){ asked + p->alpha, ptie, pr, pi, EV_HELP, mine, 0 });
			continue;
		}
		if (e.ev == EV_HELP) {
			/* the receiver copies the second half; the sender sees the
			 * copy done when both halves are */
			int sr;
			size_t si;
			partner(m, e.rank, e.idx, &sr, &si);
			size_t rest = c->len - own_part(p, c->len);
			double theirs = cpu_run(m, e.rank, e.key, p->split_cost + rndv_copy(p, c->len, rest));
			rc = hpush(&m->h, (struct hent){ theirs > e.aux ? theirs : e.aux, tie_of(m, sr, si),
							  sr, si, EV_COPIED, 0, 0 });
			continue;
		}
		if (e.ev == EV_BOUNCE) {
			/* the receiver copies the pieces in, each after it is
			 * out: the last one a piece's copy after the sender's
			 * copy out ends at the earliest */
			int sr;
			size_t si;
			partner(m, e.rank, e.idx, &sr, &si);
			double w = move_copy(p, c->len), in = cpu_run(m, e.rank, e.key, w);
			double last = e.aux + m->k * w * piece_share(p, c->len);
			double gap = table_at(&p->move_gap, c->len);
			rc = hpush(&m->h, (struct hent){ (in > last ? in : last) + gap, tie_of(m, sr, si), sr, si,
							  EV_COPIED, 0, 0 });
			continue;
		}
		if (e.ev == EV_COPIED) {
			/* the send is done when the sender has seen so; the reply
			 * tells the receiver */
			int pr;
			size_t pi;
			partner(m, e.rank, e.idx, &pr, &pi);
			if (e.aux >= 0) {
				if (m->split[e.rank] == e.idx)
					m->split[e.rank] = SIZE_MAX;
				if (m->rv_n[e.rank] > 0)
					m->rv_n[e.rank]--;
				if (e.aux > 0 || e.sent > 0) {
					/* an exchange's gap (aux) or the rest of its
					 * core's run (sent) to come: its copy is out of
					 * flight now (a copy back served later is
					 * one-way, a bounce move with move rates, as
					 * without the gap), the send done the gap later
					 * or at the run's end, whichever is later
					 * (below) */
					e.key += e.aux;
					e.aux = -1;
					rc = hpush(&m->h, e);
					continue;
				}
			} else if (e.sent > 0) {
				/* a copy of a run (xch_turns): done at the end
				 * of the run's later copies, booked by now, if
				 * that is after its gap's (the key) */
				double t = xch_done(m, e.rank, e.sent);
				e.sent = 0;
				if (t > e.key) {
					e.key = t;
					rc = hpush(&m->h, e);
					continue;
				}
			}
			rc = finish(m, e.rank, e.idx, cpu_run(m, e.rank, e.key, p->o));
			if (!rc)
				rc = hpush(&m->h, (struct hent){ e.key + p->alpha, tie_of(m, pr, pi), pr, pi,
								  EV_ARRIVAL, 0, 0 });
			continue;
		}
		if (e.ev == EV_ARRIVAL && recv_copies(p, c->len) && !read_unasked(p, c->len)) {
			/* a read the sender serves once asked: the receiver
			 * takes the message (its read left out) and asks the
			 * sender; split, it copies its own half meanwhile */
			double taken = cpu_run(m, e.rank, e.key, arrival_cost(m, &e, c->len));
			double own = taken;
			int sr;
			size_t si;
			partner(m, e.rank, e.idx, &sr, &si);
			if (read_how(p, c->len) == COLL_BULK_SPLIT)
				own = cpu_run(m, e.rank, taken, read_part(p, c->len, read_own(c->len)));
			rc = hpush(&m->h, (struct hent){ taken + p->alpha, tie_of(m, sr, si), sr, si, EV_RDREQ, own, 0 });
			continue;
		}
		if (e.ev == EV_RDREQ) {
			/* the sender's part of a read: split, the second half (done
			 * when both are); moved, the copy out, the receiver's copy
			 * in from when the first piece is out */
			int pr;
			size_t pi;
			partner(m, e.rank, e.idx, &pr, &pi);
			uint64_t ptie = tie_of(m, pr, pi);
			if (read_how(p, c->len) == COLL_BULK_SPLIT) {
				size_t rest = c->len - read_own(c->len);
				double theirs = cpu_run(m, e.rank, e.key, p->split_cost + read_part(p, c->len, rest));
				rc = hpush(&m->h, (struct hent){ theirs > e.aux ? theirs : e.aux, ptie, pr, pi, EV_RDIN, 0, 0 });
				continue;
			}
			double w = read_part(p, c->len, c->len), out = cpu_run(m, e.rank, e.key, w);
			double piece = m->k * w * piece_share(p, c->len);
			rc = hpush(&m->h, (struct hent){ out - m->k * w + piece, ptie, pr, pi, EV_RDIN, out + piece, w });
			continue;
		}
		if (e.ev == EV_RDIN) {
			/* the receiver's copy in (moved), then the read is done:
			 * the acknowledgement, the reduction */
			double in = cpu_run(m, e.rank, e.key, e.sent), done = in > e.aux ? in : e.aux;
			rc = received(m, &e, c, done, acked(p, c->len));
			continue;
		}
		if (e.ev == EV_ARRIVAL && acked(p, c->len)) {
			/* taking the message (o, the copy if ours) sends the
			 * acknowledgement back */
			double taken = cpu_run(m, e.rank, e.key, arrival_cost(m, &e, c->len));
			rc = received(m, &e, c, taken, true);
			continue;
		}
		if (e.ev == EV_ARRIVAL || !is_xfer(c)) {
			/* rank work: a receive's o (arrivals only), a reduction, a copy */
			double w = (e.ev == EV_ARRIVAL ? arrival_cost(m, &e, c->len) : 0.0)
				   + (c->kind == COLL_REDUCE ? (double)c->len * p->gamma : 0.0)
				   + (c->kind == COLL_COPY ? local_copy(p, c->len) : 0.0);
			rc = finish(m, e.rank, e.idx, cpu_run(m, e.rank, e.key, w));
			continue;
		}
		/* c is the send: o on the sender's CPU (and the copy, when the
		 * CPU makes it), then its earliest free port */
		double copy = p->beta > 0 ? (double)c->len / p->beta : 0.0;
		bool own_copy = p->cpu_copies && !rndv(p, c->len) && !recv_copies(p, c->len);
		/* a read through the ring: shm copies it in as it sends,
		 * unasked, so the sender's CPU pays its copy now (at the read
		 * rate), not once its receiver asks */
		bool ring = recv_copies(p, c->len) && read_how(p, c->len) == COLL_BULK_RING;
		double ready = cpu_run(m, e.rank, e.key,
				       o_of(p, c->len) + (own_copy ? step_copy(m, &e, c, copy) : 0.0)
					       + (ring ? read_part(p, c->len, c->len) : 0.0));
		if (rndv(p, c->len)) {
			int rr;
			size_t ri;
			partner(m, e.rank, e.idx, &rr, &ri);
			m->rv_n[e.rank]++;
			m->rv_peer[e.rank] = rr;
			rc = hpush(&m->h, (struct hent){ ready + p->alpha, tie_of(m, rr, ri), rr, ri, EV_RTS, 0, 0 });
			continue;
		}
		double *pt = &m->ports[(size_t)e.rank * (size_t)m->nports], *best = pt;
		for (int k = 1; k < m->nports; k++)
			if (pt[k] < *best)
				best = &pt[k];
		double start = ready > *best ? ready : *best;
		double dur = alpha_of(p, c->len) + (p->cpu_copies ? 0.0 : m->k * copy);
		double end = start + dur;
		*best = end;
		m->busy[e.rank] += dur;
		int rr;
		size_t ri;
		partner(m, e.rank, e.idx, &rr, &ri);
		m->xpeer[e.rank] = rr;
		m->xstart[e.rank] = start;
		m->xend[e.rank] = end;
		/* an acknowledged send is done when its ACK comes back */
		rc = acked(p, c->len) ? 0 : finish(m, e.rank, e.idx, end);
		if (!rc)
			rc = hpush(&m->h, (struct hent){ end, tie_of(m, rr, ri), rr, ri, EV_ARRIVAL, 0, start });
	}
	return rc;
}

/* Rank r's DAG, and its ready times and dependency counts for every
 * call: a later call's first commands wait for the rank's part of the
 * call before too. */
static int sim_rank_init(struct sim *m, int r)
{
	size_t n = m->s->ranks[r].ncmds, all = n * (size_t)m->calls;
	m->left[r] = n;
	m->rdy[r] = calloc(all ? all : 1, sizeof **m->rdy);
	m->nwait[r] = calloc(all ? all : 1, sizeof **m->nwait);
	if (!m->rdy[r] || !m->nwait[r])
		return -ENOMEM;
	if (m->p->unexpected) {
		/* only unexpected messages are held */
		m->held[r] = malloc((all ? all : 1) * sizeof **m->held);
		if (!m->held[r])
			return -ENOMEM;
		for (size_t i = 0; i < all; i++)
			m->held[r][i].key = -1;
	}
	int rc = coll_dag_build(m->s->ranks[r].cmds, n, &m->dag[r]);
	for (size_t i = 0; i < all && !rc; i++)
		m->nwait[r][i] = m->dag[r].nwait[i % n] + (i >= n && m->dag[r].nwait[i % n] == 0);
	return rc;
}

/* A rate table interp can read: at most COLL_COST_RATES points, sizes
 * ascending, rates > 0. */
static bool rates_ok(const struct coll_copy_rate *r, int n)
{
	if (n < 0 || n > COLL_COST_RATES)
		return false;
	for (int i = 0; i < n; i++)
		if (!(r[i].rate > 0) || (i > 0 && r[i].len <= r[i - 1].len))
			return false;
	return true;
}

/* the same for a table of times (>= 0) */
static bool table_ok(const struct coll_cost_table *t)
{
	if (t->n < 0 || t->n > COLL_COST_RATES)
		return false;
	for (int i = 0; i < t->n; i++)
		if (!(t->pt[i].time >= 0) || (i > 0 && t->pt[i].len <= t->pt[i - 1].len))
			return false;
	return true;
}

/* steps of how copies go (bulk, read_bulk): methods from COLL_BULK_COPY
 * to last (COLL_BULK_RING only for reads: a rendezvous copy never goes
 * through the ring), sizes ascending */
static bool steps_ok(const struct coll_bulk_step *b, int n, int last)
{
	if (n < 0 || n > COLL_COST_RATES)
		return false;
	for (int i = 0; i < n; i++)
		if (b[i].how < COLL_BULK_COPY || b[i].how > last || (i > 0 && b[i].len <= b[i - 1].len))
			return false;
	return true;
}

/* A send of a schedule: its step, sender and receiver. */
struct step_edge {
	uint32_t step;
	int from, to;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct step_edge *x = a, *y = b;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return (x->to > y->to) - (x->to < y->to);
}

/* Each step's switch on shared cores: switch_shift where every rank sends
 * one message and receives one (a shift), switch_exch where every rank
 * that takes part sends one and receives one and every message has one
 * coming back (pair exchanges), switch_cost elsewhere. The sends sorted
 * by step, sender and receiver: O(S log S) in the sends. */
static int step_switches(struct sim *m)
{
	const struct coll_sched *s = m->s;
	const struct coll_cost_params *p = m->p;
	int n = s->req.nranks;
	size_t ne = 0;
	uint32_t ns = 1;
	for (int r = 0; r < n; r++)
		for (size_t i = 0; i < s->ranks[r].ncmds; i++) {
			const struct coll_cmd *c = &s->ranks[r].cmds[i];
			if (c->step + 1 > ns)
				ns = c->step + 1;
			ne += c->kind == COLL_SEND && c->peer_rank >= 0 && c->peer_rank < n;
		}
	m->step_sw = malloc(ns * sizeof *m->step_sw);
	struct step_edge *e = malloc((ne ? ne : 1) * sizeof *e);
	int *snd = calloc((size_t)n, sizeof *snd), *rcv = calloc((size_t)n, sizeof *rcv);
	if (!m->step_sw || !e || !snd || !rcv) {
		free(e);
		free(snd);
		free(rcv);
		return -ENOMEM;
	}
	ne = 0;
	for (int r = 0; r < n; r++)
		for (size_t i = 0; i < s->ranks[r].ncmds; i++) {
			const struct coll_cmd *c = &s->ranks[r].cmds[i];
			if (c->kind == COLL_SEND && c->peer_rank >= 0 && c->peer_rank < n)
				e[ne++] = (struct step_edge){ c->step, r, c->peer_rank };
		}
	qsort(e, ne, sizeof *e, edge_cmp);
	for (uint32_t st = 0; st < ns; st++)
		m->step_sw[st] = p->switch_cost;
	for (size_t a = 0; a < ne;) {
		size_t b = a;
		while (b < ne && e[b].step == e[a].step)
			b++;
		bool mutual = true;
		for (size_t i = a; i < b; i++) {
			snd[e[i].from]++;
			rcv[e[i].to]++;
			struct step_edge back = { e[i].step, e[i].to, e[i].from };
			mutual = mutual && bsearch(&back, e + a, b - a, sizeof *e, edge_cmp);
		}
		/* one message out and one in at every rank that takes part
		 * (all of them, for a shift) */
		bool one = true, all = true;
		for (int r = 0; r < n; r++) {
			one = one && snd[r] == rcv[r] && snd[r] <= 1;
			all = all && snd[r] == 1;
			snd[r] = rcv[r] = 0;
		}
		m->step_sw[e[a].step] = one && mutual && p->switch_exch_set ? p->switch_exch
					: one && all && !mutual && p->switch_shift_set ? p->switch_shift
											 : p->switch_cost;
		a = b;
	}
	free(e);
	free(snd);
	free(rcv);
	return 0;
}

int coll_cost(const struct coll_sched *s, const struct coll_cost_params *params,
              struct coll_cost *out)
{
	memset(out, 0, sizeof *out);
	if (!s || !params || s->nheld != s->req.nranks || !rates_ok(params->rates, params->nrates)
	    || !rates_ok(params->local, params->nlocal) || !rates_ok(params->read, params->nread)
	    || !rates_ok(params->move, params->nmove) || !rates_ok(params->eager, params->neager)
	    || !rates_ok(params->same, params->nsame)
	    || !steps_ok(params->bulk, params->nbulk, COLL_BULK_MOVE)
	    || !steps_ok(params->read_bulk, params->nread_bulk, COLL_BULK_RING)
	    || !table_ok(&params->small_recv) || !table_ok(&params->recv) || !table_ok(&params->cross)
	    || !table_ok(&params->small_cross) || !table_ok(&params->move_gap)
	    || !table_ok(&params->xch_gap))
		return -EINVAL;
	if (params->calls < 0 || params->calls > COLL_COST_MAX_CALLS)
		return -EINVAL;
	if (params->bound && (!(params->poll_window >= 0) || !(params->switch_jitter >= 0)
	                      || !(params->switch_jitter < 1)))
		return -EINVAL;
	struct coll_cost_params p = *params;
	if (p.ports <= 0)
		p.ports = s->req.ports;
	if (p.ports <= 0)
		p.ports = 1;
	int n = s->req.nranks, rc = 0;
	struct sim m;
	memset(&m, 0, sizeof m);
	m.s = s;
	m.p = m.base = &p;
	m.nports = p.ports;
	if ((rc = coll_pairs_build(s, &m.pairs, NULL, 0)))
		return rc;
	m.dag = calloc((size_t)n, sizeof *m.dag);
	m.rdy = calloc((size_t)n, sizeof *m.rdy);
	m.ports = calloc((size_t)n * (size_t)p.ports, sizeof *m.ports);
	m.busy = calloc((size_t)n, sizeof *m.busy);
	m.cpu = calloc((size_t)n, sizeof *m.cpu);
	m.cpu_busy = calloc((size_t)n, sizeof *m.cpu_busy);
	m.calls = p.calls > 1 ? p.calls : 1;
	m.nwait = calloc((size_t)n, sizeof *m.nwait);
	m.left = calloc((size_t)n, sizeof *m.left);
	m.call_end = calloc((size_t)m.calls, sizeof *m.call_end);
	m.held = calloc((size_t)n, sizeof *m.held);
	m.split = malloc((size_t)n * sizeof *m.split);
	m.xpeer = malloc((size_t)n * sizeof *m.xpeer);
	m.xstart = calloc((size_t)n, sizeof *m.xstart);
	m.xend = calloc((size_t)n, sizeof *m.xend);
	m.rv_n = calloc((size_t)n, sizeof *m.rv_n);
	m.rv_peer = calloc((size_t)n, sizeof *m.rv_peer);
	m.copy_peer = malloc((size_t)n * sizeof *m.copy_peer);
	m.copy_end = calloc((size_t)n, sizeof *m.copy_end);
	m.eager_step = calloc((size_t)n, sizeof *m.eager_step);
	m.k = p.ranks_per_core > 1 ? p.ranks_per_core : 1;
	if (p.cores > 0 && p.cores < n) {
		m.ncores = p.cores;
		m.k = 1;  /* scheduled, not stretched */
		m.core_free = calloc((size_t)p.cores, sizeof *m.core_free);
		m.core_last = malloc((size_t)p.cores * sizeof *m.core_last);
		m.xch_from = calloc((size_t)p.cores, sizeof *m.xch_from);
		m.xch_to = calloc((size_t)p.cores, sizeof *m.xch_to);
		if (!m.core_free || !m.core_last || !m.xch_from || !m.xch_to)
			rc = -ENOMEM;
		/* no run yet: a first copy near time 0 starts one */
		for (int c = 0; c < p.cores && !rc; c++) {
			m.core_last[c] = -1;
			m.xch_to[c] = -INFINITY;
		}
		m.sw = p.switch_cost;
		m.rng = 0x9e3779b97f4a7c15ULL;
		if (!rc && !p.bound && (p.switch_shift_set || p.switch_exch_set))
			rc = step_switches(&m);
		if (p.bound && p.nsame > 0) {
			m.same = p;
			m.same.nrates = m.same.nread = p.nsame;
			memcpy(m.same.rates, p.same, sizeof m.same.rates);
			memcpy(m.same.read, p.same, sizeof m.same.read);
			/* and its eager copies too: into a ring whose lines
			 * the other rank of the core reads back from the same
			 * caches. At the cross-core eager rates (4-rank shifts,
			 * which hold a wait for the receiver's core) a 4-rank
			 * halving-doubling's 8 KiB same-core steps took 1.8 us
			 * a send, and its 32 KiB row read 1.13 - 1.14x in four
			 * of seven kept runs (0.98 - 1.01x at these rates);
			 * measured, such a copy took 0.2 us (clock_gettime
			 * around nal_copy_big, 2026-12-06). Below the table's
			 * first size (16 KiB from the bench) its rate holds,
			 * with no fixed cost: the 8 KiB copies, the only eager
			 * ones not request-free (small_max keeps beta) */
			m.same.neager = p.nsame;
			memcpy(m.same.eager, p.same, sizeof m.same.eager);
			/* measured whole at those rates (bench/mpi_bench.sh:
			 * its exchange's two copies one after the other, no
			 * moves, no methods, no split), so copied so: the core serves
			 * the second copy after the first, and a move there
			 * took the cross-core moves' rates and gap (a 4-rank
			 * recursive doubling's 256 KiB same-core step 80 us
			 * where its exchanges took 46) */
			m.same.xch_gap.n = 0;
			m.same.nmove = 0;
			m.same.nbulk = 0;
			m.same.split_min = 0;
			m.same.nread_bulk = 0;
			m.same_on = true;
		}
	}
	if (!m.dag || !m.rdy || !m.ports || !m.busy || !m.cpu || !m.cpu_busy || !m.nwait || !m.left || !m.call_end
	    || !m.held || !m.split || !m.xpeer || !m.xstart || !m.xend || !m.rv_n || !m.rv_peer || !m.copy_peer
	    || !m.copy_end || !m.eager_step)
		rc = -ENOMEM;
	for (int r = 0; r < n && !rc; r++) {
		m.split[r] = SIZE_MAX;
		m.xpeer[r] = -1;
		m.copy_peer[r] = -1;
	}
	/* every rank enters the first call (and sets its engine up) before
	 * it can post anything */
	for (int r = 0; r < n && !rc; r++)
		cpu_run(&m, r, 0, p.call);
	for (int r = 0; r < n && !rc; r++)
		rc = sim_rank_init(&m, r);
	if (!rc)
		rc = simulate(&m);
	if (!rc) {
		/* anything that never ran means the schedule cannot finish */
		uint64_t total = 0;
		for (int r = 0; r < n; r++)
			total += s->ranks[r].ncmds;
		if (m.nfin != total * (uint64_t)m.calls)
			rc = -EDEADLK;
		double end = m.end;
		for (int r = 0; r < n; r++)
			if (m.cpu[r] > end)
				end = m.cpu[r];  /* a rank with nothing to send still pays the call */
		out->time = m.calls > 1 ? (m.call_end[m.calls - 1] - m.call_end[0]) / (m.calls - 1) : end;
		for (int r = 0; r < n; r++) {
			if (m.busy[r] / p.ports > out->busiest_port)
				out->busiest_port = m.busy[r] / p.ports;
			if (m.cpu_busy[r] > out->busiest_cpu)
				out->busiest_cpu = m.cpu_busy[r];
		}
		if (m.ncores && p.bound)
			out->turns = m.turns / m.ncores / m.calls;
	}
	for (int r = 0; r < n; r++) {
		if (m.dag)
			coll_dag_free(&m.dag[r]);
		if (m.rdy)
			free(m.rdy[r]);
		if (m.nwait)
			free(m.nwait[r]);
		if (m.held)
			free(m.held[r]);
	}
	free(m.dag);
	free(m.rdy);
	free(m.ports);
	free(m.busy);
	free(m.cpu);
	free(m.cpu_busy);
	free(m.nwait);
	free(m.left);
	free(m.call_end);
	free(m.held);
	free(m.split);
	free(m.xpeer);
	free(m.xstart);
	free(m.xend);
	free(m.rv_n);
	free(m.rv_peer);
	free(m.copy_peer);
	free(m.copy_end);
	free(m.eager_step);
	free(m.core_free);
	free(m.xch_from);
	free(m.xch_to);
	free(m.core_last);
	free(m.step_sw);
	free(m.h.v);
	coll_pairs_free(s, &m.pairs);
	return rc;
}
