/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the command line's parser (env.c) and its help (env_help.c): the options' keys
 * and the subcommands each option belongs to.
 */
#ifndef __MP_ENV_INT_H
#define __MP_ENV_INT_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>

enum {
	OPT_FORMAT = 2000,	/* + the format's index in the registry */
	OPT_PHASE = 1000,
	OPT_CAUSES,
	OPT_ALLOCATOR_FRAME,
	OPT_ORIGIN_MIN,
	OPT_REQUEST,
	OPT_NO_PRESET,
	OPT_PRESET,
	OPT_LIST_PRESETS,
	OPT_DURATION,
	OPT_INTERVAL,
	OPT_RINGBUF,
	OPT_GRACE,
	OPT_BPF_STATS,
	OPT_STACKS,
	OPT_SAMPLE_BYTES,
	OPT_MAX_SAMPLES,
	OPT_NO_MAPPINGS,
	OPT_HIST,
	OPT_MAX_RSS,
	OPT_MIN_AVAILABLE,
	OPT_OOM_WARN,
	OPT_NO_TUI,
	OPT_TARGET_LOG,
	OPT_USER,
	OPT_ALLOW_ROOT,
	OPT_RECORD,
	OPT_RECORD_MAX,
	OPT_RECORD_KEEP,
	OPT_FROM,
	OPT_METRICS,
	OPT_TO,
	OPT_COMM,
	OPT_EXE,
	OPT_CGROUP,
	OPT_OUT_DIR,
	OPT_MAX_PROCS,
	OPT_WATCHED,
	OPT_WATCHED_EXEC,
	OPT_METRICS_FD,
};

/* The subcommands, as bits: which ones an option belongs to (argp_option has no room). */
enum {
	CMD_RUN = 1 << 0, CMD_ATTACH = 1 << 1, CMD_RECORD = 1 << 2, CMD_REPORT = 1 << 3,
	CMD_WATCH = 1 << 4,
	CMD_OBSERVE = CMD_RUN | CMD_ATTACH | CMD_RECORD | CMD_WATCH,
	CMD_ALL = CMD_OBSERVE | CMD_REPORT,
};

/* What memphase is, its commands and examples (argp's doc for the top-level --help). */
extern const char env_help__usage_doc[];

/* The CMD_* bits option key belongs to. */
unsigned int env_help__cmds_of(int key);
/*
 * argp_failure() "--NAME belongs to 'memphase a' and 'memphase b'" when key (one of
 * options[]) is not an option of cmd (a CMD_* bit).
 */
void env_help__check(struct argp_state *state, const struct argp_option *options,
		     unsigned int cmd, int key);
/* Subcommand name's --help text (cmd its CMD_* bit): its usage, examples, closing words. */
void env_help__doc(char *doc, size_t len, unsigned int cmd, const char *name);
/* memphase --help */
void env_help__top(void);
/* watch: an output option or --record given =FILE, said on one line: true. */
bool env_help__watch_file_given(int argc, char **argv);

#endif
