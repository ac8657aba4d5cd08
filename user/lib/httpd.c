// SPDX-License-Identifier: GPL-2.0
/* A non-blocking, bounded HTTP/1.1 server for one resource (see httpd.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include "lib/asuser.h"
#include "lib/httpd.h"
#include "lib/util.h"

#define ACCEPTS_PER_SERVE	16	/* new connections taken per call, at most */

enum conn_state {
	CONN_FREE = 0,
	CONN_READ,		/* waiting for (the rest of) a request */
	CONN_WRITE,		/* sending an answer */
};

/* Who is at the other end: its address and, on this machine (loopback), its user. */
struct peer {
	int family;
	__u8 addr[16];
	__u32 uid;		/* the client socket's owner (loopback only), else ~0 */
};

struct conn {
	int fd;
	enum conn_state state;
	struct peer peer;
	__u64 since_ns;		/* READ: first byte of the request (0: none yet, idle);
				 * WRITE: the answer started */
	__u64 idle_ns;		/* READ: when the connection became idle */
	char in[HTTPD_REQ_MAX];
	size_t nin;
	char *out;		/* the answer (head and body), malloc'd */
	size_t nout, sent;
	bool close_after;	/* close once the answer is sent */
};

struct httpd {
	int fd;
	char path[256];
	char addr[HTTPD_ADDR_STR];
	httpd_handler_fn fn;
	void *ctx;
	__u64 answered;
	struct conn conns[HTTPD_MAX_CONNS];
};

/* ---- parsing ---- */

static int parse_port(const char *s, __u16 *port)
{
	unsigned long v = 0;
	const char *p;

	if (!*s || strlen(s) > 5)
		return -EINVAL;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	if (v < 1 || v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

int httpd__parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
		      char *why, size_t why_len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[64] = "127.0.0.1";
	const char *colon, *port_s;
	bool v6 = false;
	__u16 port;

	memset(ss, 0, sizeof(*ss));
	if (!spec || !*spec) {
		snprintf(why, why_len, "an empty address (give ADDR:PORT, :PORT or PORT)");
		return -EINVAL;
	}
	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');

		if (!end || end[1] != ':' || (size_t)(end - spec - 1) >= sizeof(host) ||
		    end == spec + 1) {
			snprintf(why, why_len, "an IPv6 address is written [ADDR]:PORT");
			return -EINVAL;
		}
		memcpy(host, spec + 1, end - spec - 1);
		host[end - spec - 1] = 0;
		v6 = true;
		port_s = end + 2;
	} else if ((colon = strrchr(spec, ':'))) {
		if (colon != spec) {
			if (memchr(spec, ':', colon - spec)) {
				snprintf(why, why_len, "an IPv6 address is written [ADDR]:PORT");
				return -EINVAL;
			}
			if ((size_t)(colon - spec) >= sizeof(host)) {
				snprintf(why, why_len, "the address is too long");
				return -EINVAL;
			}
			memcpy(host, spec, colon - spec);
			host[colon - spec] = 0;
		}
		port_s = colon + 1;
	} else {
		port_s = spec;
	}
	if (parse_port(port_s, &port)) {
		snprintf(why, why_len, "the port must be a number from 1 to 65535");
		return -EINVAL;
	}
	if (!v6 && !strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (v6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1) {
			snprintf(why, why_len, "'%s' is not an IPv6 address", host);
			return -EINVAL;
		}
		*len = sizeof(*in6);
		return 0;
	}
	in4->sin_family = AF_INET;
	in4->sin_port = htons(port);
	if (inet_pton(AF_INET, host, &in4->sin_addr) != 1) {
		snprintf(why, why_len, "'%s' is not a numeric IPv4 address ([ADDR] for IPv6)",
			 host);
		return -EINVAL;
	}
	*len = sizeof(*in4);
	return 0;
}

const char *httpd__addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in4->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(in4->sin_port));
	}
	return buf;
}

