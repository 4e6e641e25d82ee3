/*
 * tcp_conn.c - the TCP NAL's sockets: the listener and the address it
 * publishes, lazy nonblocking connects that try the peer's addresses in
 * order, the HELLO check on accepted connections, per-peer output queues,
 * reading and framing, and turning a broken link into one peer_failed.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tcp.h"
#include "tcp_choose.h"

static void tcp_set_opts(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Which of our IPv4 addresses to publish: tcp_choose.h. */
static void tcp_local_addrs(struct nal *n)
{
	char who[32];

	snprintf(who, sizeof(who), "ptl: rank %d", n->rank);
	n->self.naddr = (uint16_t)tcp_choose_addrs(n->self.ip, TCP_MAX_ADDRS, who);
}

int tcp_listen(struct nal *n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t sl = sizeof(sa);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &n->lfd };

	n->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (n->lfd < 0 || bind(n->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(n->lfd, 128) != 0 ||
	    getsockname(n->lfd, (struct sockaddr *)&sa, &sl) != 0 ||
	    epoll_ctl(n->epfd, EPOLL_CTL_ADD, n->lfd, &ev) != 0) {
		fprintf(stderr, "ptl: rank %d: tcp: cannot listen: %s\n", n->rank,
			strerror(errno));
		return NAL_EIO;
	}
	n->port = ntohs(sa.sin_port);
	tcp_local_addrs(n);
	n->self.magic = (uint32_t)TCP_MAGIC;
	n->self.port = sa.sin_port;
	return 0;
}

static struct tcp_conn *tcp_conn_new(enum tcp_ckind kind, int fd, int peer)
{
	struct tcp_conn *c = calloc(1, sizeof(*c));

	if (c != NULL) {
		c->kind = kind;
		c->fd = fd;
		c->peer = peer;
	}
	return c;
}

void tcp_conn_free(struct tcp_conn *c)
{
	free(c->in);
	free(c);
}

/* Forgets the peer's bulk moves and the reads it asked us to serve. */
void tcp_peer_drop_moves(struct tcp_peer *p)
{
	while (p->moves != NULL) {
		struct tcp_move *m = p->moves;

		p->moves = m->next;
		free(m);
	}
	while (p->serves != NULL) {
		struct tcp_serve *s = p->serves;

		p->serves = s->next;
		free(s);
	}
	p->moves_tail = NULL;
	p->serves_tail = NULL;
}

/* Closes c's socket now; the struct waits on n->dead until progress() is
 * past every pointer to it (an epoll batch, a parse loop). */
static void tcp_conn_close(struct nal *n, struct tcp_conn *c)
{
	if (c == NULL || c->closed)
		return;
	epoll_ctl(n->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->closed = true;
	c->next = n->dead;
	n->dead = c;
}

static void tcp_watch(struct nal *n, struct tcp_peer *p, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0),
				  .data.ptr = p->out };

	if (p->out == NULL || p->watch_out == out)
		return;
	if (epoll_ctl(n->epfd, EPOLL_CTL_MOD, p->out->fd, &ev) == 0)
		p->watch_out = out;
}

void tcp_peer_break(struct nal *n, int peer, const char *why, int err)
{
	struct tcp_peer *p = &n->peers[peer];

	if (p->state == TCP_P_FAILED)
		return;
	if (!p->bye)
		fprintf(stderr, "ptl: rank %d: tcp: lost rank %d: %s%s%s\n", n->rank,
			peer, why, err ? ": " : "", err ? strerror(err) : "");
	tcp_conn_close(n, p->out);
	tcp_conn_close(n, p->in);
	p->out = p->in = NULL;
	p->state = TCP_P_FAILED;
	/* No bulk_done may follow peer_failed: forget the moves. */
	if (p->active) {
		p->active = false;
		n->nstream--;
	}
	tcp_peer_drop_moves(p);
	p->olen = p->ooff = 0;
	p->fail_pending = true;
	n->nfail_pending++;
}

/* Starts a nonblocking connect to the peer's next address. */
int tcp_peer_connect(struct nal *n, int peer)
{
	struct tcp_peer *p = &n->peers[peer];

	while (p->cur < p->naddr) {
		struct sockaddr_in *sa = &p->addr[p->cur++];
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLOUT };

		if (fd < 0)
			break;
		tcp_set_opts(fd);
		if (connect(fd, (struct sockaddr *)sa, sizeof(*sa)) != 0 &&
		    errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		if (p->out != NULL)
			tcp_conn_close(n, p->out);
		p->out = tcp_conn_new(TCP_C_OUT, fd, peer);
		ev.data.ptr = p->out;
		if (p->out == NULL || epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			free(p->out);
			p->out = NULL;
			break;
		}
		p->watch_out = true;
		p->state = TCP_P_CONNECTING;
		return 0;
	}
	tcp_peer_break(n, peer, "cannot connect to any of its addresses", 0);
	return NAL_EPEER;
}

