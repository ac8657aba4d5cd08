// SPDX-License-Identifier: GPL-2.0
/* The live view's status line (its format is a contract) and duration wording. */
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "report/live.h"
#include "model/model.h"
#include "lib/sysmem.h"
#include "model/timeline.h"

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
	struct live_opts o = { .use_tui = false, .interval_s = 1, .title = "x" };
	struct live *l = live__new(&o);

	if (!ASSERT_NEQ(l, NULL, "new"))
		return;
	ASSERT_FALSE(live__tui(l), "no TUI");
	live__free(l);
	live__free(NULL);
}
