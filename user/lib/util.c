// SPDX-License-Identifier: GPL-2.0
/* Small helpers: clocks, sizes, durations. */
#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include "lib/util.h"

__u64 util__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__u64 util__wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

const char *util__fmt_bytes(char *buf, size_t len, __s64 bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = bytes < 0 ? -(double)bytes : (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, len, "%s%.0f B", bytes < 0 ? "-" : "", v);
	else
		snprintf(buf, len, "%s%.*f %s", bytes < 0 ? "-" : "", v < 10 ? 2 : v < 100 ? 1 : 0,
			 v, unit[u]);
	return buf;
}

int util__parse_size(const char *s, __u64 *out)
{
	double v, mul = 1;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mul = 1ULL << 10; end++; break;
	case 'm': case 'M': mul = 1ULL << 20; end++; break;
	case 'g': case 'G': mul = 1ULL << 30; end++; break;
	case 't': case 'T': mul = 1ULL << 40; end++; break;
	default: break;
	}
	if (mul > 1 && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	v *= mul;
	/* a whole number of bytes that fits */
	if (v >= 18446744073709551615.0 || v != floor(v))
		return -EINVAL;
	*out = (__u64)v;
	return 0;
}

int util__parse_seconds(const char *s, double *out)
{
	double v;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return -EINVAL;
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		v *= 60;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (!strcmp(end, "d"))
		v *= 86400;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	*out = v;
	return 0;
}

int util__self_usage(double *cpu_s, __u64 *rss_bytes)
{
	unsigned long long size, resident;
	struct rusage ru;
	FILE *f;
	int n;

	if (getrusage(RUSAGE_SELF, &ru))
		return -errno;
	*cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		 ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	f = fopen("/proc/self/statm", "re");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	if (n != 2)
		return -EIO;
	*rss_bytes = resident * (__u64)sysconf(_SC_PAGESIZE);
	return 0;
}

int util__reserve(void **v, size_t *cap, size_t need, size_t sz)
{
	size_t ncap = *cap ? *cap : 256;
	void *nv;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / sz)
			return -ENOMEM;
		ncap *= 2;
	}
	nv = realloc(*v, ncap * sz);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

int util__grow(void **v, size_t *cap, size_t n, size_t sz)
{
	return util__reserve(v, cap, n + 1, sz);
}
