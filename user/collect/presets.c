// SPDX-License-Identifier: GPL-2.0
/*
 * The built-in presets, as data. To add one: write its phases, rules and markers below
 * as one more table, list it in presets[], and add its case to tests/unit/test_presets.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include "collect/presets.h"
#include "lib/phasespec.h"

/* ---- llama: llama.cpp's libllama ---- */

/*
 * From llama.cpp's include/llama.h (current and legacy names).
 *
 * llama_decode(struct llama_context *ctx, struct llama_batch batch) is split by its batch.
 * struct llama_batch (56 bytes: int32_t n_tokens, then the pointers token, embd, pos,
 * n_seq_id, seq_id, logits) is passed by value, so on x86-64 it is on the stack: at function
 * entry n_tokens is at sp + 8 (sp + 0 holds the return address) and int8_t *logits at
 * sp + 8 + 48. logits[i] != 0 asks for token i's output: a generating slot asks for each of
 * its tokens, a prompt only for its last one. So, over the first n_tokens - 1 flags: all set
 * is generation (one token per slot, also under --parallel), none a prompt, some a batch
 * that joins prompt chunks and generation tokens (continuous batching: "mixed"). A batch of
 * one token goes by its own flag: the server evaluates a prompt's first token alone (for
 * a checkpoint at position 0) without asking for its output. Without logits
 * (llama_batch_get_one) more than one token is prompt eval, one token generation.
 * The decode's n_tokens is recorded (tokens per request), with its last token's position and
 * sequence (how far a slot's context reached; none for llama_batch_get_one).
 *
 * A decode of at most two tokens before any tokenize or prompt/generation decode is the
 * start-up warm-up. The newest llama.cpp no longer calls llama_set_warmup (include/llama.h
 * marks it DEPRECATED: "user code should do warmup runs manually"):
 * common_init_from_params() (common/common.cpp) decodes llama_batch_get_one({bos, eos})
 * (one token when the vocab lacks one of them) right after creating the context, then
 * llama_memory_clear(), llama_synchronize(), llama_perf_context_reset(), and
 * common_context_can_seq_rm() checks the context with a decode of two tokens, then clears
 * it; llama-server and llama-cli tokenize nothing before them (a prompt is tokenized before
 * its first decode). A program that tokenizes by itself still has its first prompt batch
 * (of more than two tokens) as prompt. Older builds bracket the warm-up decode with
 * llama_set_warmup(ctx, true/false) (below).
 */
static const char *const llama_before_first_decode[] = {
	"tokenize", "prompt", "generate", "mixed", NULL,
};
static const struct preset_rule llama_decode_batch = {
	.src = MP_SRC_STACK, .at = 8, .width = 4, .is_signed = true,
	.op = MP_OP_GT, .value = 1, .then_phase = "prompt", .else_phase = "generate",
	.arr_at = 8 + 48, .arr_trim = 1,
	.all_phase = "generate", .none_phase = "prompt", .mixed_phase = "mixed",
	.record = MP_REC_TOKENS,
	.guard_unseen = llama_before_first_decode, .guard_phase = "warmup", .guard_max = 2,
	/* llama_pos *pos (4th field) and llama_seq_id **seq_id (6th): the last token's
	 * position and slot, how far that slot's context reached */
	.pos_at = 8 + 24, .seq_at = 8 + 40,
};

/*
 * llama_set_warmup(ctx, bool warmup): common_init_from_params() brackets its start-up decode
 * with true ... false. bool: only the low byte of the register is defined.
 */
static const struct preset_rule llama_warmup = {
	.src = MP_SRC_ARG, .at = 2, .width = 4,
	.op = MP_OP_BITS, .value = 0xff, .then_phase = "warmup", .else_phase = "host",
};

/*
 * llama_init_from_model(model, struct llama_context_params params): params (over 16 bytes)
 * is passed by value on the stack; its first field, uint32_t n_ctx, is at sp + 8. Recorded
 * as the context size (0 means the model's training context).
 */