void tcp_flush(struct nal *n, int peer)
{
	struct tcp_peer *p = &n->peers[peer];

	if (p->state != TCP_P_UP)
		return;
	while (p->ooff < p->olen) {
		ssize_t w = send(p->out->fd, p->ob + p->ooff, p->olen - p->ooff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			tcp_peer_break(n, peer, "send failed", errno);
			return;
		}
		p->ooff += (size_t)w;
	}
	if (p->ooff == p->olen)
		p->ooff = p->olen = 0;
	tcp_watch(n, p, p->ooff < p->olen);
}

char *tcp_queue_space(struct nal *n, int peer, const struct tcp_fh *fh)
{
	struct tcp_peer *p = &n->peers[peer];
	size_t need = sizeof(*fh) + fh->len;
	char *at;

	if (p->state == TCP_P_FAILED)
		return NULL;
	if (p->ooff > 0 && p->olen + need > p->ocap) {
		memmove(p->ob, p->ob + p->ooff, p->olen - p->ooff);
		p->olen -= p->ooff;
		p->ooff = 0;
	}
	if (p->olen + need > p->ocap) {
		size_t cap = p->ocap ? p->ocap : 65536;
		char *b;

		while (cap < p->olen + need)
			cap *= 2;
		if ((b = realloc(p->ob, cap)) == NULL)
			return NULL;
		p->ob = b;
		p->ocap = cap;
	}
	at = p->ob + p->olen;
	memcpy(at, fh, sizeof(*fh));
	p->olen += need;
	return at + sizeof(*fh);
}

int tcp_queue(struct nal *n, int peer, const struct tcp_fh *fh,
	      const void *p1, size_t l1, const void *p2, size_t l2)
{
	char *at;

	if (n->peers[peer].state == TCP_P_FAILED)
		return NAL_EPEER;
	if ((at = tcp_queue_space(n, peer, fh)) == NULL)
		return NAL_ENOMEM;
	if (l1)
		memcpy(at, p1, l1);
	if (l2)
		memcpy(at + l1, p2, l2);
	tcp_flush(n, peer);
	return 0;
}

void tcp_accept(struct nal *n)
{
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		int fd = accept4(n->lfd, (struct sockaddr *)&from, &fl,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct tcp_conn *c;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };

		if (fd < 0)
			return;
		tcp_set_opts(fd);
		c = tcp_conn_new(TCP_C_IN, fd, -1);
		ev.data.ptr = c;
		if (c == NULL || epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			free(c);
			continue;
		}
		c->from = from;
		c->next = n->pending;
		n->pending = c;
	}
}

static void tcp_pending_remove(struct nal *n, struct tcp_conn *c)
{
	for (struct tcp_conn **pp = &n->pending; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			c->next = NULL;
			return;
		}
}

static void tcp_refuse(struct nal *n, struct tcp_conn *c, const char *why)
{
	char ip[INET_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET, &c->from.sin_addr, ip, sizeof(ip));
	n->refused++;
	fprintf(stderr, "ptl: rank %d: tcp: refused a connection from %s:%u: %s "
		"(%llu refused so far)\n", n->rank, ip, ntohs(c->from.sin_port), why,
		(unsigned long long)n->refused);
	tcp_pending_remove(n, c);
	tcp_conn_close(n, c);
}

/* Checks the HELLO at the head of an accepted connection. 1: accepted,
 * 0: need more bytes, -1: refused (closed). */
static int tcp_hello(struct nal *n, struct tcp_conn *c)
{
	struct tcp_fh fh;
	struct tcp_hello h;
	uint8_t diff = 0;

	if (c->inlen < sizeof(fh))
		return 0;
	memcpy(&fh, c->in, sizeof(fh));
	if (fh.type != TCP_F_HELLO || fh.len != sizeof(h)) {
		tcp_refuse(n, c, "no ptl handshake");
		return -1;
	}
	if (c->inlen < sizeof(fh) + sizeof(h))
		return 0;
	memcpy(&h, c->in + sizeof(fh), sizeof(h));
	for (size_t i = 0; i < sizeof(h.key); i++)
		diff |= (uint8_t)(h.key[i] ^ n->key[i]);
	/* Not the job id: it names shm objects and differs per host. */
	if (h.magic != TCP_MAGIC || diff != 0) {
		tcp_refuse(n, c, "wrong job key");
		return -1;
	}
	if (h.size != n->size || h.rank < 0 || h.rank >= n->size || h.rank == n->rank ||
	    n->peers[h.rank].in != NULL || n->peers[h.rank].state == TCP_P_FAILED) {
		tcp_refuse(n, c, "bad or duplicate rank");
		return -1;
	}
	tcp_pending_remove(n, c);
	c->peer = h.rank;
	n->peers[h.rank].in = c;
	c->inlen -= sizeof(fh) + sizeof(h);
	memmove(c->in, c->in + sizeof(fh) + sizeof(h), c->inlen);
	return 1;
}

