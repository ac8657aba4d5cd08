// SPDX-License-Identifier: GPL-2.0
/* The live view's status line (its format is a contract) and duration wording. */
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "report/live/live.h"
#include "model/model.h"
#include "lib/sysmem.h"
#include "model/timeline.h"
#include "report/live/hists.h"

#define NS	1000000000ULL
#define MIB	(1LL << 20)

TEST(live_status_line)
{
	struct timeline *tl = timeline__new(256, 5.0);
	static struct model m;
	__s64 rss[MP_NR_CLASSES] = {}, peak[MP_NR_CLASSES] = {};
	struct sysmem sm = {};
	char buf[512];
	int i;

	if (!ASSERT_NEQ(tl, NULL, "timeline"))
		return;
	model__init(&m, 42, 10 * NS);
	model__set_phase_name(&m, 4, "generate");
	m.cur_phase = 4;
	rss[MP_ANON] = 1024 * MIB;
	rss[MP_FILE] = 100 * MIB;
	model__set_rss(&m, 42, rss, peak, 0);
	/* 12 MiB/s of anon for 3 s */
	for (i = 0; i <= 30; i++) {
		__s64 r[MP_NR_CLASSES] = {};

		r[MP_ANON] = 1024 * MIB - 36 * MIB + 12 * MIB * i / 10;
		timeline__add(tl, 10 * NS + 9 * NS + i * NS / 10, r, 4);
	}
	sm.have_meminfo = true;
	sm.mem_total = 24ULL << 30;
	sm.mem_available = 1200 * MIB;
	sm.cg_version = 1;
	sm.cg_usage = 7 * MIB;
	live__format_status(buf, sizeof(buf), &m, tl, &sm, 22 * NS);
	ASSERT_STREQ(buf, "memphase: t=12.0s phase=generate rss=1.10GiB anon=1.00GiB "
			  "file=100MiB shmem=0B swap=0B rate=+12.0MiB/s avail=1.17GiB cg=7.00MiB/- "
			  "oom_in=~100s lost=0", "status line");

	/* nothing known yet: dashes, and never a missing field */
	m.lost_kernel = 3;
	live__format_status(buf, sizeof(buf), &m, NULL, NULL, 10 * NS + NS / 2);
	ASSERT_STREQ(buf, "memphase: t=0.5s phase=generate rss=1.10GiB anon=1.00GiB "
			  "file=100MiB shmem=0B swap=0B rate=- avail=- cg=- oom_in=- lost=3",
		     "status line without data");

	/* a cgroup limit nearer than MemAvailable */
	sm.cg_limited = true;
	sm.cg_limit = 1024 * MIB;
	sm.cg_limit_usage = 904 * MIB;
	sm.cg_usage = 904 * MIB;
	live__format_status(buf, sizeof(buf), &m, tl, &sm, 22 * NS);
	ASSERT_TRUE(strstr(buf, " cg=904MiB/1.00GiB oom_in=~10s lost=3") != NULL, "cgroup binds");
	if (strstr(buf, "oom_in=~10s") == NULL)
		printf("%s\n", buf);

	/* the command has exited: it will not run out of memory, whatever the last rate */
	m.procs[0].exited = true;
	live__format_status(buf, sizeof(buf), &m, tl, &sm, 22 * NS);
	ASSERT_TRUE(strstr(buf, " rate=- ") != NULL && strstr(buf, " oom_in=- ") != NULL,
		    "no projection after the exit");
	if (!strstr(buf, " oom_in=- "))
		printf("%s\n", buf);
	model__free(&m);
	timeline__free(tl);
}

TEST(live_fmt_eta)
{
	char b[32];

	ASSERT_STREQ(live__fmt_eta(b, sizeof(b), 0.2), "<1 s", "under a second");
	ASSERT_STREQ(live__fmt_eta(b, sizeof(b), 40.4), "~40 s", "seconds");
	ASSERT_STREQ(live__fmt_eta(b, sizeof(b), 600), "~10 min", "minutes");
	ASSERT_STREQ(live__fmt_eta(b, sizeof(b), 3 * 3600), "~3.0 h", "hours");
	ASSERT_STREQ(live__fmt_eta(b, sizeof(b), 5 * 86400), "~5 days", "days");
}

TEST(live_no_tui_notice)
{
	static char *const argv[] = { "x", NULL };
	struct live_opts o = { .use_tui = false, .interval_s = 1, .argv = argv, .pid = 1 };
	struct live *l = live__new(&o);

	if (!ASSERT_NEQ(l, NULL, "new"))
		return;
	ASSERT_FALSE(live__tui(l), "no TUI");
	live__free(l);
	live__free(NULL);
}

/* a source that tells the histograms apart: slot 0 holds arg, slot 1 the phase */
static __u64 fake_slots[3][MP_MAX_SLOTS];

static const __u64 *fake_source(const struct model *m, unsigned int phase, unsigned int arg)
{
	fake_slots[arg][0] = arg + 1;
	fake_slots[arg][1] = phase;
	return fake_slots[arg];
}

TEST(live_hists_cycle)
{
	static const struct live_hist three[] = {
		{ "first", "bytes", fake_source, 0 },
		{ "second", "pages", fake_source, 1 },
		{ "third", "calls", fake_source, 2 },
	};
	static const char *const name[] = { "first", "second", "third" };
	static struct model m;
	struct hists h;
	const __u64 *s;
	unsigned int i;

	hists__init(&h, three, 3);
	/* twice around: first, second, third, first, ... */
	for (i = 0; i < 6; i++) {
		ASSERT_STREQ(hists__cur(&h)->title, name[i % 3], "shown");
		ASSERT_STREQ(hists__peek(&h)->title, name[(i + 1) % 3], "h shows next");
		s = hists__slots(&h, &m, 7);
		if (ASSERT_NEQ(s, NULL, "slots"))
			ASSERT_TRUE(s[0] == (i % 3) + 1 && s[1] == 7, "its own source, the phase");
		hists__next(&h);
	}

	/* one alone: h stays on it; none: nothing to show */
	hists__init(&h, three, 1);
	hists__next(&h);
	ASSERT_STREQ(hists__cur(&h)->title, "first", "alone");
	ASSERT_STREQ(hists__peek(&h)->title, "first", "alone: next is itself");
	hists__init(&h, NULL, 0);
	hists__next(&h);
	ASSERT_TRUE(hists__cur(&h) == NULL && hists__slots(&h, &m, 0) == NULL, "none");

	/* the model's: one per enum mp_hist, in that order, titles as the TUI test reads them */
	hists__init_model(&h);
	ASSERT_EQ(h.n, MP_NR_HISTS, "every model histogram");
	ASSERT_STREQ(hists__cur(&h)->title, "RSS growth per marker call", "model first");
	ASSERT_TRUE(hists__slots(&h, &m, 2) == m.stats[2].hist[MP_HIST_CALL_GROWTH], "source");
	hists__next(&h);
	ASSERT_STREQ(hists__cur(&h)->title, "mmap request sizes", "model second");
	ASSERT_TRUE(hists__slots(&h, &m, 2) == m.stats[2].hist[MP_HIST_MMAP_SIZE], "source 2");
}
