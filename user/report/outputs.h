/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The files asked for (one per registered format, report/format.h) and the command's log
 * (--target-log, with the live view): all opened before the run through the invoking
 * user's file helper (lib/userfs.h), so a bad path fails before anything starts and the
 * files are that user's. Each write goes to a temporary file that is renamed into place
 * once complete; pipes and character devices ("-" is stdout) are written in place. A run
 * that fails leaves every existing file as it was and removes only its own temporary
 * files.
 */
#ifndef __MP_OUTPUTS_H
#define __MP_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>
#include "lib/userfs.h"
#include "report/format.h"

#define OUTPUTS_MAX	16	/* formats in the registry, at most */

struct output {
	const struct output_format *fmt;	/* NULL: the command's log */
	const char *path;
	struct userfs_file file;
	bool open;
	bool used;		/* the temporary file has been written once */
};

struct outputs {
	struct userfs *fs;
	struct output out[OUTPUTS_MAX];	/* by registry index */
	struct output log;		/* the command's stdout and stderr under the live view */
	bool to_stdout;		/* an output is memphase's stdout: the summary goes to stderr */
	bool log_fallback;	/* the default log could not be created: the command's output
				 * goes to /dev/null */
};

/* The number of registered formats, and the index of the one named name (or -ENOENT). */
unsigned int outputs__nformats(void);
int outputs__find(const char *name);
/*
 * Opens paths[i] for every registered format i that has one (NULL: not asked), and the
 * command's log when with_log (target_log, or memphase-target.log when NULL). 0, or
 * -errno after one line on stderr (a bad path, two options naming the same file, a
 * format that must seek given a pipe).
 */
int outputs__open(struct outputs *o, const char *const paths[OUTPUTS_MAX],
		  const char *target_log, struct userfs *fs, bool with_log);
/*
 * Is f (opened for option --opt, as path) one of the open outputs' files? 0, or -EINVAL
 * after one line on stderr: whichever were written last would silently win.
 */
int outputs__clash(const struct outputs *o, const struct userfs_file *f, const char *opt,
		   const char *path);
/* What the open formats need (enum output_needs, OR-ed). */
unsigned int outputs__needs(const struct outputs *o);
/*
 * Writes every open output from ctx. final: the last write; otherwise (the guard's
 * snapshot) only regular files are written, since a stream cannot be replaced later. 0,
 * or the first -errno (each failure reported on stderr; the file keeps its previous
 * contents).
 */
int outputs__write(struct outputs *o, const struct output_ctx *ctx, bool final);
/*
 * Writes one open output (registry index k) from ctx while the run goes on (a regular file
 * only: a stream is written once, at the end). 0 when it is not open or not a regular file,
 * or -errno (reported; the file keeps its previous contents).
 */
int outputs__write_one(struct outputs *o, unsigned int k, const struct output_ctx *ctx);
/* The whole file of an output that no format writes (watch's merged metrics). */
typedef int (*outputs_writer_fn)(FILE *f, void *arg);
/*
 * Writes output k with fn instead of its format's writer: while things go on (final false)
 * only a regular file, as outputs__write_one; a stream once, at the end. 0 or -errno
 * (reported; the file keeps its previous contents).
 */
int outputs__write_with(struct outputs *o, unsigned int k, outputs_writer_fn fn, void *arg,
			bool final);
/*
 * Output k lives as long as the run (the metrics textfile): the file helper removes it
 * when it ends, at memphase's end or when memphase is gone, if its name still holds what
 * memphase wrote there last (nothing written: nothing removed). A stream, or k not open:
 * 0. 0 or -errno.
 */
int outputs__remove_at_end(struct outputs *o, unsigned int k);
/*
 * Has output k, as written last, been read since (lib/userfs: its access time)? 1, or 0
 * (not read, not written yet, not a regular file, or not known).
 */
int outputs__read_since(struct outputs *o, unsigned int k);
/* The command's log: its fd for the child, or -1 (no log: inherit memphase's). */
int outputs__log_fd(const struct outputs *o);
/* Its path when it is open, else NULL. */
const char *outputs__log_path(const struct outputs *o);
/* The command started: its log takes its name. 0 or -errno (reported). */
int outputs__log_commit(struct outputs *o);
/* Closes everything; temporary files never renamed into place are removed. */
void outputs__close(struct outputs *o);

#endif
