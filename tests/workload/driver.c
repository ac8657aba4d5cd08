// SPDX-License-Identifier: GPL-2.0
/*
 * llama-driver: drives the fake libllama.so through the phases of an inference run (load,
 * context, prompt batches, generated tokens, state save, optional fork, teardown) with known
 * memory amounts, and reports /proc/self/status after each phase so tests can compare.
 *
 * Deterministic; prints nothing on stdout without --verbose. The report is rewritten (write to
 * FILE.tmp, rename) at start, after every phase and at exit, so a run killed midway (OOM,
 * --die-in-generate) still leaves what was known. No stdio or malloc after the start snapshot,
 * so the driver's own bookkeeping adds no RSS to the phases.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "llama.h"

/* A real frame with its own name (no inlining, no .constprop clones). */
#ifdef __clang__
#define WORKER __attribute__((noinline))
#else
#define WORKER __attribute__((noinline, noclone))
#endif

#define MIB (1ULL << 20)
#define KIB (1ULL << 10)
#define GROW_STEP_BYTES MIB
#define REPORT_MAX 8192

enum {
	OPT_MODEL = 1000,
	OPT_CTX_MIB,
	OPT_PROMPT_BATCHES,
	OPT_BATCH_TOKENS,
	OPT_BATCH_MIB,
	OPT_TOKENS,
	OPT_TOKEN_KIB,
	OPT_STATE_MIB,
	OPT_FORK_MIB,
	OPT_CHECKPOINTS,
	OPT_CHECKPOINT_MIB,
	OPT_SLEEP_MS,
	OPT_START_DELAY_MS,
	OPT_DIE_IN_GENERATE,
	OPT_GROW_MIB_PER_S,
	OPT_GROW_LIMIT_MIB,
	OPT_REPORT,
	OPT_VERBOSE,
	OPT_CUDART,
	OPT_PIN_MIB,
	OPT_VRAM_MIB,
	OPT_GPU_HOLD_MS,
	OPT_HELP,
};

static const struct option long_opts[] = {
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "ctx-mib", required_argument, NULL, OPT_CTX_MIB },
	{ "prompt-batches", required_argument, NULL, OPT_PROMPT_BATCHES },
	{ "batch-tokens", required_argument, NULL, OPT_BATCH_TOKENS },
	{ "batch-mib", required_argument, NULL, OPT_BATCH_MIB },
	{ "tokens", required_argument, NULL, OPT_TOKENS },
	{ "token-kib", required_argument, NULL, OPT_TOKEN_KIB },
	{ "state-mib", required_argument, NULL, OPT_STATE_MIB },
	{ "fork-mib", required_argument, NULL, OPT_FORK_MIB },
	{ "checkpoints", required_argument, NULL, OPT_CHECKPOINTS },
	{ "checkpoint-mib", required_argument, NULL, OPT_CHECKPOINT_MIB },
	{ "sleep-ms", required_argument, NULL, OPT_SLEEP_MS },
	{ "start-delay-ms", required_argument, NULL, OPT_START_DELAY_MS },
	{ "die-in-generate", required_argument, NULL, OPT_DIE_IN_GENERATE },
	{ "grow-mib-per-s", required_argument, NULL, OPT_GROW_MIB_PER_S },
	{ "grow-limit-mib", required_argument, NULL, OPT_GROW_LIMIT_MIB },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "cudart", required_argument, NULL, OPT_CUDART },
	{ "pin-mib", required_argument, NULL, OPT_PIN_MIB },
	{ "vram-mib", required_argument, NULL, OPT_VRAM_MIB },
	{ "gpu-hold-ms", required_argument, NULL, OPT_GPU_HOLD_MS },
	{ "help", no_argument, NULL, OPT_HELP },
	{},
};

