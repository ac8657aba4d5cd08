// SPDX-License-Identifier: GPL-2.0
/* The flame graph SVG. */
#include "lib/flamegraph.h"
#include "report/stacklines.h"
#include "report/svg.h"

static int svg_write(FILE *f, const struct output_ctx *ctx)
{
	struct fg_opts o = { .title = "memphase: RSS growth by phase and code path",
			     .unit = "bytes", .width = 1200 };
	const struct model *m = ctx->m;
	const char *order[MP_MAX_PHASES];
	char sub[256], cmd[128] = "";
	struct stacklines sl;
	unsigned int i;
	int err;

	err = stacklines__build(&sl, m);
	if (err)
		return err;
	for (i = 0; i < m->norder; i++)
		order[i] = m->names[m->order[i]];
	o.first_order = order;
	o.nfirst = m->norder;
	if (m->argv && m->argv[0])
		snprintf(cmd, sizeof(cmd), "%s", m->argv[0]);
	snprintf(sub, sizeof(sub), "%s (pid %u): %llu samples", cmd, m->root_pid,
		 (unsigned long long)m->profile.total);
	o.subtitle = sub;
	err = flamegraph__write(f, sl.v, sl.n, &o);
	stacklines__free(&sl);
	return err;
}

const struct output_format svg_format = {
	.name = "svg",
	.help = "Write a self-contained flame graph SVG",
	.needs = OUTPUT_NEEDS_STACKS,
	.write = svg_write,
};
