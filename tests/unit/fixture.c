// SPDX-License-Identifier: GPL-2.0
/* Test fixtures built at run time. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "fixture.h"

int fixture__write(const char *dir, const char *name, const void *data, size_t len)
{
	char path[512];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	n = fwrite(data, 1, len, f);
	if (fclose(f) || n != len)
		return -EIO;
	return 0;
}

int fixture__run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	return system(cmd);
}
