/*
 * tcp_nal.c - nal_tcp_ops: open/start/close, send, bulk moves by request
 * and response frames, progress (one epoll pass) and sleep/kick (epoll
 * plus an eventfd).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "tcp.h"

uint64_t tcp_refused(const struct nal *n)
{
	return n->refused;
}

static int tcp_open(const struct nal_open_args *args, struct nal **out)
{
	struct nal *n = calloc(1, sizeof(*n));
	struct epoll_event ev = { .events = EPOLLIN };

	if (n == NULL)
		return NAL_ENOMEM;
	n->rank = args->rank;
	n->size = args->size;
	n->jobid = args->jobid;
	n->up = args->up;
	n->lfd = n->evfd = -1;
	if (args->job_key != NULL)
		memcpy(n->key, args->job_key,
		       args->job_key_len < (int)sizeof(n->key) ? (size_t)args->job_key_len
							       : sizeof(n->key));
	n->peers = calloc((size_t)n->size, sizeof(*n->peers));
	n->local = calloc((size_t)n->size, sizeof(*n->local));
	n->epfd = epoll_create1(EPOLL_CLOEXEC);
	n->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ev.data.ptr = &n->evfd;
	if (n->peers == NULL || n->local == NULL || n->epfd < 0 || n->evfd < 0 ||
	    epoll_ctl(n->epfd, EPOLL_CTL_ADD, n->evfd, &ev) != 0 ||
	    getrandom(&n->mr_key, sizeof(n->mr_key), 0) != sizeof(n->mr_key)) {
		fprintf(stderr, "ptl: rank %d: tcp: cannot set up: %s\n", n->rank,
			strerror(errno));
		goto fail;
	}
	if (tcp_listen(n) != 0)
		goto fail;
	*out = n;
	return 0;
fail:
	if (n->epfd >= 0)
		close(n->epfd);
	if (n->evfd >= 0)
		close(n->evfd);
	if (n->lfd >= 0)
		close(n->lfd);
	free(n->peers);
	free(n->local);
	free(n);
	return NAL_EIO;
}

static int tcp_addr(struct nal *n, void *buf, size_t *len)
{
	size_t l = offsetof(struct tcp_addr, ip) + n->self.naddr * sizeof(uint32_t);

	memcpy(buf, &n->self, l);
	*len = l;
	return 0;
}

static int tcp_start(struct nal *n, const int *local_ranks, int nlocal)
{
	for (int i = 0; i < nlocal; i++)
		if (local_ranks[i] >= 0 && local_ranks[i] < n->size)
			n->local[local_ranks[i]] = true;
	return 0;
}

static int tcp_connect(struct nal *n, int peer, const void *addr, size_t len)
{
	struct tcp_peer *p = &n->peers[peer];
	struct tcp_addr a;
	struct tcp_fh fh = { .type = TCP_F_HELLO, .len = sizeof(struct tcp_hello) };
	struct tcp_hello h = { .magic = TCP_MAGIC, .jobid = n->jobid, .rank = n->rank,
			       .size = n->size };

	memset(&a, 0, sizeof(a));
	if (peer < 0 || peer >= n->size || len < offsetof(struct tcp_addr, ip) ||
	    len > sizeof(a))
		return NAL_EINVAL;
	memcpy(&a, addr, len);
	if (a.magic != (uint32_t)TCP_MAGIC || a.naddr == 0 || a.naddr > TCP_MAX_ADDRS ||
	    len < offsetof(struct tcp_addr, ip) + a.naddr * sizeof(uint32_t))
		return NAL_EINVAL;
	if (p->state != TCP_P_IDLE)
		return p->state == TCP_P_FAILED ? NAL_EPEER : 0;
	p->naddr = p->cur = 0;
	/* A peer on this host (PTL_NAL=tcp) is reached over loopback first. */
	if (n->local[peer])
		p->addr[p->naddr++] = (struct sockaddr_in){
			.sin_family = AF_INET, .sin_port = a.port,
			.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	for (int i = 0; i < a.naddr && p->naddr < TCP_MAX_ADDRS; i++)
		p->addr[p->naddr++] = (struct sockaddr_in){
			.sin_family = AF_INET, .sin_port = a.port, .sin_addr.s_addr = a.ip[i] };
	if (tcp_peer_connect(n, peer) != 0)
		return NAL_EPEER;
	memcpy(h.key, n->key, sizeof(h.key));
	return tcp_queue(n, peer, &fh, &h, sizeof(h), NULL, 0);
}

