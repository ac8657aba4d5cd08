// SPDX-License-Identifier: GPL-2.0
/* The history's bounds: an observation of days keeps its timeline within them. */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "model/history.h"

#define MS	1000000ULL

/* A server's day: a short prompt, a longer generation, again and again. */
TEST(history_intervals_merge_past_their_bound)
{
	struct history h = {};
	__u64 t = 0, total = 0, newest_start = 0;
	size_t i, n = 10 * HISTORY_MAX_INTERVALS, k;
	bool exact = true, contiguous = true;

	for (i = 0; i < n; i++) {
		__u64 len = (i & 1) ? 30 * MS : 10 * MS;

		history__add_interval(&h, 1 + (i & 1), 7, t, t + len);
		t += len;
		total += len;
	}
	ASSERT_LE(h.niv, (size_t)HISTORY_MAX_INTERVALS, "within the bound");
	ASSERT_GT(h.niv, (size_t)HISTORY_MAX_INTERVALS / 2, "most of the room used");
	ASSERT_EQ(h.merged + h.niv, (__u64)n, "every interval merged or kept");
	/* the whole run stays drawn: from its start to its end, without a gap or an overlap */
	ASSERT_EQ(h.iv[0].start_ns, 0ULL, "starts where the run did");
	ASSERT_EQ(h.iv[h.niv - 1].end_ns, total, "ends where the run did");
	for (k = 1; k < h.niv; k++)
		contiguous &= h.iv[k].start_ns == h.iv[k - 1].end_ns;
	ASSERT_TRUE(contiguous, "intervals follow each other");
	/* the newest quarter of the bound is exact: 10 ms and 30 ms in turn */
	for (k = h.niv - HISTORY_MAX_INTERVALS / 4; k < h.niv; k++) {
		__u64 len = h.iv[k].end_ns - h.iv[k].start_ns;

		exact &= len == (h.iv[k].phase == 2 ? 30 * MS : 10 * MS);
		if (!newest_start)
			newest_start = h.iv[k].start_ns;
	}
	ASSERT_TRUE(exact, "the newest intervals are exact");
	/* the run's start is exact, what follows coarse: the generation, which held most of
	 * each pair, won */
	for (k = 0; k < HISTORY_HEAD; k++)
		exact &= h.iv[k].end_ns - h.iv[k].start_ns == (k & 1 ? 30 * MS : 10 * MS);
	ASSERT_TRUE(exact, "the first intervals are exact");
	ASSERT_EQ(h.iv[HISTORY_HEAD].phase, 2U, "the coarse intervals are of the longer phase");
	ASSERT_GT(h.iv[HISTORY_HEAD].end_ns - h.iv[HISTORY_HEAD].start_ns, 40 * MS,
		  "the next is merged");
	history__free(&h);
}

TEST(history_changes_thin_past_their_bound)
{
	struct history h = {};
	size_t i, n = 10 * HISTORY_MAX_CHANGES, k;
	__u32 tids[4] = { 11, 12, 13, 14 };
	bool ordered = true, last_kept = true;

	for (i = 0; i < n; i++)
		history__add_change(&h, i * MS, 7, tids[i % 4], 1 + (i / 4) % 2, 1 + (i / 4 + 1) % 2);
	ASSERT_LE(h.nch, (size_t)HISTORY_MAX_CHANGES, "within the bound");
	ASSERT_EQ(h.thinned + h.nch, (__u64)n, "every change thinned or kept");
	for (k = 1; k < h.nch; k++)
		ordered &= h.ch[k].ts_ns > h.ch[k - 1].ts_ns;
	ASSERT_TRUE(ordered, "in time order");
	/* the run's first changes are kept, and the newest ones all are */
	for (k = 0; k < HISTORY_HEAD; k++)
		ordered &= h.ch[k].ts_ns == k * MS;
	ASSERT_TRUE(ordered, "the first changes are there");
	for (k = 0; k < HISTORY_MAX_CHANGES / 4; k++)
		last_kept &= h.ch[h.nch - 1 - k].ts_ns == (n - 1 - k) * MS;
	ASSERT_TRUE(last_kept, "the newest changes are all there");
	history__free(&h);
}
