/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Least-squares line fits and the projections built on them: how much each request (or
 * context token) adds, how far the points stray from the line, and how many more requests
 * fit into the room left. Pure arithmetic, unit-tested on hand-computed cases.
 */
#ifndef __MP_LINFIT_H
#define __MP_LINFIT_H

#include <stdbool.h>
#include <stddef.h>

/* Running sums of points (x, y), taken relative to the first point (less cancellation). */
struct linfit_acc {
	double n, x0, y0, sx, sy, sxx, sxy, syy;
};

/* y = intercept + slope * x over n points; spread: residual standard deviation. */
struct linfit {
	bool ok;		/* at least two distinct x */
	double n;
	double slope;
	double intercept;
	double spread;
};

void linfit__add(struct linfit_acc *a, double x, double y);
/* The fit of the points so far; ok false with fewer than two distinct x. */
struct linfit linfit__result(const struct linfit_acc *a);

/*
 * Requests like these: per-request growth g[0..n-1] (bytes), fitted as cumulative growth over
 * the request number. The first request usually carries one-time costs (first allocations,
 * caches), so from three requests on it is left out: `first` says which request (0-based)
 * the fit starts at. The slope is the steady growth per request.
 */
struct linfit linfit__requests(const double *g, size_t n, size_t *first);

/*
 * Whole requests until `room` bytes are used up at `per_request` bytes each: the limit is
 * crossed during the request this many after the current one (ceil(room / per_request));
 * 0 when there is no room left, -1 when requests do not grow (per_request <= 0).
 */
long linfit__requests_left(double room, double per_request);

#endif
