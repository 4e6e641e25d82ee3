/*
 * tcp_choose.c - the addresses the TCP NAL publishes (see tcp_choose.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_choose.h"

int tcp_choose_addrs(uint32_t *ip, int max, const char *who)
{
	const char *list = getenv("PTL_TCP_ADDR");
	const char *ifname = getenv("PTL_TCP_IF");
	struct ifaddrs *ifa0, *ifa;
	int n = 0;

	if (list != NULL && *list != '\0') {
		char buf[512], *save = NULL;

		snprintf(buf, sizeof(buf), "%s", list);
		for (char *t = strtok_r(buf, ",", &save); t != NULL && n < max; t = strtok_r(NULL, ",", &save)) {
			struct in_addr a;

			if (inet_pton(AF_INET, t, &a) == 1)
				ip[n++] = a.s_addr;
			else
				fprintf(stderr, "%s: PTL_TCP_ADDR: '%s' is not an IPv4 address; ignored\n", who, t);
		}
	} else if (getifaddrs(&ifa0) == 0) {
		for (ifa = ifa0; ifa != NULL && n < max; ifa = ifa->ifa_next) {
			if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET ||
			    !(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK))
				continue;
			if (ifname != NULL && *ifname != '\0' && strcmp(ifname, ifa->ifa_name) != 0)
				continue;
			ip[n++] = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr;
		}
		freeifaddrs(ifa0);
	}
	if (n == 0)
		ip[n++] = htonl(INADDR_LOOPBACK);
	return n;
}