static const struct preset_rule llama_ctx_params = {
	.src = MP_SRC_STACK, .at = 8, .width = 4,
	.op = MP_OP_EQ, .value = 0, .then_phase = "context", .record = MP_REC_CTX,
};

/*
 * llama_free(ctx) or llama_model_free(model) before any decode ran frees a context or model
 * that only measured memory: the --fit probe of llama-server and llama-cli
 * (llama_get_device_memory_data() in src/llama.cpp loads the model with no_alloc, creates
 * a context, reads its memory breakdown and frees both; common_init_result runs it through
 * llama_params_fit / common_fit_params before the real load). It is "probe:teardown", not
 * the run's end, and entering it relabels the load and context before it (llama_relabel).
 */
static const char *const llama_decode_phases[] = { "warmup", "prompt", "generate", "mixed", NULL };
static const struct preset_rule llama_free_probe = {
	.src = MP_SRC_ARG, .at = 1, .width = 8,
	.op = MP_OP_EQ, .value = 0, .then_phase = "teardown",
	.guard_unseen = llama_decode_phases, .guard_phase = "probe:teardown",
};

static const char *const llama_probe_from[] = { "load", "context", NULL };
static const char *const llama_probe_to[] = { "probe:load", "probe:context", NULL };
static const struct preset_relabel llama_relabel[] = {
	{ .at = "probe:teardown", .from = llama_probe_from, .to = llama_probe_to },
	{},
};

/*
 * llama_state_seq_get_size_ext(ctx, seq_id, flags) and
 * llama_state_seq_get_data_ext(ctx, dst, size, seq_id, flags): with
 * LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY (1, was SWA_ONLY) in the uint32_t flags they save a
 * context checkpoint (the SWA or recurrent part only), else a whole sequence. The data
 * call's size is recorded: what one checkpoint, or one prompt cache entry, holds.
 */
#define LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY	1
static const struct preset_rule llama_state_size_ext = {
	.src = MP_SRC_ARG, .at = 3, .width = 4,
	.op = MP_OP_BITS, .value = LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY, .then_phase = "checkpoint",
};
static const struct preset_rule llama_state_data_ext = {
	.src = MP_SRC_ARG, .at = 5, .width = 4,
	.op = MP_OP_BITS, .value = LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY, .then_phase = "checkpoint",
	.record = MP_REC_BYTES, .rec_arg = 3,
};

static const char *const llama_phases[] = {
	"probe:load", "probe:context", "probe:teardown", "load", "context", "warmup",
	"tokenize", "prompt", "generate", "mixed",
	"host", "state", "checkpoint", "teardown", NULL,
};

/* Warm-up decodes stay warmup until llama_set_warmup(ctx, false). */
static const char *const llama_sticky[] = { "warmup", NULL };
/*
 * Between engine calls and tokenizing: a request's pass through prompt goes on; so do its
 * checkpoints (the server makes them before its last prompt batches) and a state save (the
 * prompt cache saves the slot's last prompt when the next request takes the slot).
 */
static const char *const llama_idle[] = { "host", "tokenize", "prompt", "state", "checkpoint",
					  NULL };
/* Tokenizing the prompt (the last tokenize before it) is the request's own start. */
static const char *const llama_lead[] = { "tokenize", NULL };
/* The frees at the end are not a request's. */
static const char *const llama_request_end[] = { "teardown", "probe:teardown", NULL };

/*
 * The state phase begins at the size call: the destination buffer is allocated and
 * zero-filled between the size and data calls. Whole-sequence saves are the server's
 * prompt cache ("state"), partial ones context checkpoints ("checkpoint").
 */
/*
 * llama-server's requests (one /completion, chat, infill, embedding ... request each) as
 * the server has them: its HTTP handlers, which tokenize the prompt, post the task (the
 * main loop then saves the slot's last prompt to the cache, decodes, checkpoints,
 * generates) and send the answer. llama-cli runs the same server in-process and talks to it
 * over HTTP: one call per turn. The code lives in libllama-server-impl.so (builds since
 * 2026), earlier in the llama-server binary; where neither has them (a lambda in older
 * builds, a program of one's own) the phase rule above cuts requests.
 */
