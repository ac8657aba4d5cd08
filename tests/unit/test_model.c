// SPDX-License-Identifier: GPL-2.0
/* The model: phase timeline (root and wrapper roots), exits, OOM records, top mappings,
 * and the OOM growth window. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "model/model.h"
#include "model/oom.h"

#define MS 1000000ULL

static struct model *new_model(__u32 root)
{
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	model__init(m, root, 1000 * MS);
	model__set_phase_name(m, 1, "load");
	model__set_phase_name(m, 2, "generate");
	return m;
}

static void phase_ev(struct model *m, __u32 pid, __u32 phase, __u64 ts)
{
	struct mp_event e = { .type = MP_EV_PHASE, .pid = pid, .arg = phase, .ts_ns = ts };

	model__on_event(m, &e);
}

TEST(model_phase_time_follows_root)
{
	struct model *m = new_model(100);

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	phase_ev(m, 100, 1, 1100 * MS);	/* startup 100 ms */
	phase_ev(m, 200, 2, 1150 * MS);	/* a child's phase: not the root's timeline */
	phase_ev(m, 100, 2, 1400 * MS);	/* load 300 ms */
	model__finish(m, 2000 * MS);	/* generate 600 ms */
	ASSERT_EQ(model__phase_time(m, 0, 0), 100 * MS, "startup");
	ASSERT_EQ(model__phase_time(m, 1, 0), 300 * MS, "load");
	ASSERT_EQ(model__phase_time(m, 2, 0), 600 * MS, "generate");
	ASSERT_EQ(m->norder, 3, "order");
	model__free(m);
	free(m);
}

TEST(model_phase_time_follows_child_under_wrapper)
{
	struct model *m = new_model(100);

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	/* sh -c '...': the root never has a phase, its child does */
	phase_ev(m, 300, 1, 1200 * MS);
	phase_ev(m, 300, 2, 1500 * MS);
	model__finish(m, 1600 * MS);
	ASSERT_EQ(m->cur_phase, 2, "current phase");
	ASSERT_EQ(model__phase_time(m, 0, 0), 200 * MS, "startup");
	ASSERT_EQ(model__phase_time(m, 1, 0), 300 * MS, "load");
	ASSERT_EQ(model__phase_time(m, 2, 0), 100 * MS, "generate");
	model__free(m);
	free(m);
}

TEST(model_exit_and_oom)
{
	struct mp_event e = { .type = MP_EV_EXIT, .pid = 100, .arg = 9, .ts_ns = 1500 * MS };
	struct model *m = new_model(100);
	struct model_proc *p;

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	model__on_event(m, &e);
	p = model__root(m);
	ASSERT_TRUE(p && p->exited, "exited");
	ASSERT_EQ(p->exit_signal, 9, "signal");
	e.arg = 3 << 8;
	e.pid = 101;
	model__on_event(m, &e);
	ASSERT_EQ(model__proc(m, 101, false)->exit_code, 3, "exit code");
	memset(&e, 0, sizeof(e));
	e.type = MP_EV_OOM;
	e.pid = 100;
	e.old_phase = 2;
	e.rss[MP_ANON] = 64ULL << 20;
	model__on_event(m, &e);
	ASSERT_EQ(m->nooms, 1, "oom record");
	ASSERT_EQ(m->ooms[0].phase, 2, "oom phase");
	ASSERT_EQ(m->ooms[0].cgroup_oom, -1, "cgroup unknown until told");
	ASSERT_TRUE(model__root(m)->oom_killed, "root oom_killed");
	model__free(m);
	free(m);
}

TEST(model_top_mappings_sorted_and_bounded)
{
	struct model *m = new_model(100);
	struct model_mapping mm = {};
	unsigned int i;

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	for (i = 1; i <= MODEL_TOP_MAPPINGS + 5; i++) {
		snprintf(mm.path, sizeof(mm.path), "m%u", i);
		mm.bytes = (i * 7919) % 101 + 1;	/* a shuffled order */
		model__offer_mapping(m, 1, &mm);
	}
	ASSERT_EQ(m->ntop[1], MODEL_TOP_MAPPINGS, "kept");
	for (i = 1; i < m->ntop[1]; i++)
		ASSERT_GE(m->top[1][i - 1].bytes, m->top[1][i].bytes, "largest first");
	model__free(m);
	free(m);
}