/* the end of the head: "\r\n\r\n" (or bare "\n\n"), the offset just past it, or 0 */
static size_t head_end(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* copies [s, e) trimmed of blanks into out[0..n) (cut to fit) */
static void copy_trim(char *out, size_t n, const char *s, const char *e)
{
	size_t k;

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	k = (size_t)(e - s) < n - 1 ? (size_t)(e - s) : n - 1;
	memcpy(out, s, k);
	out[k] = 0;
}

/* does the comma-separated header value [s, e) hold token (case-insensitive)? */
static bool has_token(const char *s, const char *e, const char *token)
{
	size_t n = strlen(token);

	while (s < e) {
		const char *c = memchr(s, ',', e - s);
		char t[32];

		if (!c)
			c = e;
		copy_trim(t, sizeof(t), s, c);
		if (strlen(t) == n && !strncasecmp(t, token, n))
			return true;
		s = c + 1;
	}
	return false;
}

static int parse_request_line(const char *s, const char *e, struct httpd_request *rq)
{
	const char *sp1, *sp2, *q;
	size_t n;

	sp1 = memchr(s, ' ', e - s);
	if (!sp1 || sp1 == s || (size_t)(sp1 - s) >= sizeof(rq->method))
		return -EBADMSG;
	memcpy(rq->method, s, sp1 - s);
	rq->method[sp1 - s] = 0;
	sp2 = memchr(sp1 + 1, ' ', e - sp1 - 1);
	if (!sp2 || sp2 == sp1 + 1)
		return -EBADMSG;
	q = memchr(sp1 + 1, '?', sp2 - sp1 - 1);
	n = (q ? q : sp2) - sp1 - 1;
	if (n >= sizeof(rq->path))
		n = sizeof(rq->path) - 1;	/* too long for the one path: never it */
	memcpy(rq->path, sp1 + 1, n);
	rq->path[n] = 0;
	n = e - sp2 - 1;
	if (n < 8 || strncmp(sp2 + 1, "HTTP/", 5))
		return -EBADMSG;
	if (n != 8 || sp2[6] != '1' || sp2[7] != '.' || sp2[8] < '0' || sp2[8] > '9')
		return -EPROTONOSUPPORT;
	rq->minor = sp2[8] - '0';
	return 0;
}

int httpd__parse_request(const char *buf, size_t len, struct httpd_request *rq, size_t *used)
{
	size_t end, i;
	const char *s, *e, *stop;
	bool close_hdr = false, keep_hdr = false;
	int err;

	memset(rq, 0, sizeof(*rq));
	/* blank lines before a request are ignored (RFC 9112 2.2) */
	for (i = 0; i < len && (buf[i] == '\r' || buf[i] == '\n'); i++)
		;
	end = i < len ? head_end(buf + i, len - i) : 0;
	if (!end)
		return len >= HTTPD_REQ_MAX ? -E2BIG : -EAGAIN;
	end += i;
	if (end > HTTPD_REQ_MAX)
		return -E2BIG;
	stop = buf + end;
	s = buf + i;
	e = memchr(s, '\n', stop - s);
	if (e > s && e[-1] == '\r')
		e--;
	err = parse_request_line(s, e, rq);
	if (err)
		return err;
	for (s = memchr(s, '\n', stop - s) + 1; s < stop; s = e + 1) {
		const char *colon, *v, *ve;

		e = memchr(s, '\n', stop - s);
		ve = e > s && e[-1] == '\r' ? e - 1 : e;
		if (ve == s)
			break;	/* the empty line */
		if (*s == ' ' || *s == '\t')
			return -EBADMSG;	/* obsolete line folding */
		colon = memchr(s, ':', ve - s);
		if (!colon || colon == s)
			return -EBADMSG;
		v = colon + 1;
		if (memchr(s, ' ', colon - s) || memchr(s, '\t', colon - s))
			return -EBADMSG;
#define IS(name) ((size_t)(colon - s) == strlen(name) && !strncasecmp(s, name, colon - s))
		if (IS("Accept")) {
			char a[sizeof(rq->accept)];
			size_t have = strlen(rq->accept);

			/* several Accept lines are one list */
			copy_trim(a, sizeof(a), v, ve);
			snprintf(rq->accept + have, sizeof(rq->accept) - have, "%s%s",
				 have ? "," : "", a);
		} else if (IS("Connection")) {
			close_hdr |= has_token(v, ve, "close");
			keep_hdr |= has_token(v, ve, "keep-alive");
		} else if (IS("Content-Length")) {
			char n[32];

			copy_trim(n, sizeof(n), v, ve);
			if (strspn(n, "0123456789") != strlen(n) || !n[0])
				return -EBADMSG;
			if (strspn(n, "0") != strlen(n))
				rq->has_body = true;
		} else if (IS("Transfer-Encoding")) {
			rq->has_body = true;
		}
#undef IS
	}
	rq->keep_alive = rq->minor >= 1 ? !close_hdr : keep_hdr && !close_hdr;
	*used = end;
	return 0;
}

/* the q parameter of a media range's parameters [s, e); 1 when absent */
static double range_q(const char *s, const char *e)
{
	while (s < e) {
		const char *sc = memchr(s, ';', e - s);
		char p[32];

		if (!sc)
			sc = e;
		copy_trim(p, sizeof(p), s, sc);
		if ((p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			char *end;
			double q = strtod(p + 2, &end);

			if (end == p + 2 || *end || q < 0)
				return 0;
			return q > 1 ? 1 : q;
		}
		s = sc + 1;
	}
	return 1;
}

double httpd__accept_q(const char *accept, const char *type, bool wild)
{
	const char *s = accept, *e = accept + strlen(accept), *slash = strchr(type, '/');
	double best = 0;
	int best_rank = 0;	/* 3 exact, 2 type/ *, 1 * / * */

	if (!*accept)
		return 1;
	while (s < e) {
		const char *c = memchr(s, ',', e - s), *sc;
		char range[128];
		int rank = 0;

		if (!c)
			c = e;
		sc = memchr(s, ';', c - s);
		copy_trim(range, sizeof(range), s, sc ? sc : c);
		if (!strcasecmp(range, type))
			rank = 3;
		else if (wild && slash && !strncasecmp(range, type, slash - type + 1) &&
			 !strcmp(range + (slash - type) + 1, "*"))
			rank = 2;
		else if (wild && !strcmp(range, "*/*"))
			rank = 1;
		if (rank > best_rank) {
			best_rank = rank;
			best = sc ? range_q(sc + 1, c) : 1;
		}
		s = c + 1;
	}
	return best;
}

/* ---- the server ---- */

const char *httpd__addr(const struct httpd *h)
{
	return h->addr;
}

bool httpd__writing(const struct httpd *h)
{
	int i;

	for (i = 0; h && i < HTTPD_MAX_CONNS; i++)
		if (h->conns[i].state == CONN_WRITE)
			return true;
	return false;
}

__u64 httpd__answered(const struct httpd *h)
{
	return h->answered;
}

struct httpd *httpd__new(const char *spec, const char *path, httpd_handler_fn fn, void *ctx,
			 const struct creds *as, char *why, size_t why_len)
{
	struct sockaddr_storage ss;
	struct httpd *h;
	socklen_t len;
	int err, i;

	err = httpd__parse_addr(spec, &ss, &len, why, why_len);
	if (err) {
		errno = -err;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(why, why_len, "%s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		h->conns[i].fd = -1;
	snprintf(h->path, sizeof(h->path), "%s", path);
	httpd__addr_str(&ss, h->addr, sizeof(h->addr));
	h->fn = fn;
	h->ctx = ctx;
	/* bound as the user: a port below the unprivileged start is theirs only if the
	 * kernel says so */
	if (as) {
		err = asuser__listen(as, (struct sockaddr *)&ss, len, 16, &h->fd);
	} else {
		h->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		err = h->fd < 0 ? -errno : 0;
		if (!err) {
			int one = 1;

			setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (ss.ss_family == AF_INET6)
				setsockopt(h->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
			if (bind(h->fd, (struct sockaddr *)&ss, len) || listen(h->fd, 16))
				err = -errno;
		}
	}
	if (!err)
		return h;
	snprintf(why, why_len, "cannot listen on %s: %s%s", h->addr, strerror(-err),
		 err == -EACCES && as ? " (a port below 1024 needs privileges you do not "
		 "have)" : "");
	if (h->fd >= 0)
		close(h->fd);
	free(h);
	errno = -err;
	return NULL;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->out = NULL;
	c->fd = -1;
	c->state = CONN_FREE;
	c->nin = c->nout = c->sent = 0;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	}
	return "Error";
}

/* Puts the answer in c->out: the head, and the body unless head_only. */
static void answer(struct httpd *h, struct conn *c, __u64 now, int status, const char *ctype,
		   const char *body, size_t nbody, bool head_only, bool close_after)
{
	char head[512];
	int n;

	if (!ctype) {
		ctype = "text/plain; charset=utf-8";
		body = reason(status);
		nbody = strlen(body);
	}
	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n",
		     status, reason(status), ctype, nbody + (status == 200 ? 0 : 1),
		     status == 405 ? "Allow: GET, HEAD\r\n" : "",
		     close_after ? "Connection: close\r\n" : "");
	free(c->out);
	c->out = malloc(n + nbody + 1);
	c->close_after = close_after;
	if (!c->out) {
		conn_close(c);
		return;
	}
	memcpy(c->out, head, n);
	c->nout = n;
	if (!head_only) {
		memcpy(c->out + n, body, nbody);
		c->nout += nbody;
		if (status != 200)
			c->out[c->nout++] = '\n';
	}
	c->sent = 0;
	c->state = CONN_WRITE;
	c->since_ns = now;
	h->answered++;
}

static void fail_with(struct httpd *h, struct conn *c, __u64 now, int status, bool close_after)
{
	answer(h, c, now, status, NULL, NULL, 0, false, close_after);
}

/* A complete request head in c->in: its answer. */
static void handle(struct httpd *h, struct conn *c, __u64 now, const struct httpd_request *rq)
{
	bool head = !strcmp(rq->method, "HEAD");
	const char *ctype = NULL;
	char *body = NULL;
	size_t nbody = 0;
	FILE *f;
	int err;

	if (rq->has_body) {
		fail_with(h, c, now, 400, true);
		return;
	}
	if (strcmp(rq->path, h->path)) {
		fail_with(h, c, now, 404, !rq->keep_alive);
		return;
	}
	if (strcmp(rq->method, "GET") && !head) {
		fail_with(h, c, now, 405, !rq->keep_alive);
		return;
	}
	f = open_memstream(&body, &nbody);
	if (!f) {
		fail_with(h, c, now, 500, true);
		return;
	}
	err = h->fn(h->ctx, rq, f, &ctype);
	if (fclose(f) && !err)
		err = -EIO;
	if (err || !ctype || nbody > HTTPD_BODY_MAX)
		fail_with(h, c, now, 500, !rq->keep_alive);
	else
		answer(h, c, now, 200, ctype, body, nbody, head, !rq->keep_alive);
	free(body);
}

/* Reads what is there; answers once a request is complete. */
static void conn_read(struct httpd *h, struct conn *c, __u64 now)
{
	struct httpd_request rq;
	size_t used;
	ssize_t n;
	int err;

	for (;;) {
		if (c->nin < sizeof(c->in)) {
			n = recv(c->fd, c->in + c->nin, sizeof(c->in) - c->nin, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
					errno != EINTR)) {
				conn_close(c);
				return;
			}
			if (n > 0) {
				if (!c->nin)
					c->since_ns = now;
				c->nin += n;
			}
		} else {
			n = -1;
		}
		if (!c->nin)
			return;
		err = httpd__parse_request(c->in, c->nin, &rq, &used);
		if (err == -EAGAIN) {
			if (n > 0)
				continue;
			return;
		}
		if (err) {
			fail_with(h, c, now, err == -E2BIG ? 431 : err == -EPROTONOSUPPORT ? 505 : 400,
			      true);
			return;
		}
		/* the next request (pipelined) waits in the buffer */
		memmove(c->in, c->in + used, c->nin - used);
		c->nin -= used;
		handle(h, c, now, &rq);
		return;
	}
}

/* Sends what the socket takes; back to reading (or closed) once the answer is out. */
static void conn_write(struct conn *c, __u64 now)
{
	ssize_t n;

	while (c->sent < c->nout) {
		n = send(c->fd, c->out + c->sent, c->nout - c->sent, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->sent += n;
	}
	free(c->out);
	c->out = NULL;
	c->nout = c->sent = 0;
	if (c->close_after) {
		conn_close(c);
		return;
	}
	c->state = CONN_READ;
	c->since_ns = c->nin ? now : 0;
	c->idle_ns = now;
}

/*
 * The uid owning the client end of a loopback connection fd: the kernel's socket table
 * (sock_diag), looked up by the exact 4-tuple. ~0 when it cannot tell.
 */
static __u32 loopback_uid(int fd, const struct sockaddr_storage *peer)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} q = {};
	struct sockaddr_storage me;
	socklen_t len = sizeof(me);
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	union {
		struct nlmsghdr nlh;
		char buf[1024];
	} rep;
	struct inet_diag_msg *m;
	__u32 uid = ~0U;
	ssize_t n;
	int s;

	if (getsockname(fd, (struct sockaddr *)&me, &len) || me.ss_family != peer->ss_family)
		return uid;
	q.nlh.nlmsg_len = sizeof(q);
	q.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nlh.nlmsg_flags = NLM_F_REQUEST;
	q.req.sdiag_family = peer->ss_family;
	q.req.sdiag_protocol = IPPROTO_TCP;
	q.req.idiag_states = ~0U;
	q.req.id.idiag_cookie[0] = q.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* the client's socket: its source is our peer, its destination us */
	if (peer->ss_family == AF_INET) {
		const struct sockaddr_in *p = (const void *)peer, *l = (const void *)&me;

		q.req.id.idiag_sport = p->sin_port;
		q.req.id.idiag_dport = l->sin_port;
		memcpy(q.req.id.idiag_src, &p->sin_addr, 4);
		memcpy(q.req.id.idiag_dst, &l->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *p = (const void *)peer, *l = (const void *)&me;

		q.req.id.idiag_sport = p->sin6_port;
		q.req.id.idiag_dport = l->sin6_port;
		memcpy(q.req.id.idiag_src, &p->sin6_addr, 16);
		memcpy(q.req.id.idiag_dst, &l->sin6_addr, 16);
	}
	s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s < 0)
		return uid;
	if (sendto(s, &q, sizeof(q), 0, (struct sockaddr *)&nl, sizeof(nl)) == sizeof(q)) {
		n = recv(s, &rep, sizeof(rep), 0);
		if (n >= (ssize_t)(NLMSG_HDRLEN + sizeof(*m)) && NLMSG_OK(&rep.nlh, n) &&
		    rep.nlh.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
			m = NLMSG_DATA(&rep.nlh);
			uid = m->idiag_uid;
		}
	}
	close(s);
	return uid;
}

/* Who fd's other end is: its address, and its user when it is on this machine. */
static void peer_of(int fd, struct peer *p)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	bool local = false;

	memset(p, 0, sizeof(*p));
	p->uid = ~0U;
	if (getpeername(fd, (struct sockaddr *)&ss, &len))
		return;
	p->family = ss.ss_family;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)&ss;

		memcpy(p->addr, &in->sin_addr, 4);
		local = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)&ss;

		memcpy(p->addr, &in6->sin6_addr, 16);
		local = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
			(IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127);
	}
	/* every local user comes from 127.0.0.1: their uids tell them apart */
	if (local)
		p->uid = loopback_uid(fd, &ss);
}

