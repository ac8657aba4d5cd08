// SPDX-License-Identifier: GPL-2.0
/* Command line parsing (argp) for `memphase run` and `memphase attach`. */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/types.h>
#include "env.h"
#include "env_int.h"
#include "memphase.h"
#include "collect/target.h"
#include "lib/asuser.h"
#include "lib/causerules.h"
#include "lib/httpd.h"
#include "lib/utf8.h"
#include "lib/util.h"
#include "report/metrics.h"
#include "users.h"

/* The documented ranges of the numeric options (README, --help). */
#define YEAR_S		(365.0 * 86400)
#define KIB		1024ULL
#define MIB		(1024ULL * KIB)
#define TIB		(1024ULL * 1024 * MIB)
#define PIB		(1024ULL * TIB)

struct env env = {
	.stack_mode = MP_STACKS_DWARF,
	.sample_bytes = 1ULL << 20,
	.max_samples = 1000,
	.origin_min = 1ULL << 20,
	.interval = 1.0,
	.oom_warn = 60.0,
	.grace = 3.0,
	.ringbuf_kib = 1024,
	.report_from = -1,
	.report_to = -1,
	.max_procs = 16,
	.metrics_fd = -1,
};

const char *argp_program_version = "memphase " MEMPHASE_VERSION;

static bool record_cmd;		/* `memphase record -o FILE -- COMMAND` */
static unsigned int cmd;	/* this invocation's CMD_* */

static struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Process to observe (attach); watch: repeatable", 0 },
	{ "comm", OPT_COMM, "NAME", 0,
	  "watch: processes whose comm is NAME, running now or started later", 0 },
	{ "exe", OPT_EXE, "PATH", 0, "watch: processes running the executable PATH", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0,
	  "watch: processes in the cgroup directory PATH or below it (/sys/fs/cgroup/..., v1 "
	  "or v2; /a/b: v2)", 0 },
	{ "out-dir", OPT_OUT_DIR, "DIR", 0,
	  "watch: each process's files go to DIR as COMM.PID.START.EXT (default: .)", 0 },
	{ "max-procs", OPT_MAX_PROCS, "N", 0,
	  "watch: observe at most N processes at once; more are skipped and counted "
	  "(default 16; 1..1024)", 0 },
	{ "watched", OPT_WATCHED, "START", OPTION_HIDDEN,
	  "attach started by watch: the process started at START (clock ticks since boot)", 0 },
	{ "watched-exec", OPT_WATCHED_EXEC, NULL, OPTION_HIDDEN,
	  "attach started by watch at the process's exec: its phase 0 is its start-up", 0 },
	{ "metrics-fd", OPT_METRICS_FD, "FD", OPTION_HIDDEN,
	  "attach started by watch: send the metrics to watch over the socket FD", 0 },
	{ "stacks", OPT_STACKS, "MODE", 0,
	  "User stacks: dwarf (default, works without frame pointers), fp or none", 0 },
	{ "sample-bytes", OPT_SAMPLE_BYTES, "SIZE", 0,
	  "One stack sample per SIZE of a thread's RSS growth (default 1M; 4K..1T)", 0 },
	{ "max-samples", OPT_MAX_SAMPLES, "N", 0,
	  "At most N stack samples per second in all (default 1000; 0: no cap; up to 1000000)",
	  0 },
	{ "max-rss", OPT_MAX_RSS, "SIZE", 0,
	  "Guard: when an observed process's RSS crosses SIZE (1M..1P), write the outputs, "
	  "then end it (SIGTERM, SIGKILL after --grace)", 0 },
	{ "min-available", OPT_MIN_AVAILABLE, "SIZE", 0,
	  "Guard: the same when the memory left to the command (the system's MemAvailable, "
	  "or its memory cgroup's room below the limit if less) falls below SIZE (1M..1P)", 0 },
	{ "metrics", OPT_METRICS, "ADDR:PORT", 0,
	  "Serve Prometheus/OpenMetrics metrics on http://ADDR:PORT/metrics (ADDR 127.0.0.1 "
	  "when only :PORT or PORT is given; 0.0.0.0 or [::] only when written)", 0 },
	{ "oom-warn", OPT_OOM_WARN, "SECONDS", 0,
	  "Warn when the projected time to OOM is shorter (default 60; 0..365d)", 0 },
	{ "no-mappings", OPT_NO_MAPPINGS, NULL, 0, "Do not classify faults by mapping", 0 },
	{ "hist", OPT_HIST, NULL, 0,
	  "Print the histograms in the summary (sizes of mmap requests, growth per marker call; "
	  "the JSON has them always)", 0 },
	{ "phase", OPT_PHASE, "NAME=[BINARY:]SYMBOL", 0,
	  "Enter phase NAME when SYMBOL is called (repeatable; BINARY limits the files)", 0 },
	{ "request", OPT_REQUEST, "[BINARY:]SYMBOL", 0,
	  "A request starts at each call of SYMBOL (default: at each prompt after a generation)",
	  0 },
	{ "preset", OPT_PRESET, "NAME", 0,
	  "Built-in phase markers to use: llama (default, llama.cpp) or none; 'help' lists them",
	  0 },
	{ "no-preset", OPT_NO_PRESET, NULL, 0, "The same as --preset none", 0 },
	{ "list-presets", OPT_LIST_PRESETS, NULL, 0,
	  "Print each preset's phases and markers, and exit", 0 },
	{ "causes", OPT_CAUSES, "FILE", 0,
	  "More cause rules, in the format of the built-in data/causes.rules (repeatable)", 0 },
	{ "allocator-frame", OPT_ALLOCATOR_FRAME, "PATTERN", 0,
	  "A frame (glob) that only allocates: mapping labels skip it (repeatable)", 0 },
	{ "origin-min", OPT_ORIGIN_MIN, "SIZE", 0,
	  "Record the creating stack of every mapping of SIZE or more (default 1M; 0: none; "
	  "smaller ones: 64 a second, 4096 in all)", 0 },
	{ "duration", OPT_DURATION, "SECONDS", 0, "Stop observing after SECONDS (1ms..365d)", 0 },
	{ "interval", OPT_INTERVAL, "SECONDS", 0, "Status line period (default 1; 50ms..1h)", 0 },
	{ "no-tui", OPT_NO_TUI, NULL, 0,
	  "No full-screen live view: a status line every --interval on stderr (the default "
	  "when stdout is not a terminal)", 0 },
	{ "target-log", OPT_TARGET_LOG, "FILE", 0,
	  "run, live view: write the command's stdout and stderr to FILE (default "
	  "memphase-target.log; its stdin is /dev/null)", 0 },
	{ "grace", OPT_GRACE, "SECONDS", 0,
	  "On Ctrl-C/SIGTERM (run) or a guard, wait this long for the process to end before "
	  "SIGKILL (default 3; 0..1h)", 0 },
	{ "user", OPT_USER, "NAME", 0,
	  "run, started by root itself (no sudo): run the command as this user (under sudo it "
	  "runs as you)", 0 },
	{ "allow-root", OPT_ALLOW_ROOT, NULL, 0,
	  "run: started by root itself (no sudo), run the command as root", 0 },
	{ "ringbuf-kib", OPT_RINGBUF, "KIB", 0,
	  "Event ring buffer size (default 1024; a power of 2, 16..1048576)", 0 },
	{ "bpf-stats", OPT_BPF_STATS, NULL, 0,
	  "Print memphase's own BPF run time per program and event at exit", 0 },
	{ "record", OPT_RECORD, "FILE", 0,
	  "Write a recording of the run to FILE as it goes ('memphase report FILE' reads it)", 0 },
	{ "output", 'o', "FILE", 0, "record: the recording (the same as --record)", 0 },
	{ "record-max", OPT_RECORD_MAX, "SIZE", 0,
	  "Bound the recording (64K..1P): past half of it the RSS series is thinned out, "
	  "past all of it stack samples are dropped; phase changes and OOM kills are kept", 0 },
	{ "record-keep", OPT_RECORD_KEEP, "N", 0,
	  "Rotate the recording at --record-max: FILE is the current segment, older ones are "
	  "FILE's name with .000001, .000002, ... before .mprec; keep N segments (1..16; "
	  "watch: 4 by default)", 0 },
	{ "from", OPT_FROM, "T", 0, "report: from T into the run (a time: 90, 2.5, 500ms, 10m)",
	  0 },
	{ "to", OPT_TO, "T", 0, "report: up to T into the run", 0 },
	{ "verbose", 'v', NULL, 0, "Print probes and libbpf debug output", 0 },
	{},
};

