/* Helpers of the multi-process Portals tests: see mp_common.h. */
#include "mp_common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int mp_rank = -1, mp_size = 0;
ptl_handle_ni_t mp_ni;
int mp_timeout_ms = 20000;
int mp_small;
const ptl_process_id_t mp_any = { PTL_NID_ANY, PTL_PID_ANY };

static ptl_process_id_t *mp_ids;
static int mp_passed;
static int mp_failed_any;

#define MP_MAX_EQS 64
static struct {
	ptl_handle_eq_t h;
	ptl_seq_t next;
} mp_eqs[MP_MAX_EQS];

int64_t mp_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *mp_err(int rc)
{
	return rc >= 0 ? PtlErrorStr((unsigned)rc) : "negative code";
}

void mp_init(void)
{
	int maxif = 0;
	const char *e = getenv("PTL_TEST_SMALL");
	mp_small = e && e[0] == '1';
	if (mp_small)
		mp_timeout_ms = 60000;
	int rc = PtlInit(&maxif);
	if (rc != PTL_OK) {
		fprintf(stderr, "PtlInit: %s\n", mp_err(rc));
		exit(1);
	}
	mp_rank = PtlRtRank();
	mp_size = PtlRtSize();
	rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &mp_ni);
	if (rc != PTL_OK) {
		fprintf(stderr, "rank %d: PtlNIInit: %s\n", mp_rank, mp_err(rc));
		exit(1);
	}
	mp_ids = calloc((size_t)mp_size, sizeof *mp_ids);
	for (int r = 0; r < mp_size; r++) {
		rc = PtlRtId(r, &mp_ids[r]);
		if (rc != PTL_OK) {
			fprintf(stderr, "rank %d: PtlRtId(%d): %s\n", mp_rank, r, mp_err(rc));
			exit(1);
		}
	}
}

void mp_fini(void)
{
	PtlNIFini(mp_ni);
	free(mp_ids);
	mp_ids = NULL;
	PtlFini();
}

ptl_process_id_t mp_id(int rank)
{
	return mp_ids[rank];
}

int mp_setup(void **state)
{
	(void)state;
	mp_passed = 0;
	return 0;
}

int mp_teardown(void **state)
{
	(void)state;
	if (!mp_passed) {
		/* The other ranks would wait for us in vain: end the job now. */
		fprintf(stderr, "rank %d: test failed; ending the job\n", mp_rank);
		fflush(NULL);
		_exit(1);
	}
	return 0;
}

void mp_barrier(void)
{
	int rc = PtlRtBarrier();
	if (rc != PTL_OK)
		fail_msg("rank %d: PtlRtBarrier: %s", mp_rank, mp_err(rc));
}

void mp_end(void)
{
	mp_barrier();
	mp_passed = 1;
}

int mp_run(const char *name, const struct CMUnitTest *tests, size_t n)
{
	char gname[128];
	snprintf(gname, sizeof gname, "%s (rank %d of %d)", name, mp_rank, mp_size);
	int rc = _cmocka_run_group_tests(gname, tests, n, NULL, NULL);
	mp_failed_any |= rc != 0;
	return rc;
}

int mp_main(const char *name, const struct CMUnitTest *tests, size_t n)
{
	mp_init();
	if (mp_size < 2) {
		fprintf(stderr, "%s: run with ptlrun -n 2 or more\n", name);
		mp_fini();
		return 1;
	}
	int rc = mp_run(name, tests, n);
	mp_fini();
	return rc ? 1 : 0;
}

void mp_rc(const char *file, int line, const char *what, int got, int want)
{
	if (got != want)
		mp_fail_at(file, line, "rank %d: %s returned %d (%s), expected %d (%s)", mp_rank,
			     what, got, mp_err(got), want, mp_err(want));
}

/* cmocka has no fail_msg with a location; this is it. */
void mp_fail_at(const char *file, int line, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	print_error("%s:%d: %s\n", file, line, buf);
	_fail(file, line);
}

