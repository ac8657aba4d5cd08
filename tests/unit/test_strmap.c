// SPDX-License-Identifier: GPL-2.0
/* The string map: lookups, growth, sorted walk, and values freed by the map itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lib/strmap.h"

static int freed;
static __u64 freed_sum;

static void count_free(__u64 value)
{
	freed++;
	freed_sum += value;
}

TEST(strmap_get_find_sorted)
{
	struct strmap_entry **v = NULL, *e;
	struct strmap m;
	char key[16];
	int i;

	strmap__init(&m, NULL);
	ASSERT_TRUE(!strmap__find(&m, "a"), "empty map finds nothing");
	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%04d", 999 - i);
		e = strmap__get(&m, key);
		if (!ASSERT_OK_PTR(e, "strmap__get"))
			goto cleanup;
		e->value += i;
	}
	e = strmap__get(&m, "k0999");
	if (!ASSERT_OK_PTR(e, "strmap__get existing"))
		goto cleanup;
	ASSERT_EQ(e->value, 0, "existing entry kept its value");
	ASSERT_EQ(m.len, 1000, "len");
	e = strmap__find(&m, "k0000");
	ASSERT_TRUE(e && e->value == 999, "find");
	v = strmap__sorted(&m);
	if (!ASSERT_OK_PTR(v, "strmap__sorted"))
		goto cleanup;
	ASSERT_STREQ(v[0]->key, "k0000", "first");
	ASSERT_STREQ(v[999]->key, "k0999", "last");
	ASSERT_TRUE(!v[1000], "NULL-terminated");
cleanup:
	free(v);
	strmap__free(&m);
}

TEST(strmap_frees_its_values)
{
	struct strmap_entry *e;
	struct strmap m;
	char key[16];
	int i;

	freed = 0;
	freed_sum = 0;
	strmap__init(&m, count_free);
	for (i = 1; i <= 100; i++) {
		snprintf(key, sizeof(key), "%d", i);
		e = strmap__get(&m, key);
		if (!ASSERT_OK_PTR(e, "strmap__get"))
			break;
		e->value = i;
	}
	strmap__free(&m);
	ASSERT_EQ(freed, 100, "one call per entry");
	ASSERT_EQ(freed_sum, 5050, "each value once");
	ASSERT_EQ(m.len, 0, "empty after free");
	/* the map stays usable, with its destructor */
	e = strmap__get(&m, "again");
	if (ASSERT_OK_PTR(e, "reuse"))
		e->value = 7;
	strmap__free(&m);
	ASSERT_EQ(freed, 101, "destructor kept after free");

	/* malloc'd values: strmap__free_ptr (leaks would show under valgrind/ASan) */
	strmap__init(&m, strmap__free_ptr);
	e = strmap__get(&m, "p");
	if (ASSERT_OK_PTR(e, "strmap__get"))
		e->value = (uintptr_t)strdup("value");
	strmap__free(&m);
}

TEST(strmap_remove_prefix)
{
	struct strmap_entry *e;
	struct strmap m;
	char key[32];
	int i, pid, found = 0;
	size_t n;

	freed = 0;
	freed_sum = 0;
	strmap__init(&m, count_free);
	/* interleaved keys of three "processes", enough to grow and wrap probe runs */
	for (i = 0; i < 3000; i++) {
		snprintf(key, sizeof(key), "%d:%x", i % 3 + 10, i);
		e = strmap__get(&m, key);
		if (!ASSERT_OK_PTR(e, "strmap__get"))
			goto cleanup;
		e->value = 1;
	}
	n = strmap__remove_prefix(&m, "11:");
	ASSERT_EQ(n, 1000, "removed");
	ASSERT_EQ(freed, 1000, "their values freed");
	ASSERT_EQ(m.len, 2000, "len");
	for (i = 0; i < 3000; i++) {
		pid = i % 3 + 10;
		snprintf(key, sizeof(key), "%d:%x", pid, i);
		e = strmap__find(&m, key);
		if (pid == 11 ? !!e : !e)
			printf("%s: %s\n", key, e ? "still there" : "lost");
		found += !!e;
	}
	ASSERT_EQ(found, 2000, "every other key still found");
	ASSERT_EQ(strmap__remove_prefix(&m, "11:"), 0, "nothing left to remove");
	ASSERT_EQ(strmap__remove_prefix(&m, ""), 2000, "empty prefix: all");
	ASSERT_EQ(m.len, 0, "empty");
cleanup:
	strmap__free(&m);
}