static bool same_peer(const struct peer *a, const struct peer *b)
{
	return a->family == b->family && a->uid == b->uid && !memcmp(a->addr, b->addr, 16);
}

/* Is c a connection that may make room: idle, or waiting for a request (not answering)? */
static bool evictable(const struct conn *c)
{
	return c->state == CONN_READ;
}

/* Of two evictable connections, the one to close first: an idle one before one with a
 * request under way, then the one idle (or waiting) the longest. */
static bool worse(const struct conn *a, const struct conn *b)
{
	if (!b)
		return true;
	if (!a->nin != !b->nin)
		return !a->nin;
	return a->nin ? a->since_ns < b->since_ns : a->idle_ns < b->idle_ns;
}

/*
 * A slot for a new connection from peer p, by fair shares: a peer holds at most
 * HTTPD_PEER_MAX connections (its own oldest makes room for its new one); when every slot
 * is taken, an idle connection goes first, then a waiting one of the peer holding the
 * most; one that is being answered is never closed. NULL: no room (503).
 */
static struct conn *slot(struct httpd *h, const struct peer *p)
{
	struct conn *own = NULL, *idle = NULL, *other = NULL, *victim = NULL;
	unsigned int nown = 0, most = 0, cnt[HTTPD_MAX_CONNS] = {};
	int i, k;

	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		struct conn *c = &h->conns[i];

