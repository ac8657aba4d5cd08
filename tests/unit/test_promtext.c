// SPDX-License-Identifier: GPL-2.0
/*
 * lib/promtext: two runs' OpenMetrics expositions, rendered one by one and merged, are
 * byte for byte what metrics__render() writes for both runs at once, in OpenMetrics and in
 * the text format 0.0.4 (the names of counter and info families converted, the UNIT lines
 * left out), the source label added to every sample; incomplete or malformed texts are
 * refused whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lib/promtext.h"
#include "model/model.h"
#include "report/metrics.h"

#define MS	1000000ULL
#define MIB	(1ULL << 20)

static struct model *build(__u32 pid, const char *comm, __u64 growth)
{
	struct model *m = calloc(1, sizeof(*m));
	struct mp_event e = { .type = MP_EV_PHASE, .pid = pid, .arg = 1, .ts_ns = 1100 * MS };
	struct mp_phase_stats s = {};
	struct model_proc *p;

	if (!m)
		return NULL;
	model__init(m, pid, 1000 * MS);
	model__set_phase_name(m, 1, "load");
	p = model__proc(m, pid, true);
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->rss[MP_ANON] = 3 * MIB;
	model__on_event(m, &e);
	s.growth[MP_ANON] = growth;
	model__set_stats(m, 1, &s);
	return m;
}

static char *render(const struct output_ctx *c, unsigned int n, enum metrics_syntax syn,
		    const char *source, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

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

static char *merge_as(struct promtext *a, struct promtext *b, bool om, const char *label)
{
	const struct promtext *v[2] = { a, b };
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (promtext__merge(f, v, 2, om, label)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

static char *merge(struct promtext *a, struct promtext *b, bool om)
{
	return merge_as(a, b, om, NULL);
}

TEST(promtext_merge_equals_render_of_both)
{
	struct model *a = build(100, "llama-server", 4 * MIB), *b = build(200, "llama-cli", MIB);
	struct output_ctx c[2] = {};
	struct promtext pa = {}, pb = {};
	char *ta = NULL, *tb = NULL, *both_t = NULL, *both_om = NULL, *mt = NULL, *mo = NULL;
	size_t la, lb, l;

	if (!ASSERT_OK_PTR(a, "a") || !ASSERT_OK_PTR(b, "b"))
		goto out;
	c[0] = (struct output_ctx){ .m = a, .now_ns = 2000 * MS };
	c[1] = (struct output_ctx){ .m = b, .now_ns = 2000 * MS };
	/* the children's (no source), and both at once as watch serves and writes them */
	ta = render(&c[0], 1, METRICS_OPENMETRICS, NULL, &la);
	tb = render(&c[1], 1, METRICS_OPENMETRICS, NULL, &lb);
	both_t = render(c, 2, METRICS_TEXT, METRICS_SOURCE_TEXTFILE, &l);
	both_om = render(c, 2, METRICS_OPENMETRICS, METRICS_SOURCE_HTTP, &l);
	if (!ASSERT_OK_PTR(ta, "a") || !ASSERT_OK_PTR(tb, "b") || !ASSERT_OK_PTR(both_t, "t") ||
	    !ASSERT_OK_PTR(both_om, "om"))
		goto out;
	if (!ASSERT_OK(promtext__parse(&pa, ta, la), "parse a"))
		goto out;
	ta = NULL;
	if (!ASSERT_OK(promtext__parse(&pb, tb, lb), "parse b"))
		goto out;
	tb = NULL;
	ASSERT_GT(pa.nfams, 20, "a's families");
	mt = merge_as(&pa, &pb, false, "source=\"" METRICS_SOURCE_TEXTFILE "\"");
	mo = merge_as(&pa, &pb, true, "source=\"" METRICS_SOURCE_HTTP "\"");
	if (!ASSERT_OK_PTR(mt, "merge text") || !ASSERT_OK_PTR(mo, "merge om"))
		goto out;
	ASSERT_STREQ(mo, both_om, "merged OpenMetrics = both rendered at once");
	ASSERT_STREQ(mt, both_t, "merged text 0.0.4 = both rendered at once");
out:
	promtext__free(&pa);
	promtext__free(&pb);
	free(ta);
	free(tb);
	free(both_t);
	free(both_om);
	free(mt);
	free(mo);
	model__free(a);
	model__free(b);
	free(a);
	free(b);
}

static int parse_str(const char *s)
{
	struct promtext p;
	char *t = strdup(s);
	int err;

	if (!t)
		return -ENOMEM;
	err = promtext__parse(&p, t, strlen(t));
	if (err)
		free(t);
	else
		promtext__free(&p);
	return err;
}

