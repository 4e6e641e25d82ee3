/*
 * lib/nal/tcp/tcp_choose.h - which IPv4 addresses the TCP NAL publishes.
 * Shared by the NAL (tcp_conn.c) and `ptltool info`, which shows them, so
 * the two can never disagree.
 *
 * PTL_TCP_ADDR (a comma list) wins; else the addresses of PTL_TCP_IF; else
 * of every interface that is up and not loopback; loopback only when there
 * is nothing else.
 */
#ifndef PTL_TCP_CHOOSE_H
#define PTL_TCP_CHOOSE_H

#include <stdint.h>

/* Fills ip[0..max) (network order) and returns how many, at least 1. Names
 * entries of PTL_TCP_ADDR that are not addresses on stderr, as `who`. */
int tcp_choose_addrs(uint32_t *ip, int max, const char *who);

#endif /* PTL_TCP_CHOOSE_H */
