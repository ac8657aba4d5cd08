/* SPDX-License-Identifier: GPL-2.0 */
/* log2 histograms: the bucketing the BPF side uses, and bcc-style printing. */
#ifndef __MP_HIST_H
#define __MP_HIST_H

#include <stdio.h>
#include <linux/types.h>

/*
 * Slot of a value: 0 for 0, else floor(log2(v)) + 1, clamped to nslots - 1.
 * Slot s >= 1 holds [2^(s-1), 2^s - 1]. bpf/helpers.h computes the same.
 */
unsigned int hist__slot(__u64 v, unsigned int nslots);
/* Inclusive bounds of a slot. */
void hist__range(unsigned int slot, __u64 *low, __u64 *high);
/* Sum of counts and of slots. */
__u64 hist__count(const __u64 *slots, unsigned int nslots);
/*
 * Print like bcc's print_log2_hist: header "<unit> : count distribution", one line per
 * slot from the first to the last non-empty one, a 40-column bar scaled to the max.
 * unit "bytes" prints ranges with binary suffixes (4K, 64M, ...). Prints nothing
 * (returns 0) for an empty histogram; returns the number of lines printed.
 */
int hist__print(FILE *f, const __u64 *slots, unsigned int nslots, const char *unit);

#endif
