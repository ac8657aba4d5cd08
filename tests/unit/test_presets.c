// SPDX-License-Identifier: GPL-2.0
/*
 * Presets as data: the llama table becomes the expected markers, rules and cookies; every
 * built-in preset is well formed; the rule comparison BPF runs (mp_rule__hit).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "collect/phases.h"
#include "collect/presets.h"

static struct phases ph;

static const struct marker *marker_of(const struct phases *p, const char *symbol)
{
	unsigned int i;

	for (i = 0; i < p->nmarkers; i++)
		if (!strcmp(p->markers[i].symbol, symbol))
			return &p->markers[i];
	return NULL;
}

static int id(const char *name)
{
	return phases__find(&ph, name);
}

/* A marker without a rule: its phase, rule 0, the cookie is the phase alone. */
static bool plain(const char *symbol, const char *phase)
{
	const struct marker *mk = marker_of(&ph, symbol);

	if (!ASSERT_OK_PTR(mk, symbol))
		return false;
	return ASSERT_EQ(mk->phase, (__u32)id(phase), symbol) &&
	       ASSERT_EQ(mk->rule, 0, "no rule") &&
	       ASSERT_STREQ(mk->binary, "", "any file") &&
	       ASSERT_FALSE(mk->user, "preset marker") &&
	       ASSERT_EQ(phases__cookie(mk), (__u64)id(phase), "cookie");
}

/* A marker with a rule: what BPF gets in cfg.rules[] and the cookie. */
static bool ruled(const char *symbol, const char *phase, __u32 src, __u32 at, __u32 width,
		  __u32 is_signed, __u32 op, __u64 value, const char *then_phase,
		  const char *else_phase)
{
	const struct marker *mk = marker_of(&ph, symbol);
	const struct mp_rule *r;
	__u64 cookie;

	if (!ASSERT_OK_PTR(mk, symbol) || !ASSERT_EQ(mk->phase, (__u32)id(phase), "phase") ||
	    !ASSERT_GT(mk->rule, 0, "has a rule") || !ASSERT_LT(mk->rule, ph.nrules, "in range"))
		return false;
	r = &ph.rules[mk->rule];
	cookie = phases__cookie(mk);
	return ASSERT_EQ(r->src, src, "src") && ASSERT_EQ(r->at, at, "at") &&
	       ASSERT_EQ(r->width, width, "width") &&
	       ASSERT_EQ(r->is_signed, is_signed, "signed") &&
	       ASSERT_EQ(r->op, op, "op") && ASSERT_EQ(r->value, value, "value") &&
	       ASSERT_EQ(r->then_phase, (__u32)id(then_phase), "then") &&
	       ASSERT_EQ(r->else_phase, (__u32)id(else_phase), "else") &&
	       ASSERT_EQ(cookie, MP_COOKIE(id(phase), mk->rule), "cookie") &&
	       ASSERT_EQ(MP_COOKIE_PHASE(cookie), (__u32)id(phase), "cookie phase") &&
	       ASSERT_EQ(MP_COOKIE_RULE(cookie), mk->rule, "cookie rule");
}