#define LLAMA_REQUEST(sym) \
	{ .request = true, .symbol = sym, .binary = "libllama-server-impl.so" }, \
	{ .request = true, .symbol = sym, .binary = "llama-server" }

static const struct preset_marker llama_markers[] = {
	LLAMA_REQUEST("server_routes::handle_completions_impl"),
	LLAMA_REQUEST("server_routes::handle_embeddings_impl"),
	{ .phase = "load", .symbol = "llama_model_load_from_file" },
	{ .phase = "load", .symbol = "llama_model_load_from_splits" },
	{ .phase = "load", .symbol = "llama_load_model_from_file" },
	{ .phase = "context", .symbol = "llama_init_from_model", .rule = &llama_ctx_params },
	{ .phase = "context", .symbol = "llama_new_context_with_model",
	  .rule = &llama_ctx_params },
	{ .phase = "warmup", .symbol = "llama_set_warmup", .rule = &llama_warmup },
	{ .phase = "tokenize", .symbol = "llama_tokenize", .ret_phase = "host" },
	{ .phase = "tokenize", .symbol = "llama_detokenize", .ret_phase = "host" },
	{ .phase = "prompt", .symbol = "llama_decode", .rule = &llama_decode_batch,
	  .ret_phase = "host" },
	{ .phase = "state", .symbol = "llama_state_get_size" },
	{ .phase = "state", .symbol = "llama_state_get_data" },
	{ .phase = "state", .symbol = "llama_state_save_file" },
	{ .phase = "state", .symbol = "llama_state_seq_get_size" },
	{ .phase = "state", .symbol = "llama_state_seq_get_data" },
	{ .phase = "state", .symbol = "llama_state_seq_get_size_ext",
	  .rule = &llama_state_size_ext },
	{ .phase = "state", .symbol = "llama_state_seq_get_data_ext",
	  .rule = &llama_state_data_ext },
	{ .phase = "state", .symbol = "llama_state_seq_save_file" },
	{ .phase = "teardown", .symbol = "llama_free", .rule = &llama_free_probe },
	{ .phase = "teardown", .symbol = "llama_model_free", .rule = &llama_free_probe },
	{ .phase = "teardown", .symbol = "llama_free_model", .rule = &llama_free_probe },
	{},
};

/*
 * llama.cpp's settings that decide where host RAM goes, with the defaults of the build the
 * table was checked against (commit 3f545bec, build 10587: common/arg.cpp, `--help`).
 * Older and newer builds may name or default them otherwise: a flag of another build is
 * listed as unknown, never fatal.
 */
