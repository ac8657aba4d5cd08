// SPDX-License-Identifier: GPL-2.0
/*
 * Where it stops (model/ceilings): each cause's ceiling from its rule and the engine's
 * settings, the units and their size, the plateau, the requests left before the room is
 * gone, and the settings that would make it fit.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lib/causerules.h"
#include "model/ceilings.h"
#include "model/model.h"

#define MS	1000000ULL
#define MIB	(1ULL << 20)

static const char rules[] =
	"cause prompt cache\n"
	"remedy --cache-ram MiB caps it\n"
	"frame server_prompt_cache::*\n"
	"ceiling setting cache_ram MiB units state\n"
	"cause context checkpoints\n"
	"frame *create_checkpoint*\n"
	"ceiling units checkpoint x ctx_checkpoints x parallel\n"
	"cause tokenizer\n"
	"frame llama_tokenize*\n";

enum { STATE = 1, CHECKPOINT, NPH };

static void set(struct model_engine *e, const char *name, const char *value, const char *flag)
{
	struct engine_setting *s = &e->settings[e->nsettings++];

	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->value, sizeof(s->value), "%s", value);
	snprintf(s->flag, sizeof(s->flag), "%s", flag);
	s->src = ENGINE_SRC_FLAG;
}

/*
 * Four requests of 10 MiB each: the prompt cache 8 (an entry a request, the last three
 * saved), a checkpoint 1 (two made a request, 2 MiB each as the engine said: memory reused),
 * the tokenizer 1; the engine at 100 MiB; the cache capped at 64 MiB, 4 checkpoints in each
 * of 2 slots.
 */
static struct model *new_model(void)
{
	static const char *const pc[] = { "main", "server_prompt_cache::alloc" };
	static const char *const ck[] = { "main", "server_context::create_checkpoint" };
	static const char *const tok[] = { "main", "llama_tokenize" };
	struct model *m = calloc(1, sizeof(*m));
	struct model_proc *p;
	char err[256];
	unsigned int i;

	if (!m)
		return NULL;
	model__init(m, 100, 1000 * MS);
	model__set_phase_name(m, STATE, "state");
	model__set_phase_name(m, CHECKPOINT, "checkpoint");
	if (causerules__parse(&m->rules, rules, "t", err, sizeof(err)) ||
	    causerules__use_preset(&m->rules, NULL))
		goto fail;
	for (i = 0; i < 4; i++) {
		struct model_request *r = &m->requests[m->nrequests++];
		__u64 t = 2000 * MS + i * 100 * MS;

		r->start_ns = t;
		r->end_ns = t + 100 * MS;
		r->pid = 100;
		r->rss_start[MP_ANON] = (__s64)(60 + 10 * i) * (__s64)MIB;
		r->rss_end[MP_ANON] = r->rss_start[MP_ANON] + 10 * (__s64)MIB;
		if (profile__add(&m->profile, STATE, "x", pc, 2, 8 * MIB) ||
		    profile__add_when(&m->profile, 100, 100, t + 10 * MS, 8 * MIB) ||
		    profile__add(&m->profile, CHECKPOINT, "x", ck, 2, 1 * MIB) ||
		    profile__add_when(&m->profile, 100, 100, t + 20 * MS, 1 * MIB) ||
		    profile__add(&m->profile, 0, "x", tok, 2, 1 * MIB) ||
		    profile__add_when(&m->profile, 100, 100, t + 30 * MS, 1 * MIB))
			goto fail;
	}
	m->rec_calls[CHECKPOINT] = 8;
	m->rec_bytes[CHECKPOINT] = 16 * MIB;
	m->rec_max[CHECKPOINT] = 2 * MIB;
	m->rec_calls[STATE] = 3;
	m->rec_max[STATE] = 6 * MIB;		/* the state alone, without its checkpoints */
	m->engine.known = true;
	set(&m->engine, "cache_ram", "64", "--cache-ram");
	set(&m->engine, "ctx_checkpoints", "4", "--ctx-checkpoints");
	set(&m->engine, "parallel", "2", "--parallel");
	p = model__main(m);
	if (!p)
		goto fail;
	p->rss[MP_ANON] = 100 * MIB;
	p->peak_total = 100 * MIB;
	return m;
fail:
	model__free(m);
	free(m);
	return NULL;
}

static const struct ceiling *find(const struct ceilings *cs, const char *name)
{
	unsigned int i;

	for (i = 0; i < cs->n; i++)
		if (!strcmp(cs->v[i].cause->name, name))
			return &cs->v[i];
	return NULL;
}

static void room(struct model *m, __s64 bytes)
{
	m->room_cgroup_known = true;
	m->room_cgroup = bytes;
	m->room_rss = 100 * MIB;
}