ptl_handle_eq_t mp_eq(ptl_size_t count)
{
	ptl_handle_eq_t h;
	MP_RC(PtlEQAlloc(mp_ni, count, PTL_EQ_HANDLER_NONE, &h), PTL_OK);
	for (int i = 0; i < MP_MAX_EQS; i++)
		if (!mp_eqs[i].h) {
			mp_eqs[i].h = h;
			mp_eqs[i].next = 0;
			return h;
		}
	fail_msg("rank %d: more than %d EQs in one test", mp_rank, MP_MAX_EQS);
	return h;
}

static int mp_eq_slot(ptl_handle_eq_t eq)
{
	for (int i = 0; i < MP_MAX_EQS; i++)
		if (mp_eqs[i].h == eq)
			return i;
	return -1;
}

void mp_eq_free(ptl_handle_eq_t eq)
{
	MP_RC(PtlEQFree(eq), PTL_OK);
	int i = mp_eq_slot(eq);
	if (i >= 0)
		mp_eqs[i].h = 0;
}

void mp_eq_set_seq(ptl_handle_eq_t eq, ptl_seq_t seq)
{
	int i = mp_eq_slot(eq);
	if (i >= 0)
		mp_eqs[i].next = seq;
}

static const char *mp_kind(ptl_event_kind_t k)
{
	return PtlEventKindStr(k);
}

void mp_wait(const char *file, int line, ptl_handle_eq_t eq, ptl_event_t *ev, const char *what)
{
	int which = -1;
	int64_t t0 = mp_now_ms();
	int rc = PtlEQPoll(&eq, 1, mp_timeout_ms, ev, &which);
	if (rc == PTL_EQ_EMPTY)
		mp_fail_at(file, line, "rank %d: no event after %lld ms waiting for %s", mp_rank,
			     (long long)(mp_now_ms() - t0), what);
	if (rc != PTL_OK)
		mp_fail_at(file, line, "rank %d: PtlEQPoll waiting for %s: %s", mp_rank, what,
			     mp_err(rc));
	if (which != 0)
		mp_fail_at(file, line, "rank %d: PtlEQPoll: which %d for one EQ", mp_rank, which);
}

#define MP_FIELD(name, fmt, got, want)                                                         \
	do {                                                                                   \
		if ((got) != (want)) {                                                         \
			n += snprintf(buf + n, sizeof buf - (size_t)n, " " name " " fmt " (want " fmt ");", \
				      got, want);                                              \
		}                                                                              \
	} while (0)

ptl_event_t mp_expect(const char *file, int line, ptl_handle_eq_t eq, const char *what,
		      const struct mp_ev *w)
{
	ptl_event_t ev;
	char desc[256];
	snprintf(desc, sizeof desc, "%s (%s)", what, mp_kind(w->type));
	mp_wait(file, line, eq, &ev, desc);
	char buf[900];
	int n = 0;
	ptl_process_id_t id = mp_id(w->initiator);
	if (ev.type != w->type)
		n += snprintf(buf + n, sizeof buf - (size_t)n, " type %s (want %s);", mp_kind(ev.type),
			      mp_kind(w->type));
	MP_FIELD("initiator.nid", "%u", ev.initiator.nid, id.nid);
	MP_FIELD("initiator.pid", "%u", ev.initiator.pid, id.pid);
	MP_FIELD("match_bits", "0x%" PRIx64, ev.match_bits, w->match_bits);
	MP_FIELD("rlength", "%" PRIu64, ev.rlength, w->rlength);
	MP_FIELD("mlength", "%" PRIu64, ev.mlength, w->mlength);
	MP_FIELD("offset", "%" PRIu64, ev.offset, w->offset);
	MP_FIELD("hdr_data", "0x%" PRIx64, ev.hdr_data, w->hdr_data);
	MP_FIELD("link", "%u", ev.link, (ptl_seq_t)w->link);
	MP_FIELD("ni_fail_type", "%d", ev.ni_fail_type, w->fail);
	MP_FIELD("md.threshold", "%d", ev.md.threshold, w->threshold);
	if (w->md)
		MP_FIELD("md_handle", "0x%" PRIx64, ev.md_handle, w->md);
	int i = mp_eq_slot(eq);
	if (i >= 0) {
		MP_FIELD("sequence", "%u", ev.sequence, mp_eqs[i].next);
		mp_eqs[i].next = ev.sequence + 1;
	}
	if (n)
		mp_fail_at(file, line, "rank %d: %s: event %s seq %u:%s", mp_rank, what,
			     mp_kind(ev.type), ev.sequence, buf);
	return ev;
}

