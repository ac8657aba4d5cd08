// SPDX-License-Identifier: GPL-2.0
/*
 * Requests in the model from phase events (each carrying the process's RSS and the decode's
 * tokens), the projection in requests, the context fit, and the text and JSON views.
 */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "model/model.h"
#include "report/requests.h"

#define MS	1000000ULL
#define MIB	(1LL << 20)

enum { TOK = 1, PROMPT, GEN, MIXED, HOST, TEAR, NPH };

static struct model *new_model(void)
{
	static const char *const n[NPH] = { "startup", "tokenize", "prompt", "generate", "mixed",
					    "host", "teardown" };
	struct model *m = calloc(1, sizeof(*m));
	int i;

	if (!m)
		return NULL;
	model__init(m, 100, 1000 * MS);
	for (i = 1; i < NPH; i++)
		model__set_phase_name(m, i, n[i]);
	/* idle: host, tokenize, prompt; end: teardown; lead: tokenize */
	model__set_requests(m, PROMPT, (1U << HOST) | (1U << TOK) | (1U << PROMPT),
			    1U << TEAR, 1U << TOK);
	return m;
}

static __u64 now = 1000 * MS;

/* The process enters phase ph holding anon MiB; a decode's tokens and generation count. */
static void ev(struct model *m, __u32 ph, __s64 anon_mib, __u64 tokens, __u64 gen)
{
	struct mp_event e = { .type = MP_EV_PHASE, .pid = 100, .arg = ph };

	now += 10 * MS;
	e.ts_ns = now;
	e.rss[MP_ANON] = anon_mib * MIB;
	e.rss[MP_FILE] = 1 * MIB;
	if (tokens) {
		e.record = MP_REC_TOKENS;
		e.addr = tokens;
		e.ino = gen;
	}
	model__on_event(m, &e);
}

/* One request: tokenize +1, two prompt batches +4 each, 3 tokens +1 each, with host between. */
static __s64 request(struct model *m, __s64 anon)
{
	ev(m, TOK, anon, 0, 0);
	ev(m, HOST, anon += 1, 0, 0);
	ev(m, PROMPT, anon, 100, 0);
	ev(m, HOST, anon += 4, 0, 0);
	ev(m, PROMPT, anon, 100, 0);
	ev(m, HOST, anon += 4, 0, 0);
	ev(m, MIXED, anon, 10, 2);	/* 2 generation tokens joined with an 8-token chunk */
	ev(m, HOST, anon += 1, 0, 0);
	ev(m, GEN, anon, 2, 2);
	ev(m, HOST, anon += 1, 0, 0);
	return anon;
}

TEST(requests_from_phase_events)
{
	static unsigned int idx[MODEL_MAX_REQUESTS];
	struct model *m = new_model();
	const struct model_request *r;
	struct linfit f;
	unsigned int n;
	size_t first;
	__s64 anon = 10;
	int i;

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	ev(m, HOST, anon, 0, 0);	/* start-up: no request yet */
	for (i = 0; i < 3; i++)
		anon = request(m, anon);
	ev(m, TEAR, anon, 0, 0);
	ev(m, HOST, anon - 30, 0, 0);	/* the frees after teardown belong to no request */
	model__finish(m, now + MS);

	ASSERT_EQ(m->nrequests, 3, "three requests");
	for (i = 0; i < 3; i++) {
		r = &m->requests[i];
		/* 1 + 4 + 4 + 1 + 1 MiB, starting at the request's tokenize */
		ASSERT_EQ(r->rss_end[MP_ANON] - r->rss_start[MP_ANON], 11 * MIB, "growth");
		ASSERT_EQ(r->phase_growth[TOK], 1 * MIB, "tokenize is the request's own");
		ASSERT_EQ(r->phase_growth[PROMPT], 8 * MIB, "prompt");
		ASSERT_EQ(r->phase_growth[MIXED], 1 * MIB, "mixed");
		ASSERT_EQ(r->phase_growth[GEN], 1 * MIB, "generate");
		ASSERT_EQ(r->prompt_tokens, 208, "prompt tokens: 100 + 100 + 8");
		ASSERT_EQ(r->gen_tokens, 4, "generated: 2 + 2");
		ASSERT_NEQ(r->end_ns, 0, "closed");
	}
	ASSERT_EQ(m->requests[1].start_ns, m->requests[0].end_ns, "back to back");
	f = model__request_fit(m, &first, &n);
	ASSERT_TRUE(f.ok && n == 3 && first == 1, "fit over requests 2..3");
	ASSERT_TRUE(f.slope > 11 * MIB - 1 && f.slope < 11 * MIB + 1, "11 MiB per request");
	ASSERT_EQ(m->context.tokens_seen, 3 * 212, "context tokens");
	/* samples to requests: by time, in the request's own process, none after teardown */
	ASSERT_EQ(model__request_of(m, 100, m->requests[0].start_ns - 1), -1, "before");
	ASSERT_EQ(model__request_of(m, 100, m->requests[0].start_ns), 0, "first's start");
	ASSERT_EQ(model__request_of(m, 100, m->requests[1].start_ns - 1), 0, "first's end");
	ASSERT_EQ(model__request_of(m, 100, m->requests[1].start_ns + 1), 1, "second");
	ASSERT_EQ(model__request_of(m, 101, m->requests[1].start_ns + 1), -1, "other pid");
	ASSERT_EQ(model__request_of(m, 100, m->requests[2].end_ns + 1), -1, "after teardown");
	ASSERT_EQ(model__steady_requests(m, idx), 2, "steady: two");
	ASSERT_TRUE(idx[0] == 1 && idx[1] == 2, "requests 2 and 3");
	model__free(m);
	free(m);
}

