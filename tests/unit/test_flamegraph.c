// SPDX-License-Identifier: GPL-2.0
/*
 * SVG flame graphs: written to a temporary file, checked as XML by python3's minidom
 * (skipped without python3) and by looking for the frames' <title> and <rect> in the text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/flamegraph.h"
#include "harness.h"

#define MIB (1024ULL * 1024)

struct fg_out {
	char path[64];
	char *buf;
	size_t len;
};

/* writes the SVG into a temporary file and reads it back; 0 or -errno (or the writer's) */
static int fg_render(struct fg_out *out, const struct fg_stack *stacks, size_t n,
		     const struct fg_opts *o)
{
	FILE *f = NULL;
	long len;
	int fd, err;

	snprintf(out->path, sizeof(out->path), "/tmp/memphase-fg-XXXXXX.svg");
	fd = mkstemps(out->path, 4);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w+");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	err = flamegraph__write(f, stacks, n, o);
	if (err)
		goto cleanup;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		err = -errno;
		goto cleanup;
	}
	out->buf = malloc(len + 1);
	if (!out->buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	out->len = fread(out->buf, 1, len, f);
	out->buf[out->len] = '\0';
	if (out->len != (size_t)len)
		err = -EIO;
cleanup:
	fclose(f);
	return err;
}

static void fg_out__free(struct fg_out *out)
{
	if (out->path[0])
		unlink(out->path);
	free(out->buf);
	out->buf = NULL;
	out->path[0] = '\0';
}

static bool have_python(void)
{
	return system("python3 -c '' >/dev/null 2>&1") == 0;
}

/* true if python3's minidom parses the file */
static bool xml_ok(const char *path)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' %s",
		 path);
	return system(cmd) == 0;
}

static double attr(const char *tag, const char *end, const char *name)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(tag, key);
	if (!p || p > end)
		return -1;
	return strtod(p + strlen(key), NULL);
}

