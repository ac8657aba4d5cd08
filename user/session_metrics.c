// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics while the run goes: --metrics served from the poll loop, --metrics-textfile
 * every few seconds, and under watch the exposition sent on its channel.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "collect/collector.h"
#include "lib/httpd.h"
#include "lib/util.h"
#include "report/metrics.h"
#include "report/outputs.h"
#include "session_int.h"

/* The model as things stand, with the system's memory and memphase's own cost. */
struct output_ctx session_metrics__ctx(struct session *s, __u64 now)
{
	struct output_ctx oc = {
		.m = &s->model,
		.tl = collector__timeline(s->collector),
		.sm = collector__sysmem(s->collector, NULL),
		.now_ns = s->model.finished ? 0 : now,
		.self = &s->self,
	};

	util__self_usage(&s->self.cpu_s, &s->self.rss_bytes);
	return oc;
}

/* GET /metrics: OpenMetrics when the client asks for it, else text format 0.0.4. */
static int metrics_get(void *ctx, const struct httpd_request *rq, FILE *body,
		       const char **content_type)
{
	struct session *s = ctx;
	__u64 t0 = util__now_ns();
	struct output_ctx oc = session_metrics__ctx(s, t0);
	double om = httpd__accept_q(rq->accept, "application/openmetrics-text", false);
	/* no Accept header: the text format, as Prometheus's own exporters answer */
	bool use_om = rq->accept[0] && om > 0 &&
		      om >= httpd__accept_q(rq->accept, "text/plain", true);
	int err;

	if (s->scrape_ns)
		s->scrape_gap_ns = t0 - s->scrape_ns;
	s->scrape_ns = t0;
	s->scrapes++;

	err = metrics__render(body, &oc, 1, use_om ? METRICS_OPENMETRICS : METRICS_TEXT,
			      METRICS_SOURCE_HTTP);
	*content_type = use_om ? METRICS_CT_OPENMETRICS : METRICS_CT_TEXT;
	s->self.render_s = (util__now_ns() - t0) / 1e9;
	s->self.render_bytes = ftell(body) > 0 ? (__u64)ftell(body) : 0;
	return err;
}

/*
 * --metrics: listen before the target starts (a port in use fails the run at once).
 * --metrics-textfile: the file lives as long as the run (node_exporter would serve a
 * finished run's series for good): removed when memphase ends or is gone.
 */
int session_metrics__open(struct session *s)
{
	char why[256];
	int k = outputs__find(metrics_textfile_format.name), err;

	s->textfile = k >= 0 && s->env->out_paths[k] ? k : -1;
	if (s->textfile >= 0) {
		err = outputs__remove_at_end(&s->out, s->textfile);
		if (err) {
			fprintf(stderr, "memphase: --metrics-textfile: %s\n", strerror(-err));
			return err;
		}
	}
	if (!s->env->metrics)
		return 0;
	s->httpd = httpd__new(s->env->metrics, "/metrics", metrics_get, s, &s->user, why,
			      sizeof(why));
	if (!s->httpd) {
		fprintf(stderr, "memphase: --metrics %s: %s\n", s->env->metrics, why);
		return -errno;
	}
	if (s->env->verbose)
		fprintf(stderr, "memphase: metrics on http://%s/metrics\n",
			httpd__addr(s->httpd));
	return 0;
}

/*
 * Under watch (--metrics-fd): the exposition (OpenMetrics) to the supervisor as one
 * message of its socket (SOCK_SEQPACKET: it gets whole ones or none). One it has no room
 * for is skipped (the next follows in CHANNEL_NS), except the last (final), which waits for
 * room a little. A supervisor gone ends the sending.
 */