/* The text with every run of spaces and newlines one space: the summary wraps its lines. */
static void flatten(char *s)
{
	char *o = s;
	bool space = false;

	for (; *s; s++) {
		if (*s == ' ' || *s == '\n') {
			space = true;
			continue;
		}
		if (space)
			*o++ = ' ';
		space = false;
		*o++ = *s;
	}
	*o = '\0';
}

TEST(requests_projection_and_oom)
{
	struct model *m = new_model();
	struct mp_event oom = { .type = MP_EV_OOM, .pid = 100 };
	char *out = NULL;
	size_t len = 0;
	__s64 anon = 10;
	FILE *f;
	int i;

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	/* 100 MiB of cgroup room when the process held 11 MiB (10 anon + 1 file) */
	model__proc(m, 100, true)->rss[MP_ANON] = 10 * MIB;
	model__proc(m, 100, true)->rss[MP_FILE] = 1 * MIB;
	model__set_room(m, true, 100 * MIB, false, 0);
	for (i = 0; i < 3; i++)
		anon = request(m, anon);
	/* the 4th request's tokenize (the 3rd's end): 33 MiB used of 100, 11 each:
	 * ceil(67 / 11) = 7 more requests */
	ev(m, TOK, anon, 0, 0);
	ev(m, PROMPT, anon + 1, 100, 0);
	ASSERT_EQ(m->requests[2].left_cgroup, 7, "7 more requests");
	ASSERT_EQ(m->requests[2].left_system, -2, "MemAvailable unknown");
	now += 5 * MS;
	oom.ts_ns = now;
	oom.rss[MP_ANON] = (anon + 6) * MIB;
	oom.rss[MP_FILE] = 1 * MIB;
	model__on_event(m, &oom);
	ASSERT_EQ(m->nrequests, 4, "four");
	ASSERT_TRUE(m->requests[3].oom, "the 4th was killed");
	ASSERT_EQ(m->requests[3].rss_end[MP_ANON] - m->requests[3].rss_start[MP_ANON], 6 * MIB,
		  "what it added by the kill");
	ASSERT_EQ(m->requests[3].phase_growth[PROMPT], 5 * MIB, "the kill's growth: prompt's");
	ASSERT_TRUE(model__request_at(m, now) == &m->requests[3], "died in the 4th");
	model__finish(m, now + MS);

	f = open_memstream(&out, &len);
	if (!ASSERT_OK_PTR(f, "memstream"))
		return;
	requests__print(f, m);
	requests__print_oom(f, m, &m->ooms[0]);
	fclose(f);
	flatten(out);
	ASSERT_TRUE(strstr(out, "4 requests: each kept +11.0 MiB of RSS after the first (a "
			   "straight line over 2 requests)") != NULL, "headline");
	ASSERT_TRUE(strstr(out, " 4 0.64s 0.01s 100 0 +6.00 MiB (OOM-killed)") != NULL,
		    "the killed one's row");
	ASSERT_TRUE(strstr(out, "the cgroup limit is reached after 7 more requests") != NULL,
		    "projection");
	ASSERT_TRUE(strstr(out, "in request 4 of 4") != NULL, "OOM names the request");
	ASSERT_TRUE(strstr(out, "by phase, request 4 (OOM-killed): tokenize +1.00 MiB, prompt "
			   "+5.00 MiB") != NULL, "killed in prompt");
	ASSERT_TRUE(strstr(out, "a request after it (mean of 2): tokenize +1.00 MiB, prompt "
			   "+8.00 MiB, mixed +1.00 MiB, generate +1.00 MiB") != NULL, "steady one");
	ASSERT_TRUE(strstr(out, "(after request 3)") != NULL, "projected after a whole one");
	free(out);
	model__free(m);
	free(m);
}