static int parse_pid(const char *s, pid_t *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A time in [min, max] seconds ("90", "2.5", "500ms", "10m", "2h", "1d"). */
static int opt_seconds(const char *arg, double min, double max, double *out)
{
	double v;

	if (util__parse_seconds(arg, &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A size in [min, max] bytes ("4096", "512K", "1.5G"): a whole number of bytes. */
static int opt_size(const char *arg, __u64 min, __u64 max, __u64 *out)
{
	__u64 v = 0;

	if (util__parse_size(arg, &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A plain decimal integer in [min, max]. */
static int opt_uint(const char *arg, __u64 min, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (!arg || *arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Options that only make sense for `memphase run`. */
static void run_only(struct argp_state *state, const char *opt)
{
	if (env.mode != MODE_RUN)
		argp_failure(state, TARGET_EXIT_FAILED, 0, "%s belongs to 'memphase run'", opt);
}

/*
 * argp follows getopt's "unrecognized option" with a "Try `memphase --help'" line: keep
 * errors to one line by dropping that hint from the error stream.
 */
static ssize_t err_write(void *cookie, const char *buf, size_t len)
{
	static bool at_line_start = true, dropping;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = buf[i];

		if (at_line_start)
			dropping = len - i >= 4 && !strncmp(buf + i, "Try ", 4);
		/* arguments are quoted in the errors: no control byte reaches the terminal */
		if (!dropping && ((c < 0x20 && c != '\n') || c == 0x7f))
			fprintf(stderr, "\\x%02x", c);
		else if (!dropping)
			fputc(c, stderr);
		at_line_start = c == '\n';
	}
	return len;
}

static FILE *err_stream(void)
{
	static FILE *f;
	cookie_io_functions_t io = { .write = err_write };

	if (!f) {
		f = fopencookie(NULL, "w", io);
		if (f)
			setvbuf(f, NULL, _IONBF, 0);
	}
	return f ? f : stderr;
}

/* An output of stacks with --stacks=none: say which. */
static void stacks_needed(struct argp_state *state)
{
	unsigned int i;

	if (env.stack_mode)
		return;
	for (i = 0; i < outputs__nformats(); i++)
		if (env.out_paths[i] && (output_formats[i]->needs & OUTPUT_NEEDS_STACKS))
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "--%s needs stacks (drop --stacks=none)",
				     output_formats[i]->name);
}

/* Who started memphase: the files named on the command line are opened as them. */
static const struct creds *invoker(struct argp_state *state)
{
	static struct creds c;
	static bool known;

	/* its one line said */
	if (!known && users__invoking(&c))
		exit(TARGET_EXIT_FAILED);
	known = true;
	return &c;
}

/* path opened as the invoking user with flags: its fd, or one error line and exit. */
static int open_as_user(struct argp_state *state, const char *opt, const char *path,
			int flags)
{
	char why[160], p[256];
	int fd, err;

	err = asuser__open(invoker(state), path, flags, &fd, why, sizeof(why));
	if (err)
		argp_failure(state, TARGET_EXIT_FAILED, 0, "%s '%s': %s", opt,
			     utf8__esc_term(p, sizeof(p), path), why[0] ? why : strerror(-err));
	return fd;
}

/* A --phase whose binary is a path must name a file the invoking user can read. */
static void check_phase_binary(struct argp_state *state, const char *arg,
			       const struct phase_spec *sp)
{
	char opt[PHASE_SYM_MAX + PHASE_BIN_MAX + 16];

	if (!strchr(sp->binary, '/'))
		return;
	snprintf(opt, sizeof(opt), "--phase %s:", arg);
	close(open_as_user(state, opt, sp->binary, O_RDONLY | O_NONBLOCK));
}

/* The options watch hands on to each `memphase attach` child, as given. */
static bool is_passed_on(int key)
{
	switch (key) {
	case OPT_STACKS: case OPT_SAMPLE_BYTES: case OPT_MAX_SAMPLES: case OPT_MAX_RSS:
	case OPT_MIN_AVAILABLE: case OPT_OOM_WARN: case OPT_NO_MAPPINGS: case OPT_PHASE:
	case OPT_REQUEST: case OPT_PRESET: case OPT_NO_PRESET: case OPT_CAUSES:
	case OPT_ALLOCATOR_FRAME: case OPT_ORIGIN_MIN: case OPT_GRACE: case OPT_RINGBUF:
	case OPT_BPF_STATS: case OPT_RECORD_MAX: case OPT_HIST: case 'v':
		return true;
	}
	return false;
}

static void pass_on(struct argp_state *state, int key, const char *arg)
{
	const struct argp_option *o;
	char *s;

	for (o = options; o->name && o->key != key; o++)
		;
	if (!o->name)
		return;
	if (env.npass == ENV_MAX_PASS)
		argp_failure(state, TARGET_EXIT_FAILED, 0, "too many options (max %d)",
			     ENV_MAX_PASS);
	if (asprintf(&s, "--%s%s%s", o->name, arg ? "=" : "", arg ? arg : "") < 0)
		argp_failure(state, TARGET_EXIT_FAILED, ENOMEM, "options");
	env.pass[env.npass++] = s;
}

/*
 * The cgroup v1 hierarchy mounted at /sys/fs/cgroup/NAME, as /proc/self/cgroup names its
 * controllers ("memory", "cpu,cpuacct", "name=systemd"), into ctl; false: NAME is none.
 */
static bool v1_hierarchy(const char *name, size_t len, char *ctl, size_t ctl_len)
{
	char line[PATH_MAX + 64], *c, *e;
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		c = strchr(line, ':');
		e = c ? strchr(c + 1, ':') : NULL;
		if (!e || e == c + 1)
			continue;	/* v2 ("0::") or malformed */
		*e = 0;
		c++;
		if (!strncmp(c, "name=", 5) && strlen(c + 5) == len && !strncmp(c + 5, name, len))
			found = true;
		else if (strlen(c) == len && !strncmp(c, name, len))
			found = true;
		if (found)
			snprintf(ctl, ctl_len, "%s", c);
	}
	fclose(f);
	return found;
}

/*
 * --cgroup PATH: a directory under /sys/fs/cgroup (v2, or a v1 hierarchy such as
 * /sys/fs/cgroup/memory/..., or /sys/fs/cgroup/unified/... on hybrid systems), or "/a/b"
 * (v2). Stored as /proc/PID/cgroup names it: the hierarchy's controllers ("" for v2) and
 * the path in it.
 */
static void parse_cgroup(struct argp_state *state, const char *arg)
{
	static char cg[PATH_MAX], ctl[256];
	char dir[PATH_MAX + 32];
	const char *p = arg, *slash;
	bool full = false;
	size_t n;
	struct stat st;

	if (!strncmp(p, "/sys/fs/cgroup", 14) && (!p[14] || p[14] == '/'))
		p += 14, full = true;
	while (*p == '/')
		p++;
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s", p);
	ctl[0] = 0;
	if (full) {
		/* the first component may name a v1 hierarchy, or v2's "unified" */
		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (v1_hierarchy(p, n, ctl, sizeof(ctl)) ||
		    (n == 7 && !strncmp(p, "unified", 7) &&
		     !access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK)))
			p += n;
	}
	while (*p == '/')
		p++;
	n = snprintf(cg, sizeof(cg), "/%s", p);
	while (n > 1 && cg[n - 1] == '/')
		cg[--n] = 0;
	if (n >= sizeof(cg) - 1 || stat(dir, &st) || !S_ISDIR(st.st_mode))
		argp_failure(state, TARGET_EXIT_FAILED, 0,
			     "--cgroup '%s': no such cgroup (%s is not a directory)", arg, dir);
	env.match_cgroup = cg;
	env.match_cgroup_ctl = ctl;
}

static void parse_watch_end(struct argp_state *state)
{
	bool by_attr = env.match_comm || env.match_exe || env.match_cgroup;
	unsigned int i;
	struct stat st;
	bool any = false;
	int fd;

	if (!env.npids && !by_attr)
		argp_failure(state, TARGET_EXIT_FAILED, 0,
			     "watch needs --comm NAME, --exe PATH, --cgroup PATH or -p PID");
	if (env.npids && by_attr)
		argp_failure(state, TARGET_EXIT_FAILED, 0,
			     "-p excludes --comm, --exe and --cgroup");
	if (!env.out_dir)
		env.out_dir = ".";
	/* as the user: root's view of what exists is not theirs */
	fd = open_as_user(state, "--out-dir", env.out_dir, O_PATH);
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode))
		argp_failure(state, TARGET_EXIT_FAILED, 0, "--out-dir '%s': not a directory",
			     env.out_dir);
	close(fd);
	for (i = 0; i < outputs__nformats(); i++)
		any |= env.out_paths[i] != NULL;
	/* nothing asked: the JSON */
	if (!any && !env.record)
		env.out_paths[outputs__find("json")] = "";
}

/*
 * The options that take a number in a range: its kind (a time, a size, a whole number),
 * the range, what the message says of it, and where it goes (a double for a time, else an
 * unsigned int or unsigned long long, by width).
 */
enum ranged_kind { RANGED_SECONDS, RANGED_SIZE, RANGED_UINT };

struct ranged {
	int key;
	const char *name;
	enum ranged_kind kind;
	double min, max;
	const char *range;
	size_t off, width;	/* the field in struct env, and its size */
	bool pow2;		/* a power of 2 */
};

#define RANGED(k, n, kd, lo, hi, what, field, ...)					\
	{ .key = k, .name = n, .kind = kd, .min = lo, .max = hi, .range = what,		\
	  .off = offsetof(struct env, field), .width = sizeof(((struct env *)0)->field),	\
	  __VA_ARGS__ }

static const struct ranged ranged[] = {
	RANGED(OPT_DURATION, "--duration", RANGED_SECONDS, 0.001, YEAR_S,
	       "1ms to 365d: 90, 2.5, 500ms, 10m, 2h", duration),
	RANGED(OPT_INTERVAL, "--interval", RANGED_SECONDS, 0.05, 3600, "50ms to 1h", interval),
	RANGED(OPT_GRACE, "--grace", RANGED_SECONDS, 0, 3600, "0 to 1h", grace),
	RANGED(OPT_OOM_WARN, "--oom-warn", RANGED_SECONDS, 0, YEAR_S, "0 to 365d", oom_warn),
	RANGED(OPT_SAMPLE_BYTES, "--sample-bytes", RANGED_SIZE, 4 * KIB, TIB, "4K to 1T",
	       sample_bytes),
	RANGED(OPT_MAX_RSS, "--max-rss", RANGED_SIZE, MIB, PIB, "1M to 1P, e.g. 8G", max_rss),
	RANGED(OPT_MIN_AVAILABLE, "--min-available", RANGED_SIZE, MIB, PIB, "1M to 1P, e.g. 2G",
	       min_available),
	RANGED(OPT_RECORD_MAX, "--record-max", RANGED_SIZE, 64 * KIB, PIB, "a size from 64K to 1P",
	       record_max),
	RANGED(OPT_MAX_SAMPLES, "--max-samples", RANGED_UINT, 0, 1000000,
	       "a whole number, 0 to 1000000", max_samples),
	RANGED(OPT_MAX_PROCS, "--max-procs", RANGED_UINT, 1, 1024, "a whole number, 1 to 1024",
	       max_procs),
	RANGED(OPT_RECORD_KEEP, "--record-keep", RANGED_UINT, 1, RECORD_KEEP_MAX,
	       "a number from 1 to 16", record_keep),
	RANGED(OPT_RINGBUF, "--ringbuf-kib", RANGED_UINT, 16, 1024 * 1024,
	       "a power of 2, 16..1048576", ringbuf_kib, .pow2 = true),
};

/* A ranged option into its field of env: true if key is one, false else; fails on a bad one. */
static bool ranged_set(struct argp_state *state, int key, const char *arg)
{
	const struct ranged *r = NULL;
	unsigned long long u = 0;
	double d = 0;
	size_t i;
	int err;

	for (i = 0; i < sizeof(ranged) / sizeof(ranged[0]) && !r; i++)
		if (ranged[i].key == key)
			r = &ranged[i];
	if (!r)
		return false;
	if (r->kind == RANGED_SECONDS)
		err = opt_seconds(arg, r->min, r->max, &d);
	else if (r->kind == RANGED_SIZE)
		err = opt_size(arg, (__u64)r->min, (__u64)r->max, &u);
	else
		err = opt_uint(arg, (__u64)r->min, (__u64)r->max, &u);
	if (err || (r->pow2 && (u & (u - 1))))
		argp_failure(state, TARGET_EXIT_FAILED, 0, "invalid %s '%s' (%s)", r->name, arg,
			     r->range);
	if (r->kind == RANGED_SECONDS)
		*(double *)((char *)&env + r->off) = d;
	else if (r->width == sizeof(unsigned int))
		*(unsigned int *)((char *)&env + r->off) = (unsigned int)u;
	else
		*(unsigned long long *)((char *)&env + r->off) = u;
	return true;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char err[256];
	__u64 v = 0;

	/* an option, not one of argp's own keys (ARGP_KEY_ARG is 0, the others above 2^24) */
	if (key > 0 && key < 0x1000000)
		env_help__check(state, options, cmd, key);
	if (env.mode == MODE_WATCH && is_passed_on(key))
		pass_on(state, key, arg);
	/* a number in a range */
	if (ranged_set(state, key, arg))
		return 0;
	switch (key) {
	case ARGP_KEY_INIT:
		state->err_stream = err_stream();
		break;
	case 'p':
		if (parse_pid(arg, &env.pid))
			argp_failure(state, TARGET_EXIT_FAILED, 0, "invalid pid '%s'", arg);
		if (env.mode != MODE_WATCH)
			break;
		if (env.npids == ENV_MAX_PIDS)
			argp_failure(state, TARGET_EXIT_FAILED, 0, "too many -p options (max %d)",
				     ENV_MAX_PIDS);
		env.pids[env.npids++] = env.pid;
		break;
	case OPT_COMM:
		if (!*arg || strlen(arg) >= MP_COMM_LEN || strchr(arg, '/'))
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "--comm '%s': 1 to %d bytes, no '/' (the kernel's comm)", arg,
				     MP_COMM_LEN - 1);
		env.match_comm = arg;
		break;
	case OPT_EXE: {
		static char exe[PATH_MAX];
		char link[64];
		struct stat st;
		ssize_t n;
		int fd;

		/* resolved as the user: the path the kernel names the file by */
		fd = open_as_user(state, "--exe", arg, O_PATH);
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n <= 0 || fstat(fd, &st))
			argp_failure(state, TARGET_EXIT_FAILED, errno, "--exe '%s'", arg);
		exe[n] = '\0';
		close(fd);
		if (!S_ISREG(st.st_mode))
			argp_failure(state, TARGET_EXIT_FAILED, 0, "--exe '%s': not a regular file",
				     arg);
		env.match_exe = exe;
		break;
	}
	case OPT_CGROUP:
		parse_cgroup(state, arg);
		break;
	case OPT_OUT_DIR:
		env.out_dir = arg;
		break;
	case OPT_WATCHED:
		if (opt_uint(arg, 0, ~0ULL, &v))
			argp_failure(state, TARGET_EXIT_FAILED, 0, "invalid --watched '%s'", arg);
		env.watched = true;
		env.watched_start = v;
		break;
	case OPT_WATCHED_EXEC:
		env.watched_exec = true;
		break;
	case OPT_METRICS_FD: {
		struct stat st;

		if (opt_uint(arg, 3, INT_MAX, &v) || fstat(v, &st) || !S_ISSOCK(st.st_mode))
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "--metrics-fd '%s': not an open socket", arg);
		env.metrics_fd = v;
		break;
	}
	case OPT_METRICS: {
		struct sockaddr_storage ss;
		socklen_t len;

		if (httpd__parse_addr(arg, &ss, &len, err, sizeof(err)))
			argp_failure(state, TARGET_EXIT_FAILED, 0, "--metrics '%s': %s", arg, err);
		env.metrics = arg;
		break;
	}
	case OPT_PHASE:
		if (env.mode == MODE_REPORT) {
			/* report --phase NAME: only that phase */
			env.report_phase = arg;
			break;
		}
		if (env.nspecs == ENV_MAX_SPECS)
			argp_failure(state, TARGET_EXIT_FAILED, 0, "too many --phase options (max %d)",
				     ENV_MAX_SPECS);
		if (phasespec__parse(arg, &env.specs[env.nspecs], err, sizeof(err)))
			argp_failure(state, TARGET_EXIT_FAILED, 0, "%s", err);
		check_phase_binary(state, arg, &env.specs[env.nspecs]);
		env.nspecs++;
		break;
	case OPT_CAUSES: {
		struct causerules r;
		char why[160], p[256];
		size_t len;
		char *text;
		int e;

		if (env.ncause_files == ENV_MAX_RULE_ARGS)
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "too many --causes options (max %d)", ENV_MAX_RULE_ARGS);
		/* read once, as the user, now: a bad file is one line and an exit before
		 * anything starts, and what the run uses (and records) is what was checked */
		e = asuser__read(invoker(state), arg, ASUSER_TEXT_MAX, &text, &len, why,
				 sizeof(why));
		if (e)
			argp_failure(state, TARGET_EXIT_FAILED, 0, "--causes %s: %s",
				     utf8__esc_term(p, sizeof(p), arg), why[0] ? why : strerror(-e));
		if (strlen(text) != len)
			argp_failure(state, TARGET_EXIT_FAILED, 0, "--causes %s: not a text file",
				     utf8__esc_term(p, sizeof(p), arg));
		causerules__init(&r);
		e = causerules__parse(&r, text, arg, err, sizeof(err));
		causerules__free(&r);
		if (e)
			argp_failure(state, TARGET_EXIT_FAILED, 0, "--causes %s", err);
		env.cause_files[env.ncause_files] = arg;
		env.cause_texts[env.ncause_files++] = text;
		break;
	}
	case OPT_ALLOCATOR_FRAME:
		if (env.nallocators == ENV_MAX_RULE_ARGS)
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "too many --allocator-frame options (max %d)",
				     ENV_MAX_RULE_ARGS);
		if (!*arg)
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "--allocator-frame: empty pattern");
		env.allocators[env.nallocators++] = arg;
		break;
	case OPT_ORIGIN_MIN:
		if (util__parse_size(arg, &env.origin_min))
			argp_failure(state, TARGET_EXIT_FAILED, 0, "--origin-min: bad size '%s'",
				     arg);
		break;
	case OPT_REQUEST: {
		char spec[PHASE_SYM_MAX + PHASE_BIN_MAX + 16];

		if (env.request.symbol[0])
			argp_failure(state, TARGET_EXIT_FAILED, 0, "--request given twice");
		snprintf(spec, sizeof(spec), "request=%s", arg);
		if (phasespec__parse(spec, &env.request, err, sizeof(err)))
			argp_failure(state, TARGET_EXIT_FAILED, 0, "bad --request '%s': %s", arg,
				     err);
		check_phase_binary(state, arg, &env.request);
		break;
	}
	case OPT_NO_PRESET:
		env.preset = NULL;
		break;
	case OPT_PRESET:
		if (!strcmp(arg, "help")) {
			env.list_presets = true;
			break;
		}
		env.preset = presets__find(arg);
		if (!env.preset && strcmp(arg, PRESETS_NONE)) {
			presets__names(err, sizeof(err));
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "unknown preset '%s' (available: %s)", arg, err);
		}
		break;
	case OPT_LIST_PRESETS:
		env.list_presets = true;
		break;
	case OPT_STACKS:
		if (!strcmp(arg, "dwarf"))
			env.stack_mode = MP_STACKS_DWARF;
		else if (!strcmp(arg, "fp"))
			env.stack_mode = MP_STACKS_FP;
		else if (!strcmp(arg, "none"))
			env.stack_mode = MP_STACKS_NONE;
		else
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "invalid --stacks '%s' (dwarf, fp or none)", arg);
		break;
	case OPT_NO_MAPPINGS:
		env.no_mappings = true;
		break;
	case OPT_HIST:
		env.hists = true;
		break;
	case OPT_NO_TUI:
		env.no_tui = true;
		break;
	case OPT_TARGET_LOG:
		run_only(state, "--target-log");
		env.target_log = arg;
		break;
	case OPT_USER:
		run_only(state, "--user");
		env.user = arg;
		break;
	case OPT_ALLOW_ROOT:
		run_only(state, "--allow-root");
		env.allow_root = true;
		break;
	case OPT_BPF_STATS:
		env.bpf_stats = true;
		break;
	case 'v':
		env.verbose++;
		break;
	case OPT_RECORD:
	case 'o':
		/* watch: one recording per process, named like the other files */
		env.record = arg ? arg : "";
		break;
	case OPT_FROM:
	case OPT_TO:
		if (opt_seconds(arg, 0, YEAR_S,
				key == OPT_FROM ? &env.report_from : &env.report_to))
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "--%s '%s': a time from 0 to 365d",
				     key == OPT_FROM ? "from" : "to", arg);
		break;
	case ARGP_KEY_ARG:
		if (env.mode == MODE_REPORT && !env.report_file) {
			env.report_file = arg;
			break;
		}
		if (env.mode == MODE_WATCH)
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "unexpected argument '%s' (in watch mode the output options "
				     "take no FILE: the files go to --out-dir)", arg);
		if (env.mode != MODE_RUN)
			argp_failure(state, TARGET_EXIT_FAILED, 0, "unexpected argument '%s'", arg);
		/* the command and its arguments: stop parsing here */
		env.argv = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (env.list_presets)
			break;	/* nothing runs */
		if (env.mode == MODE_REPORT) {
			if (!env.report_file)
				argp_failure(state, TARGET_EXIT_FAILED, 0,
					     "report needs a recording (memphase report FILE)");
			if (env.report_from >= 0 && env.report_to >= 0 &&
			    env.report_to <= env.report_from)
				argp_failure(state, TARGET_EXIT_FAILED, 0,
					     "--to must be after --from");
			break;
		}
		if (env.mode == MODE_WATCH)
			parse_watch_end(state);
		if (record_cmd && !env.record)
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "record needs -o FILE (memphase record -o FILE -- COMMAND)");
		if (env.record_max && !env.record)
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "--record-max needs --record FILE");
		if (env.record_keep && !env.record_max)
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "--record-keep needs --record-max (the size a segment ends at)");
		/* watch: a process may run for days; its recording rotates */
		if (env.mode == MODE_WATCH && env.record_max && !env.record_keep)
			env.record_keep = RECORD_KEEP_WATCH;
		stacks_needed(state);
		if (env.mode == MODE_RUN && !env.argv)
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "no command given (memphase run -- COMMAND ...)");
		if (env.mode == MODE_ATTACH && !env.pid)
			argp_failure(state, TARGET_EXIT_FAILED, 0, "attach needs -p PID");
		if (env.user && env.allow_root)
			argp_failure(state, TARGET_EXIT_FAILED, 0,
				     "--user and --allow-root exclude each other");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* --NAME FILE of the output formats */