static const char usage[] =
	"Usage: llama-driver [OPTIONS]\n"
	"Drive the fake libllama.so through load, context, prompt, generate, state, (fork),\n"
	"teardown, touching known amounts of memory in each phase.\n"
	"\n"
	"  --model FILE           model file to mmap and read in llama_model_load_from_file\n"
	"                         (not created here; without it the load maps nothing)\n"
	"  --ctx-mib N            anon MiB touched in llama_init_from_model (0)\n"
	"  --prompt-batches N     llama_decode calls with --batch-tokens tokens (0)\n"
	"  --batch-tokens N       tokens per prompt batch, >= 2 (512)\n"
	"  --batch-mib N          anon MiB touched per prompt batch (0)\n"
	"  --tokens N             llama_decode calls with 1 token (0)\n"
	"  --token-kib N          anon KiB touched per generated token, page multiple (0)\n"
	"  --state-mib N          state size; the driver maps and zero-fills the buffer between\n"
	"                         llama_state_seq_get_size_ext and _get_data_ext (0)\n"
	"  --fork-mib N           after the state save, fork a child touching N MiB anon (off)\n"
	"  --checkpoints N        before the last prompt batch, N context checkpoints\n"
	"                         (PARTIAL_ONLY), as llama-server makes them (0)\n"
	"  --checkpoint-mib N     size of each checkpoint buffer in MiB (0)\n"
	"  --sleep-ms N           sleep after every step, tokens included (0)\n"
	"  --start-delay-ms N     sleep before anything else (0)\n"
	"  --die-in-generate K    SIGKILL itself after K generated tokens (off)\n"
	"  --grow-mib-per-s R     after the tokens, keep generating 1 MiB tokens at R MiB/s (off)\n"
	"  --grow-limit-mib L     stop growing after L MiB; 0 = never stop (0)\n"
	"  --report FILE          write key=value lines (pid, RSS per phase, expected bytes)\n"
	"  --verbose              print progress on stdout\n"
	"  --cudart LIB           dlopen LIB (a CUDA runtime) and use GPU memory per phase:\n"
	"                         load: cudaMallocHost(P) + cudaMalloc(V); context:\n"
	"                         cudaHostAlloc(2P) + cudaMalloc(V); first prompt batch:\n"
	"                         cudaHostRegister(P), then again (fails: already\n"
	"                         registered); first token: cudaMallocManaged(P);\n"
	"                         teardown frees all of it (P = --pin-mib, V = --vram-mib)\n"
	"  --pin-mib P            MiB of pinned host memory per step above (8)\n"
	"  --vram-mib V           MiB of device memory per step above (64)\n"
	"  --gpu-hold-ms N        sleep after each GPU step, so 100 ms samplers see it (500)\n"
	"\n"
	"Example: llama-driver --model m.bin --ctx-mib 32 --prompt-batches 3 --batch-mib 8 \\\n"
	"           --tokens 20 --token-kib 256 --state-mib 16 --report r.txt\n";

struct opts {
	const char *model;
	uint64_t ctx_mib;
	uint64_t prompt_batches;
	uint64_t batch_tokens;
	uint64_t batch_mib;
	uint64_t tokens;
	uint64_t token_kib;
	uint64_t state_mib;
	uint64_t fork_mib;
	uint64_t checkpoints;		/* context checkpoints before the last prompt batch */
	uint64_t checkpoint_mib;
	uint64_t sleep_ms;
	uint64_t start_delay_ms;
	bool die_in_generate;
	uint64_t die_after_tokens;
	uint64_t grow_mib_per_s;
	uint64_t grow_limit_mib;
	const char *report;
	bool verbose;
	const char *cudart;
	uint64_t pin_mib;
	uint64_t vram_mib;
	uint64_t gpu_hold_ms;
};

enum snap_point {
	SNAP_START,
	SNAP_LOAD,
	SNAP_CONTEXT,
	SNAP_PROMPT,
	SNAP_GENERATE,
	SNAP_STATE,
	SNAP_FORK,
	SNAP_TEARDOWN,
	SNAP_DEATH,
	NR_SNAPS,
};

static const char *const snap_names[NR_SNAPS] = {
	[SNAP_START] = "start",
	[SNAP_LOAD] = "after_load",
	[SNAP_CONTEXT] = "after_context",
	[SNAP_PROMPT] = "after_prompt",
	[SNAP_GENERATE] = "after_generate",
	[SNAP_STATE] = "after_state",
	[SNAP_FORK] = "after_fork",
	[SNAP_TEARDOWN] = "after_teardown",
	[SNAP_DEATH] = "at_death",
};

/* kB values from /proc/self/status; -1 when missing. */
struct mem_snap {
	bool valid;
	long long rss_anon;
	long long rss_file;
	long long rss_shmem;
	long long vm_swap;
	long long vm_hwm;
};

