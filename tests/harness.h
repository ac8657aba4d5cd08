/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test_progs-style harness.
 *
 *	TEST(name)
 *	{
 *		if (!ASSERT_OK(err, "load"))
 *			goto cleanup;
 *		...
 *	}
 *
 * TEST() registers the function through a constructor, so test files need no list; the
 * runner (tests/unit/runner.c) runs them in file and line order. ASSERT_*() print
 * file:line, the expression, the actual and the expected value on failure, mark the
 * current test failed and return false. test__skip() marks it skipped (the test should
 * return right after).
 */
#ifndef __MP_TEST_HARNESS_H
#define __MP_TEST_HARNESS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef void (*test_fn)(void);

void test__register(const char *name, test_fn fn, const char *file, int line);
void test__fail(void);
void test__skip(const char *reason);
/* name of the running test */
const char *test__name(void);

#define TEST(n)								\
	static void test_##n(void);					\
	__attribute__((constructor)) static void test__register_##n(void)	\
	{								\
		test__register(#n, test_##n, __FILE__, __LINE__);	\
	}								\
	static void test_##n(void)

/* integers are printed signed or unsigned as their type is */
#define TEST__IS_SIGNED(x)	((__typeof__(x))-1 < (__typeof__(x))1)
#define TEST__PRINT_INT(x)						\
	do {								\
		if (TEST__IS_SIGNED(x))					\
			printf("%lld", (long long)(x));			\
		else							\
			printf("%llu", (unsigned long long)(x));	\
	} while (0)

#define TEST__FAILED(expr, name)					\
	do {								\
		test__fail();						\
		printf("%s:%d: %s: %s: ", __FILE__, __LINE__, (name), (expr));	\
	} while (0)

/* the expected value is converted to the type of the actual one, as for an assignment */
#define TEST__CMP(actual, op, expected, name)				\
	({								\
		__typeof__(actual) ___act = (actual);			\
		__typeof__(actual) ___exp = (expected);			\
		bool ___ok = ___act op ___exp;				\
		if (!___ok) {						\
			TEST__FAILED(#actual " " #op " " #expected, name);	\
			printf("actual ");				\
			TEST__PRINT_INT(___act);			\
			printf(", expected " #op " ");			\
			TEST__PRINT_INT(___exp);			\
			printf("\n");					\
		}							\
		___ok;							\
	})

#define ASSERT_EQ(actual, expected, name)	TEST__CMP(actual, ==, expected, name)
#define ASSERT_NEQ(actual, expected, name)	TEST__CMP(actual, !=, expected, name)
#define ASSERT_GE(actual, expected, name)	TEST__CMP(actual, >=, expected, name)
#define ASSERT_LE(actual, expected, name)	TEST__CMP(actual, <=, expected, name)
#define ASSERT_GT(actual, expected, name)	TEST__CMP(actual, >, expected, name)
#define ASSERT_LT(actual, expected, name)	TEST__CMP(actual, <, expected, name)

/* 0 is success; anything else (a negative errno, usually) fails */
#define ASSERT_OK(res, name)						\
	({								\
		long long ___res = (res);				\
		bool ___ok = ___res == 0;				\
		if (!___ok) {						\
			TEST__FAILED(#res, name);			\
			printf("unexpected error %lld", ___res);	\
			if (___res < 0 && ___res > -4096)		\
				printf(" (%s)", strerror((int)-___res));	\
			printf("\n");					\
		}							\
		___ok;							\
	})

#define ASSERT_TRUE(actual, name)					\
	({								\
		bool ___ok = (actual);					\
		if (!___ok) {						\
			TEST__FAILED(#actual, name);			\
			printf("actual false, expected true\n");	\
		}							\
		___ok;							\
	})

#define ASSERT_FALSE(actual, name)					\
	({								\
		bool ___ok = !(actual);					\
		if (!___ok) {						\
			TEST__FAILED(#actual, name);			\
			printf("actual true, expected false\n");	\
		}							\
		___ok;							\
	})

/* prints s quoted, or (null) */
static inline void test__print_str(const char *s)
{
	if (s)
		printf("'%s'", s);
	else
		printf("(null)");
}

/* NULL-safe; strings are printed quoted */
#define ASSERT_STREQ(actual, expected, name)				\
	({								\
		const char *___act = (actual);				\
		const char *___exp = (expected);			\
		bool ___ok = ___act && ___exp ? !strcmp(___act, ___exp)	\
					      : ___act == ___exp;		\
		if (!___ok) {						\
			TEST__FAILED(#actual, name);			\
			printf("actual ");				\
			test__print_str(___act);			\
			printf(", expected ");				\
			test__print_str(___exp);			\
			printf("\n");					\
		}							\
		___ok;							\
	})

#define ASSERT_NULL(ptr, name)						\
	({								\
		const void *___p = (ptr);				\
		bool ___ok = !___p;					\
		if (!___ok) {						\
			TEST__FAILED(#ptr, name);			\
			printf("actual %p, expected NULL\n", ___p);	\
		}							\
		___ok;							\
	})

/* a pointer function succeeded: not NULL (errno says why it is) */
#define ASSERT_OK_PTR(ptr, name)					\
	({								\
		const void *___p = (ptr);				\
		int ___errno = errno;					\
		bool ___ok = ___p != NULL;				\
		if (!___ok) {						\
			TEST__FAILED(#ptr, name);			\
			printf("unexpected NULL (errno %d: %s)\n", ___errno,	\
			       strerror(___errno));			\
		}							\
		___ok;							\
	})

#endif