static int tcp_reaches(struct nal *n, int peer)
{
	return peer != n->rank && peer >= 0 && peer < n->size;
}

/* Writes what is queued and says BYE, waiting at most a second in all. */
static void tcp_say_bye(struct nal *n)
{
	struct tcp_fh bye = { .type = TCP_F_BYE };
	int left = 1000;

	for (int r = 0; r < n->size; r++)
		if (n->peers[r].state == TCP_P_UP || n->peers[r].state == TCP_P_CONNECTING)
			tcp_queue(n, r, &bye, NULL, 0, NULL, 0);
	for (int r = 0; r < n->size && left > 0; r++) {
		struct tcp_peer *p = &n->peers[r];

		while ((p->state == TCP_P_UP || p->state == TCP_P_CONNECTING) &&
		       p->ooff < p->olen && left > 0) {
			struct epoll_event ev[16];
			int k = epoll_wait(n->epfd, ev, 16, 10);

			for (int i = 0; i < k; i++)
				if (ev[i].data.ptr != &n->lfd && ev[i].data.ptr != &n->evfd) {
					struct tcp_conn *c = ev[i].data.ptr;

					if (c->kind == TCP_C_OUT)
						tcp_conn_event(n, c, ev[i].events);
				}
			tcp_flush(n, r);
			left -= 10;
		}
	}
}

static void tcp_close(struct nal *n)
{
	n->in_progress = 1; /* no upcalls from here on */
	tcp_say_bye(n);
	/* Our streams first, then the peers': a peer that sees EOF on the
	 * stream it writes has our BYE waiting on the other. */
	for (int r = 0; r < n->size; r++)
		if (n->peers[r].out != NULL)
			close(n->peers[r].out->fd);
	for (int r = 0; r < n->size; r++) {
		struct tcp_peer *p = &n->peers[r];

		if (p->in != NULL) {
			close(p->in->fd);
			tcp_conn_free(p->in);
		}
		if (p->out != NULL)
			tcp_conn_free(p->out);
		tcp_peer_drop_moves(p);
		free(p->ob);
	}
	while (n->pending != NULL) {
		struct tcp_conn *c = n->pending;

		n->pending = c->next;
		close(c->fd);
		tcp_conn_free(c);
	}
	while (n->dead != NULL) {
		struct tcp_conn *c = n->dead;

		n->dead = c->next;
		tcp_conn_free(c);
	}
	close(n->lfd);
	close(n->evfd);
	close(n->epfd);
	free(n->peers);
	free(n->local);
	free(n);
}

static void tcp_props(struct nal *n, struct nal_props *out)
{
	(void)n;
	out->name = "tcp";
	out->max_inline = TCP_MAX_INLINE;
	out->ports = 1;
	out->latency_class = 3;
	/* bulk() works, by messages the peer's progress engine serves (its
	 * progress thread), not one-sided like CMA or RDMA. */
	out->has_bulk = 1;
}

static size_t tcp_queued(const struct tcp_peer *p)
{
	return p->olen - p->ooff;
}

