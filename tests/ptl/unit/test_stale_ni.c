/*
 * tests/ptl/unit/test_stale_ni.c - handles of a finalized NI stay dead after
 * PtlNIInit makes a new one (issue 2: "a stale, freed or forged handle
 * returns the matching *_INVALID code"). An EQ, ME and MD handle taken
 * before PtlNIFini must not name the objects the new NI hands out next.
 * One process, public API only; kept apart from test_api so that its
 * failure does not hide the argument checks.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <portals3.h>

static const ptl_process_id_t any_id = { PTL_NID_ANY, PTL_PID_ANY };
static char buf[8];
static ptl_handle_ni_t ni;

#define assert_rc(call, want)                                                               \
	do {                                                                                \
		int rc_ = (call);                                                           \
		if (rc_ != (want))                                                          \
			fail_msg("%s: %d (%s), expected %s", #call, rc_,                     \
				 PtlErrorStr((unsigned)rc_), #want);                         \
	} while (0)

static int setup(void **state)
{
	(void)state;
	int nif;
	if (PtlInit(&nif) != PTL_OK)
		return -1;
	return PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni) == PTL_OK ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	PtlFini(); /* ends the NI and all it holds */
	return 0;
}

static void test_stale_across_ni_reinit(void **state)
{
	(void)state;
	ptl_handle_eq_t eq_old, eq_new;
	ptl_handle_me_t me_old, me_new;
	ptl_handle_md_t md_old, md_new;
	ptl_handle_ni_t ni_old = ni, back;
	ptl_md_t md = { .start = buf, .length = sizeof buf, .threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_OP_PUT, .eq_handle = PTL_EQ_NONE };
	ptl_event_t ev;

	assert_rc(PtlEQAlloc(ni, 2, NULL, &eq_old), PTL_OK);
	assert_rc(PtlMEAttach(ni, 0, any_id, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me_old), PTL_OK);
	assert_rc(PtlMDBind(ni, md, PTL_RETAIN, &md_old), PTL_OK);
	assert_rc(PtlNIFini(ni), PTL_OK);
	assert_rc(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni), PTL_OK);
	assert_rc(PtlHandleIsEqual(ni, ni_old), PTL_FAIL);
	assert_rc(PtlNIStatus(ni_old, PTL_SR_DROP_COUNT, &(ptl_sr_value_t){ 0 }), PTL_NI_INVALID);
	assert_rc(PtlEQAlloc(ni, 2, NULL, &eq_new), PTL_OK);
	assert_rc(PtlMEAttach(ni, 0, any_id, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me_new), PTL_OK);
	assert_rc(PtlMDBind(ni, md, PTL_RETAIN, &md_new), PTL_OK);

	/* The dead handles are reported as such... */
	assert_rc(PtlEQGet(eq_old, &ev), PTL_EQ_INVALID);
	assert_rc(PtlMDUpdate(md_old, NULL, NULL, PTL_EQ_NONE), PTL_MD_INVALID);
	assert_rc(PtlNIHandle(me_old, &back), PTL_HANDLE_INVALID);
	assert_rc(PtlMEUnlink(me_old), PTL_ME_INVALID);
	assert_rc(PtlMDUnlink(md_old), PTL_MD_INVALID);
	assert_rc(PtlEQFree(eq_old), PTL_EQ_INVALID);
	/* ...and the new objects are untouched by those calls. */
	assert_rc(PtlEQGet(eq_new, &ev), PTL_EQ_EMPTY);
	assert_rc(PtlMEUnlink(me_new), PTL_OK);
	assert_rc(PtlMDUnlink(md_new), PTL_OK);
	assert_rc(PtlEQFree(eq_new), PTL_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stale_across_ni_reinit, setup, teardown),
	};
	return cmocka_run_group_tests_name("ptl_stale_ni", tests, NULL, NULL);
}