static const struct preset_setting llama_settings[] = {
	{ .name = "model", .flags = "-m --model", .env = "LLAMA_ARG_MODEL", .def = "",
	  .what = "model file" },
	{ .name = "ctx_size", .flags = "-c --ctx-size", .env = "LLAMA_ARG_CTX_SIZE", .def = "0",
	  .what = "context size, tokens (0: the model's)" },
	{ .name = "parallel", .flags = "-np --parallel", .env = "LLAMA_ARG_N_PARALLEL",
	  .def = "-1", .what = "slots", .auto_is = "-1",
	  .autos = { { "llama-cli", "1" }, { NULL, "4", "kv_unified=true" } } },
	{ .name = "cache_ram", .flags = "-cram --cache-ram", .env = "LLAMA_ARG_CACHE_RAM",
	  .def = "8192", .what = "prompt cache cap, MiB (-1 none, 0 off)" },
	{ .name = "ctx_checkpoints", .flags = "-ctxcp --swa-checkpoints --ctx-checkpoints",
	  .env = "LLAMA_ARG_CTX_CHECKPOINTS", .def = "32",
	  .what = "context checkpoints per slot, at most" },
	{ .name = "checkpoint_min_step", .flags = "-cms --checkpoint-min-step",
	  .env = "LLAMA_ARG_CHECKPOINT_MIN_SPACING_NT", .def = "8192",
	  .what = "tokens between checkpoints, at least" },
	{ .name = "swa_full", .on = "--swa-full", .env = "LLAMA_ARG_SWA_FULL", .def = "false",
	  .what = "full-size SWA cache" },
	{ .name = "cache_type_k", .flags = "-ctk --cache-type-k", .env = "LLAMA_ARG_CACHE_TYPE_K",
	  .def = "f16", .what = "KV cache type, K" },
	{ .name = "cache_type_v", .flags = "-ctv --cache-type-v", .env = "LLAMA_ARG_CACHE_TYPE_V",
	  .def = "f16", .what = "KV cache type, V" },
	{ .name = "n_gpu_layers", .flags = "-ngl --gpu-layers --n-gpu-layers",
	  .env = "LLAMA_ARG_N_GPU_LAYERS", .def = "auto", .what = "layers on the GPU" },
	{ .name = "kv_offload", .on = "-kvo --kv-offload", .off = "-nkvo --no-kv-offload",
	  .env = "LLAMA_ARG_KV_OFFLOAD", .def = "true", .what = "KV cache on the GPU" },
	{ .name = "load_mode", .flags = "-lm --load-mode", .env = "LLAMA_ARG_LOAD_MODE",
	  .def = "auto", .what = "how the model file is loaded" },
	{ .name = "mmap", .on = "--mmap", .off = "--no-mmap", .env = "LLAMA_ARG_MMAP",
	  .def = "true", .what = "model mapped (deprecated: --load-mode)" },
	{ .name = "mlock", .on = "--mlock", .env = "LLAMA_ARG_MLOCK", .def = "false",
	  .what = "model pinned (deprecated: --load-mode)" },
	{ .name = "batch_size", .flags = "-b --batch-size", .env = "LLAMA_ARG_BATCH",
	  .def = "2048", .what = "logical batch, tokens" },
	{ .name = "ubatch_size", .flags = "-ub --ubatch-size", .env = "LLAMA_ARG_UBATCH",
	  .def = "512", .what = "micro-batch, tokens" },
	{ .name = "flash_attn", .flags = "-fa --flash-attn", .env = "LLAMA_ARG_FLASH_ATTN",
	  .def = "auto", .what = "flash attention", .optional = "on off auto" },
	{ .name = "kv_unified", .on = "-kvu --kv-unified", .off = "-no-kvu --no-kv-unified",
	  .env = "LLAMA_ARG_KV_UNIFIED", .def = "false", .what = "one KV buffer for all slots" },
	{ .name = "cache_idle_slots", .on = "--cache-idle-slots", .off = "--no-cache-idle-slots",
	  .env = "LLAMA_ARG_CACHE_IDLE_SLOTS", .def = "true",
	  .what = "idle slots saved to the prompt cache" },
	{ .name = "mmproj", .flags = "-mm --mmproj", .env = "LLAMA_ARG_MMPROJ", .def = "",
	  .what = "multimodal projector file" },
	{},
};

/* the argument parser's library (common/arg.cpp), or the program itself in older builds */
static const char *const llama_build_files[] = { "libllama-common.so", "libcommon.so", NULL };

static const struct preset llama = {
	.name = "llama",
	.description = "llama.cpp: the exported libllama API (include/llama.h)",
	.phases = llama_phases,
	.markers = llama_markers,
	.sticky = llama_sticky,
	.request_phase = "prompt",
	.idle = llama_idle,
	.request_end = llama_request_end,
	.request_lead = llama_lead,
	.relabel = llama_relabel,
	.settings = llama_settings,
	.build_files = llama_build_files,
	.slots_setting = "parallel",
	.shared_setting = "kv_unified",
};

/* ---- the list ---- */

const struct preset *const presets[] = {
	&llama,
	NULL,
};

