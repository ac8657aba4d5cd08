// SPDX-License-Identifier: GPL-2.0
/* Growth rate and time-to-OOM projection on synthetic RSS series. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "model/model.h"
#include "model/timeline.h"

#define MIB	(1024.0 * 1024.0)
#define NS	1000000000ULL
#define TICK	(NS / 10)	/* the session samples every 100 ms */

static bool close_to(double actual, double expected, double rel, const char *name)
{
	bool ok = fabs(actual - expected) <= fabs(expected) * rel;

	if (!ok) {
		test__fail();
		printf("%s: got %.6g, expected %.6g within %.2f%%\n", name, actual, expected,
		       rel * 100);
	}
	return ok;
}

/* anon = base + f(t) */
static void add_anon(struct timeline *tl, __u64 ts, double anon, __u32 phase)
{
	__s64 rss[MP_NR_CLASSES] = {};

	rss[MP_ANON] = (__s64)anon;
	rss[MP_FILE] = 100 << 20;
	ASSERT_OK(timeline__add(tl, ts, rss, phase), "add");
}

TEST(timeline_steady_growth)
{
	struct timeline *tl = timeline__new(1024, 5.0);
	double rate = 0, secs = 0, headroom = 8.0 * 1024 * MIB;
	__u64 t = 1000 * NS;
	int i;

	if (!ASSERT_NEQ(tl, NULL, "new"))
		return;
	/* 12 MiB/s with sampling jitter of +-20 ms */
	for (i = 0; i < 300; i++) {
		__u64 ts = t + i * TICK + (i % 3 - 1) * 20000000LL;

		add_anon(tl, ts, 500 * MIB + 12 * MIB * (ts - t) / 1e9, 1);
	}
	if (ASSERT_OK(timeline__rate(tl, TIMELINE_UNRECLAIMABLE, t + 299 * TICK, &rate), "rate"))
		close_to(rate, 12 * MIB, 0.01, "steady rate");
	/* file pages are not in the unreclaimable sum: all classes give the same slope */
	if (ASSERT_OK(timeline__rate(tl, TIMELINE_ALL, t + 299 * TICK, &rate), "rate all"))
		close_to(rate, 12 * MIB, 0.01, "steady rate, all classes");
	if (ASSERT_OK(timeline__time_to(headroom, rate, &secs), "time_to"))
		close_to(secs, headroom / (12 * MIB), 0.01, "projection = headroom / rate");
	timeline__free(tl);
}

TEST(timeline_rate_needs_samples)
{
	struct timeline *tl = timeline__new(64, 5.0);
	double rate;

	if (!ASSERT_NEQ(tl, NULL, "new"))
		return;
	ASSERT_EQ(timeline__rate(tl, TIMELINE_ALL, 10 * NS, &rate), -ENODATA, "empty");
	add_anon(tl, 1 * NS, 0, 0);
	add_anon(tl, 1 * NS + TICK, MIB, 0);
	ASSERT_EQ(timeline__rate(tl, TIMELINE_ALL, 10 * NS, &rate), -ENODATA, "two samples");
	add_anon(tl, 1 * NS + 2 * TICK, 2 * MIB, 0);
	/* three samples over 0.2 s: shorter than a quarter of the window */
	ASSERT_EQ(timeline__rate(tl, TIMELINE_ALL, 10 * NS, &rate), -ENODATA, "short span");
	ASSERT_EQ(timeline__add(tl, NS / 2, (__s64[MP_NR_CLASSES]){}, 0), -EINVAL,
		  "time going backwards");
	timeline__free(tl);
	ASSERT_NULL(timeline__new(4, 5.0), "cap too small");
	ASSERT_NULL(timeline__new(64, 0), "no window");
}

