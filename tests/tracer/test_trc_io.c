/* Trace files: round trips, flat records, configuration, and a reader
 * that fails cleanly on any corrupt, truncated or foreign input. */
#include <stdio.h>
#include <unistd.h>

#include "trc_test_util.h"

static void build(struct trc_trace *m, int32_t n)
{
	/* a merged stencil-like trace with loops, parameter lists, arrays */
	struct trc_trace t;
	for (int32_t r = 0; r < n; r++) {
		struct trc_trace *dst = r ? &t : m;
		trc_trace_init(dst, TRC_LEVEL_NODE, r, n, -1);
		for (int it = 0; it < 30; it++) {
			struct trc_ev a = tu_send(TRC_OP_IRECV, (r + 1) % n, 64, 7, 1, r, n);
			struct trc_ev b = tu_send(TRC_OP_IRECV, (r + n - 1) % n, 64, 7, 1, r, n);
			struct trc_ev w;
			int64_t offs[2] = { 2, 1 };
			memset(&w, 0, sizeof w);
			w.op = TRC_OP_WAITALL;
			w.sig = 3;
			w.f[0].v = 2;
			w.narr = 2;
			w.arr = offs;
			trc_append(dst, &a);
			trc_append(dst, &b);
			trc_append(dst, &w);
		}
		struct trc_ev e = tu_barrier(r % 2 ? 5 : 6);
		trc_append(dst, &e);
		if (r)
			trc_merge(m, &t);
	}
}

static void test_roundtrip(void **state)
{
	(void)state;
	struct trc_trace m, back;
	char err[256];
	build(&m, 6);
	struct trc_buf b = { 0 };
	assert_int_equal(trc_serialize(&m, &b), 0);
	assert_int_equal(trc_deserialize(&back, b.p, b.len, err, sizeof err), 0);
	assert_int_equal(back.nranks, 6);
	for (int r = 0; r < 6; r++) {
		char *x = tu_expand(&m, r, NULL), *y = tu_expand(&back, r, NULL);
		assert_string_equal(x, y);
		free(x);
		free(y);
	}
	/* serializing again gives the same bytes */
	struct trc_buf b2 = { 0 };
	trc_serialize(&back, &b2);
	assert_int_equal(b.len, b2.len);
	assert_memory_equal(b.p, b2.p, b.len);
	trc_buf_free(&b);
	trc_buf_free(&b2);
	trc_trace_free(&m);
	trc_trace_free(&back);
}

static void test_files_all_formats(void **state)
{
	(void)state;
	struct trc_trace m, back;
	char err[256], path[] = "/tmp/trc-io-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	build(&m, 3);
	/* rsd */
	assert_int_equal(trc_write_file(&m, TRC_FMT_RSD, path, err, sizeof err), 0);
	assert_int_equal(trc_read_file(&back, path, err, sizeof err), 0);
	trc_trace_free(&back);
	/* binary: flat records, one file per rank */
	assert_int_equal(trc_write_file(&m, TRC_FMT_BINARY, path, err, sizeof err), 0);
	for (int r = 0; r < 3; r++) {
		char p[64];
		snprintf(p, sizeof p, "%s.%d", path, r);
		assert_int_equal(trc_read_file(&back, p, err, sizeof err), 0);
		assert_int_equal(back.rank, r);
		char *x = tu_expand(&m, r, NULL), *y = tu_expand(&back, r, NULL);
		assert_string_equal(x, y);
		free(x);
		free(y);
		trc_trace_free(&back);
		unlink(p);
	}
	/* ascii: text that says what it is */
	assert_int_equal(trc_write_file(&m, TRC_FMT_ASCII, path, err, sizeof err), 0);
	FILE *f = fopen(path, "r");
	char line[200];
	assert_non_null(fgets(line, sizeof line, f));
	fclose(f);
	assert_non_null(strstr(line, "# ptl trace v1 level=glob ranks=0-2 of 3"));
	/* unwritable path */
	assert_int_equal(trc_write_file(&m, TRC_FMT_RSD, "/nonexistent/x", err, sizeof err), -1);
	assert_non_null(strstr(err, "cannot write trace /nonexistent/x"));
	unlink(path);
	trc_trace_free(&m);
}

static uint32_t xs = 2463534242u;
static uint32_t rnd(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 17;
	xs ^= xs << 5;
	return xs;
}

static void fix_crc(uint8_t *p, size_t len)
{
	uint32_t c = trc_crc32(0, p, len - 4);
	p[len - 4] = c & 0xff;
	p[len - 3] = (c >> 8) & 0xff;
	p[len - 2] = (c >> 16) & 0xff;
	p[len - 1] = c >> 24;
}

