// SPDX-License-Identifier: GPL-2.0
/* watch's merged metrics: the children's channels, the exposition, its server and file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "lib/httpd.h"
#include "lib/promtext.h"
#include "lib/util.h"
#include "report/metrics.h"
#include "report/outputs.h"
#include "watch_metrics.h"

#define CHANNEL_SNDBUF	(4 << 20)	/* asked; the kernel caps it at net.core.wmem_max */

/* One process's channel and the last exposition it sent. */
struct chan {
	bool used;
	bool live;		/* its child runs */
	int fd;			/* the supervisor's end (-1 once read to its end) */
	int child_fd;		/* the child's end, until it is forked */
	__u64 ended_ns;
	struct promtext exp;	/* the last one (nfams 0 and text NULL: none yet) */
};

struct watch_metrics {
	const struct env *env;
	struct chan *chans;
	unsigned int nchans;
	struct httpd *httpd;
	struct outputs out;
	int textfile;		/* its registry index, -1 */
	__u64 textfile_next;
	struct watch_counts counts;
	__u64 scrape_ns;
	__u64 gaps[WATCH_GAPS];	/* between the last scrapes, a ring */
	unsigned int ngaps;
	__u64 bad;		/* expositions refused (not read back) */
};

static void chan_free(struct chan *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->child_fd >= 0)
		close(c->child_fd);
	promtext__free(&c->exp);
	memset(c, 0, sizeof(*c));
	c->fd = c->child_fd = -1;
}

/* Everything the child sent: the last whole exposition is kept. */
static void chan_read(struct watch_metrics *m, struct chan *c)
{
	char *last = NULL, *buf;
	size_t nlast = 0;
	struct promtext p;
	ssize_t n;

	while (c->fd >= 0) {
		/* the next message's length (SOCK_SEQPACKET: MSG_TRUNC gives the real one) */
		n = recv(c->fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			/* the child's end is closed (it exited): nothing more comes */
			close(c->fd);
			c->fd = -1;
			break;
		}
		buf = n <= HTTPD_BODY_MAX ? malloc(n) : NULL;
		if (recv(c->fd, buf ? buf : (char[1]){ 0 }, buf ? n : 1, MSG_DONTWAIT) != n) {
			free(buf);
			continue;
		}
		free(last);
		last = buf;
		nlast = n;
	}
	if (!last)
		return;
	if (promtext__parse(&p, last, nlast)) {
		m->bad++;
		free(last);
		return;
	}
	promtext__free(&c->exp);
	c->exp = p;
}

/* The supervisor's own series, as a child's: OpenMetrics, read back. */
static int self_exposition(struct watch_metrics *m, struct promtext *p)
{
	static const char *const outcome[] = { "matched", "written", "gone", "skipped", "failed" };
	const struct watch_counts *c = &m->counts;
	__u64 v[] = { c->matched, c->written, c->gone, c->skipped, c->failed }, rss = 0;
	double cpu = 0;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return -ENOMEM;
	util__self_usage(&cpu, &rss);
	fputs("# HELP memphase_watch_processes Processes memphase watch matched (matched), and "
	      "how their observation ended: written (its files), gone (before it could be "
	      "attached), skipped (past --max-procs), failed.\n"
	      "# TYPE memphase_watch_processes counter\n", f);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		fprintf(f, "memphase_watch_processes_total{outcome=\"%s\"} %llu\n", outcome[i],
			(unsigned long long)v[i]);
	fprintf(f, "# HELP memphase_watch_observed_processes Processes observed now (one "
		   "memphase attach each).\n# TYPE memphase_watch_observed_processes gauge\n"
		   "memphase_watch_observed_processes %u\n"
		   "# HELP memphase_watch_self_cpu_seconds The supervisor's own CPU time (each "
		   "observation's is memphase_self_cpu_seconds).\n"
		   "# TYPE memphase_watch_self_cpu_seconds counter\n"
		   "# UNIT memphase_watch_self_cpu_seconds seconds\n"
		   "memphase_watch_self_cpu_seconds_total %.6f\n"
		   "# HELP memphase_watch_self_resident_memory_bytes The supervisor's own resident "
		   "memory.\n# TYPE memphase_watch_self_resident_memory_bytes gauge\n"
		   "# UNIT memphase_watch_self_resident_memory_bytes bytes\n"
		   "memphase_watch_self_resident_memory_bytes %llu\n"
		   "# HELP memphase_watch_exposition_errors Expositions of observations that could "
		   "not be read back (left out).\n"
		   "# TYPE memphase_watch_exposition_errors counter\n"
		   "memphase_watch_exposition_errors_total %llu\n# EOF\n",
		c->observed, cpu, (unsigned long long)rss, (unsigned long long)m->bad);
	if (fclose(f)) {
		free(buf);
		return -EIO;
	}
	err = promtext__parse(p, buf, len);
	if (err)
		free(buf);
	return err;
}