void mp_empty(const char *file, int line, ptl_handle_eq_t eq, int ms, const char *what)
{
	ptl_event_t ev;
	int which;
	int rc = PtlEQPoll(&eq, 1, ms, &ev, &which);
	if (rc != PTL_EQ_EMPTY)
		mp_fail_at(file, line, "rank %d: %s: expected no event, got %s (%s) seq %u", mp_rank,
			     what, mp_err(rc), rc == PTL_OK || rc == PTL_EQ_DROPPED ? mp_kind(ev.type) : "-",
			     ev.sequence);
}

long mp_sr(int reg)
{
	ptl_sr_value_t v = -1;
	MP_RC(PtlNIStatus(mp_ni, reg, &v), PTL_OK);
	return (long)v;
}

ptl_md_t mp_md(void *start, ptl_size_t len, int threshold, unsigned options, ptl_handle_eq_t eq)
{
	ptl_md_t md = { .start = start, .length = len, .threshold = threshold, .max_size = 0,
			.options = options, .user_ptr = NULL, .eq_handle = eq };
	return md;
}

ptl_handle_md_t mp_bind(void *start, ptl_size_t len, int threshold, unsigned options,
			ptl_handle_eq_t eq)
{
	ptl_handle_md_t h = 0;
	MP_RC(PtlMDBind(mp_ni, mp_md(start, len, threshold, options, eq), PTL_RETAIN, &h), PTL_OK);
	return h;
}

ptl_handle_me_t mp_me_md(ptl_pt_index_t pt, ptl_match_bits_t bits, ptl_match_bits_t ignore,
			 ptl_unlink_t me_unlink, ptl_md_t md, ptl_unlink_t md_unlink,
			 ptl_handle_md_t *mdh)
{
	ptl_handle_me_t me = 0;
	ptl_handle_md_t h = 0;
	MP_RC(PtlMEAttach(mp_ni, pt, mp_any, bits, ignore, me_unlink, PTL_INS_AFTER, &me), PTL_OK);
	MP_RC(PtlMDAttach(me, md, md_unlink, &h), PTL_OK);
	if (mdh)
		*mdh = h;
	return me;
}

static unsigned char mp_byte(unsigned seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u + (uint32_t)(i >> 16);
	return (unsigned char)(x ^ (x >> 13));
}

void mp_fill(void *buf, size_t len, unsigned seed)
{
	unsigned char *p = buf;
	for (size_t i = 0; i < len; i++)
		p[i] = mp_byte(seed, i);
}

long mp_check(const void *buf, size_t len, unsigned seed)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i < len; i++)
		if (p[i] != mp_byte(seed, i))
			return (long)i;
	return -1;
}

void mp_put_acked(ptl_handle_md_t md, ptl_handle_eq_t eq, int target, ptl_pt_index_t pt,
		  ptl_ac_index_t ac, ptl_match_bits_t bits, ptl_size_t len, ptl_size_t roff,
		  ptl_hdr_data_t hdr, ptl_size_t want_mlen, ptl_size_t want_off, int fail,
		  const char *what)
{
	MP_RC(PtlPutRegion(md, 0, len, PTL_ACK_REQ, mp_id(target), pt, ac, bits, roff, hdr), PTL_OK);
	MP_EXPECT(eq, what, .type = PTL_EVENT_SEND_START, .initiator = mp_rank, .match_bits = bits,
		  .rlength = len, .mlength = len, .hdr_data = hdr, .threshold = PTL_MD_THRESH_INF);
	MP_EXPECT(eq, what, .type = PTL_EVENT_SEND_END, .initiator = mp_rank, .match_bits = bits,
		  .rlength = len, .mlength = len, .hdr_data = hdr, .threshold = PTL_MD_THRESH_INF);
	MP_EXPECT(eq, what, .type = PTL_EVENT_ACK, .initiator = target, .match_bits = bits,
		  .rlength = len, .mlength = want_mlen, .offset = want_off, .hdr_data = hdr,
		  .fail = fail, .threshold = PTL_MD_THRESH_INF);
}