/* the frame whose <title> starts with "NAME (": its rect's x, y and width; false if none */
static bool frame_rect(const char *svg, const char *name, double *x, double *y, double *w)
{
	char key[512];
	const char *p, *end;

	snprintf(key, sizeof(key), "<title>%s (", name);
	p = strstr(svg, key);
	if (!p)
		return false;
	p = strstr(p, "<rect ");
	end = p ? strstr(p, "/>") : NULL;
	if (!end)
		return false;
	*x = attr(p, end, "x");
	*y = attr(p, end, "y");
	*w = attr(p, end, "width");
	return *x >= 0 && *y >= 0 && *w >= 0;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

#define VEC_NAME	"std::vector<int, std::allocator<int> >::push_back&co"
#define VEC_ESC		"std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back&amp;co"

static const struct fg_stack sample_stacks[] = {
	{ "load;llama;main;llama_model_load;mmap_file", 300 * MIB },
	{ "load;llama;main;llama_model_load;read_tensors", 100 * MIB },
	{ "prompt;llama;main;llama_decode;ggml_graph_compute", 50 * MIB },
	{ "generate;llama;main;llama_decode;" VEC_NAME, 25 * MIB },
	{ "state;llama;main;kv_cache_init", 25 * MIB },
};

static const struct fg_opts sample_opts = {
	.title = "memphase: llama",
	.subtitle = "RSS growth by phase",
	.unit = "bytes",
	.width = 1200,
};

TEST(flamegraph_xml)
{
	struct fg_out out = {};
	const char *p;

	if (!ASSERT_OK(fg_render(&out, sample_stacks, 5, &sample_opts), "render"))
		goto cleanup;
	ASSERT_TRUE(!strncmp(out.buf, "<?xml ", 6), "xml declaration");
	ASSERT_TRUE(strstr(out.buf, "<svg ") != NULL, "svg element");
	ASSERT_TRUE(strstr(out.buf, "<script") != NULL, "inline script");
	ASSERT_TRUE(strstr(out.buf, "Reset Zoom") != NULL, "reset zoom control");
	ASSERT_TRUE(strstr(out.buf, ">Search</text>") != NULL, "search control");
	ASSERT_TRUE(strstr(out.buf, "id=\"details\"") != NULL, "details line");
	ASSERT_TRUE(strstr(out.buf, ">memphase: llama</text>") != NULL, "title");
	ASSERT_TRUE(strstr(out.buf, ">RSS growth by phase</text>") != NULL, "subtitle");
	/* self-contained: the only URL is the SVG namespace */
	for (p = out.buf; (p = strstr(p, "http")); p++) {
		bool svg_ns = !strncmp(p - 7, "xmlns=\"http://www.w3.org/2000/svg\"", 34);
		bool xlink_ns =
			!strncmp(p - 13, "xmlns:xlink=\"http://www.w3.org/1999/xlink\"", 42);

		if (!ASSERT_TRUE(svg_ns || xlink_ns, "no URL but the namespaces"))
			break;
	}
	ASSERT_EQ(count(out.buf, "http"), 1, "one namespace URL");
	ASSERT_TRUE(strstr(out.buf, "href") == NULL, "no href");
	ASSERT_TRUE(strstr(out.buf, "@import") == NULL, "no CSS import");
	if (!have_python()) {
		test__skip("python3 not found, XML not parsed");
		goto cleanup;
	}
	ASSERT_TRUE(xml_ok(out.path), "well-formed XML");
cleanup:
	fg_out__free(&out);
}

TEST(flamegraph_frames)
{
	struct fg_out out = {};
	static const char *const names[] = {
		"all", "load", "prompt", "generate", "state", "llama", "main", "llama_model_load",
		"mmap_file", "read_tensors", "llama_decode", "ggml_graph_compute",
		"kv_cache_init", VEC_ESC,
	};
	double x, y, w;
	size_t i;

	if (!ASSERT_OK(fg_render(&out, sample_stacks, 5, &sample_opts), "render"))
		goto cleanup;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!ASSERT_TRUE(frame_rect(out.buf, names[i], &x, &y, &w), names[i]))
			printf("frame '%s' not found\n", names[i]);
	}
	/* sizes and shares, binary units */
	ASSERT_TRUE(strstr(out.buf, "<title>all (500.00 MiB, 100.0%)</title>") != NULL, "root");
	ASSERT_TRUE(strstr(out.buf, "<title>load (400.00 MiB, 80.0%)</title>") != NULL, "load");
	ASSERT_TRUE(strstr(out.buf, "<title>mmap_file (300.00 MiB, 60.0%)</title>") != NULL,
		    "mmap_file");
	/* "llama" and "main" are merged per phase: one frame in each of the 4 phases */
	ASSERT_EQ(count(out.buf, "<title>main ("), 4, "main per phase");
	/* the C++ name is escaped everywhere, never raw */
	ASSERT_TRUE(strstr(out.buf, "std::vector<") == NULL, "no raw <");
	ASSERT_TRUE(strstr(out.buf, "push_back&co") == NULL, "no raw &");
	ASSERT_TRUE(strstr(out.buf, "<title>" VEC_ESC " (25.00 MiB, 5.0%)</title>") != NULL,
		    "escaped title");
	/* only "all" and the 4 phases are as wide as their labels need; the text is there */
	ASSERT_TRUE(strstr(out.buf, ">mmap_file</text>") != NULL, "label");
cleanup:
	fg_out__free(&out);
}

TEST(flamegraph_widths)
{
	struct fg_out out = {};
	double x1, y1, w1, x2, y2, w2, xa, ya, wa;

	if (!ASSERT_OK(fg_render(&out, sample_stacks, 5, &sample_opts), "render"))
		goto cleanup;
	if (!ASSERT_TRUE(frame_rect(out.buf, "mmap_file", &x1, &y1, &w1), "mmap_file") ||
	    !ASSERT_TRUE(frame_rect(out.buf, "read_tensors", &x2, &y2, &w2), "read_tensors") ||
	    !ASSERT_TRUE(frame_rect(out.buf, "all", &xa, &ya, &wa), "all"))
		goto cleanup;
	/* 300 vs 100 MiB: 3 to 1, and 60% of the root's 1180 px */
	ASSERT_LT(w1 - 3 * w2, 1.0, "ratio high");
	ASSERT_GT(w1 - 3 * w2, -1.0, "ratio low");
	ASSERT_LT(wa - 1180, 1.0, "root width");
	ASSERT_GT(wa - 1180, -1.0, "root width");
	ASSERT_LT(w1 - 0.6 * wa, 1.0, "share high");
	ASSERT_GT(w1 - 0.6 * wa, -1.0, "share low");
	/* siblings side by side, by name: mmap_file then read_tensors */
	ASSERT_LT(x1 + w1 - x2, 1.0, "adjacent");
	ASSERT_GT(x1 + w1 - x2, -1.0, "adjacent");
	ASSERT_EQ(y1, y2, "same level");
	/* the root is at the bottom */
	ASSERT_GT(ya, y1, "root below");
cleanup:
	fg_out__free(&out);
}

