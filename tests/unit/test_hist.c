// SPDX-License-Identifier: GPL-2.0
/* log2 bucketing and bcc-style printing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lib/hist.h"
#include "memphase.h"

TEST(hist_slot_boundaries)
{
	unsigned int k;

	ASSERT_EQ(hist__slot(0, MP_MAX_SLOTS), 0, "slot(0)");
	ASSERT_EQ(hist__slot(1, MP_MAX_SLOTS), 1, "slot(1)");
	ASSERT_EQ(hist__slot(2, MP_MAX_SLOTS), 2, "slot(2)");
	ASSERT_EQ(hist__slot(3, MP_MAX_SLOTS), 2, "slot(3)");
	ASSERT_EQ(hist__slot(4, MP_MAX_SLOTS), 3, "slot(4)");
	ASSERT_EQ(hist__slot(4095, MP_MAX_SLOTS), 12, "slot(4095)");
	ASSERT_EQ(hist__slot(4096, MP_MAX_SLOTS), 13, "slot(4096)");
	/* every power of two starts a slot, the value below it ends the previous one */
	for (k = 1; k < 64; k++) {
		__u64 p = 1ULL << k;

		if (!ASSERT_EQ(hist__slot(p, 65), k + 1, "slot(2^k)"))
			printf("k = %u\n", k);
		if (!ASSERT_EQ(hist__slot(p - 1, 65), k, "slot(2^k - 1)"))
			printf("k = %u\n", k);
	}
	ASSERT_EQ(hist__slot(~0ULL, 65), 64, "slot(u64 max), 65 slots");
	ASSERT_EQ(hist__slot(~0ULL, 64), 63, "slot(u64 max), 64 slots");
}

TEST(hist_slot_clamp)
{
	ASSERT_EQ(hist__slot(~0ULL, MP_MAX_SLOTS), MP_MAX_SLOTS - 1, "u64 max clamped");
	ASSERT_EQ(hist__slot(1ULL << 38, MP_MAX_SLOTS), 39, "2^38 is the last slot");
	ASSERT_EQ(hist__slot((1ULL << 38) - 1, MP_MAX_SLOTS), 38, "2^38 - 1");
	ASSERT_EQ(hist__slot(1ULL << 39, MP_MAX_SLOTS), 39, "2^39 clamped");
	ASSERT_EQ(hist__slot(1ULL << 50, MP_MAX_SLOTS), 39, "2^50 clamped");
	ASSERT_EQ(hist__slot(5, 3), 2, "3 slots");
	ASSERT_EQ(hist__slot(12345, 1), 0, "1 slot");
	ASSERT_EQ(hist__slot(0, 1), 0, "1 slot, 0");
}

TEST(hist_range)
{
	__u64 lo = 1, hi = 1;
	unsigned int s;

	hist__range(0, &lo, &hi);
	ASSERT_EQ(lo, 0, "slot 0 low");
	ASSERT_EQ(hi, 0, "slot 0 high");
	hist__range(1, &lo, &hi);
	ASSERT_EQ(lo, 1, "slot 1 low");
	ASSERT_EQ(hi, 1, "slot 1 high");
	hist__range(2, &lo, &hi);
	ASSERT_EQ(lo, 2, "slot 2 low");
	ASSERT_EQ(hi, 3, "slot 2 high");
	hist__range(13, &lo, &hi);
	ASSERT_EQ(lo, 4096, "slot 13 low");
	ASSERT_EQ(hi, 8191, "slot 13 high");
	hist__range(64, &lo, &hi);
	ASSERT_EQ(lo, 1ULL << 63, "slot 64 low");
	ASSERT_EQ(hi, ~0ULL, "slot 64 high");

	/* range and slot agree at both ends of every slot */
	for (s = 0; s <= 64; s++) {
		hist__range(s, &lo, &hi);
		if (!ASSERT_EQ(hist__slot(lo, 65), s, "slot(low)") ||
		    !ASSERT_EQ(hist__slot(hi, 65), s, "slot(high)"))
			printf("slot %u: [%llu, %llu]\n", s, (unsigned long long)lo,
			       (unsigned long long)hi);
		if (s > 0 && s < 64)
			ASSERT_EQ(hist__slot(hi + 1, 65), s + 1, "slot(high + 1)");
	}
}

