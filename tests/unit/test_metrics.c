// SPDX-License-Identifier: GPL-2.0
/*
 * report/metrics: the exposition of a hand-built model, in both syntaxes. Every sample
 * follows its family's HELP and TYPE; counters are named with _total in text 0.0.4 and
 * without it in OpenMetrics's TYPE; OpenMetrics has a UNIT for the families named for
 * one (bytes, seconds, ...), text 0.0.4 none; the histogram's buckets are cumulative, two
 * per doubling; comm is
 * escaped and made valid UTF-8; GPU families only with a GPU; two runs give each family
 * once, run by run (what a merger relies on); OpenMetrics ends in "# EOF". promtool (the
 * prometheus package) checks both when it is there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "harness.h"
#include "model/model.h"
#include "report/metrics.h"

#define MS	1000000ULL
#define MIB	(1ULL << 20)

static struct model *build(__u32 pid, const char *comm)
{
	struct model *m = calloc(1, sizeof(*m));
	struct mp_event e = { .type = MP_EV_PHASE, .pid = pid, .arg = 1, .ts_ns = 1100 * MS };
	struct mp_phase_stats s = {};
	struct model_proc *p;
	__s64 growth[] = { 100 << 10, 2 * MIB, -(__s64)MIB };
	unsigned int i;

	if (!m)
		return NULL;
	model__init(m, pid, 1000 * MS);
	model__set_phase_name(m, 1, "load");
	model__set_phase_name(m, 2, "prompt");
	p = model__proc(m, pid, true);
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->rss[MP_ANON] = 3 * MIB;
	p->rss[MP_FILE] = 5 * MIB;
	model__on_event(m, &e);
	s.growth[MP_FILE] = 8 * MIB;
	s.growth[MP_ANON] = 4096;
	s.shrink[MP_ANON] = 8192;
	s.faults = 7;
	model__set_stats(m, 1, &s);
	e.arg = 2;
	e.ts_ns = 1500 * MS;
	model__on_event(m, &e);
	/* three finished requests: +100 KiB, +2 MiB, -1 MiB (counted as 0) */
	m->nrequests = 3;
	for (i = 0; i < 3; i++) {
		m->requests[i].start_ns = (1500 + i * 100) * MS;
		m->requests[i].end_ns = (1600 + i * 100) * MS;
		m->requests[i].rss_start[MP_ANON] = 10 * MIB;
		m->requests[i].rss_end[MP_ANON] = 10 * MIB + growth[i];
		m->requests[i].prompt_tokens = 10;
	}
	return m;
}

