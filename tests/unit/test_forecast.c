// SPDX-License-Identifier: GPL-2.0
/*
 * The live view's forecast on hand-computed cases: a series that grows by whole pages per
 * 100 ms sample, so every rate, headroom and time to OOM below is exact arithmetic.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "lib/headroom.h"
#include "model/model.h"
#include "model/timeline.h"
#include "report/live/forecast.h"

#define NS	1000000000ULL
#define TICK	(NS / 10)
#define MIB	(1LL << 20)
#define START	(10 * NS)
#define NOW	(START + 3 * NS)	/* the last sample */

static bool near(double actual, double expected, const char *name)
{
	bool ok = fabs(actual - expected) <= 1e-6 * (fabs(expected) > 1 ? fabs(expected) : 1);

	if (!ok) {
		test__fail();
		printf("%s: got %.9g, expected %.9g\n", name, actual, expected);
	}
	return ok;
}

/*
 * 31 samples over 3 s, per 100 ms: anon +512 KiB, file +256 KiB, swap +512 KiB, shmem 0.
 * anon + shmem + swap grows 10 MiB/s; anon + file + shmem 7.5 MiB/s.
 */
static struct timeline *series(__s64 anon_step, __s64 file_step, __s64 swap_step)
{
	struct timeline *tl = timeline__new(256, 5.0);
	int i;

	for (i = 0; tl && i <= 30; i++) {
		__s64 rss[MP_NR_CLASSES] = {};

		rss[MP_ANON] = 500 * MIB + anon_step * i;
		rss[MP_FILE] = 100 * MIB + file_step * i;
		rss[MP_SWAP] = swap_step * i;
		timeline__add(tl, START + i * TICK, rss, 1);
	}
	return tl;
}

static void one_process(struct model *m)
{
	__s64 rss[MP_NR_CLASSES] = {}, peak[MP_NR_CLASSES] = {};

	model__init(m, 42, START);
	rss[MP_ANON] = 515 * MIB;
	model__set_rss(m, 42, rss, peak, 0);
}

TEST(forecast_growth_rate)
{
	struct timeline *tl = series(MIB / 2, MIB / 4, MIB / 2);
	static struct model m;
	struct forecast fc;

	if (!ASSERT_NEQ(tl, NULL, "timeline"))
		return;
	one_process(&m);
	forecast__compute(&fc, &m, tl, NULL, NOW);
	if (ASSERT_TRUE(fc.have_rate, "rate"))
		near(fc.rate, 10.0 * MIB, "anon + shmem + swap: (512 + 512) KiB per 100 ms");
	if (ASSERT_TRUE(fc.have_rate_all, "rate_all"))
		near(fc.rate_all, 7.5 * MIB, "anon + file + shmem: (512 + 256) KiB per 100 ms");
	/* no system memory read yet: a rate, but nothing to project against */
	ASSERT_FALSE(fc.have_sys_room || fc.have_cg_room, "no headroom");
	ASSERT_FALSE(fc.have_oom, "no projection without headroom");
	ASSERT_FALSE(forecast__warn(&fc, 1e9), "no warning without a projection");

	/* no timeline yet: nothing at all */
	forecast__compute(&fc, &m, NULL, NULL, NOW);
	ASSERT_FALSE(fc.have_rate || fc.have_rate_all || fc.have_oom, "no timeline");
	model__free(&m);
	timeline__free(tl);
}