TEST(timeline_burst)
{
	struct timeline *tl = timeline__new(1024, 5.0);
	double rate = 0, burst = 1024 * MIB, base = 2 * MIB;
	__u64 t = 50 * NS, now;
	int i;

	if (!ASSERT_NEQ(tl, NULL, "new"))
		return;
	/* 2 MiB/s, then 1 GiB at once in one 100 ms sample, then 2 MiB/s again */
	for (i = 0; i < 200; i++) {
		double v = 100 * MIB + base * i / 10.0 + (i >= 100 ? burst : 0);

		now = t + i * TICK;
		add_anon(tl, now, v, 2);
		if (i < 100 || !ASSERT_OK(timeline__rate(tl, TIMELINE_UNRECLAIMABLE, now, &rate),
					  "rate"))
			continue;
		/* reacts... */
		if (i == 110 && !ASSERT_GT(rate, 10 * base, "reacts to the burst"))
			printf("rate %.0f\n", rate);
		/*
		 * ...without exploding: a 1 GiB step is never read as 10 GiB/s, but at most
		 * as 1.5 B over the span of the samples in the window (4.9 s here)
		 */
		if (!ASSERT_LE(rate, 1.5 * burst / 4.9 + base * 1.01, "bounded by 1.5 B / span"))
			printf("i %d rate %.0f\n", i, rate);
	}
	/* once the burst leaves the window the steady rate is back */
	if (ASSERT_OK(timeline__rate(tl, TIMELINE_UNRECLAIMABLE, now, &rate), "rate after"))
		close_to(rate, base, 0.01, "rate after the burst");
	timeline__free(tl);
}

TEST(timeline_shrink_and_flat)
{
	struct timeline *tl = timeline__new(1024, 5.0);
	struct timeline *flat = timeline__new(1024, 5.0);
	double rate = 0, secs = -1;
	__u64 now = 0;
	int i;

	if (!ASSERT_NEQ(tl, NULL, "new") || !ASSERT_NEQ(flat, NULL, "new"))
		goto cleanup;
	for (i = 0; i < 100; i++) {
		now = NS + i * TICK;
		add_anon(tl, now, 4096 * MIB - 30 * MIB * i / 10.0, 0);
		add_anon(flat, now, 300 * MIB, 0);
	}
	if (ASSERT_OK(timeline__rate(tl, TIMELINE_UNRECLAIMABLE, now, &rate), "rate shrink"))
		close_to(rate, -30 * MIB, 0.01, "shrink rate");
	ASSERT_EQ(timeline__time_to(1024 * MIB, rate, &secs), -ERANGE, "shrink: no projection");
	ASSERT_EQ(secs, -1.0, "secs untouched");
	if (ASSERT_OK(timeline__rate(flat, TIMELINE_UNRECLAIMABLE, now, &rate), "rate flat"))
		ASSERT_TRUE(fabs(rate) < 1, "flat rate is 0");
	ASSERT_EQ(timeline__time_to(1024 * MIB, rate, &secs), -ERANGE, "flat: no projection");
	/* slower than a page per second is noise, not growth */
	ASSERT_EQ(timeline__time_to(1024 * MIB, 1000, &secs), -ERANGE, "1000 B/s");
	ASSERT_OK(timeline__time_to(-5, 5 * MIB, &secs), "no headroom left");
	ASSERT_EQ(secs, 0.0, "already out of room");
	/* a few KiB/s: no 18-day forecast; a day's worth still is one */
	ASSERT_EQ(timeline__time_to(6.5 * 1024 * MIB, 4 * 1024, &secs), -ERANGE, "4 KiB/s");
	ASSERT_EQ(timeline__time_to(100 * 1024 * MIB, 1 * MIB, &secs), -ERANGE, "past a day");
	ASSERT_OK(timeline__time_to(50 * 1024 * MIB, 1 * MIB, &secs), "within a day");
cleanup:
	timeline__free(tl);
	timeline__free(flat);
}

TEST(timeline_rise_undone_is_no_growth)
{
	struct timeline *tl = timeline__new(1024, 5.0);
	double rate = -1;
	__u64 now = 0;
	int i;

	if (!ASSERT_NEQ(tl, NULL, "new"))
		return;
	/* 4.8 s of +20 MiB/s, then just below where the window began: the fit over the
	 * window still rises (+15 MiB/s) */
	for (i = 0; i < 50; i++) {
		now = NS + i * TICK;
		add_anon(tl, now, i < 48 ? 300 * MIB + 2 * MIB * i : 290 * MIB, 0);
	}
	if (ASSERT_OK(timeline__rate(tl, TIMELINE_UNRECLAIMABLE, now, &rate), "rate"))
		ASSERT_EQ(rate, 0.0, "the fall undid the rise: not growing");
	timeline__free(tl);
}

