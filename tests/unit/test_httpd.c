// SPDX-License-Identifier: GPL-2.0
/*
 * lib/httpd: addresses (127.0.0.1 by default, a wildcard only when written), request
 * heads (complete, partial, malformed, too large, pipelined), Accept negotiation, and the
 * server itself over loopback sockets in this thread: 200, HEAD, 404, 405, 431, 400 for a
 * body, keep-alive, and a new client served while HTTPD_MAX_CONNS idle ones are open.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "lib/httpd.h"
#include "lib/util.h"

static const char *addr_of(const char *spec, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char why[128];

	if (httpd__parse_addr(spec, &ss, &sl, why, sizeof(why)))
		return "error";
	return httpd__addr_str(&ss, buf, len);
}

TEST(httpd_addresses)
{
	static const char *const bad[] = {
		"", "0", "65536", "x:80", "1.2.3.4:", "::1:80", "[::1]80", "[zz]:80", "80a",
		"1.2.3.4.5:80", " 80", "[]:80", ":", "host.example:80", "-1", "123456",
	};
	char b[HTTPD_ADDR_STR];
	unsigned int i;

	ASSERT_STREQ(addr_of("9464", b, sizeof(b)), "127.0.0.1:9464", "PORT");
	ASSERT_STREQ(addr_of(":9464", b, sizeof(b)), "127.0.0.1:9464", ":PORT");
	ASSERT_STREQ(addr_of("localhost:1", b, sizeof(b)), "127.0.0.1:1", "localhost");
	ASSERT_STREQ(addr_of("0.0.0.0:80", b, sizeof(b)), "0.0.0.0:80", "wildcard, written");
	ASSERT_STREQ(addr_of("[::]:65535", b, sizeof(b)), "[::]:65535", "v6 wildcard");
	ASSERT_STREQ(addr_of("[::1]:9464", b, sizeof(b)), "[::1]:9464", "v6 loopback");
	ASSERT_STREQ(addr_of("10.1.2.3:8080", b, sizeof(b)), "10.1.2.3:8080", "v4");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!ASSERT_STREQ(addr_of(bad[i], b, sizeof(b)), "error", "refused"))
			printf("spec '%s'\n", bad[i]);
}

static int parse(const char *s, struct httpd_request *rq, size_t *used)
{
	return httpd__parse_request(s, strlen(s), rq, used);
}

TEST(httpd_requests)
{
	static const char two[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
	struct httpd_request rq;
	char *big;
	size_t used = 0;

	ASSERT_OK(parse("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: text/plain\r\n"
			"accept: application/openmetrics-text\r\n\r\n", &rq, &used), "GET");
	ASSERT_STREQ(rq.method, "GET", "method");
	ASSERT_STREQ(rq.path, "/metrics", "the query string is not the path");
	ASSERT_EQ(rq.minor, 1, "1.1");
	ASSERT_TRUE(rq.keep_alive, "1.1 keeps the connection");
	ASSERT_FALSE(rq.has_body, "no body");
	ASSERT_STREQ(rq.accept, "text/plain,application/openmetrics-text", "Accept lines joined");
	ASSERT_OK(parse(two, &rq, &used), "pipelined");
	ASSERT_EQ(used, strlen("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), "the first only");
	ASSERT_OK(parse("\r\nHEAD / HTTP/1.0\n\n", &rq, &used), "bare LF, a blank line first");
	ASSERT_STREQ(rq.method, "HEAD", "HEAD");
	ASSERT_FALSE(rq.keep_alive, "1.0 closes");
	ASSERT_OK(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &rq, &used), "1.0 ka");
	ASSERT_TRUE(rq.keep_alive, "1.0 with keep-alive");
	ASSERT_OK(parse("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n", &rq, &used), "close");
	ASSERT_FALSE(rq.keep_alive, "Connection: close");
	ASSERT_OK(parse("POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", &rq, &used),
		  "POST");
	ASSERT_TRUE(rq.has_body, "a body");
	ASSERT_OK(parse("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &rq, &used), "CL 0");
	ASSERT_FALSE(rq.has_body, "Content-Length: 0 is no body");
	ASSERT_EQ(parse("GET /metrics HTTP/1.1\r\nHost: a\r\n", &rq, &used), -EAGAIN, "partial");
	ASSERT_EQ(parse("", &rq, &used), -EAGAIN, "nothing yet");
	ASSERT_EQ(parse("GET /metrics\r\n\r\n", &rq, &used), -EBADMSG, "no version");
	ASSERT_EQ(parse("GET  HTTP/1.1\r\n\r\n", &rq, &used), -EBADMSG, "no path");
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nNoColon\r\n\r\n", &rq, &used), -EBADMSG, "header");
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", &rq, &used), -EBADMSG,
		  "obsolete folding");
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", &rq, &used), -EBADMSG,
		  "Content-Length");
	ASSERT_EQ(parse("GET / HTTP/2.0\r\n\r\n", &rq, &used), -EPROTONOSUPPORT, "HTTP/2");
	big = malloc(HTTPD_REQ_MAX + 64);
	if (!ASSERT_OK_PTR(big, "malloc"))
		return;
	memset(big, 'a', HTTPD_REQ_MAX + 63);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	big[HTTPD_REQ_MAX + 63] = 0;
	ASSERT_EQ(parse(big, &rq, &used), -E2BIG, "a head longer than HTTPD_REQ_MAX");
	memcpy(big + HTTPD_REQ_MAX + 59, "\r\n\r\n", 4);
	ASSERT_EQ(parse(big, &rq, &used), -E2BIG, "complete but too long");
	free(big);
}

TEST(httpd_accept)
{
	static const char prom[] = "application/openmetrics-text;version=1.0.0,"
				   "application/openmetrics-text;version=0.0.1;q=0.75,"
				   "text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
	const char *om = "application/openmetrics-text";

	ASSERT_EQ(httpd__accept_q(prom, om, false), 1.0, "Prometheus asks for OpenMetrics");
	ASSERT_EQ(httpd__accept_q(prom, "text/plain", true), 0.5, "text second");
	ASSERT_EQ(httpd__accept_q("*/*", om, false), 0.0, "curl: no OpenMetrics by wildcard");
	ASSERT_EQ(httpd__accept_q("*/*", "text/plain", true), 1.0, "curl: text");
	ASSERT_EQ(httpd__accept_q("text/*;q=0.2", "text/plain", true), 0.2, "type/*");
	ASSERT_EQ(httpd__accept_q("", om, false), 1.0, "no Accept: anything");
	ASSERT_EQ(httpd__accept_q("text/plain;q=0", "text/plain", true), 0.0, "q=0 refuses");
	ASSERT_EQ(httpd__accept_q("Application/OpenMetrics-Text ; q=0.3, text/plain", om, false),
		  0.3, "case and blanks");
	ASSERT_EQ(httpd__accept_q("application/json", "text/plain", true), 0.0, "none");
}