static int tcp_send(struct nal *n, int peer, const void *hdr, size_t hdr_len,
		    const void *payload, size_t len)
{
	struct tcp_peer *p;
	struct tcp_fh fh = { .type = TCP_F_MSG };

	if (peer < 0 || peer >= n->size || hdr_len + len > TCP_MAX_INLINE)
		return NAL_EINVAL;
	p = &n->peers[peer];
	if (p->state == TCP_P_FAILED)
		return NAL_EPEER;
	if (p->state == TCP_P_IDLE)
		return NAL_EINVAL; /* connect() first */
	if (tcp_queued(p) >= TCP_OUT_LIMIT)
		return NAL_EAGAIN;
	fh.len = (uint32_t)(hdr_len + len);
	/* A link that breaks now fails through peer_failed, like one that
	 * breaks after a successful send. */
	return tcp_queue(n, peer, &fh, hdr, hdr_len, payload, len) == NAL_ENOMEM ? NAL_ENOMEM : 0;
}

static int tcp_mem_reg(struct nal *n, void *addr, size_t len, struct nal_mr *mr)
{
	(void)len;
	mr->addr = (uint64_t)(uintptr_t)addr;
	mr->key = n->mr_key;
	mr->priv = NULL;
	return 0;
}

static void tcp_mem_dereg(struct nal *n, struct nal_mr *mr)
{
	(void)n;
	(void)mr;
}

static void tcp_set_active(struct nal *n, struct tcp_peer *p)
{
	bool a = p->moves != NULL || p->serves != NULL;

	if (a != p->active) {
		p->active = a;
		n->nstream += a ? 1 : -1;
	}
}

static int tcp_bulk(struct nal *n, int peer, enum nal_bulk_op op,
		    const struct iovec *local, int niov, uint64_t raddr,
		    uint64_t rkey, size_t len, void *cookie)
{
	struct tcp_peer *p;
	struct tcp_move *m;

	if (peer < 0 || peer >= n->size || niov < 0)
		return NAL_EINVAL;
	p = &n->peers[peer];
	if (p->state == TCP_P_FAILED)
		return NAL_EPEER;
	if (p->state == TCP_P_IDLE)
		return NAL_EINVAL;
	if (len == 0)
		return 0;
	m = malloc(sizeof(*m) + (size_t)niov * sizeof(struct iovec));
	if (m == NULL)
		return NAL_ENOMEM;
	*m = (struct tcp_move){ .id = ++n->next_id, .op = op, .cookie = cookie,
				.raddr = raddr, .rkey = rkey, .len = len, .niov = niov };
	memcpy(m->iov, local, (size_t)niov * sizeof(struct iovec));
	if (op == NAL_BULK_READ) {
		struct tcp_fh fh = { .type = TCP_F_RREQ, .id = m->id, .raddr = raddr,
				     .rkey = rkey, .status = len };
		int rc = tcp_queue(n, peer, &fh, NULL, 0, NULL, 0);

		if (rc != 0) {
			free(m);
			return rc;
		}
	}
	/* WRITE data goes out from progress(), as the queue drains. */
	if (p->moves_tail != NULL)
		p->moves_tail->next = m;
	else
		p->moves = m;
	p->moves_tail = m;
	tcp_set_active(n, p);
	return 1;
}

/* Copies between the iovecs at offset off and buf (to_iov: into them). */
static void tcp_iov_copy(const struct iovec *iov, int niov, size_t off, void *buf,
			 size_t len, bool to_iov)
{
	char *b = buf;

	for (int i = 0; i < niov && len > 0; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		size_t k = l - off < len ? l - off : len;
		if (to_iov)
			memcpy((char *)iov[i].iov_base + off, b, k);
		else
			memcpy(b, (char *)iov[i].iov_base + off, k);
		b += k;
		len -= k;
		off = 0;
	}
}

static struct tcp_move *tcp_move_find(struct tcp_peer *p, uint64_t id, struct tcp_move **prev)
{
	*prev = NULL;
	for (struct tcp_move *m = p->moves; m != NULL; *prev = m, m = m->next)
		if (m->id == id)
			return m;
	return NULL;
}