struct run {
	const char *status;
	enum snap_point last;
	struct mem_snap snaps[NR_SNAPS];
	uint64_t load_file_bytes;
	uint64_t context_bytes;
	uint64_t prompt_bytes;
	uint64_t token_bytes;
	uint64_t tokens_generated;
	/* Touched so far by generated tokens, growth included. */
	uint64_t generate_bytes;
	uint64_t grow_bytes;
	uint64_t state_bytes;
	uint64_t fork_bytes;
	pid_t fork_pid;
	int fork_status;
	long long hwm_before_teardown;
	long long hwm_at_exit;
};

static struct opts opts = {
	.batch_tokens = 512,
};
static struct run run = {
	.status = "running",
	.fork_pid = -1,
	.fork_status = -1,
	.hwm_before_teardown = -1,
	.hwm_at_exit = -1,
};

static void verbose(const char *fmt, ...)
{
	va_list ap;

	if (!opts.verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void step_sleep(void)
{
	if (opts.sleep_ms)
		sleep_ns(opts.sleep_ms * 1000000ULL);
}

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Parse "Key:   123 kB" from a /proc status buffer. */
static long long status_field(const char *buf, const char *key)
{
	size_t klen = strlen(key);
	const char *line = buf;

	while (line && *line) {
		if (!strncmp(line, key, klen) && line[klen] == ':')
			return strtoll(line + klen + 1, NULL, 10);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -1;
}

static int read_status(struct mem_snap *s)
{
	char buf[4096];
	ssize_t n;
	size_t len = 0;
	int fd;

	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	s->rss_anon = status_field(buf, "RssAnon");
	s->rss_file = status_field(buf, "RssFile");
	s->rss_shmem = status_field(buf, "RssShmem");
	s->vm_swap = status_field(buf, "VmSwap");
	s->vm_hwm = status_field(buf, "VmHWM");
	s->valid = true;
	return 0;
}

struct outbuf {
	char buf[REPORT_MAX];
	size_t len;
};

static void out_add(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len >= sizeof(o->buf))
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, sizeof(o->buf) - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Rewrite the whole report atomically with what is known so far. */
static int report_write(void)
{
	struct outbuf o;
	char tmp[PATH_MAX];
	int i, fd, err;

	if (!opts.report)
		return 0;
	o.len = 0;
	out_add(&o, "pid=%d\n", (int)getpid());
	out_add(&o, "status=%s\n", run.status);
	out_add(&o, "last_point=%s\n", snap_names[run.last]);
	out_add(&o, "page_size=%zu\n", page_size());
	out_add(&o, "prompt_batches=%" PRIu64 "\n", opts.prompt_batches);
	out_add(&o, "batch_tokens=%" PRIu64 "\n", opts.batch_tokens);
	out_add(&o, "tokens=%" PRIu64 "\n", opts.tokens);
	out_add(&o, "tokens_generated=%" PRIu64 "\n", run.tokens_generated);
	out_add(&o, "token_bytes=%" PRIu64 "\n", run.token_bytes);
	out_add(&o, "grow_anon_bytes=%" PRIu64 "\n", run.grow_bytes);
	out_add(&o, "expected_load_file_bytes=%" PRIu64 "\n", run.load_file_bytes);
	out_add(&o, "expected_context_anon_bytes=%" PRIu64 "\n", run.context_bytes);
	out_add(&o, "expected_prompt_anon_bytes=%" PRIu64 "\n", run.prompt_bytes);
	out_add(&o, "expected_generate_anon_bytes=%" PRIu64 "\n", run.generate_bytes);
	out_add(&o, "expected_state_anon_bytes=%" PRIu64 "\n", run.state_bytes);
	out_add(&o, "expected_fork_child_anon_bytes=%" PRIu64 "\n", run.fork_bytes);
	out_add(&o, "expected_checkpoint_anon_bytes=%" PRIu64 "\n",
		opts.checkpoints * opts.checkpoint_mib * MIB);
	if (run.fork_pid > 0) {
		out_add(&o, "fork_child_pid=%d\n", (int)run.fork_pid);
		out_add(&o, "fork_child_exit_status=%d\n", run.fork_status);
	}
	for (i = 0; i < NR_SNAPS; i++) {
		const struct mem_snap *s = &run.snaps[i];

		if (!s->valid)
			continue;
		out_add(&o, "%s_rss_anon_kb=%lld\n", snap_names[i], s->rss_anon);
		out_add(&o, "%s_rss_file_kb=%lld\n", snap_names[i], s->rss_file);
		out_add(&o, "%s_rss_shmem_kb=%lld\n", snap_names[i], s->rss_shmem);
		out_add(&o, "%s_vm_swap_kb=%lld\n", snap_names[i], s->vm_swap);
		out_add(&o, "%s_vm_hwm_kb=%lld\n", snap_names[i], s->vm_hwm);
	}
	if (run.hwm_before_teardown >= 0)
		out_add(&o, "vm_hwm_before_teardown_kb=%lld\n", run.hwm_before_teardown);
	if (run.hwm_at_exit >= 0)
		out_add(&o, "vm_hwm_at_exit_kb=%lld\n", run.hwm_at_exit);

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", opts.report) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "failed to create report %s: %s\n", tmp, strerror(-err));
		return err;
	}
	err = write_all(fd, o.buf, o.len);
	close(fd);
	if (!err && rename(tmp, opts.report))
		err = -errno;
	if (err)
		fprintf(stderr, "failed to write report %s: %s\n", opts.report, strerror(-err));
	return err;
}

/* Record /proc/self/status at the end of a phase and flush the report. */
static void phase_done(enum snap_point p)
{
	read_status(&run.snaps[p]);
	run.last = p;
	report_write();
}

static void die_now(void)
{
	struct mem_snap *s = &run.snaps[SNAP_DEATH];

	verbose("dying after %" PRIu64 " generated tokens\n", run.tokens_generated);
	run.status = "killed_in_generate";
	if (!read_status(s))
		run.hwm_at_exit = s->vm_hwm;
	run.last = SNAP_DEATH;
	report_write();
	kill(getpid(), SIGKILL);
	_exit(137);
}

static void maybe_die(void)
{
	if (opts.die_in_generate && run.tokens_generated == opts.die_after_tokens)
		die_now();
}

/* Child side of --fork-mib: its own anon memory, one byte per page. */
WORKER static void driver_touch_pages(void *addr, size_t len)
{
	volatile char *p = addr;
	size_t ps = page_size();
	size_t off;

	for (off = 0; off < len; off += ps)
		p[off] = 1;
}

static int fork_child(void)
{
	size_t len = (size_t)run.fork_bytes;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);

		if (p == MAP_FAILED)
			_exit(1);
		madvise(p, len, MADV_NOHUGEPAGE);
		driver_touch_pages(p, len);
		_exit(0);
	}
	run.fork_pid = pid;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	run.fork_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

static int decode_one(struct llama_context *ctx, llama_token *tok, uint64_t bytes)
{
	int32_t ret;

	maybe_die();
	ret = llama_decode(ctx, llama_batch_get_one(tok, 1));
	if (ret) {
		fprintf(stderr, "failed to decode token %" PRIu64 ": llama_decode returned %d\n",
			run.tokens_generated, ret);
		return -ENOMEM;
	}
	run.tokens_generated++;
	run.generate_bytes += bytes;
	return 0;
}

/* --grow-mib-per-s: 1 MiB tokens paced to R MiB/s, until L MiB or forever. */
static int grow(struct llama_context *ctx, const struct fakellama_work *base)
{
	uint64_t limit = opts.grow_limit_mib * MIB, ns;
	struct fakellama_work w = *base;
	struct timespec t0, t;
	llama_token tok = 1;
	int err;

	w.token_bytes = GROW_STEP_BYTES;
	fakellama_configure(&w);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!limit || run.grow_bytes < limit) {
		err = decode_one(ctx, &tok, GROW_STEP_BYTES);
		if (err)
			return err;
		run.grow_bytes += GROW_STEP_BYTES;
		/* Growth may end in an OOM kill: keep the report current. */
		report_write();
		ns = run.grow_bytes / MIB * 1000000000ULL / opts.grow_mib_per_s;
		t.tv_sec = t0.tv_sec + (time_t)(ns / 1000000000ULL);
		t.tv_nsec = t0.tv_nsec + (long)(ns % 1000000000ULL);
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
	}
	fakellama_configure(base);
	return 0;
}

