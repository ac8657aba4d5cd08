// SPDX-License-Identifier: GPL-2.0
/* Command line parsing (argp) for `memphase run` and `memphase attach`. */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "env.h"
#include "memphase.h"
#include "util.h"

struct env env = {
	.stack_mode = MP_STACKS_DWARF,
	.sample_bytes = 1ULL << 20,
	.max_samples = 1000,
	.interval = 1.0,
	.oom_warn = 60.0,
	.grace = 3.0,
	.ringbuf_kib = 1024,
};

const char *argp_program_version = "memphase " MEMPHASE_VERSION;

static const char usage_doc[] =
"Where does host RAM go during LLM inference? memphase counts RSS growth per\n"
"memory class (anon, file, shmem, swap), per inference phase (load, context,\n"
"prompt, generate, state, teardown), per mapping and per code path, from kernel\n"
"tracepoints and uprobes on libllama.\n"
"\n"
"  memphase run [OPTIONS] -- COMMAND [ARGS...]\n"
"  memphase attach -p PID [OPTIONS]\n"
"\v"
"EXAMPLES:\n"
"  sudo memphase run -- ./llama-cli -m model.gguf -c 32768 -p 'hello'\n"
"  sudo memphase run --json run.json --svg run.svg -- ./llama-server -m m.gguf\n"
"  sudo memphase attach -p $(pidof llama-server) --duration 60\n"
"  sudo memphase run --max-rss 48G -- ./llama-cli -m model.gguf -c 102400\n"
"  sudo memphase run --phase warm=myapp:warm_up --phase eval=libfoo.so:run \\\n"
"      -- ./myapp\n"
"  sudo memphase run --no-preset --phase step=libtrainer.so:train_step -- ./train\n"
"\n"
"The command runs as the invoking user (SUDO_UID/SUDO_GID under sudo), never\n"
"as root. On a terminal a live view shows memory moving ('q' detaches). When\n"
"the command ends (OOM kill included), on Ctrl-C or SIGTERM, memphase prints a\n"
"summary and writes every requested file.";

enum {
	OPT_JSON = 1000,
	OPT_PHASE,
	OPT_NO_PRESET,
	OPT_DURATION,
	OPT_INTERVAL,
	OPT_RINGBUF,
	OPT_GRACE,
	OPT_BPF_STATS,
	OPT_FOLDED,
	OPT_PERF_DATA,
	OPT_SVG,
	OPT_STACKS,
	OPT_SAMPLE_BYTES,
	OPT_MAX_SAMPLES,
	OPT_NO_MAPPINGS,
	OPT_MAX_RSS,
	OPT_MIN_AVAILABLE,
	OPT_OOM_WARN,
	OPT_NO_TUI,
	OPT_TARGET_LOG,
};

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Process to observe (attach)", 0 },
	{ "json", OPT_JSON, "FILE", 0, "Write the summary as JSON (schema 1) to FILE", 0 },
	{ "folded", OPT_FOLDED, "FILE", 0,
	  "Write folded stacks 'phase;comm;outer;...;inner BYTES' (flamegraph.pl, speedscope)", 0 },
	{ "perf-data", OPT_PERF_DATA, "FILE", 0,
	  "Write a perf.data file (perf script/report -i FILE); the sample comm is the phase", 0 },
	{ "svg", OPT_SVG, "FILE", 0, "Write a self-contained flame graph SVG", 0 },
	{ "stacks", OPT_STACKS, "MODE", 0,
	  "User stacks: dwarf (default, works without frame pointers), fp or none", 0 },
	{ "sample-bytes", OPT_SAMPLE_BYTES, "SIZE", 0,
	  "One stack sample per SIZE of a thread's RSS growth (default 1M)", 0 },
	{ "max-samples", OPT_MAX_SAMPLES, "N", 0,
	  "At most N stack samples per second in all (default 1000; 0: no cap)", 0 },
	{ "max-rss", OPT_MAX_RSS, "SIZE", 0,
	  "Guard: when an observed process's RSS crosses SIZE, write the outputs, then end it "
	  "(SIGTERM, SIGKILL after --grace)", 0 },
	{ "min-available", OPT_MIN_AVAILABLE, "SIZE", 0,
	  "Guard: the same when the system's MemAvailable falls below SIZE", 0 },
	{ "oom-warn", OPT_OOM_WARN, "SECONDS", 0,
	  "Warn when the projected time to OOM is shorter (default 60)", 0 },
	{ "no-mappings", OPT_NO_MAPPINGS, NULL, 0, "Do not classify faults by mapping", 0 },
	{ "phase", OPT_PHASE, "NAME=[BINARY:]SYMBOL", 0,
	  "Enter phase NAME when SYMBOL is called (repeatable; BINARY limits the files)", 0 },
	{ "no-preset", OPT_NO_PRESET, NULL, 0, "Do not use the llama.cpp phase markers", 0 },
	{ "duration", OPT_DURATION, "SECONDS", 0, "Stop observing after SECONDS", 0 },
	{ "interval", OPT_INTERVAL, "SECONDS", 0, "Status line period (default 1)", 0 },
	{ "no-tui", OPT_NO_TUI, NULL, 0,
	  "No full-screen live view: a status line every --interval on stderr (the default "
	  "when stdout is not a terminal)", 0 },
	{ "target-log", OPT_TARGET_LOG, "FILE", 0,
	  "run, live view: write the command's stdout and stderr to FILE (default "
	  "memphase-target.log; its stdin is /dev/null)", 0 },
	{ "grace", OPT_GRACE, "SECONDS", 0,
	  "run: on Ctrl-C/SIGTERM, wait this long for the command to end before SIGKILL (3)", 0 },
	{ "ringbuf-kib", OPT_RINGBUF, "KIB", 0, "Event ring buffer size (default 1024)", 0 },
	{ "bpf-stats", OPT_BPF_STATS, NULL, 0,
	  "Print memphase's own BPF run time per program and event at exit", 0 },
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