void session_metrics__send(struct session *s, __u64 now, bool final)
{
	int fd = s->channel;
	struct output_ctx oc;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	__u64 t0 = util__now_ns();
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	FILE *f;
	int err;

	if (fd < 0)
		return;
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	oc = session_metrics__ctx(s, now);
	/* watch labels it with where it serves or writes the merge */
	err = metrics__render(f, &oc, 1, METRICS_OPENMETRICS, NULL);
	if (fclose(f) || err) {
		free(buf);
		return;
	}
	s->self.render_s = (util__now_ns() - t0) / 1e9;
	s->self.render_bytes = len;
	for (;;) {
		n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n >= 0 || errno != EAGAIN || !final ||
		    poll(&pfd, 1, CHANNEL_FINAL_MS) <= 0)
			break;
	}
	if (n < 0 && errno == EMSGSIZE && !s->channel_big) {
		s->channel_big = true;
		fprintf(stderr, "memphase: the metrics (%zu bytes) do not fit the channel to "
				"watch: left out until they do\n", len);
	}
	if (n < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)) {
		close(fd);
		s->channel = -1;
	}
	free(buf);
}

/* Was the textfile written last read (node_exporter scraped)? Its reader's interval. */
static void textfile_seen(struct session *s)
{
	if (!s->textfile_at || s->textfile_read_at == s->textfile_at ||
	    !outputs__read_since(&s->out, s->textfile))
		return;
	if (s->textfile_read_at)
		s->textfile_gap_ns = s->textfile_at - s->textfile_read_at;
	s->textfile_read_at = s->textfile_at;
}

/* From the poll loop: scrapes answered, the textfile rewritten every TEXTFILE_NS. */
void session_metrics__tick(struct session *s, __u64 now)
{
	struct output_ctx oc;

	httpd__serve(s->httpd, now);
	if (s->channel >= 0 && now >= s->channel_next) {
		s->channel_next = now + CHANNEL_NS;
		session_metrics__send(s, now, false);
	}
	if (s->textfile < 0 || now < s->textfile_next)
		return;
	s->textfile_next = now + TEXTFILE_NS;
	textfile_seen(s);
	oc = session_metrics__ctx(s, now);
	if (!outputs__write_one(&s->out, s->textfile, &oc))
		s->textfile_at = now;
}

/*
 * Until when to wait for a reader that read at last and every gap (0: none known): one
 * more interval, plus slack, at most METRICS_LINGER_MAX_NS from now; 0: no wait.
 */
static __u64 linger_until(__u64 last, __u64 gap, __u64 now)
{
	__u64 until = last + gap + METRICS_LINGER_SLACK_NS;

	if (!last || !gap)
		return 0;
	if (until > now + METRICS_LINGER_MAX_NS)
		until = now + METRICS_LINGER_MAX_NS;
	return until > now ? until : 0;
}

/*
 * The run is over and the model final: a scraper has not seen its last figures (the
 * growth at the end, an OOM kill). Serve them until the next scrape, and keep the
 * textfile until its next read, each at most one interval as measured (capped), unless
 * nothing ever scraped or read (twice) or a signal comes. The textfile is then removed
 * (outputs__remove_at_end()).
 */
void session_metrics__linger(struct session *s)
{
	__u64 now = util__now_ns(), seen = s->scrapes;
	__u64 http = s->httpd ? linger_until(s->scrape_ns, s->scrape_gap_ns, now) : 0;
	/* a file is read some time in the TEXTFILE_NS it stays: its gap is known to that */
	__u64 file = s->textfile < 0 || !s->textfile_gap_ns ? 0 :
		     linger_until(s->textfile_read_at, s->textfile_gap_ns + TEXTFILE_NS, now);
	__u64 until = http > file ? http : file;

	if (!until)
		return;
	if (s->env->verbose || until - now > 2000000000ULL)
		fprintf(stderr, "memphase: keeping the final metrics until the next scrape "
				"(at most %.0f s)\n", (until - now) / 1e9);
	while (!session_exiting_sig && now < until) {
		httpd__serve(s->httpd, now);
		/* the answer to a scrape after the end is out */
		if (http && (now >= http || (s->scrapes > seen && !httpd__writing(s->httpd))))
			http = 0;
		/* the final textfile was read */
		if (file && (now >= file || outputs__read_since(&s->out, s->textfile)))
			file = 0;
		if (!http && !file)
			return;
		usleep(POLL_MS * 1000 / 4);
		now = util__now_ns();
	}
}