TEST(flamegraph_phases)
{
	static const char *const phases[] = { "generate", "load", "prompt", "state" };
	struct fg_out out = {};
	double x, y, w, xa, ya, wa, prev_end = 0, sum = 0;
	char link[64];
	size_t i;

	if (!ASSERT_OK(fg_render(&out, sample_stacks, 5, &sample_opts), "render"))
		goto cleanup;
	if (!ASSERT_TRUE(frame_rect(out.buf, "all", &xa, &ya, &wa), "all"))
		goto cleanup;
	prev_end = xa;
	/* one frame per phase right above the root, side by side in name order */
	for (i = 0; i < 4; i++) {
		if (!ASSERT_TRUE(frame_rect(out.buf, phases[i], &x, &y, &w), phases[i]))
			continue;
		ASSERT_EQ(y, ya - 16, "phase level");
		ASSERT_LT(prev_end - x, 0.5, "phases do not overlap");
		ASSERT_GT(prev_end - x, -0.5, "phases are contiguous");
		prev_end = x + w;
		sum += w;
		/* and a link above the graph that zooms into it */
		snprintf(link, sizeof(link), "data-p=\"p%zu\"", i);
		ASSERT_TRUE(strstr(out.buf, link) != NULL, "phase link");
		ASSERT_EQ(count(out.buf, strchr(link, '"')), 2, "link and frame ids");
	}
	ASSERT_LT(sum - wa, 1.0, "phases fill the root");
	ASSERT_GT(sum - wa, -1.0, "phases fill the root");
cleanup:
	fg_out__free(&out);
}

TEST(flamegraph_empty)
{
	static const struct fg_stack zero[] = { { "load;a;b", 0 }, { NULL, 0 } };
	struct fg_out out = {};
	bool py = have_python();

	if (!ASSERT_OK(fg_render(&out, NULL, 0, NULL), "render 0"))
		goto cleanup;
	ASSERT_TRUE(strstr(out.buf, ">no samples</text>") != NULL, "no samples");
	ASSERT_TRUE(strstr(out.buf, "</svg>") != NULL, "closed");
	ASSERT_TRUE(strstr(out.buf, ">Flame Graph</text>") != NULL, "default title");
	ASSERT_EQ(count(out.buf, "http"), 1, "one namespace URL");
	if (py)
		ASSERT_TRUE(xml_ok(out.path), "well-formed XML");
	fg_out__free(&out);

	/* weights of 0 only: the same */
	if (!ASSERT_OK(fg_render(&out, zero, 2, &sample_opts), "render zero weights"))
		goto cleanup;
	ASSERT_TRUE(strstr(out.buf, ">no samples</text>") != NULL, "no samples");
	ASSERT_TRUE(strstr(out.buf, "<title>") == NULL, "no frames");
	if (py)
		ASSERT_TRUE(xml_ok(out.path), "well-formed XML");
	if (!py)
		test__skip("python3 not found, XML not parsed");
cleanup:
	fg_out__free(&out);
}