static error_t parse_format(int key, char *arg, struct argp_state *state)
{
	if (key < OPT_FORMAT || key >= OPT_FORMAT + (int)outputs__nformats())
		return ARGP_ERR_UNKNOWN;
	/* watch: the metrics of every process merged into one textfile */
	if (env.mode == MODE_WATCH &&
	    output_formats[key - OPT_FORMAT] == &metrics_textfile_format) {
		env.watch_textfile = arg;
		return 0;
	}
	/* watch: --NAME alone, one file per process in --out-dir */
	env.out_paths[key - OPT_FORMAT] = arg ? arg : "";
	return 0;
}

int env__parse(int argc, char **argv)
{
	/* bad usage is one of memphase's own failures (argp's default is EX_USAGE, 64) */
	argp_err_exit_status = TARGET_EXIT_FAILED;
	/* one option per registered output format, first in --help */
	static struct argp_option fmt_options[OUTPUTS_MAX + 2];
	static const struct argp fmt_argp = { fmt_options, parse_format, NULL, NULL, NULL, NULL,
					      NULL };
	static const struct argp_child children[] = { { &fmt_argp, 0, NULL, 0 }, {} };
	static struct argp argp = { options, parse_arg, NULL, env_help__usage_doc, children, NULL,
				    NULL };
	static char doc[2048];
	unsigned int i;
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!name || !strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h") ||
	    !strcmp(name, "-?")) {
		env_help__top();
		return name ? 1 : -EINVAL;
	}
	if (!strcmp(name, "--list-presets")) {
		presets__fprint(stdout);
		return 1;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("%s\n", argp_program_version);
		return 1;
	}
	if (!strcmp(name, "run"))
		env.mode = MODE_RUN, cmd = CMD_RUN;
	else if (!strcmp(name, "attach"))
		env.mode = MODE_ATTACH, cmd = CMD_ATTACH;
	else if (!strcmp(name, "record"))
		env.mode = MODE_RUN, record_cmd = true, cmd = CMD_RECORD;
	else if (!strcmp(name, "report"))
		env.mode = MODE_REPORT, cmd = CMD_REPORT;
	else if (!strcmp(name, "watch"))
		env.mode = MODE_WATCH, cmd = CMD_WATCH;
	else {
		fprintf(stderr, "memphase: unknown command '%s' (try 'memphase --help')\n", name);
		return -EINVAL;
	}
	env.preset = presets__find(PRESETS_DEFAULT);
	/* watch: the output options and --record name no file (one per process) */
	for (i = 0; i < outputs__nformats(); i++) {
		bool per_proc = env.mode == MODE_WATCH &&
				output_formats[i] != &metrics_textfile_format;

		fmt_options[i] = (struct argp_option){
			output_formats[i]->name, OPT_FORMAT + i, per_proc ? NULL : "FILE", 0,
			output_formats[i]->help, -1 };
	}
	/* --help: this subcommand's usage, its options only, its examples */
	env_help__doc(doc, sizeof(doc), cmd, name);
	argp.doc = doc;
	for (i = 0; options[i].name; i++) {
		if (options[i].key == OPT_RECORD && env.mode == MODE_WATCH)
			options[i].arg = NULL;
		if (options[i].key == OPT_PHASE && env.mode == MODE_REPORT) {
			options[i].arg = "NAME";
			options[i].doc = "Only phase NAME: its growth, stacks and intervals";
		}
		if (!(env_help__cmds_of(options[i].key) & cmd))
			options[i].flags |= OPTION_HIDDEN;
	}
	if (env.mode == MODE_WATCH && env_help__watch_file_given(argc, argv))
		return -EINVAL;
	/* argv[1] plays the program name for argp: make its messages say "memphase" */
	argv[1] = (char *)"memphase";
	if (argp_parse(&argp, argc - 1, argv + 1, ARGP_IN_ORDER, NULL, NULL))
		return -EINVAL;
	if (env.list_presets) {
		presets__fprint(stdout);
		return 1;
	}
	return 0;
}