/* Parses whole frames of c. -1 when c was closed meanwhile. */
static int tcp_parse(struct nal *n, struct tcp_conn *c)
{
	size_t off = 0;
	int rc = 0;

	if (c->peer < 0) {
		int h = tcp_hello(n, c);

		if (h <= 0)
			return h;
	}
	while (c->inlen - off >= sizeof(struct tcp_fh)) {
		struct tcp_fh fh;

		memcpy(&fh, c->in + off, sizeof(fh));
		if (fh.len > TCP_FRAME_MAX || fh.type == TCP_F_HELLO) {
			tcp_peer_break(n, c->peer, "bad frame", 0);
			return -1;
		}
		if (c->inlen - off < sizeof(fh) + fh.len)
			break;
		if (tcp_frame(n, c->peer, &fh, c->in + off + sizeof(fh)) != 0) {
			tcp_peer_break(n, c->peer, "bad frame", 0);
			return -1;
		}
		off += sizeof(fh) + fh.len;
		if (c->closed) {
			rc = -1;
			break;
		}
	}
	if (!c->closed) {
		memmove(c->in, c->in + off, c->inlen - off);
		c->inlen -= off;
	}
	return rc;
}

static void tcp_conn_read(struct nal *n, struct tcp_conn *c)
{
	for (int rounds = 0; rounds < 16 && !c->closed; rounds++) {
		ssize_t r;

		if (c->incap - c->inlen < 16384) {
			size_t cap = c->incap ? c->incap * 2 : 2 * (TCP_FRAME_MAX + sizeof(struct tcp_fh));
			char *b;

			if (c->inlen > 4 * (size_t)TCP_FRAME_MAX || (b = realloc(c->in, cap)) == NULL) {
				if (c->peer >= 0)
					tcp_peer_break(n, c->peer, "input buffer", ENOMEM);
				else
					tcp_refuse(n, c, "out of memory");
				return;
			}
			c->in = b;
			c->incap = cap;
		}
		r = recv(c->fd, c->in + c->inlen, c->incap - c->inlen, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0) {
			if (c->peer < 0) {
				tcp_refuse(n, c, "closed before the handshake");
			} else {
				struct tcp_peer *p = &n->peers[c->peer];

				if (p->bye) {
					/* A clean close: forget it quietly. */
					tcp_conn_close(n, c);
					p->in = NULL;
				} else {
					tcp_peer_break(n, c->peer, r == 0 ? "connection closed" :
						       "receive failed", r == 0 ? 0 : errno);
				}
			}
			return;
		}
		c->inlen += (size_t)r;
		if (tcp_parse(n, c) != 0)
			return;
	}
}

/* Our outgoing connection: connect completion, room to write, or the peer
 * closing it (it never writes on it). */
static void tcp_out_event(struct nal *n, struct tcp_conn *c, uint32_t events)
{
	struct tcp_peer *p = &n->peers[c->peer];

	if (p->state == TCP_P_CONNECTING) {
		int err = 0;
		socklen_t el = sizeof(err);

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) {
			tcp_peer_connect(n, c->peer); /* the next address */
			return;
		}
		p->state = TCP_P_UP;
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) {
		char b[64];
		ssize_t r = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);

		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			/* A peer that closes cleanly says BYE on its own
			 * connection before closing ours: read that first. */
			if (!p->bye && p->in != NULL && !p->in->closed)
				tcp_conn_read(n, p->in);
			if (p->state == TCP_P_FAILED)
				return;
			if (p->bye) {
				tcp_conn_close(n, c);
				p->out = NULL;
				p->state = TCP_P_FAILED; /* sends after its BYE fail */
				return;
			}
			tcp_peer_break(n, c->peer, "connection closed by the peer",
				       r < 0 ? errno : 0);
			return;
		}
	}
	tcp_flush(n, c->peer);
}

void tcp_conn_event(struct nal *n, struct tcp_conn *c, uint32_t events)
{
	if (c->closed)
		return;
	if (c->kind == TCP_C_OUT)
		tcp_out_event(n, c, events);
	else
		tcp_conn_read(n, c);
}