TEST(oom_window_per_phase)
{
	struct oom_ring *r = calloc(1, sizeof(*r));
	__u64 g[MP_MAX_PHASES][MP_NR_CLASSES];
	struct model *m = new_model(100);
	double span;
	int t;

	if (!ASSERT_OK_PTR(r, "ring") || !ASSERT_OK_PTR(m, "model"))
		goto cleanup;
	ASSERT_EQ(oom__ring_window(r, 0, 5.0, g, &span), -ENODATA, "empty");
	/* 1 MiB of anon per 100 ms in load for 10 s, then 2 MiB per 100 ms in generate */
	for (t = 0; t <= 150; t++) {
		if (t <= 100)
			m->stats[1].growth[MP_ANON] = (__u64)t << 20;
		else
			m->stats[2].growth[MP_ANON] = (__u64)(t - 100) << 21;
		oom__ring_add(r, m, (__u64)t * 100 * MS);
	}
	ASSERT_OK(oom__ring_window(r, 150 * 100 * MS, 5.0, g, &span), "window");
	ASSERT_EQ(g[2][MP_ANON], 100ULL << 20, "generate: 50 steps of 2 MiB");
	ASSERT_EQ(g[1][MP_ANON], 0, "load ended before the window");
	ASSERT_TRUE(span > 4.99 && span < 5.01, "span");
cleanup:
	free(r);
	model__free(m);
	free(m);
}

/* A phase event that closes an interval which counted `anon` bytes in `faults` faults. */
static void phase_ivl(struct model *m, __u32 pid, __u32 old, __u32 phase, __u64 ts,
		      __u64 anon, __u64 shrink, __u64 faults)
{
	struct mp_event e = { .type = MP_EV_PHASE, .pid = pid, .arg = phase, .old_phase = old,
			      .ts_ns = ts };

	e.ivl_growth[MP_ANON] = anon;
	e.ivl_shrink[MP_ANON] = shrink;
	e.ivl_faults = faults;
	model__on_event(m, &e);
}

/*
 * The --fit probe: load (1), context (2), freed before any decode (3: probe:teardown), then
 * the real load and context. Entering 3 shows the first load and context as 4 and 5, with
 * exactly what their intervals counted; the counters BPF keeps per phase id lose as much.
 */
TEST(model_relabel_moves_intervals_and_counts)
{
	struct model *m = calloc(1, sizeof(*m));
	__u32 from[] = { 1, 2 }, to[] = { 4, 5 };
	struct mp_phase_stats st = {};
	const char *frames[] = { "main", "f" };
	unsigned int i;

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	model__init(m, 100, 1000 * MS);
	model__set_phase_name(m, 1, "load");
	model__set_phase_name(m, 2, "context");
	model__set_phase_name(m, 3, "probe:teardown");
	model__set_phase_name(m, 4, "probe:load");
	model__set_phase_name(m, 5, "probe:context");
	ASSERT_EQ(model__add_relabel(m, 3, from, to, 2), 0, "relabel");
	ASSERT_EQ(model__add_relabel(m, 1, from, to, 2), -EINVAL, "at is a from phase");
	phase_ev(m, 100, 1, 1100 * MS);			/* startup 100 ms */
	/* a stack sample of the probe's context */
	profile__add(&m->profile, 2, "serve", frames, 2, 4096);
	profile__add_when(&m->profile, 100, 100, 1250 * MS, 4096);
	m->samples[2]++, m->sampled_bytes[2] += 4096;
	phase_ivl(m, 100, 1, 2, 1200 * MS, 1000, 0, 1);	/* load 100 ms: 1000 B */
	phase_ivl(m, 100, 2, 3, 1500 * MS, 8000, 0, 2);	/* context 300 ms: 8000 B */
	phase_ivl(m, 100, 3, 1, 1600 * MS, 0, 8000, 0);	/* probe:teardown 100 ms */
	phase_ivl(m, 100, 1, 2, 1650 * MS, 1000, 0, 1);	/* the real load 50 ms */
	model__finish(m, 2000 * MS);			/* the real context 350 ms */

	/* BPF's counters per phase id: both loads, both contexts */
	st.growth[MP_ANON] = 2000, st.entries = 2, st.calls = 2, st.faults = 2;
	model__set_stats(m, 1, &st);
	st.growth[MP_ANON] = 8000 + 16000, st.faults = 6;
	model__set_stats(m, 2, &st);
	ASSERT_EQ(m->stats[1].growth[MP_ANON], 1000, "load keeps the real one's");
	ASSERT_EQ(m->stats[4].growth[MP_ANON], 1000, "probe:load has the probe's");
	ASSERT_EQ(m->stats[2].growth[MP_ANON], 16000, "context keeps the real one's");
	ASSERT_EQ(m->stats[5].growth[MP_ANON], 8000, "probe:context");
	ASSERT_EQ(m->stats[5].faults, 2, "faults moved");
	ASSERT_EQ(m->stats[1].entries, 1, "load entered once");
	ASSERT_EQ(m->stats[4].entries, 1, "probe:load entered once");
	ASSERT_EQ(m->stats[4].calls, 1, "probe:load: one call");
	ASSERT_EQ(model__phase_time(m, 4, 0), 100 * MS, "probe:load time");
	ASSERT_EQ(model__phase_time(m, 5, 0), 300 * MS, "probe:context time");
	ASSERT_EQ(model__phase_time(m, 1, 0), 50 * MS, "load time");
	ASSERT_EQ(model__phase_time(m, 2, 0), 350 * MS, "context time");
	ASSERT_EQ(m->history.iv[1].phase, 4, "first load interval relabelled");
	ASSERT_EQ(m->history.iv[2].phase, 5, "first context interval relabelled");
	ASSERT_EQ(m->history.iv[4].phase, 1, "the real load stays");
	ASSERT_EQ(m->samples[5], 1, "the sample moved");
	ASSERT_EQ(m->sampled_bytes[2], 0, "context sampled nothing");
	for (i = 0; i < m->profile.nstacks; i++)
		if (m->profile.stacks[i].bytes)
			ASSERT_EQ(m->profile.stacks[i].phase, 5, "merged stack moved");
	/* a sample that arrives after the free, taken during the probe */
	ASSERT_EQ(model__shown_phase(m, 100, 1300 * MS, 2), 5, "late sample");
	ASSERT_EQ(model__shown_phase(m, 100, 1700 * MS, 2), 2, "the real context's");
	ASSERT_EQ(model__shown_phase(m, 200, 1300 * MS, 2), 2, "another process");
	/* entered order: startup, probe:load, probe:context, probe:teardown, load, context */
	ASSERT_EQ(m->norder, 6, "order");
	if (m->norder == 6) {
		ASSERT_EQ(m->order[1], 4, "probe:load second");
		ASSERT_EQ(m->order[2], 5, "probe:context third");
		ASSERT_EQ(m->order[3], 3, "probe:teardown");
		ASSERT_EQ(m->order[4], 1, "load");
		ASSERT_EQ(m->order[5], 2, "context");
	}
	model__free(m);
	free(m);
}

