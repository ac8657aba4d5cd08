// SPDX-License-Identifier: GPL-2.0
/* The model: phase timeline (root and wrapper roots), exits, OOM records, top mappings,
 * and the OOM growth window. */
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
	free(m);
}