const struct preset *presets__find(const char *name)
{
	unsigned int i;

	for (i = 0; presets[i]; i++)
		if (!strcmp(presets[i]->name, name))
			return presets[i];
	return NULL;
}

void presets__names(char *buf, size_t len)
{
	size_t n = 0;
	unsigned int i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; presets[i] && n < len; i++)
		n += snprintf(buf + n, len - n, "%s, ", presets[i]->name);
	if (n < len)
		snprintf(buf + n, len - n, "%s", PRESETS_NONE);
}

static const char *const op_str[MP_NR_OPS] = {
	[MP_OP_EQ] = "==", [MP_OP_NE] = "!=", [MP_OP_LT] = "<", [MP_OP_LE] = "<=",
	[MP_OP_GT] = ">", [MP_OP_GE] = ">=", [MP_OP_BITS] = "&",
};

void presets__rule_str(const struct preset_rule *r, const char *marker_phase, char *buf,
		       size_t len)
{
	const char *op = r->op < MP_NR_OPS ? op_str[r->op] : "?";
	char where[32], value[32];
	size_t n, i;

	if (r->src == MP_SRC_STACK)
		snprintf(where, sizeof(where), "sp+%u", r->at);
	else
		snprintf(where, sizeof(where), "arg %u", r->at);
	if (r->op == MP_OP_BITS)
		snprintf(value, sizeof(value), "%#" PRIx64, (uint64_t)r->value);
	else if (r->is_signed)
		snprintf(value, sizeof(value), "%" PRId64, (int64_t)r->value);
	else
		snprintf(value, sizeof(value), "%" PRIu64, (uint64_t)r->value);
	n = snprintf(buf, len, "%sint%u at %s %s %s ? %s : %s", r->is_signed ? "" : "u",
		     r->width * 8, where, op, value, r->then_phase ? r->then_phase : "?",
		     r->else_phase ? r->else_phase : marker_phase);
	if (r->arr_at && n < len)
		n += snprintf(buf + n, len - n, "; with bytes at *(sp+%u), first n-%u: all set ? %s"
			      " : none ? %s : %s", r->arr_at, r->arr_trim, r->all_phase,
			      r->none_phase, r->mixed_phase);
	for (i = 0; r->guard_unseen && r->guard_unseen[i] && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? "/" : "; before any ",
			      r->guard_unseen[i]);
	if (r->guard_unseen && r->guard_max && n < len)
		n += snprintf(buf + n, len - n, ", if <= %" PRId64, (int64_t)r->guard_max);
	if (r->guard_unseen && n < len)
		n += snprintf(buf + n, len - n, ": %s", r->guard_phase);
	if (r->record && n < len)
		snprintf(buf + n, len - n, "; records %s%s%.0u", r->record == MP_REC_CTX ?
			 "n_ctx" : r->record == MP_REC_BYTES ? "bytes" : "tokens",
			 r->rec_arg ? " of arg " : "", r->rec_arg);
}

void presets__fprint(FILE *f)
{
	const struct preset_marker *mk;
	const struct preset *p;
	unsigned int i, j;
	char rule[320];

	for (i = 0; (p = presets[i]); i++) {
		fprintf(f, "%s%s: %s\n  phases: startup", i ? "\n" : "", p->name, p->description);
		for (j = 0; p->phases[j]; j++)
			fprintf(f, ", %s", p->phases[j]);
		fprintf(f, "\n  markers:\n");
		for (mk = p->markers; mk->symbol; mk++) {
			fprintf(f, "    %-10s %s%s%s", mk->request ? "(request)" : mk->phase,
				mk->binary ? mk->binary : "", mk->binary ? ":" : "", mk->symbol);
			if (mk->rule) {
				presets__rule_str(mk->rule, mk->phase, rule, sizeof(rule));
				fprintf(f, "  (%s)", rule);
			}
			if (mk->ret_phase)
				fprintf(f, "  (its return: %s)", mk->ret_phase);
			fputc('\n', f);
		}
		for (j = 0; p->relabel && p->relabel[j].at; j++) {
			const struct preset_relabel *rl = &p->relabel[j];
			unsigned int k;

			fprintf(f, "  entering %s shows what came since it was last entered as:",
				rl->at);
			for (k = 0; rl->from[k] && rl->to[k]; k++)
				fprintf(f, "%s %s -> %s", k ? "," : "", rl->from[k], rl->to[k]);
			fputc('\n', f);
		}
	}
	fprintf(f, "%s%s: no preset markers, only --phase ones (before any marker: startup)\n",
		i ? "\n" : "", PRESETS_NONE);
}

