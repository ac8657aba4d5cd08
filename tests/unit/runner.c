// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the TEST()s linked in: unit-tests [-l] [[-t] FILTER]
 * FILTER selects tests whose name contains it. Prints "PASS name", "FAIL name" or
 * "SKIP name: reason" per test and, last, "N passed, N failed, N skipped".
 * Exit status 1 if any test failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

struct test_entry {
	const char *name;
	test_fn fn;
	const char *file;
	int line;
};

static struct test_entry *tests;
static size_t ntests, cap;
static int register_err;

/* state of the running test */
static const char *cur_name;
static bool cur_failed;
static char cur_skip[256];
static bool cur_skipped;

void test__register(const char *name, test_fn fn, const char *file, int line)
{
	void *tmp;

	if (ntests == cap) {
		cap = cap ? cap * 2 : 64;
		tmp = realloc(tests, cap * sizeof(*tests));
		if (!tmp) {
			register_err = 1;
			return;
		}
		tests = tmp;
	}
	tests[ntests].name = name;
	tests[ntests].fn = fn;
	tests[ntests].file = file;
	tests[ntests].line = line;
	ntests++;
}

void test__fail(void)
{
	cur_failed = true;
}

void test__skip(const char *reason)
{
	cur_skipped = true;
	snprintf(cur_skip, sizeof(cur_skip), "%s", reason ? reason : "");
}

const char *test__name(void)
{
	return cur_name;
}

static int test__cmp(const void *a, const void *b)
{
	const struct test_entry *x = a, *y = b;
	int c = strcmp(x->file, y->file);

	return c ? c : x->line - y->line;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-l] [[-t] FILTER]\n"
		"  -l         list the tests\n"
		"  FILTER     run only the tests whose name contains FILTER\n", prog);
}

int main(int argc, char **argv)
{
	const char *filter = NULL;
	int passed = 0, failed = 0, skipped = 0;
	bool list = false;
	size_t i;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-l")) {
			list = true;
		} else if (!strcmp(argv[a], "-t") && a + 1 < argc) {
			filter = argv[++a];
		} else if (argv[a][0] != '-' && !filter) {
			filter = argv[a];
		} else {
			usage(argv[0]);
			free(tests);
			return 2;
		}
	}
	if (register_err) {
		fprintf(stderr, "failed to register tests: out of memory\n");
		free(tests);
		return 1;
	}
	if (ntests)
		qsort(tests, ntests, sizeof(*tests), test__cmp);

	/* test output and the harness' lines share stdout; keep them in order */
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < ntests; i++) {
		if (filter && !strstr(tests[i].name, filter))
			continue;
		if (list) {
			printf("%s\n", tests[i].name);
			continue;
		}
		cur_name = tests[i].name;
		cur_failed = false;
		cur_skipped = false;
		cur_skip[0] = '\0';

		tests[i].fn();
		fflush(NULL);

		if (cur_failed) {
			printf("FAIL %s\n", cur_name);
			failed++;
		} else if (cur_skipped) {
			printf("SKIP %s: %s\n", cur_name, cur_skip);
			skipped++;
		} else {
			printf("PASS %s\n", cur_name);
			passed++;
		}
	}
	free(tests);
	if (list)
		return 0;
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