static void tcp_move_finish(struct nal *n, struct tcp_peer *p, struct tcp_move *m,
			    struct tcp_move *prev, int status)
{
	void *cookie = m->cookie;

	if (prev != NULL)
		prev->next = m->next;
	else
		p->moves = m->next;
	if (p->moves_tail == m)
		p->moves_tail = prev;
	free(m);
	tcp_set_active(n, p);
	n->up.bulk_done(n->up.arg, cookie, status);
}

int tcp_frame(struct nal *n, int peer, const struct tcp_fh *fh, const char *payload)
{
	struct tcp_peer *p = &n->peers[peer];
	struct tcp_move *m, *prev;

	switch (fh->type) {
	case TCP_F_MSG:
		n->up.recv(n->up.arg, peer, payload, fh->len);
		return 0;
	case TCP_F_RREQ: {
		struct tcp_serve *s;

		if (fh->rkey != n->mr_key) {
			struct tcp_fh err = { .type = TCP_F_RERR, .id = fh->id, .status = 1 };

			tcp_queue(n, peer, &err, NULL, 0, NULL, 0);
			return 0;
		}
		if ((s = calloc(1, sizeof(*s))) == NULL)
			return -1;
		s->id = fh->id;
		s->raddr = fh->raddr;
		s->len = (size_t)fh->status;
		if (p->serves_tail != NULL)
			p->serves_tail->next = s;
		else
			p->serves = s;
		p->serves_tail = s;
		tcp_set_active(n, p);
		return 0;
	}
	case TCP_F_RDATA:
		m = tcp_move_find(p, fh->id, &prev);
		if (m == NULL || m->op != NAL_BULK_READ || fh->raddr != m->done ||
		    fh->len > m->len - m->done)
			return -1;
		tcp_iov_copy(m->iov, m->niov, m->done, (void *)payload, fh->len, true);
		m->done += fh->len;
		if (m->done == m->len)
			tcp_move_finish(n, p, m, prev, 0);
		return 0;
	case TCP_F_RERR:
	case TCP_F_WACK:
		m = tcp_move_find(p, fh->id, &prev);
		if (m == NULL)
			return -1;
		tcp_move_finish(n, p, m, prev, fh->status == 0 ? 0 : NAL_EIO);
		return 0;
	case TCP_F_WDATA: {
		bool ok = fh->rkey == n->mr_key;

		if (ok)
			memcpy((void *)(uintptr_t)fh->raddr, payload, fh->len);
		if (fh->flags & TCP_FL_LAST) {
			struct tcp_fh ack = { .type = TCP_F_WACK, .id = fh->id, .status = !ok };

			tcp_queue(n, peer, &ack, NULL, 0, NULL, 0);
		}
		return 0;
	}
	case TCP_F_BYE:
		p->bye = true;
		return 0;
	default:
		return -1;
	}
}