static int parse_u64(const char *name, const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	while (*s == ' ')
		s++;
	if (*s == '-' || *s == '+')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "invalid --%s: '%s'\n", name, s);
	return -EINVAL;
}

static int parse_args(int argc, char **argv)
{
	/* Byte amounts stay far below 2^63 even when multiplied by counts. */
	const uint64_t max_mib = 1ULL << 24, max_count = 1ULL << 32;
	int c, idx;

	while ((c = getopt_long(argc, argv, "", long_opts, &idx)) != -1) {
		const char *name = c >= OPT_MODEL && c < OPT_HELP ? long_opts[c - OPT_MODEL].name
								   : "";
		int err = 0;

		switch (c) {
		case OPT_MODEL:
			opts.model = optarg;
			break;
		case OPT_CTX_MIB:
			err = parse_u64(name, optarg, max_mib, &opts.ctx_mib);
			break;
		case OPT_PROMPT_BATCHES:
			err = parse_u64(name, optarg, max_count, &opts.prompt_batches);
			break;
		case OPT_BATCH_TOKENS:
			err = parse_u64(name, optarg, INT32_MAX, &opts.batch_tokens);
			break;
		case OPT_BATCH_MIB:
			err = parse_u64(name, optarg, max_mib, &opts.batch_mib);
			break;
		case OPT_TOKENS:
			err = parse_u64(name, optarg, max_count, &opts.tokens);
			break;
		case OPT_TOKEN_KIB:
			err = parse_u64(name, optarg, max_mib * 1024, &opts.token_kib);
			break;
		case OPT_STATE_MIB:
			err = parse_u64(name, optarg, max_mib, &opts.state_mib);
			break;
		case OPT_FORK_MIB:
			err = parse_u64(name, optarg, max_mib, &opts.fork_mib);
			break;
		case OPT_CHECKPOINTS:
			err = parse_u64(name, optarg, 64, &opts.checkpoints);
			break;
		case OPT_CHECKPOINT_MIB:
			err = parse_u64(name, optarg, max_mib, &opts.checkpoint_mib);
			break;
		case OPT_SLEEP_MS:
			err = parse_u64(name, optarg, max_count, &opts.sleep_ms);
			break;
		case OPT_START_DELAY_MS:
			err = parse_u64(name, optarg, max_count, &opts.start_delay_ms);
			break;
		case OPT_DIE_IN_GENERATE:
			err = parse_u64(name, optarg, max_count, &opts.die_after_tokens);
			opts.die_in_generate = true;
			break;
		case OPT_GROW_MIB_PER_S:
			err = parse_u64(name, optarg, max_mib, &opts.grow_mib_per_s);
			break;
		case OPT_GROW_LIMIT_MIB:
			err = parse_u64(name, optarg, max_mib, &opts.grow_limit_mib);
			break;
		case OPT_REPORT:
			opts.report = optarg;
			break;
		case OPT_VERBOSE:
			opts.verbose = true;
			break;
		case OPT_CUDART:
			opts.cudart = optarg;
			break;
		case OPT_PIN_MIB:
			err = parse_u64(name, optarg, max_mib, &opts.pin_mib);
			break;
		case OPT_VRAM_MIB:
			err = parse_u64(name, optarg, max_mib, &opts.vram_mib);
			break;
		case OPT_GPU_HOLD_MS:
			err = parse_u64(name, optarg, max_count, &opts.gpu_hold_ms);
			break;
		case OPT_HELP:
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
		if (err)
			return err;
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (opts.batch_tokens < 2) {
		fprintf(stderr, "invalid --batch-tokens: a prompt batch needs at least 2 tokens\n");
		return -EINVAL;
	}
	if (opts.token_kib * KIB % page_size()) {
		fprintf(stderr, "invalid --token-kib: %" PRIu64 " is not a multiple of %zu KiB\n",
			opts.token_kib, page_size() / (size_t)KIB);
		return -EINVAL;
	}
	return 0;
}

#define MAX_CHECKPOINTS	64

/* opts.checkpoints context checkpoints into ckpt[] (see the prompt loop). 0 or -errno. */
static int checkpoints(struct llama_context *ctx, uint8_t **ckpt, size_t *ckpt_len)
{
	uint64_t i;

	for (i = 0; i < opts.checkpoints && i < MAX_CHECKPOINTS; i++) {
		size_t len = llama_state_seq_get_size_ext(ctx, 0,
							  LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);

		ckpt[i] = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ckpt[i] == MAP_FAILED) {
			ckpt[i] = NULL;
			return -ENOMEM;
		}
		ckpt_len[i] = len ? len : 1;
		madvise(ckpt[i], ckpt_len[i], MADV_NOHUGEPAGE);
		memset(ckpt[i], 0, len);
		if (llama_state_seq_get_data_ext(ctx, ckpt[i], len, 0,
						 LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY) != len) {
			fprintf(stderr, "failed to copy checkpoint: short copy\n");
			return -EIO;
		}
		step_sleep();
	}
	return 0;
}

/* ---- GPU mode (--cudart): the CUDA runtime's memory calls, per phase ---- */

typedef int (*cuda_pp_fn)(void **, size_t);
typedef int (*cuda_ppf_fn)(void **, size_t, unsigned int);
typedef int (*cuda_p_fn)(void *);

static struct {
	void *lib;
	cuda_pp_fn malloc_host, malloc_dev;
	cuda_ppf_fn host_alloc, malloc_managed;
	int (*host_register)(void *, size_t, unsigned int);
	cuda_p_fn free_host, host_unregister, free_dev;
	void *pinned[2], *registered, *managed, *dev[2];
	size_t registered_len;
} gpu;

static int gpu_open(void)
{
	gpu.lib = dlopen(opts.cudart, RTLD_NOW | RTLD_LOCAL);
	if (!gpu.lib) {
		fprintf(stderr, "failed to load %s: %s\n", opts.cudart, dlerror());
		return -ENOENT;
	}
	gpu.malloc_host = (cuda_pp_fn)dlsym(gpu.lib, "cudaMallocHost");
	gpu.malloc_dev = (cuda_pp_fn)dlsym(gpu.lib, "cudaMalloc");
	gpu.host_alloc = (cuda_ppf_fn)dlsym(gpu.lib, "cudaHostAlloc");
	gpu.malloc_managed = (cuda_ppf_fn)dlsym(gpu.lib, "cudaMallocManaged");
	gpu.host_register = (int (*)(void *, size_t, unsigned int))dlsym(gpu.lib,
									 "cudaHostRegister");
	gpu.free_host = (cuda_p_fn)dlsym(gpu.lib, "cudaFreeHost");
	gpu.host_unregister = (cuda_p_fn)dlsym(gpu.lib, "cudaHostUnregister");
	gpu.free_dev = (cuda_p_fn)dlsym(gpu.lib, "cudaFree");
	if (!gpu.malloc_host || !gpu.malloc_dev || !gpu.host_alloc || !gpu.malloc_managed ||
	    !gpu.host_register || !gpu.free_host || !gpu.host_unregister || !gpu.free_dev) {
		fprintf(stderr, "%s lacks a CUDA runtime memory function\n", opts.cudart);
		return -ENOENT;
	}
	return 0;
}

static void gpu_hold(void)
{
	sleep_ns(opts.gpu_hold_ms * 1000000ULL);
}

static int gpu_check(int r, const char *what)
{
	if (r)
		fprintf(stderr, "%s failed: cudaError %d\n", what, r);
	return r ? -ENOMEM : 0;
}

/* Named frames: where memphase says the pinned memory came from. */
static WORKER int gpu_pin_weights(void)
{
	if (gpu_check(gpu.malloc_host(&gpu.pinned[0], opts.pin_mib * MIB), "cudaMallocHost") ||
	    gpu_check(gpu.malloc_dev(&gpu.dev[0], opts.vram_mib * MIB), "cudaMalloc"))
		return -ENOMEM;
	gpu_hold();
	return 0;
}

static WORKER int gpu_pin_kv(void)
{
	if (gpu_check(gpu.host_alloc(&gpu.pinned[1], 2 * opts.pin_mib * MIB, 0), "cudaHostAlloc") ||
	    gpu_check(gpu.malloc_dev(&gpu.dev[1], opts.vram_mib * MIB), "cudaMalloc"))
		return -ENOMEM;
	gpu_hold();
	return 0;
}

static WORKER int gpu_register_batch(void)
{
	gpu.registered_len = opts.pin_mib * MIB;
	gpu.registered = mmap(NULL, gpu.registered_len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gpu.registered == MAP_FAILED) {
		gpu.registered = NULL;
		return -ENOMEM;
	}
	if (gpu_check(gpu.host_register(gpu.registered, gpu.registered_len, 0),
		      "cudaHostRegister"))
		return -ENOMEM;
	/* a call that fails (already registered) pins nothing: memphase must not count it */
	if (!gpu.host_register(gpu.registered, gpu.registered_len, 0)) {
		fprintf(stderr, "cudaHostRegister of a registered range succeeded\n");
		return -EINVAL;
	}
	gpu_hold();
	return 0;
}

static WORKER int gpu_managed_token(void)
{
	if (gpu_check(gpu.malloc_managed(&gpu.managed, opts.pin_mib * MIB, 1),
		      "cudaMallocManaged"))
		return -ENOMEM;
	gpu_hold();
	return 0;
}

/*
 * Inside llama_decode (as a GPU backend pins its buffers there): the first prompt batch
 * registers host memory, the first generated token allocates managed memory.
 */
static int gpu_hook_err;

static void gpu_decode_hook(int32_t n_tokens)
{
	static bool prompt_done, token_done;

	if (gpu_hook_err)
		return;
	if (n_tokens > 1 && !prompt_done) {
		prompt_done = true;
		gpu_hook_err = gpu_register_batch();
	} else if (n_tokens == 1 && !token_done) {
		token_done = true;
		gpu_hook_err = gpu_managed_token();
	}
}

static void gpu_free_all(void)
{
	unsigned int i;

	if (!gpu.lib)
		return;
	for (i = 0; i < 2; i++) {
		if (gpu.pinned[i])
			gpu.free_host(gpu.pinned[i]);
		if (gpu.dev[i])
			gpu.free_dev(gpu.dev[i]);
		gpu.pinned[i] = gpu.dev[i] = NULL;
	}
	if (gpu.registered) {
		gpu.host_unregister(gpu.registered);
		munmap(gpu.registered, gpu.registered_len);
		gpu.registered = NULL;
	}
	if (gpu.managed)
		gpu.free_dev(gpu.managed);
	gpu.managed = NULL;
	gpu_hold();
}

int main(int argc, char **argv)
{
	struct llama_model_params mparams = llama_model_default_params();
	struct llama_context_params cparams = llama_context_default_params();
	struct llama_context *ctx = NULL;
	struct llama_model *model = NULL;
	struct fakellama_work work = {};
	llama_token *prompt = NULL;
	size_t ps = page_size();
	uint8_t *state = NULL, *ckpt[MAX_CHECKPOINTS] = {};
	size_t state_len = 0, ckpt_len[MAX_CHECKPOINTS] = {};
	struct mem_snap s;
	llama_token tok;
	struct stat st;
	uint64_t i;
	int err;

	opts.pin_mib = 8;
	opts.vram_mib = 64;
	opts.gpu_hold_ms = 500;
	err = parse_args(argc, argv);
	if (err)
		return 2;
	if (opts.cudart && gpu_open())
		return 1;
	if (gpu.lib)
		fakellama_on_decode(gpu_decode_hook);

	run.context_bytes = opts.ctx_mib * MIB;
	run.prompt_bytes = opts.prompt_batches * opts.batch_mib * MIB;
	run.token_bytes = opts.token_kib * KIB;
	run.state_bytes = opts.state_mib * MIB;
	run.fork_bytes = opts.fork_mib * MIB;
	if (opts.model) {
		if (stat(opts.model, &st)) {
			err = -errno;
			fprintf(stderr, "failed to stat model %s: %s\n", opts.model, strerror(-err));
			return 1;
		}
		run.load_file_bytes = ((uint64_t)st.st_size + ps - 1) / ps * ps;
	}

	prompt = calloc(opts.batch_tokens, sizeof(*prompt));
	if (!prompt) {
		fprintf(stderr, "failed to allocate prompt tokens: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < opts.batch_tokens; i++)
		prompt[i] = (llama_token)(i % 32000);

	work.ctx_bytes = run.context_bytes;
	work.prompt_bytes_per_batch = opts.batch_mib * MIB;
	work.token_bytes = run.token_bytes;
	work.gen_reserve_bytes = opts.tokens * run.token_bytes;
	if (opts.grow_mib_per_s)
		work.gen_reserve_bytes += opts.grow_limit_mib * MIB;
	work.state_bytes = run.state_bytes;
	work.checkpoint_bytes = opts.checkpoint_mib * MIB;
	fakellama_configure(&work);

	/* Also warms the stack and the report path so later snapshots add nothing. */
	phase_done(SNAP_START);
	if (opts.start_delay_ms)
		sleep_ns(opts.start_delay_ms * 1000000ULL);
	phase_done(SNAP_START);

	verbose("load %s\n", opts.model ? opts.model : "(none)");
	model = llama_model_load_from_file(opts.model, mparams);
	if (!model) {
		err = -errno;
		fprintf(stderr, "failed to load model %s: %s\n", opts.model, strerror(-err));
		goto cleanup;
	}
	phase_done(SNAP_LOAD);
	if (gpu.lib && (err = gpu_pin_weights()))
		goto cleanup;
	step_sleep();

	verbose("context %" PRIu64 " MiB\n", opts.ctx_mib);
	ctx = llama_init_from_model(model, cparams);
	if (!ctx) {
		err = -errno;
		fprintf(stderr, "failed to create context: %s\n", strerror(-err));
		goto cleanup;
	}
	phase_done(SNAP_CONTEXT);
	if (gpu.lib && (err = gpu_pin_kv()))
		goto cleanup;
	step_sleep();

	for (i = 0; i < opts.prompt_batches; i++) {
		int32_t ret;

		/*
		 * Context checkpoints, as llama-server makes them: before a prompt's last
		 * batch, PARTIAL_ONLY state, each in a buffer allocated and zeroed between the
		 * size and data calls, kept to the end.
		 */
		if (i + 1 == opts.prompt_batches && (err = checkpoints(ctx, ckpt, ckpt_len)))
			goto cleanup;
		verbose("prompt batch %" PRIu64 "\n", i);
		ret = llama_decode(ctx, llama_batch_get_one(prompt, (int32_t)opts.batch_tokens));
		if (ret) {
			fprintf(stderr, "failed to decode prompt batch %" PRIu64 ": %d\n", i, ret);
			err = -ENOMEM;
			goto cleanup;
		}
		if (gpu_hook_err) {
			err = gpu_hook_err;
			goto cleanup;
		}
		step_sleep();
	}
	phase_done(SNAP_PROMPT);

	for (i = 0; i < opts.tokens; i++) {
		verbose("token %" PRIu64 "\n", i);
		tok = (llama_token)(i % 32000);
		err = decode_one(ctx, &tok, run.token_bytes);
		if (err)
			goto cleanup;
		if (gpu_hook_err) {
			err = gpu_hook_err;
			goto cleanup;
		}
		step_sleep();
	}
	if (opts.grow_mib_per_s) {
		verbose("grow %" PRIu64 " MiB/s up to %" PRIu64 " MiB\n", opts.grow_mib_per_s,
			opts.grow_limit_mib);
		err = grow(ctx, &work);
		if (err)
			goto cleanup;
	}
	maybe_die();
	phase_done(SNAP_GENERATE);

	verbose("state %" PRIu64 " MiB\n", opts.state_mib);
	state_len = llama_state_seq_get_size_ext(ctx, 0, LLAMA_STATE_SEQ_FLAGS_NONE);
	if (state_len) {
		/* Like llama-server: the buffer is allocated and zeroed between the two calls. */
		state = mmap(NULL, state_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
		if (state == MAP_FAILED) {
			err = -errno;
			state = NULL;
			fprintf(stderr, "failed to map state buffer: %s\n", strerror(-err));
			goto cleanup;
		}
		madvise(state, state_len, MADV_NOHUGEPAGE);
		memset(state, 0, state_len);
	}
	if (llama_state_seq_get_data_ext(ctx, state, state_len, 0, LLAMA_STATE_SEQ_FLAGS_NONE) !=
	    state_len) {
		fprintf(stderr, "failed to copy state: short copy\n");
		err = -EIO;
		goto cleanup;
	}
	phase_done(SNAP_STATE);
	step_sleep();

	if (opts.fork_mib) {
		verbose("fork %" PRIu64 " MiB\n", opts.fork_mib);
		err = fork_child();
		if (err) {
			fprintf(stderr, "failed to fork: %s\n", strerror(-err));
			goto cleanup;
		}
		phase_done(SNAP_FORK);
		step_sleep();
	}

	verbose("teardown\n");
	if (!read_status(&s))
		run.hwm_before_teardown = s.vm_hwm;
	llama_free(ctx);
	ctx = NULL;
	gpu_free_all();
	if (state)
		munmap(state, state_len);
	state = NULL;
	llama_model_free(model);
	model = NULL;
	phase_done(SNAP_TEARDOWN);
	run.status = "done";

cleanup:
	for (i = 0; i < MAX_CHECKPOINTS; i++)
		if (ckpt[i])
			munmap(ckpt[i], ckpt_len[i]);
	if (err)
		run.status = "error";
	llama_free(ctx);
	if (state)
		munmap(state, state_len);
	llama_model_free(model);
	free(prompt);
	if (!read_status(&s))
		run.hwm_at_exit = s.vm_hwm;
	report_write();
	return err != 0;
}