TEST(hist_count)
{
	__u64 slots[MP_MAX_SLOTS] = {};

	ASSERT_EQ(hist__count(slots, MP_MAX_SLOTS), 0, "empty");
	slots[0] = 3;
	slots[7] = 10;
	slots[MP_MAX_SLOTS - 1] = 1ULL << 40;
	ASSERT_EQ(hist__count(slots, MP_MAX_SLOTS), 13 + (1ULL << 40), "sum");
	ASSERT_EQ(hist__count(slots, 7), 3, "first 7 slots only");
}

/* hist__print() into a string; returns its result, *out must be freed */
static int print_to_string(const __u64 *slots, unsigned int n, const char *unit, char **out)
{
	size_t len = 0;
	FILE *f;
	int ret;

	*out = NULL;
	f = open_memstream(out, &len);
	if (!f)
		return -1;
	ret = hist__print(f, slots, n, unit);
	fclose(f);
	return ret;
}

/* splits s into lines (in place); returns the count */
static int split_lines(char *s, char **lines, int max)
{
	int n = 0;
	char *nl;

	while (*s && n < max) {
		lines[n++] = s;
		nl = strchr(s, '\n');
		if (!nl)
			break;
		*nl = '\0';
		s = nl + 1;
	}
	return n;
}

static bool starts_with(const char *s, const char *prefix)
{
	if (!strncmp(s, prefix, strlen(prefix)))
		return true;
	printf("'%s' does not start with '%s'\n", s, prefix);
	return false;
}

TEST(hist_print_empty)
{
	__u64 slots[MP_MAX_SLOTS] = {};
	char *out = NULL;

	ASSERT_EQ(print_to_string(slots, MP_MAX_SLOTS, "bytes", &out), 0, "return");
	ASSERT_STREQ(out, "", "output");
	free(out);
}

TEST(hist_print_usecs)
{
	__u64 slots[MP_MAX_SLOTS] = {};
	char *out = NULL, *lines[64];
	int ret, n, i;

	slots[3] = 5;	/* [4, 7] */
	slots[5] = 20;	/* [16, 31], the max */
	slots[6] = 1;	/* [32, 63] */
	ret = print_to_string(slots, MP_MAX_SLOTS, "usecs", &out);
	if (!ASSERT_OK_PTR(out, "memstream"))
		return;
	/* header + slots 3..6 */
	ASSERT_EQ(ret, 5, "return");
	n = split_lines(out, lines, 64);
	if (!ASSERT_EQ(n, 5, "lines"))
		goto cleanup;
	ASSERT_STREQ(lines[0], "     usecs               : count    distribution", "header");
	ASSERT_STREQ(lines[1], "         4 -> 7          : 5        |"
		     "**********                              |", "slot 3");
	ASSERT_STREQ(lines[2], "         8 -> 15         : 0        |"
		     "                                        |", "slot 4");
	ASSERT_STREQ(lines[3], "        16 -> 31         : 20       |"
		     "****************************************|", "slot 5");
	ASSERT_STREQ(lines[4], "        32 -> 63         : 1        |"
		     "**                                      |", "slot 6");
	for (i = 0; i < n; i++)
		ASSERT_LE(strlen(lines[i]), 80, "width");
cleanup:
	free(out);
}

