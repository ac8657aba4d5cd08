/* SPDX-License-Identifier: GPL-2.0 */
/* Test fixtures built at run time: files in a scratch directory, shell commands. */
#ifndef __MP_TEST_FIXTURE_H
#define __MP_TEST_FIXTURE_H

#include <stddef.h>

/* Writes len bytes to dir/name. 0 or -errno. */
int fixture__write(const char *dir, const char *name, const void *data, size_t len);
/* Runs a shell command (printf-style); system(3)'s status, or -1 if it is too long. */
int fixture__run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