/* ---- the server over loopback ---- */

static int handler_calls;

static int handler(void *ctx, const struct httpd_request *rq, FILE *body, const char **ct)
{
	handler_calls++;
	fprintf(body, "hello %s\n", (const char *)ctx);
	*ct = "text/plain; version=0.0.4; charset=utf-8";
	return 0;
}

/* a port nobody listens on right now */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static int client(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(0x7f000001) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

/* serves until fd has an answer (or the connection closed); the answer in out */
static ssize_t exchange(struct httpd *h, int fd, const char *req, char *out, size_t len)
{
	size_t n = 0;
	int i;

	if (req && send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req))
		return -1;
	for (i = 0; i < 200; i++) {
		ssize_t k;

		httpd__serve(h, util__now_ns());
		k = recv(fd, out + n, len - 1 - n, MSG_DONTWAIT);
		if (k > 0) {
			n += k;
			out[n] = 0;
			/* whole once the head and Content-Length bytes are in */
			if (strstr(out, "\r\n\r\n")) {
				const char *cl = strstr(out, "Content-Length: ");
				size_t head = strstr(out, "\r\n\r\n") + 4 - out;

				if (!strncmp(req ? req : "", "HEAD", 4) ||
				    (cl && n >= head + strtoul(cl + 16, NULL, 10)))
					return n;
			}
			continue;
		}
		if (k == 0)
			return n;
		usleep(1000);
	}
	return n;
}