TEST(presets_llama_table)
{
	static const char *const names[] = { "startup", "probe:load", "probe:context",
					     "probe:teardown", "load", "context", "warmup",
					     "tokenize", "prompt", "generate", "mixed", "host",
					     "state", "checkpoint", "teardown" };
	const struct preset *llama = presets__find("llama");
	struct mp_config cfg;
	unsigned int i;

	if (!ASSERT_OK_PTR(llama, "llama preset") || !ASSERT_OK(phases__init(&ph, llama), "init"))
		return;
	ASSERT_TRUE(ph.preset == llama, "preset kept");
	ASSERT_EQ(ph.nphases, 15, "phases");
	for (i = 0; i < ph.nphases && i < 15; i++)
		ASSERT_STREQ(ph.names[i], names[i], "phase order");
	ASSERT_EQ(ph.nmarkers, 24, "markers");
	ASSERT_EQ(ph.nrules, 10, "rules: none + 9");
	/* llama-server's requests: its HTTP handlers, in the server library or the binary */
	for (i = 0; i < ph.nmarkers; i++) {
		const struct marker *mk = &ph.markers[i];

		if (!mk->request)
			continue;
		ASSERT_TRUE(!strcmp(mk->binary, "libllama-server-impl.so") ||
			    !strcmp(mk->binary, "llama-server"), mk->binary);
		ASSERT_TRUE(strstr(mk->symbol, "server_routes::handle_") == mk->symbol, mk->symbol);
		ASSERT_EQ(phases__cookie(mk), MP_COOKIE_REQ, "a request's cookie: no phase");
	}

	plain("llama_model_load_from_file", "load");
	plain("llama_model_load_from_splits", "load");
	plain("llama_load_model_from_file", "load");
	plain("llama_tokenize", "tokenize");
	plain("llama_detokenize", "tokenize");
	plain("llama_state_get_size", "state");
	plain("llama_state_seq_get_data", "state");
	plain("llama_state_seq_save_file", "state");
	ruled("llama_model_free", "teardown", MP_SRC_ARG, 1, 8, 0, MP_OP_EQ, 0, "teardown",
	      "teardown");
	ruled("llama_free_model", "teardown", MP_SRC_ARG, 1, 8, 0, MP_OP_EQ, 0, "teardown",
	      "teardown");
	/* struct llama_batch by value: int32_t n_tokens at sp + 8; > 1 is prompt eval */
	if (ruled("llama_decode", "prompt", MP_SRC_STACK, 8, 4, 1, MP_OP_GT, 1, "prompt",
		  "generate")) {
		const struct marker *mk = marker_of(&ph, "llama_decode");
		const struct mp_rule *r = &ph.rules[mk->rule];

		/* int8_t *logits, the batch's 7th field, at sp + 8 + 48; the last token's flag
		 * is a prompt's own: n_tokens - 1 counted */
		ASSERT_EQ(r->arr_at, 56, "logits at sp+56");
		ASSERT_EQ(r->arr_trim, 1, "last flag not counted");
		ASSERT_EQ(r->all_phase, (__u32)id("generate"), "all set: generate");
		ASSERT_EQ(r->none_phase, (__u32)id("prompt"), "none set: prompt");
		ASSERT_EQ(r->mixed_phase, (__u32)id("mixed"), "some: mixed");
		ASSERT_EQ(r->record, MP_REC_TOKENS, "records tokens");
		/* the first decode before any tokenize: the warm-up (no llama_set_warmup) */
		ASSERT_EQ(r->guard_phase, (__u32)id("warmup"), "guard: warmup");
		ASSERT_EQ(r->guard_mask, (1U << id("tokenize")) | (1U << id("prompt")) |
			  (1U << id("generate")) | (1U << id("mixed")),
			  "before any tokenize or decode");
		ASSERT_EQ(r->guard_max, 2, "of at most two tokens");
		ASSERT_EQ(mk->ret_phase, id("host"), "returns to host");
		ASSERT_EQ(phases__ret_cookie(mk), MP_COOKIE_RET | (__u64)id("host"), "ret cookie");
	}
	/* struct llama_context_params by value: uint32_t n_ctx at sp + 8, recorded */
	if (ruled("llama_init_from_model", "context", MP_SRC_STACK, 8, 4, 0, MP_OP_EQ, 0,
		  "context", "context"))
		ASSERT_EQ(ph.rules[marker_of(&ph, "llama_init_from_model")->rule].record,
			  MP_REC_CTX, "records n_ctx");
	/* llama_set_warmup(ctx, bool): the low byte */
	ruled("llama_set_warmup", "warmup", MP_SRC_ARG, 2, 4, 0, MP_OP_BITS, 0xff, "warmup",
	      "host");
	/* llama_free before any decode phase: the --fit probe */
	if (ruled("llama_free", "teardown", MP_SRC_ARG, 1, 8, 0, MP_OP_EQ, 0, "teardown",
		  "teardown")) {
		const struct mp_rule *r = &ph.rules[marker_of(&ph, "llama_free")->rule];

		ASSERT_EQ(r->guard_phase, (__u32)id("probe:teardown"), "guard: probe:teardown");
		ASSERT_EQ(r->guard_mask, (1U << id("warmup")) | (1U << id("prompt")) |
			  (1U << id("generate")) | (1U << id("mixed")), "decode phases");
	}
	ASSERT_EQ(ph.sticky_mask, 1U << id("warmup"), "warmup sticky");
	ASSERT_EQ(ph.request_phase, id("prompt"), "requests start at prompt");
	ASSERT_EQ(ph.lead_mask, 1U << id("tokenize"), "led by tokenize");
	/* flags & LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY: a context checkpoint, else a state save */
	ruled("llama_state_seq_get_size_ext", "state", MP_SRC_ARG, 3, 4, 0, MP_OP_BITS, 1,
	      "checkpoint", "state");
	ruled("llama_state_seq_get_data_ext", "state", MP_SRC_ARG, 5, 4, 0, MP_OP_BITS, 1,
	      "checkpoint", "state");

	memset(&cfg, 0x55, sizeof(cfg));
	phases__fill_cfg(&ph, &cfg);
	ASSERT_EQ(cfg.nrules, 10, "cfg.nrules");
	ASSERT_EQ(cfg.sticky_mask, ph.sticky_mask, "cfg.sticky_mask");
	ASSERT_OK(memcmp(cfg.rules, ph.rules, sizeof(cfg.rules)), "cfg.rules");
}