/*
 * argp follows getopt's "unrecognized option" with a "Try `memphase --help'" line: keep
 * errors to one line by dropping that hint from the error stream.
 */
static ssize_t err_write(void *cookie, const char *buf, size_t len)
{
	static bool at_line_start = true, dropping;
	size_t i;

	for (i = 0; i < len; i++) {
		if (at_line_start)
			dropping = len - i >= 4 && !strncmp(buf + i, "Try ", 4);
		if (!dropping)
			fputc(buf[i], stderr);
		at_line_start = buf[i] == '\n';
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

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char err[256];
	__u64 v;

	switch (key) {
	case ARGP_KEY_INIT:
		state->err_stream = err_stream();
		break;
	case 'p':
		if (env.mode != MODE_ATTACH)
			argp_failure(state, 2, 0, "-p/--pid belongs to 'memphase attach'");
		if (parse_pid(arg, &env.pid))
			argp_failure(state, 2, 0, "invalid pid '%s'", arg);
		break;
	case OPT_JSON:
		env.json_path = arg;
		break;
	case OPT_PHASE:
		if (env.nspecs == ENV_MAX_SPECS)
			argp_failure(state, 2, 0, "too many --phase options (max %d)", ENV_MAX_SPECS);
		if (phasespec__parse(arg, &env.specs[env.nspecs], err, sizeof(err)))
			argp_failure(state, 2, 0, "%s", err);
		env.nspecs++;
		break;
	case OPT_NO_PRESET:
		env.no_preset = true;
		break;
	case OPT_DURATION:
		if (util__parse_seconds(arg, &env.duration) || env.duration <= 0)
			argp_failure(state, 2, 0, "invalid --duration '%s'", arg);
		break;
	case OPT_INTERVAL:
		if (util__parse_seconds(arg, &env.interval) || env.interval < 0.05)
			argp_failure(state, 2, 0, "invalid --interval '%s' (at least 0.05 s)", arg);
		break;
	case OPT_GRACE:
		if (util__parse_seconds(arg, &env.grace))
			argp_failure(state, 2, 0, "invalid --grace '%s'", arg);
		break;
	case OPT_RINGBUF:
		if (util__parse_size(arg, &v) || v < 16 || v > 1024 * 1024 || (v & (v - 1)))
			argp_failure(state, 2, 0,
				     "invalid --ringbuf-kib '%s' (a power of 2, 16..1048576)", arg);
		env.ringbuf_kib = v;
		break;
	case OPT_FOLDED:
		env.folded_path = arg;
		break;
	case OPT_PERF_DATA:
		env.perf_path = arg;
		break;
	case OPT_SVG:
		env.svg_path = arg;
		break;
	case OPT_STACKS:
		if (!strcmp(arg, "dwarf"))
			env.stack_mode = MP_STACKS_DWARF;
		else if (!strcmp(arg, "fp"))
			env.stack_mode = MP_STACKS_FP;
		else if (!strcmp(arg, "none"))
			env.stack_mode = MP_STACKS_NONE;
		else
			argp_failure(state, 2, 0, "invalid --stacks '%s' (dwarf, fp or none)", arg);
		break;
	case OPT_SAMPLE_BYTES:
		if (util__parse_size(arg, &v) || v < 4096)
			argp_failure(state, 2, 0, "invalid --sample-bytes '%s' (at least 4K)", arg);
		env.sample_bytes = v;
		break;
	case OPT_MAX_SAMPLES:
		if (util__parse_size(arg, &v))
			argp_failure(state, 2, 0, "invalid --max-samples '%s'", arg);
		env.max_samples = v;
		break;
	case OPT_MAX_RSS:
		if (util__parse_size(arg, &v) || !v)
			argp_failure(state, 2, 0, "invalid --max-rss '%s' (e.g. 8G)", arg);
		env.max_rss = v;
		break;
	case OPT_MIN_AVAILABLE:
		if (util__parse_size(arg, &v) || !v)
			argp_failure(state, 2, 0, "invalid --min-available '%s' (e.g. 2G)", arg);
		env.min_available = v;
		break;
	case OPT_OOM_WARN:
		if (util__parse_seconds(arg, &env.oom_warn))
			argp_failure(state, 2, 0, "invalid --oom-warn '%s'", arg);
		break;
	case OPT_NO_MAPPINGS:
		env.no_mappings = true;
		break;
	case OPT_NO_TUI:
		env.no_tui = true;
		break;
	case OPT_TARGET_LOG:
		env.target_log = arg;
		break;
	case OPT_BPF_STATS:
		env.bpf_stats = true;
		break;
	case 'v':
		env.verbose++;
		break;
	case ARGP_KEY_ARG:
		if (env.mode != MODE_RUN)
			argp_failure(state, 2, 0, "unexpected argument '%s'", arg);
		/* the command and its arguments: stop parsing here */
		env.argv = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (!env.stack_mode && (env.folded_path || env.perf_path || env.svg_path))
			argp_failure(state, 2, 0, "--folded, --perf-data and --svg need stacks "
				     "(drop --stacks=none)");
		if (env.mode == MODE_RUN && !env.argv)
			argp_failure(state, 2, 0, "no command given (memphase run -- COMMAND ...)");
		if (env.mode == MODE_ATTACH && !env.pid)
			argp_failure(state, 2, 0, "attach needs -p PID");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void print_top_help(void)
{
	const char *v = strchr(usage_doc, '\v');

	printf("%.*s\n", (int)(v - usage_doc), usage_doc);
	printf("'memphase run --help' and 'memphase attach --help' list the options.\n\n%s\n",
	       v + 1);
}

int env__parse(int argc, char **argv)
{
	/* bad usage exits 2, like our own errors (argp's default is EX_USAGE, 64) */
	argp_err_exit_status = 2;
	static const struct argp argp = { options, parse_arg, NULL, usage_doc, NULL, NULL, NULL };
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd || !strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "-?")) {
		print_top_help();
		return cmd ? 1 : -EINVAL;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("%s\n", argp_program_version);
		return 1;
	}
	if (!strcmp(cmd, "run"))
		env.mode = MODE_RUN;
	else if (!strcmp(cmd, "attach"))
		env.mode = MODE_ATTACH;
	else {
		fprintf(stderr, "memphase: unknown command '%s' (try 'memphase --help')\n", cmd);
		return -EINVAL;
	}
	/* argv[1] plays the program name for argp: make its messages say "memphase" */
	argv[1] = (char *)"memphase";
	if (argp_parse(&argp, argc - 1, argv + 1, ARGP_IN_ORDER, NULL, NULL))
		return -EINVAL;
	return 0;
}