/* A pinned (or managed) allocation or free of size MiB by pid. */
static void gpu_ev(struct model *m, __u32 type, __u32 cls, __u32 pid, __u64 mib)
{
	struct mp_alloc_event e = { .type = type, .pid = pid, .cls = cls, .size = mib * MIB };

	e.ts_ns = now += MS;
	model__on_alloc(m, &e);
}

/* An NVML reading: the observed processes hold used bytes on one device. */
static void vram(struct model *m, __u64 used)
{
	struct model_gpu_device d = { .total = 1ULL << 33, .used = used, .target_used = used };

	now += MS;
	model__on_vram(m, m->cur_phase, now, &d, 1);
}

TEST(requests_pinned_managed_and_vram)
{
	struct model *m = new_model();
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	m->gpu.probes = 1;
	ev(m, HOST, 10, 0, 0);
	gpu_ev(m, MP_EV_ALLOC, MP_ALLOC_PINNED, 100, 4);	/* before any request */
	vram(m, 500);
	ev(m, TOK, 10, 0, 0);
	gpu_ev(m, MP_EV_ALLOC, MP_ALLOC_PINNED, 100, 1);	/* in the lead: request 1's */
	ev(m, PROMPT, 11, 100, 0);
	vram(m, 1000);						/* request 1 starts here */
	gpu_ev(m, MP_EV_ALLOC, MP_ALLOC_MANAGED, 100, 2);
	vram(m, 1500);
	ev(m, GEN, 12, 1, 1);
	vram(m, 1800);
	ev(m, TOK, 12, 0, 0);
	ev(m, PROMPT, 13, 100, 0);				/* request 1 ends, 2 starts */
	vram(m, 2000);						/* both: read after the change */
	gpu_ev(m, MP_EV_FREE, MP_ALLOC_PINNED, 100, 1);
	gpu_ev(m, MP_EV_ALLOC, MP_ALLOC_PINNED, 7, 8);		/* another process's */
	ev(m, GEN, 14, 1, 1);
	ev(m, TEAR, 14, 0, 0);					/* request 2 ends */
	vram(m, 2600);
	gpu_ev(m, MP_EV_FREE, MP_ALLOC_PINNED, 100, 4);	/* after the last request */

	ASSERT_EQ(m->nrequests, 2, "two requests");
	ASSERT_EQ(m->requests[0].gpu_alloc[MP_ALLOC_PINNED], 1 * MIB, "1: pinned in its lead");
	ASSERT_EQ(m->requests[0].gpu_alloc[MP_ALLOC_MANAGED], 2 * MIB, "1: managed");
	ASSERT_EQ(m->requests[0].gpu_freed[MP_ALLOC_PINNED], 0, "1: freed nothing");
	ASSERT_TRUE(m->requests[0].vram_seen, "1: VRAM read");
	ASSERT_EQ(m->requests[0].vram_start, 1000, "1: VRAM from the reading after its start");
	ASSERT_EQ(m->requests[0].vram_end, 2000, "1: to the reading after its end");
	ASSERT_EQ(m->requests[1].gpu_alloc[MP_ALLOC_PINNED], 0, "2: another pid's is not its");
	ASSERT_EQ(m->requests[1].gpu_freed[MP_ALLOC_PINNED], 1 * MIB, "2: freed 1 MiB");
	ASSERT_EQ(m->requests[1].vram_end - m->requests[1].vram_start, 600, "2: +600 B VRAM");

	f = open_memstream(&out, &len);
	if (!ASSERT_OK_PTR(f, "memstream"))
		return;
	requests__print(f, m);
	fclose(f);
	ASSERT_TRUE(strstr(out, "+RSS   +PINNED  +MANAGED     +VRAM\n") != NULL, "header");
	ASSERT_TRUE(strstr(out, "+2.00 MiB +1.00 MiB +2.00 MiB   +1000 B\n") != NULL,
		    "request 1");
	ASSERT_TRUE(strstr(out, "+2.00 MiB -1.00 MiB      +0 B    +600 B\n") != NULL,
		    "request 2");
	free(out);

	/* a report's window opens: the requests that ended and the GPU's counts stay behind */
	m->finished = false;
	model__set_room(m, true, 100 * MIB, true, 200 * MIB);
	model__window_open(m);
	ASSERT_EQ(m->nrequests, 0, "no request open at the window");
	ASSERT_EQ(m->context.tokens_seen, 0, "tokens from the window");
	ASSERT_FALSE(m->room_cgroup_known || m->room_system_known, "room read again");
	ASSERT_EQ(m->gpu.alloc_bytes[MP_ALLOC_PINNED][PROMPT], 0, "pinning from the window");
	ASSERT_EQ(m->gpu.peak[MP_ALLOC_PINNED], m->gpu.current[MP_ALLOC_PINNED], "peak: held");
	ASSERT_EQ(m->gpu.vram_peak, 2600, "VRAM peak: the last reading");
	model__free(m);
	free(m);
}