TEST(presets_none)
{
	struct mp_config cfg;

	ASSERT_NULL(presets__find(PRESETS_NONE), "none is no preset");
	ASSERT_NULL(presets__find("nosuch"), "unknown");
	if (!ASSERT_OK(phases__init(&ph, NULL), "init"))
		return;
	ASSERT_EQ(ph.nphases, 1, "startup only");
	ASSERT_STREQ(ph.names[0], "startup", "phase 0");
	ASSERT_EQ(ph.nmarkers, 0, "no markers");
	ASSERT_EQ(ph.nrules, 0, "no rules");
	memset(&cfg, 0x55, sizeof(cfg));
	phases__fill_cfg(&ph, &cfg);
	ASSERT_EQ(cfg.nrules, 0, "cfg.nrules");
}

/* Every built-in preset: well formed, found by name, and fits the BPF side's limits. */
TEST(presets_well_formed)
{
	const struct preset *p;
	unsigned int i, j, n = 0;
	char err[256];

	for (i = 0; (p = presets[i]); i++, n++) {
		if (!ASSERT_OK(presets__check(p, err, sizeof(err)), p->name)) {
			printf("%s\n", err);
			continue;
		}
		ASSERT_TRUE(presets__find(p->name) == p, "found by name (unique)");
		if (!ASSERT_OK(phases__init(&ph, p), "phases__init"))
			continue;
		ASSERT_LE(ph.nrules, MP_MAX_RULES, "rules fit");
		for (j = 0; j < ph.nmarkers; j++) {
			const struct marker *mk = &ph.markers[j];

			ASSERT_LT(mk->phase, ph.nphases, "marker phase");
			ASSERT_LT(mk->rule, ph.nrules ? ph.nrules : 1, "rule index");
			ASSERT_EQ(phases__cookie(mk) >> 16, mk->request ? MP_COOKIE_REQ >> 16 : 0,
				  "cookie has phase and rule only (or is a request's)");
		}
		for (j = 1; j < ph.nrules; j++) {
			ASSERT_LT(ph.rules[j].then_phase, ph.nphases, "then phase");
			ASSERT_LT(ph.rules[j].else_phase, ph.nphases, "else phase");
		}
	}
	ASSERT_GE(n, 1, "built-in presets");
}

