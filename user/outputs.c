// SPDX-License-Identifier: GPL-2.0
/* The output files: JSON summary, folded stacks, perf.data, flame graph SVG. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "outputs.h"
#include "report_json.h"
#include "stacks.h"
#include "util.h"

static int write_one(enum output_kind k, FILE *f, const struct model *m,
		     const struct stacks *st)
{
	switch (k) {
	case OUT_JSON:
		return report_json__write(f, m);
	case OUT_FOLDED:
		return stacks__write_folded(st, m, f);
	case OUT_PERF:
		return stacks__write_perf(st, m, f);
	case OUT_SVG:
		return stacks__write_svg(st, m, f);
	default:
		return -EINVAL;
	}
}

int outputs__open(struct outputs *o, const struct env *e)
{
	int k;

	memset(o, 0, sizeof(*o));
	o->path[OUT_JSON] = e->json_path;
	o->path[OUT_FOLDED] = e->folded_path;
	o->path[OUT_PERF] = e->perf_path;
	o->path[OUT_SVG] = e->svg_path;
	for (k = 0; k < OUT_NR; k++) {
		if (!o->path[k])
			continue;
		/* close-on-exec: the command must not inherit memphase's files */
		o->f[k] = util__fopen_user(o->path[k], "we");
		if (!o->f[k]) {
			int err = errno ? -errno : -EIO;

			fprintf(stderr, "memphase: cannot write '%s': %s\n", o->path[k],
				strerror(-err));
			return err;
		}
	}
	return 0;
}

int outputs__write(struct outputs *o, const struct model *m, const struct stacks *st)
{
	int k, err, ret = 0;

	for (k = 0; k < OUT_NR; k++) {
		FILE *f = o->f[k];

		if (!f)
			continue;
		rewind(f);
		err = ftruncate(fileno(f), 0) ? -errno : 0;
		if (!err)
			err = write_one(k, f, m, st);
		if (fflush(f) && !err)
			err = -errno;
		if (err) {
			fprintf(stderr, "memphase: writing %s failed: %s\n", o->path[k],
				strerror(-err));
			if (!ret)
				ret = err;
		}
	}
	o->written = true;
	return ret;
}

void outputs__close(struct outputs *o)
{
	int k;

	for (k = 0; k < OUT_NR; k++) {
		if (!o->f[k])
			continue;
		if (fclose(o->f[k]) && o->written)
			fprintf(stderr, "memphase: writing %s failed: %s\n", o->path[k],
				strerror(errno));
		o->f[k] = NULL;
		if (!o->written)
			unlink(o->path[k]);
	}
}
