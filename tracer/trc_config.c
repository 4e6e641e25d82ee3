/* trc_config.c: record.in (the seed's four lines) and PTL_TRACE_*. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trc.h"

#define DEF_WINDOW 512
#define DEF_REQBUF 4096
#define DEF_OUT "ptl.trace"
#define DEF_DEPTH 1

static void note(char *msgs, size_t len, int *np, const char *fmt, const char *where, const char *val,
		 const char *what)
{
	size_t o = strlen(msgs);
	if (o < len)
		snprintf(msgs + o, len - o, fmt, where, val, what);
	(*np)++;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	size_t k = strspn(s, " \t");
	if (k)
		memmove(s, s + k, strlen(s + k) + 1);
}

static int set_fmt(struct trc_config *c, const char *v)
{
	if (!strcmp(v, "rsd"))
		c->fmt = TRC_FMT_RSD;
	else if (!strcmp(v, "ascii"))
		c->fmt = TRC_FMT_ASCII;
	else if (!strcmp(v, "binary"))
		c->fmt = TRC_FMT_BINARY;
	else
		return -1;
	return 0;
}

static int set_level(struct trc_config *c, const char *v)
{
	if (!strcmp(v, "dump"))
		c->level = TRC_LEVEL_DUMP;
	else if (!strcmp(v, "node"))
		c->level = TRC_LEVEL_NODE;
	else if (!strcmp(v, "glob"))
		c->level = TRC_LEVEL_GLOB;
	else
		return -1;
	return 0;
}

int trc_config_load(struct trc_config *c, const char *path, char *msgs, size_t msglen)
{
	int np = 0;
	long v;
	memset(c, 0, sizeof *c);
	c->fmt = TRC_FMT_RSD;
	c->window = DEF_WINDOW;
	c->reqbuf = DEF_REQBUF;
	snprintf(c->out, sizeof c->out, "%s", DEF_OUT);
	c->level = TRC_LEVEL_GLOB;
	c->histo = -1;
	c->depth = DEF_DEPTH;
	if (msglen)
		msgs[0] = 0;

	FILE *f = path ? fopen(path, "r") : NULL;
	if (f) {
		char line[sizeof c->out];
		for (int ln = 1; ln <= 4; ln++) {
			if (!fgets(line, sizeof line, f)) {
				char n[8];
				snprintf(n, sizeof n, "%d", ln);
				note(msgs, msglen, &np, "%s: line %s missing: record.in needs 4 lines (format, window, "
				     "request buffer, output path)%s\n", path, n, "");
				break;
			}
			chomp(line);
			if (ln == 1 && set_fmt(c, line))
				note(msgs, msglen, &np, "%s: line 1: format '%s' is not %s; using rsd\n", path, line,
				     "rsd, ascii or binary");
			if (ln == 2) {
				if (parse_long(line, -1, 1 << 30, &v))
					note(msgs, msglen, &np, "%s: line 2: compression window '%s' is not %s; using 512\n",
					     path, line, "an integer >= -1 (-1: no window)");
				else
					c->window = (int)v;
			}
			if (ln == 3) {
				if (parse_long(line, 1, 1L << 30, &v))
					note(msgs, msglen, &np, "%s: line 3: request-offset buffer size '%s' is not %s; "
					     "using 4096\n", path, line, "a positive integer");
				else
					c->reqbuf = v;
			}
			if (ln == 4) {
				if (strlen(line) + 1 >= sizeof c->out)
					note(msgs, msglen, &np, "%s: line 4: output path '%.40s...' is %s; using ptl.trace\n",
					     path, line, "too long");
				else if (!line[0])
					note(msgs, msglen, &np, "%s: line 4: output path '%s' is %s; using ptl.trace\n",
					     path, line, "empty");
				else
					snprintf(c->out, sizeof c->out, "%s", line);
			}
		}
		fclose(f);
	}

	const char *e;
	if ((e = getenv("PTL_TRACE_FORMAT")) && set_fmt(c, e))
		note(msgs, msglen, &np, "%s='%s' is not %s; ignored\n", "PTL_TRACE_FORMAT", e, "rsd, ascii or binary");
	if ((e = getenv("PTL_TRACE_WINDOW"))) {
		if (parse_long(e, -1, 1 << 30, &v))
			note(msgs, msglen, &np, "%s='%s' is not %s; ignored\n", "PTL_TRACE_WINDOW", e,
			     "an integer >= -1 (-1: no window)");
		else
			c->window = (int)v;
	}
	if ((e = getenv("PTL_TRACE_REQBUF"))) {
		if (parse_long(e, 1, 1L << 30, &v))
			note(msgs, msglen, &np, "%s='%s' is not %s; ignored\n", "PTL_TRACE_REQBUF", e, "a positive integer");
		else
			c->reqbuf = v;
	}
	if ((e = getenv("PTL_TRACE_OUT"))) {
		if (!e[0])
			note(msgs, msglen, &np, "%s='%s' is %s; ignored\n", "PTL_TRACE_OUT", e, "empty");
		else
			snprintf(c->out, sizeof c->out, "%s", e);
	}
	if ((e = getenv("PTL_TRACE_LEVEL")) && set_level(c, e))
		note(msgs, msglen, &np, "%s='%s' is not %s; ignored\n", "PTL_TRACE_LEVEL", e, "dump, node or glob");
	if ((e = getenv("PTL_TRACE_HISTO"))) {
		char *end;
		errno = 0;
		double h = strtod(e, &end);
		if (errno || end == e || *end || h < 0 || h > 100)
			note(msgs, msglen, &np, "%s='%s' is not %s; staying lossless\n", "PTL_TRACE_HISTO", e,
			     "a percentage between 0 and 100");
		else
			c->histo = h;
	}
	if ((e = getenv("PTL_TRACE_DEPTH"))) {
		if (parse_long(e, 1, 16, &v))
			note(msgs, msglen, &np, "%s='%s' is not %s; ignored\n", "PTL_TRACE_DEPTH", e, "between 1 and 16");
		else
			c->depth = (int)v;
	}
	if ((e = getenv("PTL_TRACE_FLAT")) && e[0])
		snprintf(c->flat, sizeof c->flat, "%s", e);
	return np;
}