/* A decode of tokens in slot seq whose last token is at position pos (the server's batch). */
static void ev_pos(struct model *m, __u32 ph, __s64 anon_mib, __u64 tokens, __u32 seq,
		   __u32 pos)
{
	struct mp_event e = { .type = MP_EV_PHASE, .pid = 100, .arg = ph,
			      .record = MP_REC_TOKENS, .addr = tokens };

	now += 10 * MS;
	e.ts_ns = now;
	e.rss[MP_ANON] = anon_mib * MIB;
	e.dev = (__u64)seq << 32 | (pos + 1);
	model__on_event(m, &e);
	ev(m, HOST, anon_mib, 0, 0);
}

TEST(context_is_a_slots_positions)
{
	struct model *m = new_model();
	double per;

	if (!ASSERT_TRUE(m != NULL, "model"))
		return;
	/* slot 0: a prompt of 3 batches of 100 (1 MiB each), then slot 1 the same from 0,
	 * then slot 0 again from 0 (a new prompt there): the context reached 300, not 900 */
	ev(m, TOK, 10, 0, 0);
	ev_pos(m, PROMPT, 10, 100, 0, 99);
	ev_pos(m, PROMPT, 11, 100, 0, 199);
	ev_pos(m, PROMPT, 12, 100, 0, 299);
	ev(m, TOK, 13, 0, 0);
	ev_pos(m, PROMPT, 13, 100, 1, 99);
	ev_pos(m, PROMPT, 14, 100, 1, 199);
	ev_pos(m, PROMPT, 15, 100, 1, 299);
	ev(m, TOK, 16, 0, 0);
	ev_pos(m, PROMPT, 16, 100, 0, 99);
	ASSERT_EQ(m->context.tokens_seen, 700ULL, "tokens decoded");
	ASSERT_TRUE(m->context.by_pos, "positions");
	ASSERT_EQ(m->context.slots, 2U, "two slots");
	ASSERT_EQ(m->context.longest, 300ULL, "the longest slot");
	ASSERT_EQ(m->context.slot_pos[1], 300U, "slot 1");
	/* the fit: only where the longest reached further (slot 0's first prompt) */
	ASSERT_TRUE(model__context_fit(m, &per), "fit");
	ASSERT_TRUE(per > MIB / 100.0 - 1 && per < MIB / 100.0 + 1, "1 MiB per 100 positions");
	model__free(m);
	free(m);
}

TEST(context_without_positions_is_the_tokens)
{
	struct model *m = new_model();
	double per;

	if (!ASSERT_TRUE(m != NULL, "model"))
		return;
	/* llama_batch_get_one: no positions; one sequence growing 1 MiB per 100 tokens */
	ev(m, TOK, 10, 0, 0);
	ev(m, PROMPT, 10, 100, 0);
	ev(m, HOST, 11, 0, 0);
	ev(m, PROMPT, 11, 100, 0);
	ev(m, HOST, 12, 0, 0);
	ev(m, PROMPT, 12, 100, 0);
	ASSERT_FALSE(m->context.by_pos, "no positions");
	ASSERT_EQ(m->context.tokens_seen, 300ULL, "tokens");
	ASSERT_TRUE(model__context_fit(m, &per), "fit");
	ASSERT_TRUE(per > MIB / 100.0 - 1 && per < MIB / 100.0 + 1, "1 MiB per 100 tokens");
	model__free(m);
	free(m);
}