static char *render_from(const struct output_ctx *c, unsigned int n, enum metrics_syntax syn,
			 const char *source)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (metrics__render(f, c, n, syn, source)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

/* as watch's channel carries it: no source label */
static char *render(const struct output_ctx *c, unsigned int n, enum metrics_syntax syn)
{
	return render_from(c, n, syn, NULL);
}

/* Sample lines, and those whose labels begin with label. */
static void count_samples(const char *text, const char *label, int *n, int *with)
{
	const char *p, *nl, *b;

	*n = *with = 0;
	for (p = text; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			return;
		if (*p == '#')
			continue;
		(*n)++;
		b = strchr(p, '{');
		*with += b && b < nl && !strncmp(b + 1, label, strlen(label));
	}
}

/*
 * Every sample line belongs to the family of the last TYPE line, which follows its HELP;
 * a UNIT line (OpenMetrics only) follows the TYPE, its unit the family name's last words.
 */
static bool well_formed(const char *text, enum metrics_syntax syn)
{
	char fam[128] = "", help[128] = "", line[1024], name[128], unit[128];
	size_t nf, nu;
	const char *p = text, *nl;
	int nsamples = 0;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			return false;
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		p = nl + 1;
		if (sscanf(line, "# HELP %127s", help) == 1)
			continue;
		if (sscanf(line, "# TYPE %127s", fam) == 1) {
			if (strcmp(fam, help)) {
				printf("TYPE %s without its HELP\n", fam);
				return false;
			}
			continue;
		}
		if (sscanf(line, "# UNIT %127s %127s", name, unit) == 2) {
			nf = strlen(fam);
			nu = strlen(unit);
			if (syn != METRICS_OPENMETRICS || strcmp(name, fam) || nf <= nu + 1 ||
			    fam[nf - nu - 1] != '_' || strcmp(fam + nf - nu, unit)) {
				printf("a UNIT out of place: %s\n", line);
				return false;
			}
			continue;
		}
		if (!strcmp(line, "# EOF"))
			return syn == METRICS_OPENMETRICS && !*p;
		if (sscanf(line, "%127[^{ ]", name) != 1 || strncmp(name, fam, strlen(fam)) ||
		    !fam[0]) {
			printf("sample outside its family (%s): %s\n", fam, line);
			return false;
		}
		nsamples++;
	}
	return syn == METRICS_TEXT && nsamples > 0;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (hay = strstr(hay, needle); hay; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

TEST(metrics_exposition)
{
	struct model *m = build(100, "ll\"a\\m\xff");
	struct output_ctx c = {};
	char *text = NULL, *om = NULL;
	const char *id = "source=\"http\",comm=\"ll\\\"a\\\\m\xef\xbf\xbd\",pid=\"100\"";
	char want[512];
	int n, with;

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	c.m = m;
	c.now_ns = 2000 * MS;
	/* a recording's start on the wall clock: no memphase running now, still a start */
	m->start_wall_ns = 1700000000500000000ULL;
	text = render_from(&c, 1, METRICS_TEXT, METRICS_SOURCE_HTTP);
	om = render_from(&c, 1, METRICS_OPENMETRICS, METRICS_SOURCE_HTTP);
	if (!ASSERT_OK_PTR(text, "text") || !ASSERT_OK_PTR(om, "openmetrics"))
		goto out;
	ASSERT_TRUE(well_formed(text, METRICS_TEXT), "text: samples follow HELP and TYPE");
	count_samples(text, "source=\"http\",comm=", &n, &with);
	ASSERT_GT(n, 50, "samples");
	ASSERT_EQ(with, n, "every sample says its source first");
	ASSERT_TRUE(well_formed(om, METRICS_OPENMETRICS), "OpenMetrics, ending in # EOF");
	ASSERT_TRUE(strstr(text, "# TYPE memphase_phase_growth_bytes_total counter\n") != NULL,
		    "text: the counter's family is named with _total");
	ASSERT_TRUE(strstr(om, "# TYPE memphase_phase_growth_bytes counter\n") != NULL,
		    "OpenMetrics: without");
	ASSERT_TRUE(strstr(om, "# TYPE memphase_phase_growth_bytes counter\n"
			       "# UNIT memphase_phase_growth_bytes bytes\n") &&
		    strstr(om, "# UNIT memphase_phase_seconds seconds\n") &&
		    strstr(om, "# UNIT memphase_request_growth_bytes bytes\n"),
		    "OpenMetrics: the units");
	ASSERT_FALSE(strstr(om, "# UNIT memphase_requests ") ||
		     strstr(om, "# UNIT memphase_phase_page_faults "), "counts have none");
	ASSERT_FALSE(strstr(text, "# UNIT"), "text 0.0.4 has no UNIT");
	ASSERT_TRUE(strstr(om, "# TYPE memphase_run info\n") &&
		    strstr(text, "# TYPE memphase_run_info gauge\n"), "info: info, or a gauge");
	snprintf(want, sizeof(want),
		 "memphase_phase_growth_bytes_total{%s,phase=\"load\",class=\"file\"} 8388608\n",
		 id);
	ASSERT_TRUE(strstr(text, want) && strstr(om, want), "growth of load, file; comm escaped");
	snprintf(want, sizeof(want),
		 "memphase_phase_shrink_bytes_total{%s,phase=\"load\",class=\"anon\"} 8192\n", id);
	ASSERT_TRUE(strstr(text, want) != NULL, "shrink");
	snprintf(want, sizeof(want), "memphase_rss_bytes{%s,class=\"anon\"} 3145728\n", id);
	ASSERT_TRUE(strstr(text, want) != NULL, "RSS by class");
	snprintf(want, sizeof(want), "memphase_phase_seconds_total{%s,phase=\"load\"} 0.4\n", id);
	ASSERT_TRUE(strstr(text, want) != NULL, "load lasted 0.4 s");
	snprintf(want, sizeof(want), "memphase_phase_seconds_total{%s,phase=\"prompt\"} 0.5\n",
		 id);
	ASSERT_TRUE(strstr(text, want) != NULL, "prompt: open until now");
	snprintf(want, sizeof(want), "memphase_current_phase{%s,phase=\"prompt\"} 1\n", id);
	ASSERT_TRUE(strstr(text, want) != NULL, "the current phase");
	/* buckets: 0 (the shrinking one), 100 KiB, 2 MiB (on a bound: in its bucket) */
	snprintf(want, sizeof(want),
		 "memphase_request_growth_bytes_bucket{%s,le=\"65536\"} 1\n"
		 "memphase_request_growth_bytes_bucket{%s,le=\"98304\"} 1\n"
		 "memphase_request_growth_bytes_bucket{%s,le=\"131072\"} 2\n", id, id, id);
	ASSERT_TRUE(strstr(text, want) != NULL, "cumulative buckets");
	snprintf(want, sizeof(want),
		 "memphase_request_growth_bytes_bucket{%s,le=\"1572864\"} 2\n"
		 "memphase_request_growth_bytes_bucket{%s,le=\"2097152\"} 3\n", id, id);
	ASSERT_TRUE(strstr(text, want) != NULL, "2 MiB is in the bucket it bounds");
	ASSERT_EQ(count(text, "memphase_request_growth_bytes_bucket{"), METRICS_NBUCKETS + 1,
		  "37 buckets and +Inf");
	snprintf(want, sizeof(want), "memphase_request_growth_bytes_bucket{%s,le=\"+Inf\"} 3\n"
		 "memphase_request_growth_bytes_count{%s} 3\n"
		 "memphase_request_growth_bytes_sum{%s} %llu\n", id, id, id,
		 (100ULL << 10) + 2 * MIB);
	ASSERT_TRUE(strstr(text, want) != NULL, "+Inf, count, sum");
	snprintf(want, sizeof(want), "memphase_start_time_seconds{%s} 1700000000.5\n", id);
	ASSERT_TRUE(strstr(text, want) && strstr(om, want), "the start, from the model");
	snprintf(want, sizeof(want), "memphase_oom_kills_total{%s,phase=\"load\"} 0\n", id);
	ASSERT_TRUE(strstr(text, want) != NULL, "OOM kills: 0 per phase");
	ASSERT_FALSE(strstr(text, "# EOF"), "text has no # EOF");
	ASSERT_FALSE(strstr(text, "memphase_vram") || strstr(text, "memphase_gpu_"),
		     "no GPU families without a GPU");
	ASSERT_FALSE(strstr(text, "memphase_self_"), "no memphase cost for a recording");
	ASSERT_FALSE(strstr(text, "memphase_mem_available"), "no system memory unread");
out:
	free(text);
	free(om);
	model__free(m);
	free(m);
}

/* Two bounds per doubling: each at most 1.5 times the one before, 64 KiB to 16 GiB. */
TEST(metrics_request_buckets_resolve_a_request)
{
	unsigned int i;
	bool fine = true;

	ASSERT_EQ(metrics__bucket(0), 64ULL << 10, "the first bound");
	ASSERT_EQ(metrics__bucket(METRICS_NBUCKETS - 1), 16ULL << 30, "the last bound");
	for (i = 1; i < METRICS_NBUCKETS; i++)
		fine &= metrics__bucket(i) > metrics__bucket(i - 1) &&
			2 * metrics__bucket(i) <= 3 * metrics__bucket(i - 1);
	ASSERT_TRUE(fine, "increasing, x1.5 at most");
	/* the report's +4.25 MiB request: in (4 MiB, 6 MiB], not (4 MiB, 16 MiB] */
	for (i = 0; i < METRICS_NBUCKETS && metrics__bucket(i) < 4456448; i++)
		;
	ASSERT_EQ(metrics__bucket(i), 6ULL << 20, "4.25 MiB: bucket le 6 MiB");
	ASSERT_EQ(metrics__bucket(i - 1), 4ULL << 20, "above 4 MiB");
}

TEST(metrics_gpu_system_and_two_runs)
{
	struct model *a = build(100, "llama-server"), *b = build(200, "llama-cli");
	struct output_self self = { .cpu_s = 1.5, .rss_bytes = 20 * MIB, .render_s = 0.001,
				    .render_bytes = 12345 };
	struct sysmem sm = { .have_meminfo = true, .mem_total = 16ULL << 30,
			     .mem_available = 8ULL << 30, .have_psi = true,
			     .psi_some_total_us = 2500000 };
	struct output_ctx c[2] = {};
	char dir[] = "/tmp/memphase-metrics-XXXXXX", *text = NULL, *om = NULL;
	const char *p, *q;

	if (!ASSERT_OK_PTR(a, "model a") || !ASSERT_OK_PTR(b, "model b"))
		goto out;
	a->gpu.probes = 3;
	a->gpu.alloc_bytes[MP_ALLOC_PINNED][1] = 8 * MIB;
	a->gpu.current[MP_ALLOC_PINNED] = 8 * MIB;
	a->gpu.peak[MP_ALLOC_PINNED] = 8 * MIB;
	a->gpu.nvml = true;
	a->gpu.vram = 64 * MIB;
	a->gpu.ndevices = 1;
	a->gpu.dev[0].total = 8ULL << 30;
	a->gpu.dev[0].used = 1ULL << 30;
	a->gpu.dev[0].free = 7ULL << 30;
	c[0] = (struct output_ctx){ .m = a, .now_ns = 2000 * MS, .sm = &sm, .self = &self };
	c[1] = (struct output_ctx){ .m = b, .now_ns = 2000 * MS };
	text = render(c, 2, METRICS_TEXT);
	om = render(c, 2, METRICS_OPENMETRICS);
	if (!ASSERT_OK_PTR(text, "text") || !ASSERT_OK_PTR(om, "om"))
		goto out;
	ASSERT_TRUE(well_formed(text, METRICS_TEXT), "two runs: well formed");
	ASSERT_TRUE(well_formed(om, METRICS_OPENMETRICS), "two runs: OpenMetrics");
	ASSERT_EQ(count(text, "# TYPE memphase_rss_bytes "), 1, "each family once");
	/* run by run inside the family */
	p = strstr(text, "memphase_rss_bytes{comm=\"llama-server\",pid=\"100\",class=\"swap\"}");
	q = strstr(text, "memphase_rss_bytes{comm=\"llama-cli\",pid=\"200\",class=\"anon\"}");
	ASSERT_TRUE(p && q && q > p && !memchr(p, '#', q - p), "b's samples follow a's");
	ASSERT_TRUE(strstr(text, "memphase_gpu_host_bytes{comm=\"llama-server\",pid=\"100\","
				 "kind=\"pinned\"} 8388608\n") != NULL, "pinned held");
	ASSERT_TRUE(strstr(text, "memphase_gpu_host_alloc_bytes_total{comm=\"llama-server\","
				 "pid=\"100\",phase=\"load\",kind=\"pinned\"} 8388608\n") != NULL,
		    "pinned per phase");
	ASSERT_FALSE(strstr(text, "memphase_gpu_host_bytes{comm=\"llama-cli\""),
		     "only the run with a GPU");
	ASSERT_TRUE(strstr(text, "memphase_vram_bytes{comm=\"llama-server\",pid=\"100\"} "
				 "67108864\n") != NULL, "VRAM");
	ASSERT_TRUE(strstr(text, "memphase_gpu_memory_bytes{comm=\"llama-server\",pid=\"100\","
				 "device=\"0\",state=\"free\"} 7516192768\n") != NULL, "device");
	ASSERT_TRUE(strstr(text, "memphase_mem_available_bytes{comm=\"llama-server\","
				 "pid=\"100\"} 8589934592\n") != NULL, "MemAvailable");
	ASSERT_TRUE(strstr(text, "memphase_memory_pressure_stall_seconds_total{comm=\"llama-"
				 "server\",pid=\"100\",kind=\"some\"} 2.5\n") != NULL, "PSI");
	ASSERT_TRUE(strstr(text, "memphase_self_cpu_seconds_total{comm=\"llama-server\","
				 "pid=\"100\"} 1.5\n") != NULL, "memphase's own CPU");
	ASSERT_TRUE(strstr(text, "memphase_self_exposition_bytes{comm=\"llama-server\","
				 "pid=\"100\"} 12345\n") != NULL, "its last exposition's size");

	/* promtool: both syntaxes parse, no lint problem */
	if (system("command -v promtool >/dev/null 2>&1")) {
		test__skip("promtool not installed (the prometheus package)");
		goto out;
	}
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		goto out;
	ASSERT_OK(fixture__write(dir, "t.prom", text, strlen(text)), "write");
	ASSERT_OK(fixture__run("promtool check metrics < %s/t.prom > %s/lint 2>&1; rc=$?; "
			       "cat %s/lint; test $rc -eq 0 && test ! -s %s/lint",
			       dir, dir, dir, dir),
		  "promtool check metrics: text, no lint message");
	fixture__run("rm -rf '%s'", dir);
out:
	free(text);
	free(om);
	if (a)
		model__free(a);
	if (b)
		model__free(b);
	free(a);
	free(b);
}
