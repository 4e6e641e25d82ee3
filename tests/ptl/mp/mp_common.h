/*
 * Helpers shared by the multi-process Portals tests (tests/ptl/mp). Every
 * rank of a ptlrun job runs the same cmocka group; ranks meet in
 * mp_end() (a PtlRtBarrier) at the end of each test. A rank whose test
 * fails ends the job at once (mp_teardown), so the others never wait for
 * it until ptlrun's timeout; ptlrun then names the rank.
 *
 * Every wait is bounded (mp_timeout_ms) and says what it waited for.
 */
#ifndef MP_COMMON_H
#define MP_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <portals3.h>
#include <ptl_runtime.h>

extern int mp_rank, mp_size;
extern ptl_handle_ni_t mp_ni;
extern int mp_timeout_ms;   /* bound of every wait */
extern int mp_small;        /* PTL_TEST_SMALL=1 (valgrind): use small sizes */

/* PtlInit, PtlNIInit and the job's ids; exits on failure. */
void mp_init(void);
void mp_fini(void);
ptl_process_id_t mp_id(int rank);

/* cmocka glue: run `tests` with per-test setup/teardown; returns the exit code. */
int mp_run(const char *name, const struct CMUnitTest *tests, size_t n);
/* A test program's whole main: mp_init, at least 2 ranks, mp_run, mp_fini;
 * returns the process's exit status. */
int mp_main(const char *name, const struct CMUnitTest *tests, size_t n);
#define MP_TEST(f) cmocka_unit_test_setup_teardown(f, mp_setup, mp_teardown)
int mp_setup(void **state);
int mp_teardown(void **state);
/* The last statement of every test: all ranks meet, the test counts as passed. */
void mp_end(void);
void mp_barrier(void);

/* Return code check that prints the Portals names on mismatch. */
#define MP_RC(call, want) mp_rc(__FILE__, __LINE__, #call, (call), (want))
void mp_rc(const char *file, int line, const char *what, int got, int want);
/* fail_msg with the caller's location. */
void mp_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define MP_FAIL(...) mp_fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* EQs whose sequence numbers the helpers track. */
ptl_handle_eq_t mp_eq(ptl_size_t count);
void mp_eq_free(ptl_handle_eq_t eq);
/* The next sequence number mp_expect wants on eq. */
void mp_eq_set_seq(ptl_handle_eq_t eq, ptl_seq_t seq);

/* What an event must be, field by field (unnamed fields must be 0). */
struct mp_ev {
	ptl_event_kind_t type;
	int initiator;            /* rank whose id the event carries */
	ptl_match_bits_t match_bits;
	ptl_size_t rlength, mlength, offset;
	ptl_hdr_data_t hdr_data;
	int link;
	int fail;                 /* ni_fail_type */
	int threshold;            /* md.threshold after the operation */
	ptl_handle_md_t md;       /* 0: do not check */
};
/* Waits (bounded) for the next event of eq and checks it, and its sequence. */
#define MP_EXPECT(eq, what, ...) \
	mp_expect(__FILE__, __LINE__, (eq), (what), &(struct mp_ev){ __VA_ARGS__ })
ptl_event_t mp_expect(const char *file, int line, ptl_handle_eq_t eq, const char *what,
		      const struct mp_ev *want);
/* Waits (bounded) for any event of eq; fails naming `what` on timeout. */
#define MP_WAIT(eq, ev, what) mp_wait(__FILE__, __LINE__, (eq), (ev), (what))
void mp_wait(const char *file, int line, ptl_handle_eq_t eq, ptl_event_t *ev, const char *what);
/* eq has no event now (after waiting ms for a stray one). */
#define MP_EMPTY(eq, ms, what) mp_empty(__FILE__, __LINE__, (eq), (ms), (what))
void mp_empty(const char *file, int line, ptl_handle_eq_t eq, int ms, const char *what);

/* A status register's value. */
long mp_sr(int reg);

/* Plain MDs and MEs. */
ptl_md_t mp_md(void *start, ptl_size_t len, int threshold, unsigned options, ptl_handle_eq_t eq);
ptl_handle_md_t mp_bind(void *start, ptl_size_t len, int threshold, unsigned options,
			ptl_handle_eq_t eq);
/* ME on pt for any initiator with exact bits, MD attached. */
ptl_handle_me_t mp_me_md(ptl_pt_index_t pt, ptl_match_bits_t bits, ptl_match_bits_t ignore,
			 ptl_unlink_t me_unlink, ptl_md_t md, ptl_unlink_t md_unlink,
			 ptl_handle_md_t *mdh);
extern const ptl_process_id_t mp_any;

/* Fill/check a pattern depending on (seed, index). */
void mp_fill(void *buf, size_t len, unsigned seed);
/* Returns the first index that differs, or -1. */
long mp_check(const void *buf, size_t len, unsigned seed);
#define MP_CHECK(buf, len, seed, what)                                                          \
	do {                                                                                    \
		long bad_ = mp_check((buf), (len), (seed));                                     \
		if (bad_ >= 0)                                                                  \
			fail_msg("rank %d: %s: byte %ld of %zu differs", mp_rank, (what), bad_, \
				 (size_t)(len));                                                \
	} while (0)

int64_t mp_now_ms(void);

/* Initiator side of a put with PTL_ACK_REQ from a bound MD with threshold
 * PTL_MD_THRESH_INF and events on eq: SEND_START, SEND_END (inline sizes),
 * then the ACK: mlength want_mlen at want_off, or a failure. */
void mp_put_acked(ptl_handle_md_t md, ptl_handle_eq_t eq, int target, ptl_pt_index_t pt,
		  ptl_ac_index_t ac, ptl_match_bits_t bits, ptl_size_t len, ptl_size_t roff,
		  ptl_hdr_data_t hdr, ptl_size_t want_mlen, ptl_size_t want_off, int fail,
		  const char *what);
#endif
