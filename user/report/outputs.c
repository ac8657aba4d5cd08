// SPDX-License-Identifier: GPL-2.0
/* The output files: JSON summary, folded stacks, perf.data, flame graph SVG, the log. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "report/outputs.h"
#include "report/report_json.h"
#include "collect/stacks.h"
#include "lib/utf8.h"

#define TARGET_LOG	"memphase-target.log"

static const char *const opt_name[OUT_NR] = {
	[OUT_JSON] = "--json",
	[OUT_FOLDED] = "--folded",
	[OUT_PERF] = "--perf-data",
	[OUT_SVG] = "--svg",
	[OUT_LOG] = "--target-log",
};

/* A FILE over an fd that remembers why a write failed (ENOSPC, EDQUOT, EIO...). */
struct wfile {
	int fd;
	int err;	/* first errno */
};

static ssize_t wfile_write(void *cookie, const char *buf, size_t len)
{
	struct wfile *w = cookie;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(w->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!w->err)
				w->err = n < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += n;
	}
	return done;
}

static int wfile_seek(void *cookie, off64_t *off, int whence)
{
	struct wfile *w = cookie;
	off_t r = lseek(w->fd, *off, whence);

	if (r < 0)
		return -1;
	*off = r;
	return 0;
}

static int write_kind(enum output_kind k, FILE *f, const struct model *m,
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

/* "cannot write 'PATH': why" at open, "writing 'PATH' failed: why" later */
static void report(const struct output *out, bool at_open, int err)
{
	char p[256];

	fprintf(stderr, "memphase: %s'%s'%s: %s\n", at_open ? "cannot write " : "writing ",
		utf8__esc_term(p, sizeof(p), out->path), at_open ? "" : " failed",
		out->file.why[0] ? out->file.why : strerror(-err));
}

static bool is_dev_null(const struct userfs_file *f)
{
	return f->kind == USERFS_STREAM && f->rdev_major == 1 && f->rdev_minor == 3;
}

static int open_one(struct outputs *o, enum output_kind k, const char *path)
{
	struct output *out = &o->out[k];
	struct stat so;
	int err;

	out->path = path;
	err = userfs__open(o->fs, path, &out->file);
	if (err) {
		report(out, true, err);
		return err;
	}
	out->open = true;
	if (k == OUT_PERF && !out->file.seekable) {
		fprintf(stderr, "memphase: --perf-data needs a file it can seek in, not a pipe\n");
		return -ESPIPE;
	}
	if (out->file.kind == USERFS_STREAM && !fstat(STDOUT_FILENO, &so) &&
	    so.st_dev == out->file.dev && so.st_ino == out->file.ino && !is_dev_null(&out->file))
		o->to_stdout = true;
	return 0;
}

int outputs__open(struct outputs *o, const struct env *e, struct userfs *fs, bool with_log)
{
	const char *path[OUT_NR] = {
		[OUT_JSON] = e->json_path,
		[OUT_FOLDED] = e->folded_path,
		[OUT_PERF] = e->perf_path,
		[OUT_SVG] = e->svg_path,
	};
	int k, j, err;

	memset(o, 0, sizeof(*o));
	o->fs = fs;
	for (k = 0; k < OUT_NR; k++)
		o->out[k].file.fd = -1;
	for (k = 0; k < OUT_LOG; k++) {
		if (!path[k])
			continue;
		err = open_one(o, k, path[k]);
		if (err)
			return err;
	}
	if (with_log) {
		if (e->target_log) {
			err = open_one(o, OUT_LOG, e->target_log);
			if (err)
				return err;
		} else if (userfs__open(fs, TARGET_LOG, &o->out[OUT_LOG].file)) {
			/* the default place is only a default: the run goes on without it */
			o->out[OUT_LOG].path = TARGET_LOG;
			o->log_fallback = true;
		} else {
			o->out[OUT_LOG].path = TARGET_LOG;
			o->out[OUT_LOG].open = true;
		}
	}
	/* two options, one file: whichever is written last would silently win */
	for (k = 0; k < OUT_NR; k++) {
		for (j = k + 1; j < OUT_NR; j++) {
			const struct output *a = &o->out[k], *b = &o->out[j];
			char p[256];

			if (!a->open || !b->open || is_dev_null(&a->file) ||
			    !userfs__same(&a->file, &b->file))
				continue;
			fprintf(stderr, "memphase: %s and %s name the same file '%s'\n",
				opt_name[k], opt_name[j], utf8__esc_term(p, sizeof(p), b->path));
			return -EINVAL;
		}
	}
	return 0;
}

static int write_out(struct outputs *o, enum output_kind k, const struct model *m,
		     const struct stacks *st)
{
	cookie_io_functions_t io = { .write = wfile_write, .seek = wfile_seek };
	struct output *out = &o->out[k];
	struct wfile w = {};
	FILE *f;
	int err;

	/* a file gets a fresh temporary file for every write after the first */
	if (out->used) {
		err = userfs__renew(o->fs, &out->file);
		if (err) {
			report(out, true, err);
			return err;
		}
	}
	out->used = true;
	w.fd = out->file.fd;
	f = fopencookie(&w, "w", io);
	if (!f)
		return -ENOMEM;
	err = write_kind(k, f, m, st);
	if (fflush(f) && !err)
		err = -EIO;
	fclose(f);
	/* the errno of the failed write says why (ENOSPC), not the writer's -EIO */
	if (w.err)
		err = -w.err;
	if (!err)
		err = userfs__commit(o->fs, &out->file);
	if (err) {
		report(out, false, err);
		userfs__discard(o->fs, &out->file);
		return err;
	}
	if (out->file.kind == USERFS_FILE)
		userfs__close(&out->file);
	return 0;
}

int outputs__write(struct outputs *o, const struct model *m, const struct stacks *st,
		   bool final)
{
	int k, err, ret = 0;

	for (k = 0; k < OUT_LOG; k++) {
		if (!o->out[k].open || (!final && o->out[k].file.kind != USERFS_FILE))
			continue;
		err = write_out(o, k, m, st);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

int outputs__log_fd(const struct outputs *o)
{
	return o->out[OUT_LOG].open ? o->out[OUT_LOG].file.fd : -1;
}

int outputs__log_commit(struct outputs *o)
{
	struct output *out = &o->out[OUT_LOG];
	int err;

	if (!out->open || out->used)
		return 0;
	out->used = true;
	err = userfs__commit(o->fs, &out->file);
	if (err) {
		report(out, true, err);
		userfs__discard(o->fs, &out->file);
		return err;
	}
	/* the command has its own copy */
	userfs__close(&out->file);
	return 0;
}

void outputs__close(struct outputs *o)
{
	int k;

	for (k = 0; k < OUT_NR; k++) {
		struct output *out = &o->out[k];

		/* a temporary file still open was never renamed into place */
		if (out->file.kind == USERFS_FILE && out->file.fd >= 0)
			userfs__discard(o->fs, &out->file);
		else
			userfs__close(&out->file);
		out->open = false;
	}
}
