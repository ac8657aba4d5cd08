/* SPDX-License-Identifier: GPL-2.0 */
/*
 * llama.h: the subset of llama.cpp's include/llama.h that memphase's uprobes care about, with the
 * real names, types and calling conventions, for the fake libllama.so in this directory.
 *
 * What must match upstream exactly: struct llama_batch (its layout is read at llama_decode entry;
 * it is 56 bytes and passed by value, so on x86-64 it lives on the stack and n_tokens is the
 * first 4 bytes at sp + 8) and the argument order of every function below. The params structs
 * are passed by value as upstream but carry fewer fields.
 *
 * fakellama_* is not part of llama.cpp: it sets how much memory each call touches.
 */
#ifndef FAKE_LLAMA_H
#define FAKE_LLAMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LLAMA_API __attribute__((visibility("default")))

#define LLAMA_TOKEN_NULL -1

struct llama_model;
struct llama_context;
struct llama_vocab;

typedef int32_t llama_pos;
typedef int32_t llama_token;
typedef int32_t llama_seq_id;

typedef bool (*llama_progress_callback)(float progress, void *user_data);

/* Exactly as upstream: n_tokens first, then six pointers. */
typedef struct llama_batch {
	int32_t n_tokens;

	llama_token *token;
	float *embd;
	llama_pos *pos;
	int32_t *n_seq_id;
	llama_seq_id **seq_id;
	int8_t *logits;
} llama_batch;

/* Upstream's fields in upstream's order; ggml types are opaque pointers here. */
struct llama_model_params {
	void **devices;
	const void *tensor_buft_overrides;
	int32_t n_gpu_layers;
	int32_t split_mode;
	int32_t main_gpu;
	const float *tensor_split;
	llama_progress_callback progress_callback;
	void *progress_callback_user_data;
	const void *kv_overrides;
	bool vocab_only;
	bool use_mmap;
	bool use_direct_io;
	bool use_mlock;
	bool check_tensors;
	bool use_extra_bufts;
	bool no_host;
	bool no_alloc;
};

/* Reduced: upstream's leading fields only. */
struct llama_context_params {
	uint32_t n_ctx;
	uint32_t n_batch;
	uint32_t n_ubatch;
	uint32_t n_seq_max;
	uint32_t n_rs_seq;
	uint32_t n_outputs_max;
	int32_t n_threads;
	int32_t n_threads_batch;
};

#define LLAMA_STATE_SEQ_FLAGS_NONE 0
#define LLAMA_STATE_SEQ_FLAGS_SWA_ONLY 1
#define LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY 1
#define LLAMA_STATE_SEQ_FLAGS_ON_DEVICE 2

typedef uint32_t llama_state_seq_flags;

LLAMA_API struct llama_model_params llama_model_default_params(void);
LLAMA_API struct llama_context_params llama_context_default_params(void);

LLAMA_API struct llama_model *llama_model_load_from_file(const char *path_model,
							 struct llama_model_params params);
LLAMA_API void llama_model_free(struct llama_model *model);

LLAMA_API struct llama_context *llama_init_from_model(struct llama_model *model,
						      struct llama_context_params params);
LLAMA_API void llama_free(struct llama_context *ctx);

LLAMA_API size_t llama_state_seq_get_size(struct llama_context *ctx, llama_seq_id seq_id);
LLAMA_API size_t llama_state_seq_get_data(struct llama_context *ctx, uint8_t *dst, size_t size,
					  llama_seq_id seq_id);
LLAMA_API size_t llama_state_seq_get_size_ext(struct llama_context *ctx, llama_seq_id seq_id,
					      llama_state_seq_flags flags);
LLAMA_API size_t llama_state_seq_get_data_ext(struct llama_context *ctx, uint8_t *dst,
					      size_t size, llama_seq_id seq_id,
					      llama_state_seq_flags flags);

LLAMA_API struct llama_batch llama_batch_get_one(llama_token *tokens, int32_t n_tokens);

LLAMA_API const struct llama_vocab *llama_model_get_vocab(const struct llama_model *model);
LLAMA_API int32_t llama_tokenize(const struct llama_vocab *vocab, const char *text,
				 int32_t text_len, llama_token *tokens, int32_t n_tokens_max,
				 bool add_special, bool parse_special);
LLAMA_API int32_t llama_detokenize(const struct llama_vocab *vocab, const llama_token *tokens,
				   int32_t n_tokens, char *text, int32_t text_len_max,
				   bool remove_special, bool unparse_special);
LLAMA_API void llama_set_warmup(struct llama_context *ctx, bool warmup);

/* The context's memory (KV cache) and, as upstream's common_init_from_params() after its
 * warm-up decode, clearing it; waiting for the backend; resetting the perf counters. */
typedef struct llama_memory_i *llama_memory_t;
LLAMA_API llama_memory_t llama_get_memory(const struct llama_context *ctx);
LLAMA_API void llama_memory_clear(llama_memory_t mem, bool data);
LLAMA_API void llama_synchronize(struct llama_context *ctx);
LLAMA_API void llama_perf_context_reset(struct llama_context *ctx);

/*
 * 0 on success, -1 for an invalid batch (n_tokens <= 0 or no context), -2 when memory for the
 * batch could not be mapped.
 */
LLAMA_API int32_t llama_decode(struct llama_context *ctx, struct llama_batch batch);

/*
 * Not llama.cpp. Byte amounts are rounded up to whole pages; one byte per page is touched.
 *   ctx_bytes              anon, touched in llama_init_from_model (the "KV cache")
 *   prompt_bytes_per_batch anon, one fresh mapping per llama_decode with n_tokens > 1
 *   token_bytes            anon, carved out of reserved memory per llama_decode with n_tokens == 1
 *   gen_reserve_bytes      anon reserved (mapped, untouched) in llama_init_from_model for tokens;
 *                          when used up, llama_decode maps more in 64 MiB chunks
 *   state_bytes            what llama_state_seq_get_size[_ext] returns; get_data copies that much
 *   tokenize_bytes         anon, touched and kept per llama_tokenize call (a tokenizer cache)
 * A batch with logits: all flags set is generation (token_bytes per token); otherwise one
 * prompt mapping plus token_bytes per flag set among all but the last token (a mixed batch).
 * May be called again at any time; the new amounts apply to the following calls.
 */
struct fakellama_work {
	uint64_t ctx_bytes;
	uint64_t prompt_bytes_per_batch;
	uint64_t token_bytes;
	uint64_t gen_reserve_bytes;
	uint64_t state_bytes;
	uint64_t checkpoint_bytes;	/* state with LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY */
	uint64_t tokenize_bytes;
};

LLAMA_API int fakellama_configure(const struct fakellama_work *work);
/*
 * Called at the start of every llama_decode with the batch's n_tokens (NULL: none): the
 * stand-in's way to do what the real decode does inside, e.g. pin host memory for a GPU
 * backend, so it happens in the decode's phase.
 */
LLAMA_API void fakellama_on_decode(void (*hook)(int32_t n_tokens));

#ifdef __cplusplus
}
#endif

#endif /* FAKE_LLAMA_H */
