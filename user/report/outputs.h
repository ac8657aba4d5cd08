/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The files asked for (--json, --folded, --perf-data, --svg) and the command's log
 * (--target-log, with the live view): all opened before the run through the invoking
 * user's file helper (userfs.h), so a bad path fails before anything starts and the
 * files are that user's. Each write goes to a temporary file that is renamed into place
 * once complete; pipes and character devices ("-" is stdout) are written in place. A run
 * that fails leaves every existing file as it was and removes only its own temporary
 * files.
 */
#ifndef __MP_OUTPUTS_H
#define __MP_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>
#include "env.h"
#include "model/model.h"
#include "lib/userfs.h"

struct stacks;

enum output_kind {
	OUT_JSON,
	OUT_FOLDED,
	OUT_PERF,
	OUT_SVG,
	OUT_LOG,	/* the command's stdout and stderr under the live view */
	OUT_NR,
};

struct output {
	const char *path;
	struct userfs_file file;
	bool open;
	bool used;		/* the temporary file has been written once */
};

struct outputs {
	struct userfs *fs;
	struct output out[OUT_NR];
	bool to_stdout;		/* an output is memphase's stdout: the summary goes to stderr */
	bool log_fallback;	/* the default log could not be created: the command's output
				 * goes to /dev/null */
};

/*
 * Opens every file e asks for, and the command's log when with_log. 0, or -errno after
 * one line on stderr (a bad path, two options naming the same file, a perf.data that
 * cannot seek).
 */
int outputs__open(struct outputs *o, const struct env *e, struct userfs *fs, bool with_log);
/*
 * Writes every output from m (and st for the stack views). final: the last write;
 * otherwise (the guard's snapshot) only regular files are written, since a stream cannot
 * be replaced later. 0, or the first -errno (each failure reported on stderr; the file
 * keeps its previous contents).
 */
int outputs__write(struct outputs *o, const struct model *m, const struct stacks *st,
		   bool final);
/* The command's log: its fd for the child, or -1 (no log: inherit memphase's). */
int outputs__log_fd(const struct outputs *o);
/* The command started: its log takes its name. 0 or -errno (reported). */
int outputs__log_commit(struct outputs *o);
/* Closes everything; temporary files never renamed into place are removed. */
void outputs__close(struct outputs *o);

#endif