TEST(httpd_serves)
{
	char why[128], spec[32], out[8192];
	int port = free_port(), fd, idle[HTTPD_MAX_CONNS], i;
	struct httpd *h;
	char *big;

	if (!ASSERT_GT(port, 0, "a free port"))
		return;
	snprintf(spec, sizeof(spec), ":%d", port);
	h = httpd__new(spec, "/metrics", handler, "world", NULL, why, sizeof(why));
	if (!ASSERT_OK_PTR(h, "httpd__new")) {
		printf("%s\n", why);
		return;
	}
	ASSERT_NULL(httpd__new(spec, "/metrics", handler, NULL, NULL, why, sizeof(why)), "in use");
	ASSERT_TRUE(strstr(why, "in use") != NULL, why);

	fd = client(port);
	exchange(h, fd, "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 200 OK\r\n", 17), "200");
	ASSERT_TRUE(strstr(out, "Content-Length: 12\r\n") && strstr(out, "\r\n\r\nhello world\n"),
		    "the handler's body");
	ASSERT_TRUE(strstr(out, "Content-Type: text/plain; version=0.0.4") != NULL, "its type");
	/* the same connection: keep-alive */
	exchange(h, fd, "GET /other HTTP/1.1\r\n\r\n", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 404 ", 13), "404 on the kept connection");
	exchange(h, fd, "DELETE /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 405 ", 13) && strstr(out, "Allow: GET, HEAD\r\n"),
		    "405 with Allow");
	handler_calls = 0;
	exchange(h, fd, "HEAD /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 200 ", 13) && !strstr(out, "hello"),
		    "HEAD: the head only");
	exchange(h, fd, "POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 400 ", 13) && strstr(out, "Connection: close"),
		    "a body: 400, closed");
	close(fd);

	big = malloc(2 * HTTPD_REQ_MAX);
	if (ASSERT_OK_PTR(big, "malloc")) {
		memset(big, 'a', 2 * HTTPD_REQ_MAX - 1);
		big[2 * HTTPD_REQ_MAX - 1] = 0;
		memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
		fd = client(port);
		exchange(h, fd, big, out, sizeof(out));
		ASSERT_TRUE(!strncmp(out, "HTTP/1.1 431 ", 13), "431 for a head too large");
		close(fd);
		free(big);
	}

	/* every slot held by an idle client: a new one takes the oldest's place */
	for (i = 0; i < HTTPD_MAX_CONNS; i++) {
		idle[i] = client(port);
		httpd__serve(h, util__now_ns());
	}
	handler_calls = 0;
	fd = client(port);
	exchange(h, fd, "GET /metrics HTTP/1.0\r\n\r\n", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 200 ", 13), "served beside idle clients");
	ASSERT_EQ(handler_calls, 1, "rendered once, for the request");
	ASSERT_EQ(recv(idle[0], out, sizeof(out), MSG_DONTWAIT), 0, "the oldest idle one closed");
	close(fd);
	for (i = 0; i < HTTPD_MAX_CONNS; i++)
		close(idle[i]);
	httpd__free(h);
}

/* A client from the loopback address 127.0.0.last: a peer of its own. */
static int client_from(int port, int last, int rcvbuf)
{
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(0x7f000000 | last) };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(0x7f000001) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) ||
	    (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* "Accept: big" gets a body no socket buffer takes at once */
static int big_handler(void *ctx, const struct httpd_request *rq, FILE *body, const char **ct)
{
	size_t i, n = strstr(rq->accept, "big") ? 8U << 20 : 2;

	for (i = 0; i < n; i++)
		fputc('x', body);
	*ct = "text/plain";
	return 0;
}

/* Has fd been closed by the server (EOF, after whatever it had been sent)? */
static bool closed(int fd)
{
	char buf[4096];
	ssize_t k;

	while ((k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	return k == 0;
}

TEST(httpd_gives_each_peer_a_fair_share)
{
	char why[128], spec[32], out[8192];
	int port = free_port(), fds[HTTPD_MAX_CONNS + 4], n = 0, i, a, b, c, w1, w2, x;
	struct httpd *h;

	if (!ASSERT_GT(port, 0, "a free port"))
		return;
	snprintf(spec, sizeof(spec), ":%d", port);
	h = httpd__new(spec, "/metrics", big_handler, NULL, NULL, why, sizeof(why));
	if (!ASSERT_OK_PTR(h, "httpd__new"))
		return;
	/* one peer's third connection takes the place of its own oldest: a half request */
	a = client_from(port, 2, 0);
	send(a, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
	httpd__serve(h, util__now_ns());
	b = client_from(port, 2, 0);
	httpd__serve(h, util__now_ns());
	c = client_from(port, 2, 0);
	exchange(h, c, "GET /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 200 ", 13), "its new one served");
	ASSERT_TRUE(closed(a) != closed(b), "one of its two others made room");
	close(a);
	close(b);
	close(c);
	/* a peer whose share is two answers under way is refused, another one served */
	w1 = client_from(port, 3, 4096);
	w2 = client_from(port, 3, 4096);
	exchange(h, w1, "GET /metrics HTTP/1.1\r\nAccept: big\r\n\r\n", out, 64);
	exchange(h, w2, "GET /metrics HTTP/1.1\r\nAccept: big\r\n\r\n", out, 64);
	ASSERT_TRUE(httpd__writing(h), "answers under way");
	x = client_from(port, 3, 0);
	exchange(h, x, "GET /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 503 ", 13), "refused: no room of its own");
	close(x);
	x = client_from(port, 4, 0);
	exchange(h, x, "GET /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 200 ", 13), "another peer served beside it");
	close(x);
	/* every slot taken by idle peers: a new peer takes an idle one's place */
	for (i = 0; i < HTTPD_MAX_CONNS - 2; i++) {
		fds[n++] = client_from(port, 10 + i / 2, 0);
		httpd__serve(h, util__now_ns());
	}
	x = client_from(port, 50, 0);
	exchange(h, x, "GET /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "HTTP/1.1 200 ", 13), "a new peer served in a full server");
	ASSERT_FALSE(closed(w1) || closed(w2), "the answers under way were not cut");
	close(x);
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(w1);
	close(w2);
	httpd__free(h);
}
