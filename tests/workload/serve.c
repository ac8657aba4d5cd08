// SPDX-License-Identifier: GPL-2.0
/*
 * llama-serve: drives the fake libllama.so the way llama-server does, with known amounts:
 *   1. the --fit probe: load the model, create a context, free both before any decode;
 *   2. the real load and context (n_ctx --n-ctx), and the warm-up decode: by default
 *      between llama_set_warmup(ctx, true) and (ctx, false); with --warmup common as the
 *      newest llama.cpp's common_init_from_params() does it (no llama_set_warmup, which
 *      upstream deprecated): llama_decode(llama_batch_get_one({bos, eos})), then
 *      llama_memory_clear(llama_get_memory(ctx), true), llama_synchronize,
 *      llama_perf_context_reset; --warmup none skips it;
 *   3. requests, one after another (--requests N, 0 = until killed): tokenize the prompt
 *      (--tokenize-kib kept per call), decode it in --prompt-batches batches of
 *      --batch-tokens with logits on the last token only (--batch-mib each), then --tokens
 *      steps of one token per slot (--slots batches of one token per slot, all logits set,
 *      --token-kib per token), the first of them joined with a prompt chunk when --mixed
 *      (continuous batching: one prompt mapping + the slots' tokens), then detokenize.
 *      The batches carry positions and slots as the server's do: request r (from 0) is a
 *      new prompt in slot r % slots from position 0, slot i's generated token is token i.
 *   4. llama_free, llama_model_free.
 * What each request adds: batches * batch-mib + (tokens * slots) * token-kib + tokenize-kib
 * (+ batch-mib for the mixed chunk). After each request starts, the report file (--report)
 * is rewritten with "request=N" (write to FILE.tmp, rename), so a run killed midway says
 * which request it died in. Nothing else is allocated per request. --hold-ms N: sleep N ms
 * after the teardown, before exiting (a scraper sees the final figures).
 *
 * --cudart LIB: a CUDA runtime (the stand-in) dlopen'd, used inside llama_decode as a GPU
 * backend would, at the first prompt batch of request R: cudaFreeHost of request R-1's pinned
 * buffer, cudaHostAlloc of R * --pin-kib KiB, in request 2 alone cudaMallocManaged of
 * --pin-kib KiB, then (after --gpu-hold-ms) cudaMalloc of R * --vram-mib MiB, held for
 * --gpu-hold-ms again. All of it is freed after llama_free (the last request's end) and
 * another --gpu-hold-ms.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "llama.h"

#define MIB (1ULL << 20)
#define KIB (1ULL << 10)
#define MAX_BATCH 4096

static struct {
	const char *model, *report;
	uint64_t n_ctx, ctx_mib, requests, batches, batch_tokens, batch_mib, tokens, token_kib;
	uint64_t slots, tokenize_kib, sleep_ms, hold_ms, pin_kib, vram_mib, gpu_hold_ms;
	const char *cudart;
	int mixed, no_probe;
	const char *warmup;
} o = {
	.warmup = "bracket",
	.n_ctx = 4096, .requests = 3, .batches = 2, .batch_tokens = 64, .tokens = 4, .slots = 1,
	.pin_kib = 1024, .vram_mib = 16, .gpu_hold_ms = 300,
};

static llama_token toks[MAX_BATCH];
static int8_t logits[MAX_BATCH];
static llama_pos pos[MAX_BATCH];
static int32_t n_seq[MAX_BATCH];
static llama_seq_id seq[MAX_BATCH], *seqs[MAX_BATCH];

static void report(uint64_t req)
{
	char tmp[4096], buf[64];
	FILE *f;

	if (!o.report)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", o.report);
	f = fopen(tmp, "w");
	if (!f)
		return;
	snprintf(buf, sizeof(buf), "pid=%d\nrequest=%" PRIu64 "\n", (int)getpid(), req);
	fputs(buf, f);
	fclose(f);
	rename(tmp, o.report);
}

/* ---- GPU mode (--cudart) ---- */
static struct {
	void *lib;
	int (*host_alloc)(void **, size_t, unsigned int);
	int (*malloc_managed)(void **, size_t, unsigned int);
	int (*malloc_dev)(void **, size_t);
	int (*free_host)(void *);
	int (*free_dev)(void *);
	void *pinned, *managed, *dev[MAX_BATCH];
	uint64_t req, pinned_for, ndev;
	int err;
} gpu;

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (ms && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int gpu_open(void)
{
	gpu.lib = dlopen(o.cudart, RTLD_NOW | RTLD_LOCAL);
	if (!gpu.lib) {
		fprintf(stderr, "llama-serve: %s\n", dlerror());
		return -1;
	}
	gpu.host_alloc = (int (*)(void **, size_t, unsigned int))dlsym(gpu.lib, "cudaHostAlloc");
	gpu.malloc_managed = (int (*)(void **, size_t, unsigned int))dlsym(gpu.lib,
									   "cudaMallocManaged");
	gpu.malloc_dev = (int (*)(void **, size_t))dlsym(gpu.lib, "cudaMalloc");
	gpu.free_host = (int (*)(void *))dlsym(gpu.lib, "cudaFreeHost");
	gpu.free_dev = (int (*)(void *))dlsym(gpu.lib, "cudaFree");
	if (!gpu.host_alloc || !gpu.malloc_managed || !gpu.malloc_dev || !gpu.free_host ||
	    !gpu.free_dev) {
		fprintf(stderr, "llama-serve: %s lacks a CUDA runtime memory function\n", o.cudart);
		return -1;
	}
	return 0;
}

/* Inside llama_decode: the first prompt batch of each request pins (see the top). */
static void gpu_decode_hook(int32_t n_tokens)
{
	if (gpu.err || n_tokens < 2 || gpu.pinned_for == gpu.req || gpu.ndev == MAX_BATCH)
		return;
	gpu.pinned_for = gpu.req;
	if (gpu.pinned)
		gpu.free_host(gpu.pinned);
	gpu.pinned = NULL;
	gpu.err = gpu.host_alloc(&gpu.pinned, gpu.req * o.pin_kib * KIB, 0);
	if (!gpu.err && gpu.req == 2)
		gpu.err = gpu.malloc_managed(&gpu.managed, o.pin_kib * KIB, 1);
	sleep_ms(o.gpu_hold_ms);
	if (!gpu.err)
		gpu.err = gpu.malloc_dev(&gpu.dev[gpu.ndev++], gpu.req * o.vram_mib * MIB);
	sleep_ms(o.gpu_hold_ms);
	if (gpu.err)
		fprintf(stderr, "llama-serve: a CUDA call failed: cudaError %d\n", gpu.err);
}

static void gpu_free_all(void)
{
	uint64_t i;

	if (gpu.pinned)
		gpu.free_host(gpu.pinned);
	if (gpu.managed)
		gpu.free_dev(gpu.managed);
	for (i = 0; i < gpu.ndev; i++)
		gpu.free_dev(gpu.dev[i]);
}

static void pause_ms(void)
{
	struct timespec ts = { o.sleep_ms / 1000, (long)(o.sleep_ms % 1000) * 1000000L };

	if (o.sleep_ms)
		nanosleep(&ts, NULL);
}

/*
 * A batch as llama-server builds it: n tokens, the first gen_first one token of each slot
 * (slot i at position gen_pos, asking for output), the rest a prompt chunk of slot `slot`
 * from position at (its last token asking for output when last_out).
 */
static int decode(struct llama_context *ctx, int32_t n, int32_t gen_first, llama_pos gen_pos,
		  llama_seq_id slot, llama_pos at, bool last_out)
{
	struct llama_batch b = { .n_tokens = n, .token = toks, .pos = pos, .n_seq_id = n_seq,
				 .seq_id = seqs, .logits = logits };
	int32_t i;

	for (i = 0; i < n; i++) {
		logits[i] = i < gen_first || (last_out && i == n - 1);
		seq[i] = i < gen_first ? i : slot;
		pos[i] = i < gen_first ? gen_pos : at + i - gen_first;
		n_seq[i] = 1;
		seqs[i] = &seq[i];
	}
	return llama_decode(ctx, b);
}

/*
 * Request r (from 0) in slot r % slots, as a new prompt there: positions from 0 over its
 * prompt batches (and the mixed chunk), then its generation.
 */
static int request(struct llama_context *ctx, const struct llama_vocab *vocab, uint64_t r)
{
	char text[MAX_BATCH];
	uint64_t i;
	int32_t n = (int32_t)o.batch_tokens;
	llama_seq_id slot = (llama_seq_id)(r % o.slots);
	llama_pos at = 0;

	memset(text, 'a', sizeof(text));
	if (llama_tokenize(vocab, text, n, toks, MAX_BATCH, true, true) != n)
		return -1;
	for (i = 0; i < o.batches; i++, at += n)
		if (decode(ctx, n, 0, 0, slot, at, i + 1 == o.batches))
			return -1;
	pause_ms();
	for (i = 0; i < o.tokens; i++) {
		/* one token per slot, all asking for output; the first step joins a prompt chunk */
		if (i == 0 && o.mixed) {
			if (decode(ctx, (int32_t)o.slots + n, (int32_t)o.slots, at + n, slot, at,
				   false))
				return -1;
			at += n;
		} else if (decode(ctx, (int32_t)o.slots, (int32_t)o.slots, at + (llama_pos)i, slot,
				  0, true)) {
			return -1;
		}
	}
	if (llama_detokenize(vocab, toks, 1, text, MAX_BATCH, false, false) != 1)
		return -1;
	pause_ms();
	return 0;
}

static int num(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || end == s || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "model", 1, NULL, 'm' }, { "report", 1, NULL, 'r' },
		{ "n-ctx", 1, NULL, 'c' }, { "ctx-mib", 1, NULL, 'C' },
		{ "requests", 1, NULL, 'q' }, { "prompt-batches", 1, NULL, 'b' },
		{ "batch-tokens", 1, NULL, 'n' }, { "batch-mib", 1, NULL, 'B' },
		{ "tokens", 1, NULL, 't' }, { "token-kib", 1, NULL, 'T' },
		{ "slots", 1, NULL, 's' }, { "tokenize-kib", 1, NULL, 'k' },
		{ "sleep-ms", 1, NULL, 'z' }, { "mixed", 0, NULL, 'x' },
		{ "no-probe", 0, NULL, 'p' }, { "hold-ms", 1, NULL, 'h' },
		{ "cudart", 1, NULL, 'g' }, { "pin-kib", 1, NULL, 'P' },
		{ "vram-mib", 1, NULL, 'V' }, { "gpu-hold-ms", 1, NULL, 'H' },
		{ "warmup", 1, NULL, 'w' }, {},
	};
	struct fakellama_work w = {};
	struct llama_model_params mp = llama_model_default_params();
	struct llama_context_params cp = llama_context_default_params();
	struct llama_model *model;
	struct llama_context *ctx;
	uint64_t *v, r;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		v = NULL;
		switch (c) {
		case 'm': o.model = optarg; break;
		case 'r': o.report = optarg; break;
		case 'x': o.mixed = 1; break;
		case 'p': o.no_probe = 1; break;
		case 'g': o.cudart = optarg; break;
		case 'P': v = &o.pin_kib; break;
		case 'V': v = &o.vram_mib; break;
		case 'H': v = &o.gpu_hold_ms; break;
		case 'w': o.warmup = optarg; break;
		case 'c': v = &o.n_ctx; break;
		case 'C': v = &o.ctx_mib; break;
		case 'q': v = &o.requests; break;
		case 'h': v = &o.hold_ms; break;
		case 'b': v = &o.batches; break;
		case 'n': v = &o.batch_tokens; break;
		case 'B': v = &o.batch_mib; break;
		case 't': v = &o.tokens; break;
		case 'T': v = &o.token_kib; break;
		case 's': v = &o.slots; break;
		case 'k': v = &o.tokenize_kib; break;
		case 'z': v = &o.sleep_ms; break;
		default:
			fprintf(stderr, "usage: llama-serve [--model F] [--n-ctx N] "
					"[--requests N] ...\n");
			return 2;
		}
		if (v && num(optarg, v)) {
			fprintf(stderr, "llama-serve: bad number '%s'\n", optarg);
			return 2;
		}
	}
	if (o.batch_tokens < 2 || o.batch_tokens + o.slots > MAX_BATCH || !o.slots) {
		fprintf(stderr, "llama-serve: --batch-tokens 2..%d with --slots >= 1\n", MAX_BATCH);
		return 2;
	}
	w.ctx_bytes = o.ctx_mib * MIB;
	w.prompt_bytes_per_batch = o.batch_mib * MIB;
	w.token_bytes = o.token_kib * KIB;
	w.tokenize_bytes = o.tokenize_kib * KIB;
	fakellama_configure(&w);
	if (o.cudart) {
		if (gpu_open())
			return 1;
		fakellama_on_decode(gpu_decode_hook);
	}
	cp.n_ctx = (uint32_t)o.n_ctx;
	/* the batch's arrays are touched now, not counted in the first decode's phase */
	memset(pos, 0, sizeof(pos));
	memset(n_seq, 0, sizeof(n_seq));
	memset(seq, 0, sizeof(seq));
	memset(seqs, 0, sizeof(seqs));
	memset(logits, 0, sizeof(logits));
	memset(toks, 0, sizeof(toks));
	report(0);
	if (!o.no_probe) {
		/* the --fit probe: a model and a context that only measure, freed unused */
		model = llama_model_load_from_file(o.model, mp);
		ctx = model ? llama_init_from_model(model, cp) : NULL;
		if (!ctx)
			return 1;
		llama_free(ctx);
		llama_model_free(model);
	}
	model = llama_model_load_from_file(o.model, mp);
	ctx = model ? llama_init_from_model(model, cp) : NULL;
	if (!ctx)
		return 1;
	if (!strcmp(o.warmup, "bracket")) {
		/* common_init_from_params' warm-up: a decode of two tokens, bracketed */
		llama_set_warmup(ctx, true);
		if (decode(ctx, 2, 0, 0, 0, 0, true))
			return 1;
		llama_set_warmup(ctx, false);
	} else if (!strcmp(o.warmup, "common")) {
		/* the newest: bos and eos in llama_batch_get_one, then the memory cleared */
		toks[0] = 1;
		toks[1] = 2;
		if (llama_decode(ctx, llama_batch_get_one(toks, 2)))
			return 1;
		llama_memory_clear(llama_get_memory(ctx), true);
		llama_synchronize(ctx);
		llama_perf_context_reset(ctx);
	} else if (strcmp(o.warmup, "none")) {
		fprintf(stderr, "llama-serve: --warmup bracket, common or none\n");
		return 2;
	}
	for (r = 1; !o.requests || r <= o.requests; r++) {
		report(r);
		gpu.req = r;
		if (request(ctx, llama_model_get_vocab(model), r - 1) || gpu.err)
			return 1;
	}
	llama_free(ctx);
	llama_model_free(model);
	if (gpu.lib) {
		/* after the last request ended (llama_free), once NVML was read again */
		sleep_ms(o.gpu_hold_ms);
		gpu_free_all();
	}
	/* --hold-ms: alive after the teardown, so a scraper sees the final figures */
	sleep_ms(o.hold_ms);
	return 0;
}