TEST(flamegraph_escaping)
{
	static const struct fg_stack stacks[] = {
		{ "load;a\"b'c;ctl\x01\x1f\x7f" "end;tab\tname", 10 },
		{ "load;bad\xff\xfe utf8;trunc\xe2\x82;ok \xc3\xa9\xe2\x82\xac", 10 },
		{ "load;;;empty;", 10 },	/* empty frames are skipped */
		{ "prompt;]]>;<![CDATA[;&lt", 10 },
	};
	static const struct fg_opts o = { .title = "<t&\"'>", .unit = "a<b" };
	struct fg_out out = {};

	if (!ASSERT_OK(fg_render(&out, stacks, 4, &o), "render"))
		goto cleanup;
	ASSERT_TRUE(strstr(out.buf, "<title>a&quot;b&apos;c (") != NULL, "quotes");
	ASSERT_TRUE(strstr(out.buf, "<title>ctlend (") != NULL, "controls removed");
	ASSERT_TRUE(strstr(out.buf, "<title>tabname (") != NULL, "tab removed");
	ASSERT_TRUE(strstr(out.buf, "<title>bad\xef\xbf\xbd\xef\xbf\xbd utf8 (") != NULL,
		    "bad bytes replaced");
	ASSERT_TRUE(strstr(out.buf, "<title>trunc\xef\xbf\xbd\xef\xbf\xbd (") != NULL,
		    "cut sequence replaced");
	ASSERT_TRUE(strstr(out.buf, "<title>ok \xc3\xa9\xe2\x82\xac (") != NULL, "UTF-8 kept");
	ASSERT_TRUE(strstr(out.buf, "<title>empty (") != NULL, "empty frames skipped");
	ASSERT_TRUE(strstr(out.buf, "<title> (") == NULL, "no empty frame");
	ASSERT_TRUE(strstr(out.buf, "<title>]]&gt; (") != NULL, "]]>");
	ASSERT_TRUE(strstr(out.buf, "<title>&lt;![CDATA[ (") != NULL, "CDATA opener");
	ASSERT_TRUE(strstr(out.buf, "<title>&amp;lt (") != NULL, "entity text");
	ASSERT_TRUE(strstr(out.buf, ">&lt;t&amp;&quot;&apos;&gt;</text>") != NULL, "title");
	ASSERT_TRUE(strstr(out.buf, "(10 a&lt;b, 25.0%)") != NULL, "other unit");
	ASSERT_TRUE(strstr(out.buf, "data-unit=\"a&lt;b\"") != NULL, "unit attribute");
	if (!have_python()) {
		test__skip("python3 not found, XML not parsed");
		goto cleanup;
	}
	ASSERT_TRUE(xml_ok(out.path), "well-formed XML");
cleanup:
	fg_out__free(&out);
}

#define LONG_NAME	"a_rather_long_function_name_that_will_not_fit_in_its_frame"

TEST(flamegraph_narrow)
{
	static const struct fg_stack stacks[] = {
		{ "load;big;leaf", 1000000 },
		{ "load;big;tiny", 1 },		/* 0.001 px: not drawn, still counted */
		{ "load;big;" LONG_NAME, 20000 },
		{ "prompt", 100000 },
	};
	struct fg_out out = {};
	double x, y, w;
	const char *p;

	if (!ASSERT_OK(fg_render(&out, stacks, 4, &(struct fg_opts){ .unit = "samples" }),
		       "render"))
		goto cleanup;
	ASSERT_TRUE(strstr(out.buf, "<title>tiny (") == NULL, "tiny dropped");
	ASSERT_TRUE(strstr(out.buf, "<title>big (1020001 samples, 91.1%)</title>") != NULL,
		    "tiny counted in its parent");
	ASSERT_TRUE(strstr(out.buf, "<title>all (1120001 samples, 100.0%)</title>") != NULL,
		    "and in the root");
	/* 20000 / 1120001 of 1180 px = 21 px: room for 2 characters, no label */
	if (ASSERT_TRUE(frame_rect(out.buf, LONG_NAME, &x, &y, &w), "long frame")) {
		ASSERT_LT(w, 7.08 * 3, "narrow");
		p = strstr(out.buf, "<title>a_rather_long");
		ASSERT_TRUE(p && !strncmp(strstr(p, "/>"), "/></g>", 6), "no label");
	}
	/* prompt: 105 px, room for 14 characters */
	ASSERT_TRUE(strstr(out.buf, ">prompt</text>") != NULL, "label fits");
	ASSERT_TRUE(strstr(out.buf, ">leaf</text>") != NULL, "label fits");
cleanup:
	fg_out__free(&out);
}

TEST(flamegraph_truncate)
{
	static const struct fg_stack stacks[] = {
		{ "load;llama_model_loader::load_all_data<something>", 100 },
		{ "prompt", 900 },
	};
	struct fg_out out = {};
	double x, y, w;

	if (!ASSERT_OK(fg_render(&out, stacks, 2, NULL), "render"))
		goto cleanup;
	/* 10% of 1180 px = 118 px: 16 characters, 14 + ".." */
	if (!ASSERT_TRUE(frame_rect(out.buf, "llama_model_loader::load_all_data&lt;something&gt;",
				    &x, &y, &w), "frame"))
		goto cleanup;
	ASSERT_TRUE(strstr(out.buf, ">llama_model_lo..</text>") != NULL, "cut with ..");
	/* the cut counts characters, not bytes of entities */
	ASSERT_TRUE(strstr(out.buf, "&lt;something&gt;</text>") == NULL, "not whole");
cleanup:
	fg_out__free(&out);
}