/* ---- well-formedness ---- */

static int check_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A preset's phase name: as --phase's, and ':' may group names ("probe:load"). */
static bool preset_name_ok(const char *name)
{
	char buf[PHASE_NAME_MAX];
	size_t i;

	if (!name || strlen(name) >= sizeof(buf) || name[0] == ':')
		return false;
	for (i = 0; name[i]; i++)
		buf[i] = name[i] == ':' ? '_' : name[i];
	buf[i] = '\0';
	return phasespec__valid_name(buf);
}

static bool has_phase(const struct preset *p, const char *name)
{
	unsigned int i;

	for (i = 0; name && p->phases[i]; i++)
		if (!strcmp(p->phases[i], name))
			return true;
	return false;
}

static int check_rule(const struct preset *p, const struct preset_marker *mk, char *err,
		      size_t errlen)
{
	const struct preset_rule *r = mk->rule;
	unsigned int i;

	if (r->src == MP_SRC_ARG && (r->at < 1 || r->at > 6))
		return check_err(err, errlen, "%s: %s: argument %u is not 1..6", p->name,
				 mk->symbol, r->at);
	if (r->src != MP_SRC_ARG && r->src != MP_SRC_STACK)
		return check_err(err, errlen, "%s: %s: bad source %u", p->name, mk->symbol,
				 r->src);
	if (r->width != 4 && r->width != 8)
		return check_err(err, errlen, "%s: %s: width %u is not 4 or 8", p->name,
				 mk->symbol, r->width);
	if (r->op >= MP_NR_OPS)
		return check_err(err, errlen, "%s: %s: bad comparison %u", p->name, mk->symbol,
				 r->op);
	if (!has_phase(p, r->then_phase))
		return check_err(err, errlen, "%s: %s: rule phase '%s' is not in the preset",
				 p->name, mk->symbol, r->then_phase ? r->then_phase : "(null)");
	if (r->else_phase && !has_phase(p, r->else_phase))
		return check_err(err, errlen, "%s: %s: rule phase '%s' is not in the preset",
				 p->name, mk->symbol, r->else_phase);
	if (r->arr_at && (!has_phase(p, r->all_phase) || !has_phase(p, r->none_phase) ||
			  !has_phase(p, r->mixed_phase) || r->arr_at % 8))
		return check_err(err, errlen, "%s: %s: array rule needs an 8-byte aligned "
				 "offset and all/none/mixed phases of the preset", p->name,
				 mk->symbol);
	if (r->guard_unseen && (!has_phase(p, r->guard_phase) || !r->guard_unseen[0]))
		return check_err(err, errlen, "%s: %s: guard needs phases and a phase of the "
				 "preset", p->name, mk->symbol);
	for (i = 0; r->guard_unseen && r->guard_unseen[i]; i++)
		if (!has_phase(p, r->guard_unseen[i]))
			return check_err(err, errlen, "%s: %s: guard phase '%s' is not in the "
					 "preset", p->name, mk->symbol, r->guard_unseen[i]);
	if (r->record > MP_REC_BYTES || r->record == MP_REC_REQUEST)
		return check_err(err, errlen, "%s: %s: bad record %u", p->name, mk->symbol,
				 r->record);
	if (r->rec_arg > 6)
		return check_err(err, errlen, "%s: %s: recorded argument %u is not 1..6", p->name,
				 mk->symbol, r->rec_arg);
	return 0;
}

