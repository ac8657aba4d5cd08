// SPDX-License-Identifier: GPL-2.0
/* The output files of the registered formats, and the command's log. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "report/outputs.h"
#include "lib/utf8.h"

#define TARGET_LOG	"memphase-target.log"

unsigned int outputs__nformats(void)
{
	unsigned int n = 0;

	while (output_formats[n] && n < OUTPUTS_MAX)
		n++;
	return n;
}

int outputs__find(const char *name)
{
	unsigned int i;

	for (i = 0; i < outputs__nformats(); i++)
		if (!strcmp(output_formats[i]->name, name))
			return i;
	return -ENOENT;
}

static const char *opt_name(const struct output *out)
{
	return out->fmt ? out->fmt->name : "target-log";
}

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

static int open_one(struct outputs *o, struct output *out, const char *path)
{
	struct stat so;
	int err;

	out->path = path;
	err = userfs__open(o->fs, path, &out->file);
	if (err) {
		report(out, true, err);
		return err;
	}
	out->open = true;
	if (out->fmt && (out->fmt->needs & OUTPUT_NEEDS_SEEK) && !out->file.seekable) {
		fprintf(stderr, "memphase: --%s needs a file it can seek in, not a pipe\n",
			out->fmt->name);
		return -ESPIPE;
	}
	if (out->file.kind == USERFS_STREAM && !fstat(STDOUT_FILENO, &so) &&
	    so.st_dev == out->file.dev && so.st_ino == out->file.ino && !is_dev_null(&out->file))
		o->to_stdout = true;
	return 0;
}

/* the outputs and the log as one list */
static struct output *nth(struct outputs *o, unsigned int i)
{
	return i < OUTPUTS_MAX ? &o->out[i] : &o->log;
}

int outputs__open(struct outputs *o, const char *const paths[OUTPUTS_MAX],
		  const char *target_log, struct userfs *fs, bool with_log)
{
	unsigned int k, j, n = outputs__nformats();
	int err;

	memset(o, 0, sizeof(*o));
	o->fs = fs;
	for (k = 0; k <= OUTPUTS_MAX; k++)
		nth(o, k)->file.fd = -1;
	for (k = 0; k < n; k++) {
		o->out[k].fmt = output_formats[k];
		if (!paths[k])
			continue;
		err = open_one(o, &o->out[k], paths[k]);
		if (err)
			return err;
	}
	if (with_log) {
		if (target_log) {
			err = open_one(o, &o->log, target_log);
			if (err)
				return err;
		} else if (userfs__open(fs, TARGET_LOG, &o->log.file)) {
			/* the default place is only a default: the run goes on without it */
			o->log.path = TARGET_LOG;
			o->log_fallback = true;
		} else {
			o->log.path = TARGET_LOG;
			o->log.open = true;
		}
	}
	/* two options, one file: whichever is written last would silently win */
	for (k = 0; k <= OUTPUTS_MAX; k++) {
		for (j = k + 1; j <= OUTPUTS_MAX; j++) {
			const struct output *a = nth(o, k), *b = nth(o, j);
			char p[256];

			if (!a->open || !b->open || is_dev_null(&a->file) ||
			    !userfs__same(&a->file, &b->file))
				continue;
			fprintf(stderr, "memphase: --%s and --%s name the same file '%s'\n",
				opt_name(a), opt_name(b), utf8__esc_term(p, sizeof(p), b->path));
			return -EINVAL;
		}
	}
	return 0;
}

int outputs__clash(const struct outputs *o, const struct userfs_file *f, const char *opt,
		   const char *path)
{
	unsigned int k;
	char p[256];

	for (k = 0; k <= OUTPUTS_MAX; k++) {
		const struct output *a = nth((struct outputs *)o, k);

		if (!a->open || is_dev_null(&a->file) || !userfs__same(&a->file, f))
			continue;
		fprintf(stderr, "memphase: --%s and --%s name the same file '%s'\n", opt_name(a),
			opt, utf8__esc_term(p, sizeof(p), path));
		return -EINVAL;
	}
	return 0;
}

unsigned int outputs__needs(const struct outputs *o)
{
	unsigned int k, needs = 0;

	for (k = 0; k < OUTPUTS_MAX; k++)
		if (o->out[k].open && o->out[k].fmt)
			needs |= o->out[k].fmt->needs;
	return needs;
}

static int write_out(struct outputs *o, struct output *out, const struct output_ctx *ctx,
		     outputs_writer_fn fn, void *arg)
{
	cookie_io_functions_t io = { .write = wfile_write, .seek = wfile_seek };
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
	err = fn ? fn(f, arg) : out->fmt->write(f, ctx);
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

int outputs__write(struct outputs *o, const struct output_ctx *ctx, bool final)
{
	unsigned int k;
	int err, ret = 0;

	for (k = 0; k < OUTPUTS_MAX; k++) {
		struct output *out = &o->out[k];

		if (!out->open || !out->fmt || (!final && out->file.kind != USERFS_FILE))
			continue;
		err = write_out(o, out, ctx, NULL, NULL);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

int outputs__write_one(struct outputs *o, unsigned int k, const struct output_ctx *ctx)
{
	struct output *out = k < OUTPUTS_MAX ? &o->out[k] : NULL;

	if (!out || !out->open || !out->fmt || out->file.kind != USERFS_FILE)
		return 0;
	return write_out(o, out, ctx, NULL, NULL);
}

int outputs__write_with(struct outputs *o, unsigned int k, outputs_writer_fn fn, void *arg,
			bool final)
{
	struct output *out = k < OUTPUTS_MAX ? &o->out[k] : NULL;

	if (!out || !out->open || (!final && out->file.kind != USERFS_FILE))
		return 0;
	/* a stream is written once */
	if (out->file.kind != USERFS_FILE && out->used)
		return 0;
	return write_out(o, out, NULL, fn, arg);
}

int outputs__remove_at_end(struct outputs *o, unsigned int k)
{
	struct output *out = k < OUTPUTS_MAX ? &o->out[k] : NULL;

	if (!out || !out->open)
		return 0;
	return userfs__remove_at_end(o->fs, &out->file);
}

int outputs__read_since(struct outputs *o, unsigned int k)
{
	struct output *out = k < OUTPUTS_MAX ? &o->out[k] : NULL;

	if (!out || !out->open || !out->used || out->file.kind != USERFS_FILE)
		return 0;
	return userfs__read_since(o->fs, &out->file) == 1;
}

int outputs__log_fd(const struct outputs *o)
{
	return o->log.open ? o->log.file.fd : -1;
}

const char *outputs__log_path(const struct outputs *o)
{
	return o->log.open ? o->log.path : NULL;
}

int outputs__log_commit(struct outputs *o)
{
	struct output *out = &o->log;
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
	unsigned int k;

	for (k = 0; k <= OUTPUTS_MAX; k++) {
		struct output *out = nth(o, k);

		/* a temporary file still open was never renamed into place */
		if (out->file.kind == USERFS_FILE && out->file.fd >= 0)
			userfs__discard(o->fs, &out->file);
		else
			userfs__close(&out->file);
		out->open = false;
	}
}
