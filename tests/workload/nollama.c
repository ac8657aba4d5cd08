// SPDX-License-Identifier: GPL-2.0
/*
 * nollama: a program without any llama symbols, for the "no marker symbols" case.
 * Usage: nollama MIB [DELAY_MS]. Sleeps DELAY_MS (default 0), touches MIB MiB of anon memory one
 * byte per page, exits 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* A real frame with its own name (no inlining, no .constprop clones). */
#ifdef __clang__
#define WORKER __attribute__((noinline))
#else
#define WORKER __attribute__((noinline, noclone))
#endif

WORKER static void touch_pages(void *addr, size_t len)
{
	volatile char *p = addr;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	size_t off;

	for (off = 0; off < len; off += ps)
		p[off] = 1;
}

static int parse_ull(const char *s, unsigned long long *out)
{
	char *end;

	errno = 0;
	if (*s == '-')
		return -EINVAL;
	*out = strtoull(s, &end, 10);
	return errno || end == s || *end ? -EINVAL : 0;
}

int main(int argc, char **argv)
{
	unsigned long long mib, delay_ms = 0;
	struct timespec ts;
	size_t len;
	void *p;

	if (argc < 2 || argc > 3 || parse_ull(argv[1], &mib) || mib > (1ULL << 24) ||
	    (argc == 3 && parse_ull(argv[2], &delay_ms))) {
		fprintf(stderr, "Usage: nollama MIB [DELAY_MS]\n");
		return 2;
	}
	if (delay_ms) {
		ts.tv_sec = (time_t)(delay_ms / 1000);
		ts.tv_nsec = (long)(delay_ms % 1000) * 1000000L;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	if (!mib)
		return 0;
	len = (size_t)mib << 20;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "failed to map %llu MiB: %s\n", mib, strerror(errno));
		return 1;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	touch_pages(p, len);
	munmap(p, len);
	return 0;
}