TEST(presets_check_rejects)
{
	static const char *const phases[] = { "a", "b", NULL };
	static const char *const bad_phases[] = { "a", "a", NULL };
	struct preset_rule rule = { .src = MP_SRC_ARG, .at = 1, .width = 4, .op = MP_OP_EQ,
				    .then_phase = "a" };
	struct preset_marker mk[] = { { .phase = "a", .symbol = "f", .rule = &rule }, {} };
	struct preset p = { .name = "t", .description = "test", .phases = phases, .markers = mk };
	char err[256];

	ASSERT_OK(presets__check(&p, err, sizeof(err)), "the good one");
	rule.at = 7;
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "argument 7");
	ASSERT_TRUE(strstr(err, "argument 7") != NULL, "says why");
	rule.at = 0;
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "argument 0");
	rule.at = 1;
	rule.width = 2;
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "width 2");
	rule.width = 8;
	rule.op = MP_NR_OPS;
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "op");
	rule.op = MP_OP_BITS;
	rule.else_phase = "c";
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "else phase not in the preset");
	rule.else_phase = NULL;
	rule.then_phase = NULL;
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "no then phase");
	rule.then_phase = "b";
	mk[0].phase = "startup";
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "marker phase not in the preset");
	mk[0].phase = "a";
	p.phases = bad_phases;
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "phase twice");
	p.phases = phases;
	p.name = "none";
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "reserved name");
	p.name = "t";
	p.description = "two\nlines";
	ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "description");
	p.description = "test";
	ASSERT_OK(presets__check(&p, err, sizeof(err)), "good again");
	{
		static const char *const ph3[] = { "a", "b", "g:a", NULL };
		static const char *const from[] = { "a", NULL }, *const to[] = { "g:a", NULL };
		static const char *const to2[] = { "c", NULL }, *const two[] = { "g:a", "b", NULL };
		struct preset_relabel rl[] = { { .at = "b", .from = from, .to = to }, {} };

		p.phases = ph3;
		p.relabel = rl;
		ASSERT_OK(presets__check(&p, err, sizeof(err)), "relabel, ':' in a name");
		rl[0].to = to2;
		ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "to not in the preset");
		rl[0].to = two;
		ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "more to than from");
		rl[0].to = to;
		rl[0].at = "a";
		ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "at relabels itself");
		rl[0].at = "b";
		static const char *const colon[] = { "a", "b", ":x", NULL };
		p.phases = colon;
		p.relabel = NULL;
		ASSERT_EQ(presets__check(&p, err, sizeof(err)), -EINVAL, "leading ':'");
		p.phases = phases;
	}
}

/* The comparison BPF runs on the value it read. */
TEST(presets_rule_hit)
{
	__u64 m5 = (__u64)-5LL, m5_32 = (__u32)-5;

	/* llama_decode's n_tokens: int32 > 1 */
	ASSERT_TRUE(mp_rule__hit(MP_OP_GT, 4, 1, 2, 1), "2 tokens: prompt");
	ASSERT_FALSE(mp_rule__hit(MP_OP_GT, 4, 1, 1, 1), "1 token: generate");
	ASSERT_FALSE(mp_rule__hit(MP_OP_GT, 4, 1, m5_32, 1), "int32 -5 > 1");
	ASSERT_TRUE(mp_rule__hit(MP_OP_GT, 4, 0, m5_32, 1), "uint32 0xfffffffb > 1");
	/* a 4-byte value ignores the high half of the register */
	ASSERT_FALSE(mp_rule__hit(MP_OP_GT, 4, 1, 0x100000001ULL, 1), "low half only");
	ASSERT_TRUE(mp_rule__hit(MP_OP_GT, 8, 1, 0x100000001ULL, 1), "8 bytes: all");
	ASSERT_TRUE(mp_rule__hit(MP_OP_EQ, 4, 1, m5_32, m5), "int32 -5 == -5");
	ASSERT_FALSE(mp_rule__hit(MP_OP_EQ, 4, 0, m5_32, m5), "uint32 not sign-extended");
	ASSERT_TRUE(mp_rule__hit(MP_OP_EQ, 8, 0, 7, 7), "==");
	ASSERT_FALSE(mp_rule__hit(MP_OP_EQ, 8, 0, 7, 8), "== false");
	ASSERT_TRUE(mp_rule__hit(MP_OP_NE, 8, 0, 7, 8), "!=");
	ASSERT_FALSE(mp_rule__hit(MP_OP_NE, 8, 0, 7, 7), "!= false");
	ASSERT_TRUE(mp_rule__hit(MP_OP_LT, 8, 1, m5, 0), "int64 -5 < 0");
	ASSERT_FALSE(mp_rule__hit(MP_OP_LT, 8, 0, m5, 0), "uint64 < 0");
	ASSERT_FALSE(mp_rule__hit(MP_OP_LT, 8, 0, 3, 3), "3 < 3");
	ASSERT_TRUE(mp_rule__hit(MP_OP_LE, 8, 0, 3, 3), "3 <= 3");
	ASSERT_FALSE(mp_rule__hit(MP_OP_LE, 8, 0, 4, 3), "4 <= 3");
	ASSERT_TRUE(mp_rule__hit(MP_OP_LE, 4, 1, m5_32, m5), "-5 <= -5");
	ASSERT_TRUE(mp_rule__hit(MP_OP_GE, 8, 0, 3, 3), "3 >= 3");
	ASSERT_FALSE(mp_rule__hit(MP_OP_GE, 8, 0, 2, 3), "2 >= 3");
	ASSERT_FALSE(mp_rule__hit(MP_OP_GE, 8, 1, m5, 0), "-5 >= 0");
	ASSERT_FALSE(mp_rule__hit(MP_OP_GT, 8, 0, 3, 3), "3 > 3");
	/* flags & PARTIAL_ONLY */
	ASSERT_TRUE(mp_rule__hit(MP_OP_BITS, 4, 0, 1, 1), "bit set");
	ASSERT_TRUE(mp_rule__hit(MP_OP_BITS, 4, 0, 3, 1), "bit set among others");
	ASSERT_FALSE(mp_rule__hit(MP_OP_BITS, 4, 0, 2, 1), "bit clear");
	ASSERT_FALSE(mp_rule__hit(MP_OP_BITS, 4, 0, 0x100000000ULL, 1ULL << 32), "low half");
	ASSERT_FALSE(mp_rule__hit(MP_NR_OPS, 8, 0, 1, 1), "unknown op: false");
}