		if (c->state == CONN_FREE)
			continue;
		for (k = 0; k < HTTPD_MAX_CONNS; k++)
			if (h->conns[k].state != CONN_FREE && same_peer(&c->peer, &h->conns[k].peer))
				cnt[i]++;
		if (same_peer(&c->peer, p)) {
			nown++;
			if (evictable(c) && worse(c, own))
				own = c;
		}
		if (evictable(c) && !c->nin && worse(c, idle))
			idle = c;
	}
	if (nown >= HTTPD_PEER_MAX) {
		victim = own;
	} else {
		for (i = 0; i < HTTPD_MAX_CONNS; i++)
			if (h->conns[i].state == CONN_FREE)
				return &h->conns[i];
		victim = idle;
		for (i = 0; !victim && i < HTTPD_MAX_CONNS; i++) {
			struct conn *c = &h->conns[i];

			if (!evictable(c) || cnt[i] < most || (cnt[i] == most && !worse(c, other)))
				continue;
			most = cnt[i];
			other = c;
		}
		if (!victim)
			victim = other;
	}
	if (victim)
		conn_close(victim);
	return victim;
}

static void accept_new(struct httpd *h, __u64 now)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
				   "Connection: close\r\n\r\n";
	struct peer p;
	struct conn *c;
	int i, fd;

	for (i = 0; i < ACCEPTS_PER_SERVE; i++) {
		fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		peer_of(fd, &p);
		c = slot(h, &p);
		if (!c) {
			/* best effort: the socket buffer takes it or the client sees a close */
			if (send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
				h->answered++;
			close(fd);
			continue;
		}
		c->fd = fd;
		c->peer = p;
		c->state = CONN_READ;
		c->since_ns = 0;
		c->idle_ns = now;
		c->nin = 0;
		/* a request already there is read now, before a later accept could take its
		 * place */
		conn_read(h, c, now);
		if (c->state == CONN_WRITE)
			conn_write(c, now);
	}
}

void httpd__serve(struct httpd *h, __u64 now)
{
	int i;

	if (!h)
		return;
	/* the connections there first: a request that arrived is read before a new
	 * connection could take its place */
	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		struct conn *c = &h->conns[i];

		if (c->state == CONN_READ)
			conn_read(h, c, now);
		if (c->state == CONN_WRITE)
			conn_write(c, now);
		/* a request that does not arrive, an answer not taken, an idle client */
		if (c->state == CONN_READ && c->since_ns && now - c->since_ns > HTTPD_READ_NS)
			conn_close(c);
		else if (c->state == CONN_READ && !c->since_ns && now - c->idle_ns > HTTPD_IDLE_NS)
			conn_close(c);
		else if (c->state == CONN_WRITE && now - c->since_ns > HTTPD_WRITE_NS)
			conn_close(c);
	}
	accept_new(h, now);
}

void httpd__free(struct httpd *h)
{
	int i;

	if (!h)
		return;
	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		conn_close(&h->conns[i]);
	close(h->fd);
	free(h);
}
