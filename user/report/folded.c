// SPDX-License-Identifier: GPL-2.0
/* Folded stacks. */
#include <errno.h>
#include "report/folded.h"
#include "report/stacklines.h"

static void name_put(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s, f);
}

static int folded_write(FILE *f, const struct output_ctx *ctx)
{
	struct stacklines sl;
	size_t k, i;
	int err;

	err = stacklines__build(&sl, ctx->m);
	if (err)
		return err;
	for (k = 0; k < sl.n; k++) {
		for (i = 0; i < sl.v[k].nframes; i++) {
			if (i)
				fputc(';', f);
			name_put(f, sl.v[k].framev[i]);
		}
		fprintf(f, " %llu\n", (unsigned long long)sl.v[k].weight);
	}
	stacklines__free(&sl);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

const struct output_format folded_format = {
	.name = "folded",
	.help = "Write folded stacks 'phase;comm;outer;...;inner BYTES' (flamegraph.pl, "
		"speedscope)",
	.needs = OUTPUT_NEEDS_STACKS,
	.write = folded_write,
};
