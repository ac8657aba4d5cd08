// SPDX-License-Identifier: GPL-2.0
/* Line fits and request projections on hand-computed cases. */
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "lib/linfit.h"

#define MIB	(1024.0 * 1024.0)

static bool close_to(double actual, double expected, const char *name)
{
	bool ok = fabs(actual - expected) <= 1e-9 * (fabs(expected) > 1 ? fabs(expected) : 1);

	if (!ok) {
		test__fail();
		printf("%s: got %.12g, expected %.12g\n", name, actual, expected);
	}
	return ok;
}

TEST(linfit_exact_line)
{
	struct linfit_acc a = {};
	struct linfit f;

	/* y = 3 + 2x at x = 0..3: slope 2, intercept 3, no spread */
	linfit__add(&a, 0, 3);
	linfit__add(&a, 1, 5);
	linfit__add(&a, 2, 7);
	linfit__add(&a, 3, 9);
	f = linfit__result(&a);
	ASSERT_TRUE(f.ok, "fit");
	close_to(f.slope, 2, "slope");
	close_to(f.intercept, 3, "intercept");
	close_to(f.spread, 0, "spread");
}

TEST(linfit_spread)
{
	struct linfit_acc a = {};
	struct linfit f;

	/*
	 * (0,0) (1,1) (2,0) (3,1): sx 6, sy 2, sxx 14, sxy 4, n 4; d = 56 - 36 = 20;
	 * slope (16 - 12) / 20 = 0.2; intercept (2 - 1.2) / 4 = 0.2;
	 * residuals -0.2, 0.6, -0.6, 0.2: sse 0.8, spread sqrt(0.8 / 2) = sqrt(0.4)
	 */
	linfit__add(&a, 0, 0);
	linfit__add(&a, 1, 1);
	linfit__add(&a, 2, 0);
	linfit__add(&a, 3, 1);
	f = linfit__result(&a);
	ASSERT_TRUE(f.ok, "fit");
	close_to(f.slope, 0.2, "slope");
	close_to(f.intercept, 0.2, "intercept");
	close_to(f.spread, sqrt(0.4), "spread");
}

TEST(linfit_degenerate)
{
	struct linfit_acc a = {};

	ASSERT_FALSE(linfit__result(&a).ok, "no points");
	linfit__add(&a, 5, 1);
	ASSERT_FALSE(linfit__result(&a).ok, "one point");
	linfit__add(&a, 5, 2);
	ASSERT_FALSE(linfit__result(&a).ok, "same x twice");
}

TEST(linfit_requests_skip_first)
{
	/* +30.9, then +16.1, +16.2, +16.1 MiB: cumulative at 2, 3, 4 is 47.0, 63.2, 79.3;
	 * slope over x = 2..4: (79.3 - 47.0) / 2 = 16.15 MiB per request */
	double g[] = { 30.9 * MIB, 16.1 * MIB, 16.2 * MIB, 16.1 * MIB };
	struct linfit f;
	size_t first = 9;

	f = linfit__requests(g, 4, &first);
	ASSERT_TRUE(f.ok, "fit");
	ASSERT_EQ(first, 1, "first request left out");
	close_to(f.slope, 16.15 * MIB, "slope");
	/* the line passes (3, 63.1667): residuals -1/60, +2/60, -1/60 MiB; sse 6/3600 over
	 * n - 2 = 1 degree of freedom: spread sqrt(1/600) MiB */
	ASSERT_TRUE(fabs(f.spread - sqrt(1.0 / 600) * MIB) < 1e-6 * MIB, "spread");
}

TEST(linfit_requests_few)
{
	double one[] = { 8 * MIB }, two[] = { 10 * MIB, 6 * MIB };
	struct linfit f;
	size_t first;

	f = linfit__requests(one, 1, &first);
	ASSERT_TRUE(f.ok && first == 0, "one request");
	close_to(f.slope, 8 * MIB, "one: its growth");
	f = linfit__requests(two, 2, &first);
	ASSERT_TRUE(f.ok && first == 0, "two requests: both");
	close_to(f.slope, 6 * MIB, "two: the second's growth");
	f = linfit__requests(one, 0, &first);
	ASSERT_FALSE(f.ok, "none");
}

TEST(linfit_requests_left)
{
	ASSERT_EQ(linfit__requests_left(100 * MIB, 16 * MIB), 7, "100/16 -> during the 7th");
	ASSERT_EQ(linfit__requests_left(96 * MIB, 16 * MIB), 6, "exactly 6");
	ASSERT_EQ(linfit__requests_left(1, 16 * MIB), 1, "any room: the next one");
	ASSERT_EQ(linfit__requests_left(0, 16 * MIB), 0, "no room");
	ASSERT_EQ(linfit__requests_left(-5, 16 * MIB), 0, "past it");
	ASSERT_EQ(linfit__requests_left(100 * MIB, 0), -1, "flat");
	ASSERT_EQ(linfit__requests_left(100 * MIB, -MIB), -1, "shrinking");
}