/* The merged exposition: the supervisor's series, then every process's, from source. */
static int render(struct watch_metrics *m, FILE *f, bool openmetrics, const char *source)
{
	char label[64];
	const struct promtext **v;
	struct promtext self;
	unsigned int i, n = 0;
	int err;

	v = calloc(m->nchans + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = self_exposition(m, &self);
	if (err) {
		free(v);
		return err;
	}
	v[n++] = &self;
	for (i = 0; i < m->nchans; i++)
		if (m->chans[i].used && m->chans[i].exp.text)
			v[n++] = &m->chans[i].exp;
	snprintf(label, sizeof(label), "source=\"%s\"", source);
	err = promtext__merge(f, v, n, openmetrics, label);
	promtext__free(&self);
	free(v);
	return err;
}

static int scrape(void *ctx, const struct httpd_request *rq, FILE *body,
		  const char **content_type)
{
	struct watch_metrics *m = ctx;
	__u64 now = util__now_ns();
	double om = httpd__accept_q(rq->accept, "application/openmetrics-text", false);
	bool use_om = rq->accept[0] && om > 0 &&
		      om >= httpd__accept_q(rq->accept, "text/plain", true);

	if (m->scrape_ns)
		m->gaps[m->ngaps++ % WATCH_GAPS] = now - m->scrape_ns;
	m->scrape_ns = now;
	*content_type = use_om ? METRICS_CT_OPENMETRICS : METRICS_CT_TEXT;
	return render(m, body, use_om, METRICS_SOURCE_HTTP);
}

static int textfile_write(FILE *f, void *arg)
{
	return render(arg, f, false, METRICS_SOURCE_TEXTFILE);
}

/* How long an ended process's series stay: one scrape interval, as measured. */
static __u64 linger_ns(const struct watch_metrics *m)
{
	unsigned int i, n = m->ngaps < WATCH_GAPS ? m->ngaps : WATCH_GAPS;
	__u64 gap = 0;

	if (!n)
		return WATCH_LINGER_DEFAULT_NS + WATCH_LINGER_SLACK_NS;
	for (i = 0; i < n; i++)
		if (m->gaps[i] > gap)
			gap = m->gaps[i];
	gap += WATCH_LINGER_SLACK_NS;
	return gap < WATCH_LINGER_MAX_NS ? gap : WATCH_LINGER_MAX_NS;
}

struct watch_metrics *watch_metrics__new(const struct env *e, struct userfs *fs,
					 const struct creds *user)
{
	const char *paths[OUTPUTS_MAX] = {};
	struct watch_metrics *m;
	char why[256];
	unsigned int i;
	int err, k;

	errno = 0;
	if (!e->metrics && !e->watch_textfile)
		return NULL;
	m = calloc(1, sizeof(*m));
	/* live ones, and as many ended ones staying their interval */
	if (m)
		m->chans = calloc(2 * e->max_procs, sizeof(*m->chans));
	if (!m || !m->chans) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->env = e;
	m->nchans = 2 * e->max_procs;
	for (i = 0; i < m->nchans; i++)
		m->chans[i].fd = m->chans[i].child_fd = -1;
	m->textfile = -1;
	k = outputs__find(metrics_textfile_format.name);
	if (e->watch_textfile && k >= 0) {
		paths[k] = e->watch_textfile;
		m->textfile = k;
	}
	err = outputs__open(&m->out, paths, NULL, fs, false);
	/* the file lives as long as watch: node_exporter would serve its series for good */
	if (!err && m->textfile >= 0)
		err = outputs__remove_at_end(&m->out, m->textfile);
	if (err)
		goto fail;
	if (e->metrics) {
		m->httpd = httpd__new(e->metrics, "/metrics", scrape, m, user, why, sizeof(why));
		if (!m->httpd) {
			err = -errno;
			fprintf(stderr, "memphase: --metrics %s: %s\n", e->metrics, why);
			goto fail;
		}
	}
	return m;
fail:
	watch_metrics__free(m);
	errno = -err;
	return NULL;
}

int watch_metrics__open(struct watch_metrics *m, int *child_fd)
{
	struct chan *c = NULL, *oldest = NULL;
	int sv[2], sz = CHANNEL_SNDBUF;
	unsigned int i;

	*child_fd = -1;
	if (!m)
		return -1;
	for (i = 0; i < m->nchans && !c; i++) {
		struct chan *x = &m->chans[i];

		if (!x->used)
			c = x;
		else if (!x->live && (!oldest || x->ended_ns < oldest->ended_ns))
			oldest = x;
	}
	/* the table is full of ended processes staying their interval: the oldest goes */
	if (!c && oldest) {
		chan_free(oldest);
		c = oldest;
	}
	if (!c)
		return -ENOSPC;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
		return -errno;
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	c->used = c->live = true;
	c->fd = sv[0];
	c->child_fd = sv[1];
	*child_fd = sv[1];
	return c - m->chans;
}

void watch_metrics__forked(struct watch_metrics *m, int id, bool ok)
{
	struct chan *c;

	if (!m || id < 0 || (unsigned int)id >= m->nchans)
		return;
	c = &m->chans[id];
	if (!ok) {
		chan_free(c);
		return;
	}
	close(c->child_fd);
	c->child_fd = -1;
}

void watch_metrics__ended(struct watch_metrics *m, int id, __u64 now)
{
	struct chan *c;

	if (!m || id < 0 || (unsigned int)id >= m->nchans || !m->chans[id].used)
		return;
	c = &m->chans[id];
	/* what it sent before it exited is in the socket still */
	chan_read(m, c);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->live = false;
	c->ended_ns = now;
	if (!c->exp.text)
		chan_free(c);
}

void watch_metrics__tick(struct watch_metrics *m, const struct watch_counts *cnt, __u64 now)
{
	__u64 linger;
	unsigned int i;

	if (!m)
		return;
	m->counts = *cnt;
	linger = linger_ns(m);
	for (i = 0; i < m->nchans; i++) {
		struct chan *c = &m->chans[i];

		if (c->used && c->live)
			chan_read(m, c);
		else if (c->used && now >= c->ended_ns + linger)
			chan_free(c);
	}
	httpd__serve(m->httpd, now);
	if (m->textfile < 0 || now < m->textfile_next)
		return;
	m->textfile_next = now + WATCH_TEXTFILE_NS;
	outputs__write_with(&m->out, m->textfile, textfile_write, m, false);
}

bool watch_metrics__lingering(const struct watch_metrics *m)
{
	unsigned int i;

	/* nobody scrapes (or a textfile alone, which keeps the last figures): no wait */
	if (!m || !m->httpd || !m->ngaps)
		return false;
	for (i = 0; i < m->nchans; i++)
		if (m->chans[i].used && !m->chans[i].live)
			return true;
	return false;
}

int watch_metrics__finish(struct watch_metrics *m, const struct watch_counts *cnt)
{
	if (!m || m->textfile < 0)
		return 0;
	m->counts = *cnt;
	return outputs__write_with(&m->out, m->textfile, textfile_write, m, true);
}

void watch_metrics__free(struct watch_metrics *m)
{
	unsigned int i;

	if (!m)
		return;
	for (i = 0; m->chans && i < m->nchans; i++)
		chan_free(&m->chans[i]);
	httpd__free(m->httpd);
	outputs__close(&m->out);
	free(m->chans);
	free(m);
}