TEST(forecast_headroom_cgroup_vs_memavailable)
{
	struct timeline *tl = series(MIB / 2, MIB / 4, MIB / 2);	/* 10 MiB/s */
	static struct model m;
	struct sysmem sm = {};
	struct forecast fc;

	if (!ASSERT_NEQ(tl, NULL, "timeline"))
		return;
	one_process(&m);
	/* the system: 1000 MiB available + 200 MiB free swap = 1200 MiB, 120 s at 10 MiB/s */
	sm.have_meminfo = true;
	sm.mem_total = 4096 * MIB;
	sm.mem_available = 1000 * MIB;
	sm.swap_free = 200 * MIB;
	forecast__compute(&fc, &m, tl, &sm, NOW);
	ASSERT_TRUE(fc.have_sys_room && fc.sys_room == 1200 * MIB, "system room 1200 MiB");
	ASSERT_FALSE(fc.have_cg_room, "no cgroup");
	ASSERT_TRUE(fc.have_oom && !fc.by_cgroup, "the system binds");
	near(fc.oom_s, 120, "1200 MiB / 10 MiB/s");

	/* a cgroup without a limit changes nothing */
	sm.cg_version = 2;
	sm.cg_usage = 515 * MIB;
	forecast__compute(&fc, &m, tl, &sm, NOW);
	ASSERT_FALSE(fc.have_cg_room, "no limit, no cgroup room");
	near(fc.oom_s, 120, "still the system's 120 s");

	/* limit 1024 MiB, usage 904 MiB, 16 MiB inactive file: 136 MiB, 13.6 s: it binds */
	sm.cg_limited = true;
	sm.cg_limit = 1024 * MIB;
	sm.cg_limit_usage = 904 * MIB;
	sm.cg_reclaimable = 16 * MIB;
	forecast__compute(&fc, &m, tl, &sm, NOW);
	ASSERT_TRUE(fc.have_cg_room && fc.cg_room == 136 * MIB, "cgroup room 136 MiB");
	ASSERT_TRUE(fc.have_oom && fc.by_cgroup, "the cgroup binds");
	near(fc.oom_s, 13.6, "136 MiB / 10 MiB/s");
	ASSERT_TRUE(fc.have_sys_oom, "the system's projection is still known");
	near(fc.sys_oom_s, 120, "system: 120 s");
	ASSERT_TRUE(forecast__warn(&fc, 30), "13.6 s is within 30 s");
	ASSERT_FALSE(forecast__warn(&fc, 10), "13.6 s is not within 10 s");

	/* a roomy cgroup: 4096 - 1024 = 3072 MiB, 307.2 s; the system's 120 s is nearer */
	sm.cg_limit = 4096 * MIB;
	sm.cg_limit_usage = 1024 * MIB;
	sm.cg_reclaimable = 0;
	forecast__compute(&fc, &m, tl, &sm, NOW);
	ASSERT_TRUE(fc.have_cg_oom, "cgroup projection");
	near(fc.cg_oom_s, 307.2, "3072 MiB / 10 MiB/s");
	ASSERT_TRUE(fc.have_oom && !fc.by_cgroup, "the system binds again");
	near(fc.oom_s, 120, "the nearer: 120 s");

	/* usage above the limit: no room left, the OOM is due now */
	sm.cg_limit = 1000 * MIB;
	sm.cg_limit_usage = 1100 * MIB;
	forecast__compute(&fc, &m, tl, &sm, NOW);
	ASSERT_TRUE(fc.cg_room == -100 * MIB, "negative room");
	ASSERT_TRUE(fc.have_oom && fc.by_cgroup, "cgroup binds");
	near(fc.oom_s, 0, "no room left: 0 s");
	ASSERT_TRUE(forecast__warn(&fc, 1), "warned");

	/* MemAvailable unknown and no limit: a rate, no projection */
	memset(&sm, 0, sizeof(sm));
	forecast__compute(&fc, &m, tl, &sm, NOW);
	ASSERT_TRUE(fc.have_rate && !fc.have_oom, "no headroom known");
	model__free(&m);
	timeline__free(tl);
}

TEST(forecast_none_after_exit)
{
	struct timeline *tl = series(MIB / 2, 0, 0);
	static struct model m;
	struct sysmem sm = { .have_meminfo = true, .mem_available = 100 * MIB };
	struct forecast fc;

	if (!ASSERT_NEQ(tl, NULL, "timeline"))
		return;
	one_process(&m);
	forecast__compute(&fc, &m, tl, &sm, NOW);
	ASSERT_FALSE(forecast__ended(&m), "running");
	ASSERT_TRUE(fc.have_oom, "projected while running");
	near(fc.oom_s, 20, "100 MiB / 5 MiB/s");

	/* every process exited: whatever the last rate, it will not run out of memory */
	m.procs[0].exited = true;
	forecast__compute(&fc, &m, tl, &sm, NOW);
	ASSERT_TRUE(forecast__ended(&m), "ended");
	ASSERT_FALSE(fc.have_rate || fc.have_rate_all, "no rate after the exit");
	ASSERT_FALSE(fc.have_oom || fc.have_sys_oom, "no projection after the exit");
	ASSERT_TRUE(fc.have_sys_room && fc.sys_room == 100 * MIB, "the room is still shown");
	ASSERT_FALSE(forecast__warn(&fc, 1e9), "no warning after the exit");

	/* the session finished the model (detached, or the root exited) */
	m.procs[0].exited = false;
	model__finish(&m, NOW);
	forecast__compute(&fc, &m, tl, &sm, NOW);
	ASSERT_TRUE(forecast__ended(&m) && !fc.have_oom, "no projection once finished");
	model__free(&m);
	timeline__free(tl);
}

TEST(forecast_none_when_flat_or_shrinking)
{
	struct timeline *flat = series(0, 0, 0);
	struct timeline *shrink = series(-MIB / 2, MIB, 0);
	static struct model m;
	struct sysmem sm = { .have_meminfo = true, .mem_available = 1000 * MIB };
	struct forecast fc;

	if (!ASSERT_NEQ(flat, NULL, "flat") || !ASSERT_NEQ(shrink, NULL, "shrink"))
		goto cleanup;
	one_process(&m);
	forecast__compute(&fc, &m, flat, &sm, NOW);
	ASSERT_TRUE(fc.have_rate, "flat: a rate");
	near(fc.rate, 0, "flat: 0 B/s");
	ASSERT_FALSE(fc.have_oom || fc.have_sys_oom, "flat: no projection");

	/* anon shrinks 5 MiB/s while file pages grow 10 MiB/s: reclaimable, no projection */
	forecast__compute(&fc, &m, shrink, &sm, NOW);
	ASSERT_TRUE(fc.have_rate, "shrinking: a rate");
	near(fc.rate, -5.0 * MIB, "shrinking: -512 KiB per 100 ms");
	near(fc.rate_all, 5.0 * MIB, "resident: +1 MiB - 512 KiB per 100 ms");
	ASSERT_FALSE(fc.have_oom, "shrinking: no projection");
	ASSERT_FALSE(forecast__warn(&fc, 1e9), "shrinking: no warning");
	model__free(&m);
cleanup:
	timeline__free(flat);
	timeline__free(shrink);
}