/* Queues WRITE data and READ answers for peer while its queue has room. */
static int tcp_stream(struct nal *n, int peer)
{
	struct tcp_peer *p = &n->peers[peer];
	int done = 0;

	while (p->serves != NULL && tcp_queued(p) < TCP_OUT_LIMIT && p->state != TCP_P_FAILED) {
		struct tcp_serve *s = p->serves;
		size_t k = s->len - s->off < TCP_CHUNK ? s->len - s->off : TCP_CHUNK;
		struct tcp_fh fh = { .type = TCP_F_RDATA, .id = s->id, .raddr = s->off,
				     .len = (uint32_t)k };

		if (tcp_queue(n, peer, &fh, (const char *)(uintptr_t)s->raddr + s->off, k, NULL, 0) != 0)
			break;
		s->off += k;
		done++;
		if (s->off == s->len) {
			p->serves = s->next;
			if (p->serves == NULL)
				p->serves_tail = NULL;
			free(s);
		}
	}
	for (struct tcp_move *m = p->moves; m != NULL && p->state != TCP_P_FAILED; m = m->next) {
		while (m->op == NAL_BULK_WRITE && m->done < m->len &&
		       tcp_queued(p) < TCP_OUT_LIMIT && p->state != TCP_P_FAILED) {
			size_t k = m->len - m->done < TCP_CHUNK ? m->len - m->done : TCP_CHUNK;
			struct tcp_fh fh = { .type = TCP_F_WDATA, .id = m->id,
					     .raddr = m->raddr + m->done, .rkey = m->rkey,
					     .len = (uint32_t)k,
					     .flags = m->done + k == m->len ? TCP_FL_LAST : 0 };
			char *at = tcp_queue_space(n, peer, &fh);

			if (at == NULL)
				return done;
			tcp_iov_copy(m->iov, m->niov, m->done, at, k, false);
			tcp_flush(n, peer);
			m->done += k;
			done++;
		}
		if (tcp_queued(p) >= TCP_OUT_LIMIT)
			break;
	}
	if (p->state != TCP_P_FAILED)
		tcp_set_active(n, p);
	return done;
}

static int tcp_progress(struct nal *n)
{
	struct epoll_event ev[64];
	int done = 0, k;

	if (n->in_progress)
		return 0;
	n->in_progress = 1;
	k = epoll_wait(n->epfd, ev, 64, 0);
	for (int i = 0; i < k; i++) {
		if (ev[i].data.ptr == &n->evfd)
			continue; /* sleep() drains it */
		if (ev[i].data.ptr == &n->lfd)
			tcp_accept(n);
		else
			tcp_conn_event(n, ev[i].data.ptr, ev[i].events);
		done++;
	}
	if (n->nstream > 0)
		for (int r = 0; r < n->size; r++)
			if (n->peers[r].active)
				done += tcp_stream(n, r);
	if (n->nfail_pending > 0)
		for (int r = 0; r < n->size; r++)
			if (n->peers[r].fail_pending) {
				n->peers[r].fail_pending = false;
				__atomic_sub_fetch(&n->nfail_pending, 1, __ATOMIC_RELAXED);
				n->up.peer_failed(n->up.arg, r, NAL_EPEER);
				done++;
			}
	while (n->dead != NULL) {
		struct tcp_conn *c = n->dead;

		n->dead = c->next;
		tcp_conn_free(c);
	}
	n->in_progress = 0;
	return done;
}

static int tcp_sleep(struct nal *n, int timeout_ms)
{
	struct epoll_event ev[16];
	int k;

	if (__atomic_load_n(&n->nfail_pending, __ATOMIC_RELAXED) > 0)
		return 0;
	k = epoll_wait(n->epfd, ev, 16, timeout_ms);
	for (int i = 0; i < k; i++)
		if (ev[i].data.ptr == &n->evfd) {
			uint64_t v;

			if (read(n->evfd, &v, sizeof(v)) < 0) {
				/* EAGAIN: another sleeper took it */
			}
		}
	return 0;
}

static void tcp_kick(struct nal *n)
{
	uint64_t one = 1;

	if (write(n->evfd, &one, sizeof(one)) < 0) {
		/* the counter is full: a wake-up is pending anyway */
	}
}

static void tcp_set_polling(struct nal *n, int on)
{
	(void)n;
	(void)on;
}

const struct nal_ops nal_tcp_ops = {
	.name = "tcp",
	.open = tcp_open,
	.addr = tcp_addr,
	.start = tcp_start,
	.connect = tcp_connect,
	.reaches = tcp_reaches,
	.close = tcp_close,
	.props = tcp_props,
	.send = tcp_send,
	.mem_reg = tcp_mem_reg,
	.mem_dereg = tcp_mem_dereg,
	.bulk = tcp_bulk,
	.progress = tcp_progress,
	.sleep = tcp_sleep,
	.kick = tcp_kick,
	.set_polling = tcp_set_polling,
};
