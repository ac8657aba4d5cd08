// SPDX-License-Identifier: GPL-2.0
/* Least-squares line fits and projections in requests (see linfit.h). Pure code. */
#include <math.h>
#include "lib/linfit.h"

void linfit__add(struct linfit_acc *a, double x, double y)
{
	if (!a->n) {
		a->x0 = x;
		a->y0 = y;
	}
	x -= a->x0;
	y -= a->y0;
	a->n += 1;
	a->sx += x;
	a->sy += y;
	a->sxx += x * x;
	a->sxy += x * y;
	a->syy += y * y;
}

struct linfit linfit__result(const struct linfit_acc *a)
{
	struct linfit f = { .n = a->n };
	double d, sse;

	if (a->n < 2)
		return f;
	d = a->n * a->sxx - a->sx * a->sx;
	/* relative test: x all equal (up to rounding) has no slope */
	if (d <= 1e-12 * (a->n * a->sxx > 1 ? a->n * a->sxx : 1))
		return f;
	f.ok = true;
	f.slope = (a->n * a->sxy - a->sx * a->sy) / d;
	f.intercept = (a->sy - f.slope * a->sx) / a->n;
	/* sum of squared residuals from the sums, clamped at 0 against rounding */
	sse = a->syy - f.intercept * a->sy - f.slope * a->sxy;
	if (sse < 0 || a->n < 3)
		sse = 0;
	f.spread = a->n > 2 ? sqrt(sse / (a->n - 2)) : 0;
	/* back from the first point's frame: y - y0 = i + s (x - x0) */
	f.intercept += a->y0 - f.slope * a->x0;
	return f;
}

struct linfit linfit__requests(const double *g, size_t n, size_t *first)
{
	struct linfit_acc a = {};
	double cum = 0;
	size_t i, from = n >= 3 ? 1 : 0;

	for (i = 0; i < n; i++) {
		cum += g[i];
		if (i >= from)
			linfit__add(&a, (double)(i + 1), cum);
	}
	if (first)
		*first = from;
	if (n - from == 1) {
		/* one request: its own growth is the only rate there is */
		struct linfit f = { .ok = true, .n = 1, .slope = g[from] };

		return f;
	}
	return linfit__result(&a);
}

long linfit__requests_left(double room, double per_request)
{
	double k;

	if (!(per_request > 0))
		return -1;
	if (room <= 0)
		return 0;
	k = ceil(room / per_request);
	return k > 1e15 ? (long)1e15 : (long)k;
}