static void test_fuzz_reader(void **state)
{
	(void)state;
	struct trc_trace m, back;
	char err[256];
	build(&m, 5);
	struct trc_buf b = { 0 };
	trc_serialize(&m, &b);
	uint8_t *p = malloc(b.len);
	/* every truncation fails with a message */
	for (size_t n = 0; n < b.len; n++) {
		err[0] = 0;
		assert_int_equal(trc_deserialize(&back, b.p, n, err, sizeof err), -1);
		assert_true(err[0] != 0);
		trc_trace_free(&back);
	}
	/* random corruption behind a valid checksum exercises the parser:
	 * it either reads a trace or fails, and never reads out of bounds */
	int ok = 0, bad = 0;
	for (int i = 0; i < 20000; i++) {
		memcpy(p, b.p, b.len);
		int flips = 1 + (int)(rnd() % 4);
		for (int k = 0; k < flips; k++)
			p[9 + rnd() % (b.len - 13)] ^= (uint8_t)(1u << (rnd() % 8));
		if (rnd() % 4 == 0)
			p[9 + rnd() % (b.len - 13)] = (uint8_t)rnd();
		fix_crc(p, b.len);
		if (trc_deserialize(&back, p, b.len, err, sizeof err) == 0) {
			ok++;
			struct trc_stats st;
			trc_stats(&back, &st);
			/* expanding a mutated trace may be long (loop counts);
			 * expand one rank only if it is small */
			if (st.events < 100000)
				free(tu_expand(&back, 0, NULL));
		} else {
			bad++;
			assert_true(strlen(err) > 0);
		}
		trc_trace_free(&back);
	}
	assert_true(bad > 0);
	/* a flipped byte without fixing the checksum is caught */
	memcpy(p, b.p, b.len);
	p[b.len / 2] ^= 0x10;
	assert_int_equal(trc_deserialize(&back, p, b.len, err, sizeof err), -1);
	assert_non_null(strstr(err, "checksum mismatch"));
	trc_trace_free(&back);
	/* foreign and future files */
	assert_int_equal(trc_deserialize(&back, (const uint8_t *)"GIF89a.......", 13, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a ptl trace"));
	trc_trace_free(&back);
	memcpy(p, b.p, b.len);
	p[8] = 9;
	assert_int_equal(trc_deserialize(&back, p, b.len, err, sizeof err), -1);
	assert_non_null(strstr(err, "version 9"));
	trc_trace_free(&back);
	free(p);
	trc_buf_free(&b);
	trc_trace_free(&m);
}

static void test_config(void **state)
{
	(void)state;
	struct trc_config c;
	char msgs[2048], path[] = "/tmp/trc-rec-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "ascii\n-1\n128\n/tmp/out.trace\n");
	fclose(f);
	unsetenv("PTL_TRACE_FORMAT");
	unsetenv("PTL_TRACE_WINDOW");
	unsetenv("PTL_TRACE_LEVEL");
	assert_int_equal(trc_config_load(&c, path, msgs, sizeof msgs), 0);
	assert_int_equal(c.fmt, TRC_FMT_ASCII);
	assert_int_equal(c.window, -1);
	assert_int_equal(c.reqbuf, 128);
	assert_string_equal(c.out, "/tmp/out.trace");
	assert_int_equal(c.level, TRC_LEVEL_GLOB);
	assert_true(c.histo < 0);
	/* the environment overrides the file */
	setenv("PTL_TRACE_FORMAT", "binary", 1);
	setenv("PTL_TRACE_WINDOW", "16", 1);
	setenv("PTL_TRACE_LEVEL", "node", 1);
	setenv("PTL_TRACE_HISTO", "2.5", 1);
	assert_int_equal(trc_config_load(&c, path, msgs, sizeof msgs), 0);
	assert_int_equal(c.fmt, TRC_FMT_BINARY);
	assert_int_equal(c.window, 16);
	assert_int_equal(c.level, TRC_LEVEL_NODE);
	assert_true(c.histo > 2.4 && c.histo < 2.6);
	/* malformed values are named and leave the defaults */
	setenv("PTL_TRACE_WINDOW", "-5", 1);
	setenv("PTL_TRACE_LEVEL", "everything", 1);
	unsetenv("PTL_TRACE_HISTO");
	f = fopen(path, "w");
	fprintf(f, "rsd\nwide\n-3\n");
	fclose(f);
	assert_int_equal(trc_config_load(&c, path, msgs, sizeof msgs), 5);
	assert_non_null(strstr(msgs, "line 2: compression window 'wide'"));
	assert_non_null(strstr(msgs, "line 3: request-offset buffer size '-3'"));
	assert_non_null(strstr(msgs, "line 4 missing"));
	assert_non_null(strstr(msgs, "PTL_TRACE_WINDOW='-5'"));
	assert_non_null(strstr(msgs, "PTL_TRACE_LEVEL='everything'"));
	assert_int_equal(c.window, 512);
	assert_int_equal(c.reqbuf, 4096);
	unsetenv("PTL_TRACE_FORMAT");
	unsetenv("PTL_TRACE_WINDOW");
	unsetenv("PTL_TRACE_LEVEL");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_files_all_formats),
		cmocka_unit_test(test_fuzz_reader),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
