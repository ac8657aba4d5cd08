// SPDX-License-Identifier: GPL-2.0
/* The command line's help: what each subcommand takes, its usage and examples (env_int.h). */
#include <stdio.h>
#include <string.h>
#include "collect/target.h"
#include "env_int.h"
#include "report/metrics.h"
#include "report/outputs.h"

const char env_help__usage_doc[] =
"Where does host RAM go during LLM inference? memphase counts RSS growth per\n"
"memory class (anon, file, shmem, swap), per inference phase (load, context,\n"
"prompt, generate, state, teardown), per mapping and per code path, from kernel\n"
"tracepoints and uprobes on libllama.\n"
"\n"
"  memphase run [OPTIONS] -- COMMAND [ARGS...]\n"
"  memphase attach -p PID [OPTIONS]\n"
"  memphase record -o FILE [OPTIONS] -- COMMAND [ARGS...]\n"
"  memphase report FILE [--json F] [--folded F] [--svg F] [--perf-data F]\n"
"      [--trace F] [--from T] [--to T] [--phase NAME]\n"
"  memphase watch --comm NAME | --exe PATH | --cgroup PATH | -p PID...\n"
"      [--out-dir DIR] [--json] [--svg] [...] [--record] [OPTIONS]\n"
"\v"
"EXAMPLES:\n"
"  sudo memphase run -- ./llama-cli -m model.gguf -c 32768 -p 'hello'\n"
"  sudo memphase run --json run.json --svg run.svg -- ./llama-server -m m.gguf\n"
"  sudo memphase attach -p $(pidof llama-server) --duration 60\n"
"  sudo memphase run --max-rss 48G -- ./llama-cli -m model.gguf -c 102400\n"
"  sudo memphase run --phase warm=myapp:warm_up --phase eval=libfoo.so:run \\\n"
"      -- ./myapp\n"
"  sudo memphase run --preset none --phase step=libtrainer.so:train_step \\\n"
"      -- ./train\n"
"  memphase run --list-presets\n"
"  sudo memphase record -o run.mprec -- ./llama-server -m m.gguf\n"
"  memphase report run.mprec --html run.html --from 60 --to 120\n"
"  sudo memphase watch --comm llama-server --out-dir /var/lib/memphase \\\n"
"      --json --html\n"
"\n"
"The command runs as the invoking user (SUDO_UID/SUDO_GID under sudo), never\n"
"as root. On a terminal a live view shows memory moving ('q' detaches). When\n"
"the command ends (OOM kill included), on Ctrl-C or SIGTERM, memphase prints a\n"
"summary and writes every requested file.";

static const char *const cmd_names[] = { "run", "attach", "record", "report", "watch" };
/* each subcommand's --help begins with its own usage */
static const char *const cmd_usage[] = {
	"memphase run [OPTIONS] -- COMMAND [ARGS...]\n"
	"Runs COMMAND, as you, observed from its first instruction; the summary and the files "
	"when it ends.",
	"memphase attach -p PID [OPTIONS]\n"
	"Observes a running process you could ptrace yourself, from now on, until it exits, "
	"Ctrl-C or --duration.",
	"memphase record -o FILE [OPTIONS] -- COMMAND [ARGS...]\n"
	"As run, keeping what the collector read in FILE, for 'memphase report'.",
	"memphase report FILE [OPTIONS]\n"
	"Writes from a recording what the live run could: the summary and any output.",
	"memphase watch --comm NAME | --exe PATH | --cgroup PATH | -p PID... [OPTIONS]\n"
	"Observes every matching process, running now or started later: one set of files each "
	"in --out-dir.",
};

static const struct option_cmds {
	int key;
	unsigned int cmds;
} option_cmds[] = {
	{ 'p', CMD_ATTACH | CMD_WATCH },
	{ OPT_COMM, CMD_WATCH }, { OPT_EXE, CMD_WATCH }, { OPT_CGROUP, CMD_WATCH },
	{ OPT_OUT_DIR, CMD_WATCH }, { OPT_MAX_PROCS, CMD_WATCH },
	/* from watch to its attach children */
	{ OPT_WATCHED, CMD_ATTACH }, { OPT_WATCHED_EXEC, CMD_ATTACH },
	{ OPT_METRICS_FD, CMD_ATTACH },
	{ OPT_PHASE, CMD_ALL },			/* report --phase NAME: only that phase */
	{ OPT_INTERVAL, CMD_RUN | CMD_ATTACH | CMD_RECORD },	/* watch has no status line */
	{ OPT_NO_TUI, CMD_RUN | CMD_ATTACH | CMD_RECORD },
	{ OPT_TARGET_LOG, CMD_RUN | CMD_RECORD }, { OPT_USER, CMD_RUN | CMD_RECORD },
	{ OPT_ALLOW_ROOT, CMD_RUN | CMD_RECORD },
	{ 'o', CMD_RECORD },
	{ OPT_FROM, CMD_REPORT }, { OPT_TO, CMD_REPORT },
	{ 'v', CMD_ALL }, { OPT_HIST, CMD_ALL },
	/* every other option of the table above: the observing subcommands'; formats: all */
};

