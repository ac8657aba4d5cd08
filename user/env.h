/* SPDX-License-Identifier: GPL-2.0 */
/* Command line -> configuration. */
#ifndef __MP_ENV_H
#define __MP_ENV_H

#include <stdbool.h>
#include <sys/types.h>
#include "lib/phasespec.h"
#include "report/outputs.h"
#include "collect/presets.h"

#define ENV_MAX_SPECS	32
#define ENV_MAX_RULE_ARGS 32	/* --causes and --allocator-frame options */

enum env_mode {
	MODE_NONE = 0,
	MODE_RUN,
	MODE_ATTACH,
	MODE_REPORT,		/* memphase report FILE: a recording read back */
	MODE_WATCH,		/* memphase watch: an attach child per matching process */
};

#define ENV_MAX_PIDS	256	/* watch -p PID... */
#define RECORD_KEEP_MAX	16	/* --record-keep: segments (each holds a file handle) */
#define RECORD_KEEP_WATCH 4	/* watch --record-max: segments kept by default */
#define ENV_MAX_PASS	160	/* watch: options handed on to each attach child */

struct env {
	enum env_mode mode;
	pid_t pid;			/* attach */
	char **argv;			/* run: the command, NULL-terminated (points into argv) */
	/* the file of each registered output format (report/format.h), NULL: not asked */
	const char *out_paths[OUTPUTS_MAX];
	int stack_mode;			/* enum mp_stack_mode */
	unsigned long long sample_bytes;
	unsigned long long max_samples;	/* per second, all threads */
	bool no_mappings;
	bool hists;			/* --hist: the summary's histograms */
	unsigned long long max_rss;	/* guard: end the target past this RSS (0: off) */
	unsigned long long min_available; /* guard: end it when MemAvailable falls below */
	double oom_warn;		/* warn when a projected OOM is closer (seconds) */
	const struct preset *preset;	/* --preset (default llama); NULL: none */
	bool list_presets;		/* --list-presets: print them, run nothing */
	unsigned int nspecs;
	struct phase_spec specs[ENV_MAX_SPECS];
	struct phase_spec request;	/* --request; symbol "" when not given */
	double duration;		/* stop observing after this many seconds (0: until exit) */
	double interval;		/* status line period, seconds */
	bool no_tui;			/* status lines on stderr even on a terminal */
	const char *target_log;		/* run + TUI: the command's stdout/stderr go here */
	double grace;			/* seconds between SIGTERM and SIGKILL (Ctrl-C, guard) */
	const char *user;		/* run: the command runs as this user */
	bool allow_root;		/* run: the command may run as root */
	/* origins and causes: --causes FILE, --allocator-frame PATTERN (repeatable) */
	unsigned int ncause_files, nallocators;
	const char *cause_files[ENV_MAX_RULE_ARGS];
	const char *cause_texts[ENV_MAX_RULE_ARGS];	/* ... each read once, as the user */
	const char *allocators[ENV_MAX_RULE_ARGS];
	unsigned long long origin_min;	/* origins of every mapping this big (0: none) */
	unsigned int ringbuf_kib;
	bool bpf_stats;			/* print the BPF programs' own run time at exit */
	const char *metrics;		/* --metrics ADDR:PORT: serve /metrics */
	int metrics_fd;			/* attach under watch: send the exposition here (-1) */
	const char *record;		/* --record FILE (record -o FILE) */
	unsigned long long record_max;	/* --record-max: bound of the recording (0: none) */
	unsigned int record_keep;	/* --record-keep: segments kept (0: no rotation) */
	const char *report_file;	/* report: the recording */
	double report_from, report_to;	/* report --from/--to: seconds (-1: start, end) */
	const char *report_phase;	/* report --phase NAME */
	int verbose;
	/* watch (user/watch.c): what matches, where the files go; out_paths[i] is "" for each
	 * format asked, and record "" for --record */
	unsigned int npids;
	pid_t pids[ENV_MAX_PIDS];	/* -p PID...: these processes only */
	const char *match_comm;		/* --comm NAME (at most 15 bytes, the kernel's comm) */
	const char *match_exe;		/* --exe PATH, resolved (realpath) */
	const char *match_cgroup;	/* --cgroup PATH, as in /proc/PID/cgroup ("/a/b") */
	const char *match_cgroup_ctl;	/* ... of this hierarchy ("memory"; "" for v2) */
	const char *out_dir;		/* --out-dir DIR (default ".") */
	unsigned int max_procs;		/* --max-procs N: attach children at once */
	const char *watch_textfile;	/* --metrics-textfile FILE: the merged metrics */
	/* the analysis options given, as "--name" or "--name=value", for the children */
	unsigned int npass;
	char *pass[ENV_MAX_PASS];
	bool watched;			/* attach started by watch: a process gone before the
					 * attach exits SESSION_EXIT_GONE without a word */
	unsigned long long watched_start; /* ... the start time (/proc/PID/stat) it must have */
	bool watched_exec;		/* ... caught at its exec: phase 0 is "startup" */
};

extern struct env env;

/*
 * Parses argv (argv[0] is the program, argv[1] the subcommand). Returns 0, 1 when
 * help or version was printed (exit 0), or -EINVAL after printing one error line
 * (argp's own errors exit with TARGET_EXIT_FAILED at once).
 */
int env__parse(int argc, char **argv);

#endif