TEST(timeline_rate_window_end)
{
	struct timeline *tl = timeline__new(1024, 5.0);
	double rate = 0;
	int i;

	if (!ASSERT_NEQ(tl, NULL, "new"))
		return;
	/* 10 MiB/s for 10 s, then flat for 10 s */
	for (i = 0; i < 200; i++)
		add_anon(tl, NS + i * TICK, 10 * MIB * (i < 100 ? i : 100) / 10.0, 0);
	/* the rate as it was at the end of the growth, samples after it ignored */
	if (ASSERT_OK(timeline__rate(tl, TIMELINE_UNRECLAIMABLE, NS + 99 * TICK, &rate), "then"))
		close_to(rate, 10 * MIB, 0.01, "rate at 9.9 s");
	if (ASSERT_OK(timeline__rate(tl, TIMELINE_UNRECLAIMABLE, NS + 199 * TICK, &rate), "now"))
		ASSERT_TRUE(fabs(rate) < 1, "flat now");
	timeline__free(tl);
}

TEST(timeline_history_decimates)
{
	struct timeline *tl = timeline__new(16, 5.0);
	const struct timeline_sample *s, *prev = NULL;
	unsigned int i, changes = 0;

	if (!ASSERT_NEQ(tl, NULL, "new"))
		return;
	/* 1000 samples into 16 slots; phase 3 only for samples 500..501 */
	for (i = 0; i < 1000; i++)
		add_anon(tl, NS + i * TICK, i * MIB, i >= 500 && i < 502 ? 3 : 1);
	ASSERT_LE(timeline__len(tl), 16, "bounded");
	ASSERT_GE(timeline__len(tl), 8, "at least half full");
	for (i = 0; i < timeline__len(tl); i++) {
		s = timeline__at(tl, i);
		if (prev)
			ASSERT_GT(s->ts_ns, prev->ts_ns, "increasing time");
		if (s->flags & TIMELINE_PHASE_CHANGED)
			changes++;
		prev = s;
	}
	/* the first sample, and the short phase 3 merged away but its change kept */
	ASSERT_GE(changes, 2, "phase changes survive decimation");
	ASSERT_NULL(timeline__at(tl, timeline__len(tl)), "past the end");
	/* the newest entry is the newest sample */
	s = timeline__last(tl);
	ASSERT_EQ(s->ts_ns, NS + 999 * TICK, "last");
	ASSERT_EQ(timeline__at(tl, timeline__len(tl) - 1)->ts_ns, NS + 999 * TICK,
		  "history ends at the last sample");
	/* the history still covers the start */
	ASSERT_LE(timeline__at(tl, 0)->ts_ns, NS + 100 * TICK, "covers the beginning");
	timeline__free(tl);
}

TEST(timeline_from_model)
{
	struct timeline *tl = timeline__new(64, 5.0);
	static struct model m;
	__s64 rss[MP_NR_CLASSES] = {}, peak[MP_NR_CLASSES] = {};
	const struct timeline_sample *s;

	if (!ASSERT_NEQ(tl, NULL, "new"))
		return;
	model__init(&m, 100, NS);
	rss[MP_ANON] = 10 << 20;
	rss[MP_SHMEM] = 1 << 20;
	model__set_rss(&m, 100, rss, peak, 0);
	model__set_rss(&m, 101, rss, peak, 0);
	model__set_rss(&m, 102, rss, peak, 0);
	model__proc(&m, 102, false)->exited = true;
	m.cur_phase = 4;
	ASSERT_OK(timeline__add_model(tl, &m, 2 * NS), "add model");
	s = timeline__last(tl);
	if (ASSERT_NEQ(s, NULL, "last")) {
		ASSERT_EQ(s->rss[MP_ANON], 20 << 20, "anon of the live processes");
		ASSERT_EQ(s->rss[MP_SHMEM], 2 << 20, "shmem");
		ASSERT_EQ(s->phase, 4, "phase");
		ASSERT_EQ(timeline__sum(s, TIMELINE_UNRECLAIMABLE), 22 << 20, "sum");
	}
	model__free(&m);
	timeline__free(tl);
}