TEST(ceilings_from_settings_units_and_requests)
{
	struct model *m = new_model();
	const struct ceiling *pc, *ck, *tok;
	struct ceilings cs;

	if (!ASSERT_TRUE(m != NULL, "model"))
		return;
	if (!ASSERT_OK(ceilings__compute(m, &cs), "compute"))
		goto cleanup;
	ASSERT_TRUE(cs.have, "rules give ceilings");
	pc = find(&cs, "prompt cache");
	ck = find(&cs, "context checkpoints");
	tok = find(&cs, "tokenizer");
	if (!ASSERT_TRUE(pc && ck && tok, "all three"))
		goto cleanup;
	/* the cache: its cap, its entries, each the most it held (its checkpoints included) */
	ASSERT_EQ(pc->state, CEILING_BOUNDED, "cache bounded");
	ASSERT_EQ(pc->now, 32 * MIB, "cache now");
	ASSERT_EQ(pc->ceiling, 64 * MIB, "cache ceiling: --cache-ram");
	ASSERT_EQ(pc->units, 3ULL, "cache entries");
	ASSERT_EQ(pc->unit_bytes, 32 * MIB / 3, "an entry: what each added, over the state");
	ASSERT_TRUE(pc->per_request > 8.0 * MIB - 1 && pc->per_request < 8.0 * MIB + 1,
		    "cache per request");
	ASSERT_STREQ(pc->how, "--cache-ram 64; 3 entries, 10.7 MiB each", "cache how");
	/* checkpoints: 4 a slot x 2 slots, each the size the engine said (over the growth) */
	ASSERT_EQ(ck->units, 8ULL, "checkpoints made");
	ASSERT_EQ(ck->unit_bytes, 2 * MIB, "a checkpoint");
	ASSERT_EQ(ck->max_units, 8ULL, "at most");
	ASSERT_EQ(ck->ceiling, 16 * MIB, "checkpoints ceiling");
	ASSERT_EQ(tok->state, CEILING_UNBOUNDED, "tokenizer unbounded");
	/* bounded first, the largest ceiling first */
	ASSERT_TRUE(cs.v[0].cause == pc->cause && cs.v[1].cause == ck->cause, "order");
	ASSERT_EQ(cs.to_fill, (32 + 12) * MIB, "to fill");
	ASSERT_EQ((__u64)cs.plateau, (100 + 44) * MIB, "plateau");
	ASSERT_TRUE(cs.unbounded_per_request > 1.0 * MIB - 1 &&
		    cs.unbounded_per_request < 1.0 * MIB + 1, "unbounded per request");
	ASSERT_FALSE(cs.room_known, "no room read");
	ASSERT_EQ(cs.nsuggest, 0U, "nothing to suggest without a room");
cleanup:
	model__free(m);
	free(m);
}

TEST(ceilings_fit_and_requests_left)
{
	struct model *m = new_model();
	struct ceilings cs;

	if (!ASSERT_TRUE(m != NULL, "model"))
		return;
	/*
	 * 100 MiB of room: the plateau (44 to go) fits. Each request adds 10 until the cache is
	 * full (4), then 2 until the checkpoints are (8 more: 56), then the tokenizer's 1: the
	 * room is gone in the 57th.
	 */
	room(m, 100 * MIB);
	if (!ASSERT_OK(ceilings__compute(m, &cs), "compute"))
		goto cleanup;
	ASSERT_TRUE(cs.room_known && cs.fits, "fits");
	ASSERT_EQ(cs.requests_left, 56L, "requests left");
	ASSERT_TRUE(cs.last_full && !strcmp(cs.last_full->cause->name, "context checkpoints"),
		    "the checkpoints fill last");
	ASSERT_EQ(cs.requests_to_fill, 12L, "after 12 requests");
	ASSERT_EQ(cs.nsuggest, 0U, "it fits: nothing to suggest");
	/* 30 MiB: it does not; 3 requests fit; the cache capped at 47 MiB keeps it at 27 */
	room(m, 30 * MIB);
	if (!ASSERT_OK(ceilings__compute(m, &cs), "compute"))
		goto cleanup;
	ASSERT_FALSE(cs.fits, "does not fit");
	ASSERT_EQ(cs.requests_left, 3L, "requests left");
	if (!ASSERT_EQ(cs.nsuggest, 1U, "one setting"))
		goto cleanup;
	ASSERT_STREQ(cs.suggest[0].cause->cause->name, "prompt cache", "the cache's");
	ASSERT_EQ(cs.suggest[0].value, 47LL, "--cache-ram 47");
	ASSERT_EQ((__u64)cs.suggest_plateau, (100 + 27) * MIB, "plateau then");
	/* 5 MiB: the cache can hold nothing more (32: --cache-ram 32 is too little alone), so
	 * the checkpoints come down too */
	room(m, 5 * MIB);
	if (!ASSERT_OK(ceilings__compute(m, &cs), "compute"))
		goto cleanup;
	if (!ASSERT_EQ(cs.nsuggest, 2U, "two settings"))
		goto cleanup;
	ASSERT_EQ(cs.suggest[0].value, 32LL, "--cache-ram 32: what it holds");
	ASSERT_STREQ(cs.suggest[1].cause->cause->name, "context checkpoints", "then");
	ASSERT_TRUE(cs.suggest[1].value < 4, "fewer checkpoints");
	ASSERT_TRUE(cs.suggest_plateau - cs.rss <= (__s64)(5 * MIB), "fits then");
cleanup:
	model__free(m);
	free(m);
}
