// SPDX-License-Identifier: GPL-2.0
/*
 * fake_llama.c: a stand-in libllama.so that does precisely known memory work inside each API call,
 * so that memphase's per-phase numbers can be compared with known amounts.
 *
 * All work happens inside the exported functions (uprobes switch the phase at their entry) and
 * goes through the non-inlined, non-cloned helpers touch_pages(), read_pages() and copy_state()
 * so stack tests can find them by name. Anonymous mappings get MADV_NOHUGEPAGE so every touch
 * faults exactly one 4 KiB page. One model and one context at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llama.h"

/* Keep the helpers as real frames with their own names (no inlining, no .constprop clones). */
#ifdef __clang__
#define WORKER __attribute__((noinline))
#else
#define WORKER __attribute__((noinline, noclone))
#endif

#define MAX_REGIONS 65536
#define GEN_CHUNK_BYTES (64ULL << 20)

struct region {
	void *addr;
	size_t len;
};

struct llama_model {
	bool in_use;
	void *map;
	size_t map_len;
};

struct llama_context {
	bool in_use;
	struct llama_model *model;
	bool warmup;
	char *kv;
	size_t kv_len;
	/* Reserved generation memory not handed out yet. */
	char *gen_cur;
	size_t gen_left;
	/* Every other mapping, unmapped by llama_free. */
	unsigned int nr_regions;
	struct region regions[MAX_REGIONS];
};

static struct fakellama_work work;
static struct llama_model the_model;
static struct llama_context the_ctx;
static volatile unsigned long sink;

static size_t page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

static size_t page_round(uint64_t bytes)
{
	size_t ps = page_size();

	return (size_t)((bytes + ps - 1) / ps * ps);
}

/* Write one byte per page: each write faults in one fresh anon page. */
WORKER static void touch_pages(void *addr, size_t len)
{
	volatile char *p = addr;
	size_t ps = page_size();
	size_t off;

	for (off = 0; off < len; off += ps)
		p[off] = (char)((off / ps) | 1);
}

/* Read one byte per page: maps each page of a file mapping into the process. */
WORKER static unsigned long read_pages(const void *addr, size_t len)
{
	const volatile unsigned char *p = addr;
	size_t ps = page_size();
	unsigned long sum = 0;
	size_t off;

	for (off = 0; off < len; off += ps)
		sum += p[off];
	return sum;
}

/* Fill dst from the (already resident) KV memory, cyclically; a pattern without one. */
WORKER static void copy_state(struct llama_context *ctx, uint8_t *dst, size_t n)
{
	size_t done = 0, chunk;

	if (!ctx->kv_len) {
		memset(dst, 0x5a, n);
		return;
	}
	while (done < n) {
		chunk = n - done < ctx->kv_len ? n - done : ctx->kv_len;
		memcpy(dst + done, ctx->kv, chunk);
		done += chunk;
	}
}

