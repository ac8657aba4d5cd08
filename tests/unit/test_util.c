// SPDX-License-Identifier: GPL-2.0
/* lib/util's growth of arrays and buffers (util__grow, util__reserve). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lib/util.h"

TEST(util_reserve_doubles_to_what_is_needed_and_keeps_the_contents)
{
	size_t cap = 0, i;
	char *buf = NULL;

	if (!ASSERT_OK(util__reserve((void **)&buf, &cap, 1, 1), "first"))
		return;
	ASSERT_EQ(cap, 256, "starts at 256 elements");
	memset(buf, 'a', cap);
	/* far past the doubling of the current capacity: straight to the power of two */
	ASSERT_OK(util__reserve((void **)&buf, &cap, 5000, 1), "to 5000");
	ASSERT_EQ(cap, 8192, "doubled until it holds 5000");
	for (i = 0; i < 256; i++)
		if (buf[i] != 'a')
			break;
	ASSERT_EQ(i, 256, "contents kept");
	/* enough already: nothing moves */
	ASSERT_OK(util__reserve((void **)&buf, &cap, 8192, 1), "exactly the capacity");
	ASSERT_EQ(cap, 8192, "unchanged");
	free(buf);
}

TEST(util_grow_makes_room_for_one_more)
{
	size_t cap = 0, n;
	__u64 *v = NULL;

	for (n = 0; n < 1000; n++) {
		if (!ASSERT_OK(util__grow((void **)&v, &cap, n, sizeof(*v)), "grow"))
			break;
		v[n] = n;
	}
	ASSERT_EQ(cap, 1024, "256, 512, 1024");
	ASSERT_EQ(v[999], 999, "last element");
	free(v);
}

TEST(util_reserve_refuses_a_size_that_overflows)
{
	size_t cap = 256;
	__u64 *v = malloc(cap * sizeof(*v));

	if (!ASSERT_TRUE(v != NULL, "malloc"))
		return;
	ASSERT_EQ(util__reserve((void **)&v, &cap, SIZE_MAX / 4, sizeof(*v)), -ENOMEM,
		  "count * size past SIZE_MAX");
	ASSERT_EQ(cap, 256, "capacity untouched");
	free(v);
}