TEST(flamegraph_deterministic)
{
	static const struct fg_stack a[] = {
		{ "load;x;b", 5 }, { "load;x;a", 7 }, { "prompt;y", 3 }, { "load;x;b", 2 },
		{ "load;x-y;c", 4 },
	};
	static const struct fg_stack b[] = {
		{ "load;x-y;c", 4 }, { "prompt;y", 3 }, { "load;x;b", 7 }, { "load;x;a", 7 },
	};
	struct fg_out oa = {}, ob = {};
	const char *pa, *pb;

	if (!ASSERT_OK(fg_render(&oa, a, 5, &sample_opts), "render a") ||
	    !ASSERT_OK(fg_render(&ob, b, 4, &sample_opts), "render b"))
		goto cleanup;
	ASSERT_EQ(oa.len, ob.len, "same length");
	ASSERT_TRUE(oa.len == ob.len && !memcmp(oa.buf, ob.buf, oa.len), "same bytes");
	/* children by name (byte order): x before x-y, a before b */
	pa = strstr(oa.buf, "<title>x (");
	pb = strstr(oa.buf, "<title>x-y (");
	ASSERT_TRUE(pa && pb && pa < pb, "x before x-y");
	pa = strstr(oa.buf, "<title>a (");
	pb = strstr(oa.buf, "<title>b (");
	ASSERT_TRUE(pa && pb && pa < pb, "a before b");
cleanup:
	fg_out__free(&oa);
	fg_out__free(&ob);
}

TEST(flamegraph_many)
{
	static const char *const phases[] = { "load", "context", "prompt", "generate", "state" };
	const size_t n = 100000;
	struct fg_stack *stacks = NULL;
	struct fg_out out = {};
	struct timespec t0, t1;
	char *names = NULL;
	double secs;
	size_t i;

	names = malloc(n * 128);
	stacks = calloc(n, sizeof(*stacks));
	if (!ASSERT_OK_PTR(names, "malloc") || !ASSERT_OK_PTR(stacks, "calloc"))
		goto cleanup;
	for (i = 0; i < n; i++) {
		snprintf(names + i * 128, 128, "%s;llama;main;mod%zu;fn%zu;leaf%zu",
			 phases[i % 5], i % 7, (i / 7) % 101, i);
		stacks[i].frames = names + i * 128;
		stacks[i].weight = 4096 * (1 + i % 13);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!ASSERT_OK(fg_render(&out, stacks, n, &sample_opts), "render"))
		goto cleanup;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%s: %zu stacks in %.3f s, %zu bytes of SVG\n", test__name(), n, secs, out.len);
	/* a generous bound: a quadratic merge takes minutes */
	ASSERT_LT(secs, 10.0, "time");
	ASSERT_EQ(count(out.buf, "<title>main ("), 5, "main per phase");
	ASSERT_TRUE(strstr(out.buf, "</svg>\n") != NULL, "complete");
	if (!have_python()) {
		test__skip("python3 not found, XML not parsed");
		goto cleanup;
	}
	ASSERT_TRUE(xml_ok(out.path), "well-formed XML");
cleanup:
	fg_out__free(&out);
	free(stacks);
	free(names);
}

TEST(flamegraph_errors)
{
	static const struct fg_stack one[] = { { "a", 1 } };
	static const struct fg_stack huge[] = { { "a", ~0ULL }, { "b", 2 } };
	FILE *f;

	ASSERT_EQ(flamegraph__write(NULL, one, 1, NULL), -EINVAL, "no file");
	f = fopen("/dev/null", "w");
	if (!ASSERT_OK_PTR(f, "open /dev/null"))
		return;
	ASSERT_EQ(flamegraph__write(f, NULL, 1, NULL), -EINVAL, "no stacks");
	ASSERT_EQ(flamegraph__write(f, huge, 2, NULL), -EOVERFLOW, "sum overflows");
	ASSERT_OK(flamegraph__write(f, one, 1, &(struct fg_opts){ .width = 10 }), "tiny width");
	fclose(f);

	f = fopen("/dev/full", "w");
	if (f) {
		ASSERT_EQ(flamegraph__write(f, one, 1, NULL), -EIO, "write error");
		fclose(f);
	}
}