TEST(promtext_refuses_malformed)
{
	static const char *const bad[] = {
		"",						/* no # EOF: cut short */
		"# TYPE a gauge\na 1\n",			/* the same */
		"# TYPE a gauge\na 1",				/* a line cut */
		"b 1\n# EOF\n",					/* a sample of no family */
		"# TYPE a gauge\nb 1\n# EOF\n",			/* of another family */
		"# TYPE a gauge\nab 1\n# EOF\n",		/* a name that only begins so */
		"# TYPE a gauge\na 1\n# TYPE b gauge\n# TYPE a gauge\n# EOF\n",	/* twice */
		"# TYPE a gauge\na 1\n# HELP a late\n# EOF\n",	/* metadata after samples */
		"# TYPE a stateset\na 1\n# EOF\n",		/* a type not read */
		"# HELP a x\na 1\n# EOF\n",			/* no TYPE */
		"# TYPE a gauge\na 1\n# EOF\nmore\n",		/* after # EOF */
		"#TYPE a gauge\n# EOF\n",
		"# TYPE a_bytes gauge\n# UNIT a_bytes bytes\n# UNIT a_bytes bytes\n# EOF\n",
	};
	unsigned int i;

	ASSERT_OK(parse_str("# HELP a_b x y\n# TYPE a_b counter\n# UNIT a_b bytes\n"
			    "a_b_total{k=\"v\"} 1\na_b_created 2\n# TYPE c info\nc_info 1\n"
			    "# EOF\n"),
		  "well formed");
	ASSERT_OK(parse_str("# EOF\n"), "empty");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!ASSERT_EQ(parse_str(bad[i]), -EBADMSG, "refused"))
			printf("text %u: %s\n", i, bad[i]);
}

TEST(promtext_types_and_names)
{
	static const char a[] = "# HELP x_bytes Xs.\n# TYPE x_bytes counter\n"
				"# UNIT x_bytes bytes\nx_bytes_total{p=\"1\"} 5\n# TYPE r info\nr_info{p=\"1\"} 1\n"
				"# TYPE u unknown\nu 3\n# EOF\n";
	static const char b[] = "# TYPE n gauge\nn{} 7\n# TYPE x_bytes gauge\n"
				"x_bytes{p=\"2\"} 9\n# TYPE r info\nr_info{p=\"2\"} 1\n# EOF\n";
	struct promtext pa = {}, pb = {};
	char *ta = strdup(a), *tb = strdup(b), *mt = NULL, *mo = NULL;

	if (!ASSERT_OK_PTR(ta, "a") || !ASSERT_OK_PTR(tb, "b"))
		goto out;
	if (!ASSERT_OK(promtext__parse(&pa, ta, strlen(ta)), "a"))
		goto out;
	ta = NULL;
	if (!ASSERT_OK(promtext__parse(&pb, tb, strlen(tb)), "b"))
		goto out;
	tb = NULL;
	mo = merge(&pa, &pb, true);
	ASSERT_STREQ(mo, "# HELP x_bytes Xs.\n# TYPE x_bytes counter\n# UNIT x_bytes bytes\n"
			 "x_bytes_total{p=\"1\"} 5\n# TYPE r info\nr_info{p=\"1\"} 1\n"
			 "r_info{p=\"2\"} 1\n# TYPE u unknown\nu 3\n# TYPE n gauge\nn{} 7\n"
			 "# EOF\n", "OpenMetrics: the UNIT kept");
	mt = merge(&pa, &pb, false);
	/* x_bytes: b's gauge is left out (the first text's type holds); n comes last */
	free(mo);
	mo = merge_as(&pa, &pb, false, "s=\"t\"");
	ASSERT_STREQ(mo, "# HELP x_bytes_total Xs.\n# TYPE x_bytes_total counter\n"
			 "x_bytes_total{s=\"t\",p=\"1\"} 5\n# TYPE r_info gauge\n"
			 "r_info{s=\"t\",p=\"1\"} 1\nr_info{s=\"t\",p=\"2\"} 1\n"
			 "# TYPE u untyped\nu{s=\"t\"} 3\n# TYPE n gauge\nn{s=\"t\"} 7\n",
		     "a label first in every sample");
	ASSERT_STREQ(mt, "# HELP x_bytes_total Xs.\n# TYPE x_bytes_total counter\n"
			 "x_bytes_total{p=\"1\"} 5\n# TYPE r_info gauge\nr_info{p=\"1\"} 1\n"
			 "r_info{p=\"2\"} 1\n# TYPE u untyped\nu 3\n# TYPE n gauge\nn{} 7\n",
		     "text 0.0.4");
out:
	promtext__free(&pa);
	promtext__free(&pb);
	free(ta);
	free(tb);
	free(mt);
	free(mo);
}
