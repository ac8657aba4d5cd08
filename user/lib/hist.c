// SPDX-License-Identifier: GPL-2.0
/* log2 histograms: bucketing and bcc print_log2_hist-style printing. */
#include <stdio.h>
#include <string.h>

#include "lib/hist.h"

#define HIST_BAR_WIDTH	40
#define HIST_LABEL_MIN	10	/* bcc's width of the low/high columns */
#define HIST_COUNT_MIN	8	/* bcc's width of the count column */
#define HIST_MAX_COLS	80
/* " -> " + " : " + " |" + bar + "|" */
#define HIST_FIXED_COLS	(4 + 3 + 2 + HIST_BAR_WIDTH + 1)

unsigned int hist__slot(__u64 v, unsigned int nslots)
{
	unsigned int slot = 0;

	if (!nslots)
		return 0;
	/* floor(log2(v)) + 1 is the bit width of v; 0 stays in slot 0 */
	while (v) {
		slot++;
		v >>= 1;
	}
	return slot < nslots ? slot : nslots - 1;
}

void hist__range(unsigned int slot, __u64 *low, __u64 *high)
{
	if (slot == 0) {
		*low = *high = 0;
		return;
	}
	if (slot >= 64) {
		*low = 1ULL << 63;
		*high = ~0ULL;
		return;
	}
	*low = 1ULL << (slot - 1);
	*high = (1ULL << slot) - 1;
}

__u64 hist__count(const __u64 *slots, unsigned int nslots)
{
	__u64 sum = 0;
	unsigned int i;

	for (i = 0; i < nslots; i++)
		sum += slots[i];
	return sum;
}

/* v rendered with a binary suffix when it is a multiple of 1K or more ("4K", "64M") */
static void hist__fmt_size(char *buf, size_t len, __u64 v)
{
	static const char suffix[] = "KMGTPE";
	int i = -1;

	while (v >= 1024 && !(v & 1023) && i < (int)sizeof(suffix) - 2) {
		v >>= 10;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, suffix[i]);
}

/*
 * Labels of one slot. Ranges are inclusive like bcc's; for bytes, a slot from 1K up is
 * written with suffixes and its high end as the next power of two minus one
 * ("1K -> 2K-1"). A single-value slot has no high label. The clamped last slot (when it
 * stops short of 2^64) holds everything from its low end up: its high label is "inf".
 */
static void hist__labels(unsigned int slot, unsigned int nslots, int bytes, char *lo,
			 char *hi, size_t len)
{
	__u64 low, high;

	hist__range(slot, &low, &high);
	if (bytes)
		hist__fmt_size(lo, len, low);
	else
		snprintf(lo, len, "%llu", (unsigned long long)low);

	if (slot > 0 && slot < 64 && slot == nslots - 1) {
		snprintf(hi, len, "inf");
	} else if (low == high) {
		hi[0] = '\0';
	} else if (bytes && low >= 1024) {
		if (high == ~0ULL) {
			snprintf(hi, len, "16E-1");
		} else {
			hist__fmt_size(hi, len - 2, high + 1);
			strcat(hi, "-1");
		}
	} else {
		snprintf(hi, len, "%llu", (unsigned long long)high);
	}
}

static int hist__ndigits(__u64 v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* stars = val * width / max without overflowing 64 bits */
static int hist__nstars(__u64 val, __u64 max, int width)
{
	if (!max)
		return 0;
	if (val >= max)
		return width;
	if (val <= ~0ULL / (__u64)width)
		return (int)(val * width / max);
	return (int)(val / (max / width));
}

int hist__print(FILE *f, const __u64 *slots, unsigned int nslots, const char *unit)
{
	char lo[32], hi[32], bar[HIST_BAR_WIDTH + 1];
	int first = -1, last = -1, lines = 0;
	int width = HIST_LABEL_MIN, cwidth, pad = HIST_COUNT_MIN;
	int bytes = unit && strcmp(unit, "bytes") == 0;
	__u64 max = 0;
	int i, n;

	for (i = 0; i < (int)nslots; i++) {
		if (!slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	if (last < 0)
		return 0;

	/* widen the label columns for huge values, then shrink the count padding to fit */
	for (i = first; i <= last; i++) {
		hist__labels(i, nslots, bytes, lo, hi, sizeof(lo));
		n = strlen(lo) > strlen(hi) ? strlen(lo) : strlen(hi);
		if (n > width)
			width = n;
	}
	if (2 * width + HIST_FIXED_COLS + pad > HIST_MAX_COLS)
		pad = HIST_MAX_COLS - HIST_FIXED_COLS - 2 * width;
	if (pad < 5)	/* strlen("count") */
		pad = 5;
	cwidth = hist__ndigits(max);
	if (cwidth < pad)
		cwidth = pad;
	memset(bar, '*', HIST_BAR_WIDTH);
	bar[HIST_BAR_WIDTH] = '\0';

	fprintf(f, "%*s%-*s : %-*s distribution\n", width - 5, "", width + 9,
		unit ? unit : "", cwidth, "count");
	lines++;

	for (i = first; i <= last; i++) {
		int stars = hist__nstars(slots[i], max, HIST_BAR_WIDTH);

		hist__labels(i, nslots, bytes, lo, hi, sizeof(lo));
		fprintf(f, "%*s %s %-*s : %-*llu |%.*s%*s|\n", width, lo, hi[0] ? "->" : "  ",
			width, hi, cwidth, (unsigned long long)slots[i], stars, bar,
			HIST_BAR_WIDTH - stars, "");
		lines++;
	}
	return lines;
}