/* Without the relabel point nothing moves. */
TEST(model_relabel_needs_its_point)
{
	struct model *m = calloc(1, sizeof(*m));
	__u32 from[] = { 1 }, to[] = { 4 };
	struct mp_phase_stats st = {};

	if (!ASSERT_OK_PTR(m, "model"))
		return;
	model__init(m, 100, 1000 * MS);
	model__set_phase_name(m, 1, "load");
	model__set_phase_name(m, 3, "probe:teardown");
	model__set_phase_name(m, 4, "probe:load");
	ASSERT_EQ(model__add_relabel(m, 3, from, to, 1), 0, "relabel");
	phase_ivl(m, 100, 0, 1, 1100 * MS, 0, 0, 0);
	phase_ivl(m, 100, 1, 2, 1200 * MS, 1000, 0, 1);
	st.growth[MP_ANON] = 1000, st.entries = 1, st.calls = 1;
	model__set_stats(m, 1, &st);
	ASSERT_EQ(m->stats[1].growth[MP_ANON], 1000, "load keeps it");
	ASSERT_EQ(m->stats[4].growth[MP_ANON], 0, "probe:load has nothing");
	ASSERT_EQ(m->nrelabeled, 0, "no relabel");
	model__free(m);
	free(m);
}

/* a calloc'd model begun without clearing it equals one cleared and begun */
TEST(model_init_zeroed_equals_init)
{
	struct model *a = calloc(1, sizeof(*a)), *b = malloc(sizeof(*b));

	if (!ASSERT_OK_PTR(a, "calloc") || !ASSERT_OK_PTR(b, "malloc")) {
		free(a);
		free(b);
		return;
	}
	memset(b, 0xa5, sizeof(*b));
	model__init_zeroed(a, 42, 1000);
	model__init(b, 42, 1000);
	ASSERT_EQ(memcmp(a, b, sizeof(*a)), 0, "the same bytes");
	ASSERT_EQ(a->nprocs, 1, "root process");
	ASSERT_STREQ(a->names[0], "startup", "phase 0");
	model__free(a);
	model__free(b);
	free(a);
	free(b);
}
