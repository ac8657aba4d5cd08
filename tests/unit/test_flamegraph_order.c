// SPDX-License-Identifier: GPL-2.0
/* First-level frames (phases) drawn in a requested order instead of by name. */
#include <stdlib.h>
#include <string.h>
#include "lib/flamegraph.h"
#include "harness.h"

/* x of the rect that follows "<title>name (" */
static double frame_x(const char *svg, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s (", name);
	p = strstr(svg, key);
	if (!p)
		return -1;
	p = strstr(p, " x=\"");
	return p ? atof(p + 4) : -1;
}

TEST(flamegraph_first_order)
{
	static const struct fg_stack st[] = {
		{ "context;main;touch", 100 }, { "load;main;read", 100 }, { "generate;main;x", 50 },
	};
	static const char *const order[] = { "load", "context", "generate" };
	struct fg_opts o = { .first_order = order, .nfirst = 3 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!ASSERT_OK_PTR(f, "memstream"))
		return;
	ASSERT_OK(flamegraph__write(f, st, 3, &o), "write");
	fclose(f);
	ASSERT_LT(frame_x(buf, "load"), frame_x(buf, "context"), "load left of context");
	ASSERT_LT(frame_x(buf, "context"), frame_x(buf, "generate"), "context left of generate");
	ASSERT_GE(frame_x(buf, "load"), 0, "load drawn");
	free(buf);
}