/* A relabel: the samples of its span, and only those, show the new phases. */
TEST(timeline_relabel)
{
	struct timeline *tl = timeline__new(64, 10.0);
	__u8 to[MP_MAX_PHASES] = {};
	unsigned int i;

	if (!ASSERT_OK_PTR(tl, "new"))
		return;
	for (i = 0; i < 10; i++)
		add_anon(tl, (i + 1) * TICK, i * MIB, i < 3 ? 1 : i < 6 ? 2 : 3);
	to[1] = 5;	/* 1 -> 4 */
	to[2] = 6;	/* 2 -> 5 */
	timeline__relabel(tl, 2 * TICK, 5 * TICK, to);
	ASSERT_EQ(timeline__at(tl, 0)->phase, 1, "before the span");
	ASSERT_EQ(timeline__at(tl, 1)->phase, 4, "in it: 1 -> 4");
	ASSERT_EQ(timeline__at(tl, 2)->phase, 4, "in it: 1 -> 4");
	ASSERT_EQ(timeline__at(tl, 3)->phase, 5, "in it: 2 -> 5");
	ASSERT_EQ(timeline__at(tl, 4)->phase, 5, "its end");
	ASSERT_EQ(timeline__at(tl, 5)->phase, 2, "after it");
	ASSERT_EQ(timeline__at(tl, 7)->phase, 3, "not relabelled");
	ASSERT_EQ(timeline__last(tl)->phase, 3, "last");
	timeline__free(tl);
}

/*
 * A high between two readings: a point of its own at its time, with the process's classes
 * then and the other process's now; thinning keeps it; the rate does not see it.
 */
TEST(timeline_keeps_the_peaks_between_readings)
{
	struct timeline *tl = timeline__new(16, 5.0);
	static struct model m;
	__s64 rss[MP_NR_CLASSES] = {}, peak[MP_NR_CLASSES] = {}, top = 0;
	__s64 high[MP_NR_CLASSES] = { [MP_ANON] = 200 << 20, [MP_FILE] = 10 << 20 };
	unsigned int i;
	double rate;

	if (!ASSERT_OK_PTR(tl, "new"))
		return;
	model__init(&m, 100, NS);
	rss[MP_ANON] = 10 << 20;
	model__set_rss(&m, 100, rss, peak, 0);
	model__set_rss(&m, 101, rss, peak, 0);
	ASSERT_OK(timeline__add_model(tl, &m, NS), "first reading");
	/* 100 went to 210 MiB and back between the readings at 1 s and 1.1 s */
	model__note_peak_at(&m, 100, NS + TICK / 2, high);
	model__note_peak_at(&m, 100, NS + TICK / 4, rss);	/* older: ignored */
	ASSERT_EQ(timeline__add_peaks(tl, &m, NS + TICK), 1, "one peak");
	ASSERT_EQ(timeline__add_peaks(tl, &m, NS + TICK), 0, "once");
	ASSERT_OK(timeline__add_model(tl, &m, NS + TICK), "second reading");
	ASSERT_EQ(timeline__len(tl), 3, "reading, peak, reading");
	ASSERT_EQ(timeline__at(tl, 1)->ts_ns, NS + TICK / 2, "at its time");
	ASSERT_EQ(timeline__at(tl, 1)->rss[MP_ANON], (200 + 10) << 20, "its anon and the other's");
	ASSERT_EQ(timeline__at(tl, 1)->rss[MP_FILE], 10 << 20, "its file");
	ASSERT_TRUE(timeline__at(tl, 1)->flags & TIMELINE_PEAK, "flagged");
	/* flat readings for 4 s: thinned several times over, the peak stays */
	for (i = 2; i < 42; i++)
		ASSERT_OK(timeline__add_model(tl, &m, NS + i * TICK), "reading");
	for (i = 0; i < timeline__len(tl); i++)
		if (timeline__sum(timeline__at(tl, i), TIMELINE_RESIDENT) > top)
			top = timeline__sum(timeline__at(tl, i), TIMELINE_RESIDENT);
	ASSERT_EQ(top, (210 + 10) << 20, "the peak survives the thinning");
	ASSERT_OK(timeline__rate(tl, TIMELINE_RESIDENT, NS + 41 * TICK, &rate), "rate");
	ASSERT_TRUE(fabs(rate) < 1.0, "flat: the peak is no growth");
	model__free(&m);
	timeline__free(tl);
}
