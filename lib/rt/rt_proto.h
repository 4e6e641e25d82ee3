/*
 * rt_proto.h - the wire protocol between a rank (rt_ptlrun.c) and ptlrun,
 * and small helpers both ends share. Private to lib/rt and tools/ptlrun*.
 *
 * One SOCK_STREAM socket per rank, inherited across exec; its number is in
 * PTL_RT_FD. Text lines, '\n'-terminated, fields separated by one space.
 * Values travel as lowercase hex so binary blobs need no escaping.
 *
 * rank -> ptlrun
 *   PUT <key> <hex>        publish; ptlrun keeps it until the next fence
 *   FENCE                  enter a fence (collective)
 *   BARRIER                enter a barrier (collective)
 *   ABORT <code> <why>     end the job with <code>; <why> runs to end of line
 *
 * ptlrun -> rank (only while the rank waits in a fence or barrier)
 *   KV <rank> <key> <hex>  a value published before this fence (0..n lines)
 *   FENCE_DONE             every rank fenced; all KV lines precede this
 *   BARRIER_DONE           every rank reached the barrier
 *   ERR <text>             the collective cannot complete (a rank exited
 *                          without joining it, or ranks disagree on which
 *                          collective comes next); <text> says why
 *
 * A fence and a barrier are one sequence of collectives: every rank must
 * call them in the same order. EOF on the socket means ptlrun is gone.
 */
#ifndef PTL_RT_PROTO_H
#define PTL_RT_PROTO_H

#include <stddef.h>
#include <stdint.h>

/* Longest line either side sends: "KV <rank> <key> <2*RT_VAL_MAX hex>". */
#define RT_LINE_MAX (2 * 1024 + 64 + 64 + 32)

/* Encodes len bytes as 2*len lowercase hex digits plus a NUL. */
void rt_hex_encode(char *dst, const void *src, size_t len);
/* Decodes 2*n hex digits into n bytes; -1 on an odd length or a non-digit. */
int rt_hex_decode(void *dst, size_t dstlen, const char *src, size_t srclen,
		  size_t *outlen);
/* Parses a decimal int in [min,max] from the whole of s; -1 if not one. */
int rt_parse_int(const char *s, long min, long max, long *out);
/* Seconds a rank waits on ptlrun: PTL_RT_TIMEOUT, default 600. */
int rt_wait_timeout(void);
/* A key is 1..RT_KEY_MAX-1 bytes of printable ASCII other than space. */
int rt_key_valid(const char *key);

/* The process's table of (rank, key) -> value, filled by the backend (puts
 * of the singleton, KV lines of a fence under ptlrun). Not locked: rt.c
 * serializes callers. */
/* Stores a copy, replacing an older value. 0, or -1 when out of memory. */
int rt_kv_set(int rank, const char *key, const void *val, size_t len);
/* 0 and the value; -1 when missing; -2 when *len is too small (*len is then
 * set to the value's size). */
int rt_kv_get(int rank, const char *key, void *val, size_t *len);
void rt_kv_clear(void);

#endif /* PTL_RT_PROTO_H */