TEST(presets_strings)
{
	const struct preset *llama = presets__find("llama");
	char buf[160], *out = NULL;
	size_t len = 0;
	FILE *f;

	if (!ASSERT_OK_PTR(llama, "llama") || !ASSERT_OK(phases__init(&ph, llama), "init"))
		return;
	ASSERT_STREQ(phases__marker_str(&ph, marker_of(&ph, "llama_decode"), buf, sizeof(buf)),
		     "prompt/generate/mixed/warmup", "decode marker");
	ASSERT_STREQ(phases__marker_str(&ph, marker_of(&ph, "llama_state_seq_get_data_ext"), buf,
					sizeof(buf)), "checkpoint/state", "ext marker");
	ASSERT_STREQ(phases__marker_str(&ph, marker_of(&ph, "llama_free"), buf, sizeof(buf)),
		     "teardown/probe:teardown", "guarded marker");
	ASSERT_STREQ(phases__marker_str(&ph, marker_of(&ph, "llama_init_from_model"), buf,
					sizeof(buf)), "context", "one phase either way");
	presets__names(buf, sizeof(buf));
	ASSERT_STREQ(buf, "llama, none", "names");

	f = open_memstream(&out, &len);
	if (!ASSERT_OK_PTR(f, "memstream"))
		return;
	presets__fprint(f);
	fclose(f);
	ASSERT_TRUE(!strncmp(out, "llama: ", 7), "starts with the llama preset");
	ASSERT_TRUE(strstr(out, "phases: startup, probe:load, probe:context, probe:teardown, "
			   "load, context, warmup, tokenize, prompt, generate, mixed, host, "
			   "state, checkpoint, teardown\n") != NULL, "phases line");
	ASSERT_TRUE(strstr(out, "  entering probe:teardown shows what came since it was last "
			   "entered as: load -> probe:load, context -> probe:context\n") != NULL,
		    "relabel line");
	ASSERT_TRUE(strstr(out, "llama_decode  (int32 at sp+8 > 1 ? prompt : generate; with "
			   "bytes at *(sp+56), first n-1: all set ? generate : none ? prompt : "
			   "mixed; before any tokenize/prompt/generate/mixed, if <= 2: warmup; "
			   "records tokens)  (its return: host)\n") != NULL, "decode rule");
	ASSERT_TRUE(strstr(out, "llama_state_seq_get_size_ext  (uint32 at arg 3 & 0x1 ? "
			   "checkpoint : state)\n") != NULL, "ext rule");
	ASSERT_TRUE(strstr(out, "\nnone: ") != NULL, "none listed");
	free(out);
}