unsigned int env_help__cmds_of(int key)
{
	size_t i;

	for (i = 0; i < sizeof(option_cmds) / sizeof(option_cmds[0]); i++)
		if (option_cmds[i].key == key)
			return option_cmds[i].cmds;
	return CMD_OBSERVE;
}

void env_help__check(struct argp_state *state, const struct argp_option *options,
		     unsigned int cmd, int key)
{
	const struct argp_option *o;
	unsigned int cmds = env_help__cmds_of(key), i, n = 0, left;
	char msg[256], name[40] = "";
	int len;

	if (cmds & cmd)
		return;
	for (o = options; o->name || o->key; o++) {
		if (o->key != key || !o->name)
			continue;
		if (key < 128)
			snprintf(name, sizeof(name), "-%c/--%s", key, o->name);
		else
			snprintf(name, sizeof(name), "--%s", o->name);
	}
	len = snprintf(msg, sizeof(msg), "%s belongs to", name);
	left = __builtin_popcount(cmds);
	for (i = 0; i < 5; i++) {
		if (!(cmds & (1U << i)))
			continue;
		n++;
		len += snprintf(msg + len, sizeof(msg) - len, "%s'memphase %s'",
				n == 1 ? " " : n == left ? " and " : ", ", cmd_names[i]);
	}
	argp_failure(state, TARGET_EXIT_FAILED, 0, "%s", msg);
}

/*
 * watch: an output option or --record given a FILE. They take none there (argp would only
 * say "doesn't allow an argument"): say why. Before "--", --NAME=FILE only (a FILE after a
 * space is an argument, which watch refuses).
 */
bool env_help__watch_file_given(int argc, char **argv)
{
	unsigned int i;
	size_t n;
	int a;

	for (a = 2; a < argc && strcmp(argv[a], "--"); a++) {
		const char *eq = strchr(argv[a], '=');

		if (strncmp(argv[a], "--", 2) || !eq)
			continue;
		n = eq - argv[a] - 2;
		for (i = 0; i <= outputs__nformats(); i++) {
			const char *fmt = i < outputs__nformats() ? output_formats[i]->name : "record";

			if (i < outputs__nformats() && output_formats[i] == &metrics_textfile_format)
				continue;
			if (strlen(fmt) == n && !strncmp(argv[a] + 2, fmt, n)) {
				fprintf(stderr, "memphase: --%s takes no FILE in watch mode: one file "
					"per process goes to --out-dir\n", fmt);
				return true;
			}
		}
	}
	return false;
}

/*
 * A subcommand's --help text: its usage, then (after argp's \v, below the options) the
 * examples of env_help__usage_doc that use it (an example's continuation lines begin with 6 spaces)
 * and the closing paragraph.
 */
void env_help__doc(char *doc, size_t len, unsigned int cmd, const char *name)
{
	const char *p = strchr(env_help__usage_doc, '\v') + 1, *end, *tail = strstr(p, "\n\n");
	char want[32];
	size_t n;
	bool mine = false;

	snprintf(want, sizeof(want), "memphase %s ", name);
	n = snprintf(doc, len, "%s\vEXAMPLES:\n", cmd_usage[__builtin_ctz(cmd)]);
	for (p = strchr(p, '\n') + 1; p < tail && n < len; p = end + 1) {
		end = strchr(p, '\n');
		if (strncmp(p, "      ", 6))
			mine = memmem(p, end - p, want, strlen(want)) != NULL;
		if (mine)
			n += snprintf(doc + n, len - n, "%.*s\n", (int)(end - p + 0), p);
	}
	if (n < len)
		snprintf(doc + n, len - n, "%s", tail + 1);
}

void env_help__top(void)
{
	const char *v = strchr(env_help__usage_doc, '\v');

	printf("%.*s\n", (int)(v - env_help__usage_doc), env_help__usage_doc);
	printf("'memphase COMMAND --help' lists the options of COMMAND (run, attach, record, "
	       "report, watch).\n\n%s\n",
	       v + 1);
}