static void *map_anon(size_t len)
{
	void *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* 4 KiB faults only, so RSS grows by exactly the touched pages. */
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

static int ctx_add_region(struct llama_context *ctx, void *addr, size_t len)
{
	if (ctx->nr_regions >= MAX_REGIONS)
		return -ENOSPC;
	ctx->regions[ctx->nr_regions].addr = addr;
	ctx->regions[ctx->nr_regions].len = len;
	ctx->nr_regions++;
	return 0;
}

/* A fresh anon mapping of len bytes, owned by ctx. */
static void *ctx_map(struct llama_context *ctx, size_t len)
{
	void *p;

	p = map_anon(len);
	if (!p)
		return NULL;
	if (ctx_add_region(ctx, p, len)) {
		munmap(p, len);
		errno = ENOSPC;
		return NULL;
	}
	return p;
}

/* len bytes of reserved, untouched generation memory; reserves another chunk when used up. */
static void *ctx_take_gen(struct llama_context *ctx, size_t len)
{
	size_t chunk;
	void *p;

	if (ctx->gen_left < len) {
		chunk = len > GEN_CHUNK_BYTES ? len : GEN_CHUNK_BYTES;
		p = ctx_map(ctx, chunk);
		if (!p)
			return NULL;
		ctx->gen_cur = p;
		ctx->gen_left = chunk;
	}
	p = ctx->gen_cur;
	ctx->gen_cur += len;
	ctx->gen_left -= len;
	return p;
}

static void (*decode_hook)(int32_t n_tokens);

LLAMA_API void fakellama_on_decode(void (*hook)(int32_t n_tokens))
{
	decode_hook = hook;
}

LLAMA_API int fakellama_configure(const struct fakellama_work *w)
{
	if (w)
		work = *w;
	else
		memset(&work, 0, sizeof(work));
	return 0;
}

LLAMA_API struct llama_model_params llama_model_default_params(void)
{
	struct llama_model_params p = {
		.n_gpu_layers = 0,
		.use_mmap = true,
	};

	return p;
}

LLAMA_API struct llama_context_params llama_context_default_params(void)
{
	struct llama_context_params p = {
		.n_ctx = 4096,
		.n_batch = 2048,
		.n_ubatch = 512,
		.n_seq_max = 1,
		.n_threads = 1,
		.n_threads_batch = 1,
	};

	return p;
}

LLAMA_API struct llama_model *llama_model_load_from_file(const char *path_model,
							 struct llama_model_params params)
{
	struct llama_model *model = &the_model;
	struct stat st;
	void *map;
	int fd;

	if (model->in_use) {
		errno = EBUSY;
		return NULL;
	}
	/* No path: a model without weights, so the phase still happens. */
	if (!path_model) {
		model->in_use = true;
		return model;
	}
	fd = open(path_model, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	if (st.st_size > 0) {
		/* as llama.cpp's llama_mmap (prefetch): the pages arrive inside mmap */
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd,
			   0);
		if (map == MAP_FAILED) {
			close(fd);
			return NULL;
		}
		model->map = map;
		model->map_len = (size_t)st.st_size;
	}
	close(fd);
	/* The "weights": every page of the file is file-backed RSS (already, by MAP_POPULATE). */
	sink = read_pages(model->map, model->map_len);
	model->in_use = true;
	return model;
}

LLAMA_API void llama_model_free(struct llama_model *model)
{
	if (!model || !model->in_use)
		return;
	if (model->map)
		munmap(model->map, model->map_len);
	memset(model, 0, sizeof(*model));
}

LLAMA_API struct llama_context *llama_init_from_model(struct llama_model *model,
						      struct llama_context_params params)
{
	struct llama_context *ctx = &the_ctx;
	size_t kv_len = page_round(work.ctx_bytes);
	size_t reserve = page_round(work.gen_reserve_bytes);

	if (!model || !model->in_use) {
		errno = EINVAL;
		return NULL;
	}
	if (ctx->in_use) {
		errno = EBUSY;
		return NULL;
	}
	ctx->model = model;
	ctx->nr_regions = 0;
	if (kv_len) {
		ctx->kv = map_anon(kv_len);
		if (!ctx->kv)
			return NULL;
		ctx->kv_len = kv_len;
	}
	if (reserve) {
		/* Reserved, not touched: mmap alone adds no RSS. */
		ctx->gen_cur = ctx_map(ctx, reserve);
		if (!ctx->gen_cur)
			goto err;
		ctx->gen_left = reserve;
	}
	/* The "KV cache": all of it becomes anon RSS now. */
	touch_pages(ctx->kv, ctx->kv_len);
	ctx->in_use = true;
	return ctx;
err:
	if (ctx->kv)
		munmap(ctx->kv, ctx->kv_len);
	memset(ctx, 0, offsetof(struct llama_context, regions));
	return NULL;
}

LLAMA_API void llama_free(struct llama_context *ctx)
{
	unsigned int i;

	if (!ctx || !ctx->in_use)
		return;
	for (i = 0; i < ctx->nr_regions; i++)
		munmap(ctx->regions[i].addr, ctx->regions[i].len);
	if (ctx->kv)
		munmap(ctx->kv, ctx->kv_len);
	/* The region table is big and only nr_regions of it is meaningful. */
	memset(ctx, 0, offsetof(struct llama_context, regions));
}

LLAMA_API struct llama_batch llama_batch_get_one(llama_token *tokens, int32_t n_tokens)
{
	struct llama_batch batch = {
		.n_tokens = n_tokens,
		.token = tokens,
	};

	return batch;
}

/*
 * A batch with logits flags: every token asking for output is generation (token_bytes each);
 * else a prompt chunk (one prompt mapping) plus token_bytes per generation token, i.e. per
 * flag set among all but the last token (a prompt's last token asks for output too).
 */
static int32_t decode_flagged(struct llama_context *ctx, const struct llama_batch *batch)
{
	size_t tok = page_round(work.token_bytes), len;
	int32_t i, out = 0;
	void *p;

	for (i = 0; i < batch->n_tokens - 1; i++)
		out += batch->logits[i] != 0;
	if (out == batch->n_tokens - 1 && batch->logits[batch->n_tokens - 1]) {
		out = batch->n_tokens;
	} else {
		len = page_round(work.prompt_bytes_per_batch);
		if (len) {
			p = ctx_map(ctx, len);
			if (!p)
				return -2;
			touch_pages(p, len);
		}
	}
	for (i = 0; tok && i < out; i++) {
		p = ctx_take_gen(ctx, tok);
		if (!p)
			return -2;
		touch_pages(p, tok);
	}
	return 0;
}

LLAMA_API int32_t llama_decode(struct llama_context *ctx, struct llama_batch batch)
{
	unsigned long sum = 0;
	size_t len;
	int32_t i;
	void *p;

	if (!ctx || !ctx->in_use || batch.n_tokens <= 0)
		return -1;
	if (decode_hook)
		decode_hook(batch.n_tokens);
	if (batch.token)
		for (i = 0; i < batch.n_tokens; i++)
			sum += (unsigned int)batch.token[i];
	sink = sum;

	if (batch.logits)
		return decode_flagged(ctx, &batch);
	if (batch.n_tokens > 1) {
		/* Prompt eval: a fresh mapping per batch. */
		len = page_round(work.prompt_bytes_per_batch);
		if (!len)
			return 0;
		p = ctx_map(ctx, len);
	} else {
		/* Generation: pages carved out of the reservation. */
		len = page_round(work.token_bytes);
		if (!len)
			return 0;
		p = ctx_take_gen(ctx, len);
	}
	if (!p)
		return -2;
	touch_pages(p, len);
	return 0;
}

LLAMA_API const struct llama_vocab *llama_model_get_vocab(const struct llama_model *model)
{
	/* opaque to callers: the model stands for its vocabulary */
	return (const struct llama_vocab *)model;
}

/* One token per byte of text; tokenize_bytes of "tokenizer cache" touched and kept. */
LLAMA_API int32_t llama_tokenize(const struct llama_vocab *vocab, const char *text,
				 int32_t text_len, llama_token *tokens, int32_t n_tokens_max,
				 bool add_special, bool parse_special)
{
	size_t len = page_round(work.tokenize_bytes);
	int32_t i;
	void *p;

	if (!vocab || !text || text_len < 0)
		return 0;
	if (text_len > n_tokens_max)
		return -text_len;
	for (i = 0; i < text_len; i++)
		tokens[i] = (unsigned char)text[i];
	if (len) {
		p = map_anon(len);
		if (!p)
			return 0;
		touch_pages(p, len);
	}
	return text_len;
}

LLAMA_API int32_t llama_detokenize(const struct llama_vocab *vocab, const llama_token *tokens,
				   int32_t n_tokens, char *text, int32_t text_len_max,
				   bool remove_special, bool unparse_special)
{
	int32_t i;

	if (!vocab || n_tokens < 0)
		return 0;
	if (n_tokens > text_len_max)
		return -n_tokens;
	for (i = 0; i < n_tokens; i++)
		text[i] = (char)tokens[i];
	return n_tokens;
}

LLAMA_API void llama_set_warmup(struct llama_context *ctx, bool warmup)
{
	if (ctx)
		ctx->warmup = warmup;
}

/* The "KV cache" stays mapped and touched: clearing it forgets its cells, frees nothing. */
LLAMA_API llama_memory_t llama_get_memory(const struct llama_context *ctx)
{
	return ctx && ctx->in_use ? (llama_memory_t)ctx : NULL;
}

LLAMA_API void llama_memory_clear(llama_memory_t mem, bool data)
{
	struct llama_context *ctx = (struct llama_context *)mem;

	if (ctx && data && ctx->kv)
		touch_pages(ctx->kv, ctx->kv_len);
}

LLAMA_API void llama_synchronize(struct llama_context *ctx)
{
	(void)ctx;
}

LLAMA_API void llama_perf_context_reset(struct llama_context *ctx)
{
	(void)ctx;
}

/* A checkpoint (PARTIAL_ONLY) is the SWA/recurrent part only: its own, smaller size. */
static size_t state_size(struct llama_context *ctx, llama_state_seq_flags flags)
{
	if (!ctx || !ctx->in_use)
		return 0;
	return page_round(flags & LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY ? work.checkpoint_bytes :
								       work.state_bytes);
}

static size_t state_copy(struct llama_context *ctx, uint8_t *dst, size_t size,
			 llama_state_seq_flags flags)
{
	size_t n = state_size(ctx, flags);

	if (!dst || size < n)
		return 0;
	copy_state(ctx, dst, n);
	return n;
}

LLAMA_API size_t llama_state_seq_get_size_ext(struct llama_context *ctx, llama_seq_id seq_id,
					      llama_state_seq_flags flags)
{
	return state_size(ctx, flags);
}

LLAMA_API size_t llama_state_seq_get_data_ext(struct llama_context *ctx, uint8_t *dst,
					      size_t size, llama_seq_id seq_id,
					      llama_state_seq_flags flags)
{
	return state_copy(ctx, dst, size, flags);
}

LLAMA_API size_t llama_state_seq_get_size(struct llama_context *ctx, llama_seq_id seq_id)
{
	return state_size(ctx, LLAMA_STATE_SEQ_FLAGS_NONE);
}

LLAMA_API size_t llama_state_seq_get_data(struct llama_context *ctx, uint8_t *dst, size_t size,
					  llama_seq_id seq_id)
{
	return state_copy(ctx, dst, size, LLAMA_STATE_SEQ_FLAGS_NONE);
}
