/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small HTTP/1.1 server for one resource (GET or HEAD of one path, e.g. /metrics), that
 * never blocks and stays bounded, for a caller that polls it from its own loop:
 *
 * - httpd__serve() accepts, reads, answers and writes with non-blocking sockets and
 *   returns; nothing waits. The caller calls it every tick of its loop (memphase: 100 ms).
 * - At most HTTPD_MAX_CONNS connections, and fair shares: one peer (an address; on this
 *   machine, a user: the kernel's socket table tells whose the client socket is) holds
 *   at most HTTPD_PEER_MAX, its new connection taking the place of its own oldest. When
 *   every slot is taken, a new one takes the place of the oldest idle connection, else of
 *   a waiting one of the peer holding the most; a connection being answered is never
 *   closed for it. Without room it is answered 503 and closed.
 * - A request (line and headers) is at most HTTPD_REQ_MAX bytes (431 beyond), must
 *   arrive within HTTPD_READ_NS of its first byte (closed otherwise), and its answer must
 *   be taken by the client within HTTPD_WRITE_NS; an idle keep-alive connection is closed
 *   after HTTPD_IDLE_NS. A request with a body is answered 400 (GET needs none).
 * - Another path: 404; another method: 405 (Allow: GET, HEAD); not HTTP/1.x: 505.
 * - The body comes from the caller's handler, rendered only when a request asks for it,
 *   and at most HTTPD_BODY_MAX bytes (500 beyond).
 *
 * Pure parsing (addresses, requests, Accept) is exposed for tests/unit/test_httpd.c.
 */
#ifndef __MP_HTTPD_H
#define __MP_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <linux/types.h>

#define HTTPD_MAX_CONNS	8
#define HTTPD_PEER_MAX	2
#define HTTPD_REQ_MAX	4096
#define HTTPD_BODY_MAX	(16U << 20)
#define HTTPD_READ_NS	(5ULL * 1000000000)
#define HTTPD_WRITE_NS	(10ULL * 1000000000)
#define HTTPD_IDLE_NS	(60ULL * 1000000000)
#define HTTPD_ADDR_STR	64	/* "[v6 address]:port" */

struct httpd_request {
	char method[16];
	char path[256];		/* without the query string */
	int minor;		/* HTTP/1.minor */
	bool keep_alive;	/* 1.1 without "Connection: close", or 1.0 with keep-alive */
	bool has_body;		/* Content-Length > 0 or a Transfer-Encoding */
	char accept[512];	/* the Accept header ("" when absent; cut at 511 bytes) */
};

/*
 * "ADDR:PORT", ":PORT" or "PORT" (ADDR 127.0.0.1); ADDR a numeric IPv4 address, an IPv6
 * address in brackets ("[::1]:9464"), or "localhost". PORT 1..65535. The wildcard
 * addresses (0.0.0.0, [::]) only when written. 0 or -EINVAL (why says what is wrong).
 */
int httpd__parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
		      char *why, size_t why_len);
/* The address as "ADDR:PORT" ("[ADDR]:PORT" for IPv6) into buf. Returns buf. */
const char *httpd__addr_str(const struct sockaddr_storage *ss, char *buf, size_t len);

/*
 * Parses one request head from buf[0..len). 0 with *used = the bytes of the head (up to
 * and including the empty line); -EAGAIN when the head is not complete yet; -EBADMSG when
 * it is malformed; -EPROTONOSUPPORT when it is not HTTP/1.x; -E2BIG when it is longer than
 * HTTPD_REQ_MAX.
 */
int httpd__parse_request(const char *buf, size_t len, struct httpd_request *rq, size_t *used);
/*
 * The quality (0..1) the Accept header value gives media type "type/subtype": the q of
 * the most specific range that matches (exact, then "type/ *", then "* / *" when wild);
 * 0 when none does. An empty header accepts everything (1).
 */
double httpd__accept_q(const char *accept, const char *type, bool wild);

/*
 * Writes the body of a GET or HEAD of the served path to body and sets *content_type (a
 * static string). 0, or -errno (the client gets 500).
 */
typedef int (*httpd_handler_fn)(void *ctx, const struct httpd_request *rq, FILE *body,
				const char **content_type);

struct httpd;

struct creds;

/*
 * Listens on spec (httpd__parse_addr) for path; as: the user the socket is bound as
 * (asuser.h: a privileged port is theirs only where the kernel lets them), NULL: as the
 * caller. NULL + errno, with why set (a bad address, the port in use, no permission).
 */
struct httpd *httpd__new(const char *spec, const char *path, httpd_handler_fn fn, void *ctx,
			 const struct creds *as, char *why, size_t why_len);
/* The bound address (for messages). */
const char *httpd__addr(const struct httpd *h);
/* Accepts, reads, answers and writes what can be done now, never waiting. */
void httpd__serve(struct httpd *h, __u64 now_ns);
/* Is an answer still being sent? */
bool httpd__writing(const struct httpd *h);
/* Answers given (any status). */
__u64 httpd__answered(const struct httpd *h);
/* Closes every connection and the listening socket. NULL-safe. */
void httpd__free(struct httpd *h);

#endif