int presets__check(const struct preset *p, char *err, size_t errlen)
{
	const struct preset_marker *mk;
	unsigned int i, j, nrules = 0;
	int e;

	err[0] = '\0';
	if (!p->name || !p->name[0] || !phasespec__valid_name(p->name) ||
	    !strcmp(p->name, PRESETS_NONE) || !strcmp(p->name, "help"))
		return check_err(err, errlen, "bad preset name '%s'", p->name ? p->name : "");
	if (!p->description || !p->description[0] || strchr(p->description, '\n'))
		return check_err(err, errlen, "%s: the description must be one line", p->name);
	if (!p->phases || !p->markers)
		return check_err(err, errlen, "%s: no phases or no markers", p->name);
	for (i = 0; p->phases[i]; i++) {
		if (!preset_name_ok(p->phases[i]) || !strcmp(p->phases[i], "startup"))
			return check_err(err, errlen, "%s: bad phase name '%s'", p->name,
					 p->phases[i]);
		for (j = 0; j < i; j++)
			if (!strcmp(p->phases[i], p->phases[j]))
				return check_err(err, errlen, "%s: phase '%s' twice", p->name,
						 p->phases[i]);
	}
	if (i + 1 > MP_MAX_PHASES)
		return check_err(err, errlen, "%s: %u phases (max %d with startup)", p->name, i,
				 MP_MAX_PHASES);
	for (mk = p->markers; mk->symbol; mk++) {
		if (!mk->symbol[0] || strlen(mk->symbol) >= PHASE_SYM_MAX ||
		    (mk->binary && (!mk->binary[0] || strlen(mk->binary) >= PHASE_BIN_MAX)))
			return check_err(err, errlen, "%s: bad symbol or binary '%s'", p->name,
					 mk->symbol);
		if (mk->request && (mk->phase || mk->rule || mk->ret_phase))
			return check_err(err, errlen, "%s: %s: a request marker enters no phase",
					 p->name, mk->symbol);
		if (mk->request)
			continue;
		if (!has_phase(p, mk->phase))
			return check_err(err, errlen, "%s: %s: '%s' is not a phase of the preset",
					 p->name, mk->symbol, mk->phase ? mk->phase : "(null)");
		if (mk->ret_phase && !has_phase(p, mk->ret_phase))
			return check_err(err, errlen, "%s: %s: return phase '%s' is not in the "
					 "preset", p->name, mk->symbol, mk->ret_phase);
		if (!mk->rule)
			continue;
		e = check_rule(p, mk, err, errlen);
		if (e)
			return e;
		nrules++;
	}
	if (mk == p->markers)
		return check_err(err, errlen, "%s: no markers", p->name);
	for (i = 0; p->relabel && p->relabel[i].at; i++) {
		const struct preset_relabel *rl = &p->relabel[i];

		if (i + 1 > PRESETS_MAX_RELABELS || !has_phase(p, rl->at) || !rl->from ||
		    !rl->to || !rl->from[0])
			return check_err(err, errlen, "%s: relabel %u: needs a phase of the preset "
					 "and phases to relabel (max %d)", p->name, i,
					 PRESETS_MAX_RELABELS);
		for (j = 0; rl->from[j]; j++)
			if (!rl->to[j] || !has_phase(p, rl->from[j]) || !has_phase(p, rl->to[j]) ||
			    !strcmp(rl->from[j], rl->to[j]) || !strcmp(rl->from[j], rl->at))
				return check_err(err, errlen, "%s: relabel at %s: '%s' to '%s' "
						 "needs two other phases of the preset", p->name,
						 rl->at, rl->from[j], rl->to[j] ? rl->to[j] : "(null)");
		if (rl->to[j])
			return check_err(err, errlen, "%s: relabel at %s: more to than from",
					 p->name, rl->at);
	}
	if (nrules >= MP_MAX_RULES)
		return check_err(err, errlen, "%s: %u rules (max %d)", p->name, nrules,
				 MP_MAX_RULES - 1);
	return 0;
}
