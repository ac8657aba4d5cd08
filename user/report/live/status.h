/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What both modes of the live view read out, and the status line of the plain mode
 * (--no-tui; its format is documented in live.h and is a contract). Pure code: no
 * terminal, no I/O.
 */
#ifndef __MP_STATUS_H
#define __MP_STATUS_H

#include <stddef.h>
#include <linux/types.h>
#include "memphase.h"
#include "report/live/forecast.h"

struct model;
struct timeline;
struct sysmem;

/* One frame's numbers, derived from the model, the timeline and sysmem. */
struct live_calc {
	__s64 rss[MP_NR_CLASSES];	/* resident now, over the processes still running */
	__s64 total;			/* anon + file + shmem */
	__s64 peak[MP_NR_CLASSES];
	__s64 peak_total;
	struct forecast fc;
};

void status__calc(struct live_calc *c, const struct model *m, const struct timeline *tl,
		  const struct sysmem *sm, __u64 now_ns);
/* The status line, without a newline; sm may be NULL. Returns what snprintf returns. */
int status__format(char *buf, size_t len, const struct model *m, const struct live_calc *c,
		   const struct sysmem *sm, __u64 now_ns);

/* Wordings: "1.21GiB" (a size without the space), "+12.0 MiB/s", "~40 s". Return buf. */
const char *status__size(char *buf, size_t len, __s64 v);
const char *status__rate(char *buf, size_t len, double rate);
const char *status__eta(char *buf, size_t len, double secs);
/* Seconds observed, up to now or to the end. */
double status__elapsed(const struct model *m, __u64 now_ns);
/* A phase's name, "?" when it has none. */
const char *status__phase_name(const struct model *m, unsigned int id);

#endif