TEST(hist_print_bytes)
{
	__u64 slots[MP_MAX_SLOTS] = {};
	char *out = NULL, *lines[64], *bar;
	int ret, n, i;

	slots[0] = 1;
	slots[1] = 2;
	slots[2] = 3;
	slots[10] = 4;	/* [512, 1023] */
	slots[11] = 7;	/* [1K, 2K-1] */
	slots[13] = 1000;	/* [4K, 8K-1], the max */
	slots[21] = 1;	/* [1M, 2M-1] */
	slots[MP_MAX_SLOTS - 1] = 2;	/* [256G, inf): clamped */
	ret = print_to_string(slots, MP_MAX_SLOTS, "bytes", &out);
	if (!ASSERT_OK_PTR(out, "memstream"))
		return;
	ASSERT_EQ(ret, 1 + MP_MAX_SLOTS, "return");
	n = split_lines(out, lines, 64);
	if (!ASSERT_EQ(n, 1 + MP_MAX_SLOTS, "lines"))
		goto cleanup;
	ASSERT_STREQ(lines[0], "     bytes               : count    distribution", "header");
	ASSERT_TRUE(starts_with(lines[1], "         0               : 1        |"), "slot 0");
	ASSERT_TRUE(starts_with(lines[2], "         1               : 2        |"), "slot 1");
	ASSERT_TRUE(starts_with(lines[3], "         2 -> 3          : 3        |"), "slot 2");
	ASSERT_TRUE(starts_with(lines[11], "       512 -> 1023       : 4        |"), "slot 10");
	ASSERT_TRUE(starts_with(lines[12], "        1K -> 2K-1       : 7        |"), "slot 11");
	ASSERT_TRUE(starts_with(lines[14], "        4K -> 8K-1       : 1000     |"), "slot 13");
	ASSERT_TRUE(starts_with(lines[22], "        1M -> 2M-1       : 1        |"), "slot 21");
	ASSERT_TRUE(starts_with(lines[40], "      256G -> inf        : 2        |"), "last");
	for (i = 1; i < n; i++) {
		if (!ASSERT_EQ(strlen(lines[i]), 78, "bcc width"))
			printf("'%s'\n", lines[i]);
	}

	/* the max slot has the full 40-column bar, a small one a short bar */
	bar = strchr(lines[14], '|');
	ASSERT_STREQ(bar, "|****************************************|", "max bar");
	bar = strchr(lines[12], '|');
	ASSERT_EQ(strspn(bar + 1, "*"), 0, "7/1000 rounds down to no star");
	bar = strchr(lines[5], '|');
	ASSERT_STREQ(bar, "|                                        |", "empty slot bar");
cleanup:
	free(out);
}

TEST(hist_print_wide)
{
	__u64 slots[MP_MAX_SLOTS] = {};
	char *out = NULL, *lines[64];
	int n, i, max = 0;

	/* 12-digit ranges and a 20-digit count widen the columns, nothing is cut */
	slots[38] = ~0ULL;
	slots[39] = 1;
	slots[20] = 12345;
	print_to_string(slots, MP_MAX_SLOTS, "nsecs", &out);
	if (!ASSERT_OK_PTR(out, "memstream"))
		return;
	n = split_lines(out, lines, 64);
	for (i = 0; i < n; i++) {
		if ((int)strlen(lines[i]) > max)
			max = strlen(lines[i]);
	}
	/* 2 x 12 digits, 20-digit count, 50 columns of separators and bar */
	ASSERT_EQ(max, 2 * 12 + 20 + 50, "width with a 20-digit count");
	if (!ASSERT_EQ(n, 21, "lines"))
		goto cleanup;
	ASSERT_STREQ(lines[19], "137438953472 -> 274877906943 : 18446744073709551615 |"
		     "****************************************|", "u64 max count");
	ASSERT_TRUE(starts_with(lines[20], "274877906944 -> inf          : 1                    |"),
		    "last slot");
	free(out);

	/* the same ranges with a small count stay within 80 columns */
	slots[38] = 100;
	print_to_string(slots, MP_MAX_SLOTS, "nsecs", &out);
	if (!ASSERT_OK_PTR(out, "memstream"))
		return;
	n = split_lines(out, lines, 64);
	for (i = 0; i < n; i++)
		ASSERT_LE(strlen(lines[i]), 80, "width");
	ASSERT_STREQ(lines[0], "       nsecs                 : count  distribution", "header");
cleanup:
	free(out);
}
