// SPDX-License-Identifier: GPL-2.0
/*
 * touch MIB: the benchmark's fault storm. Maps MIB MiB of anonymous memory with
 * MADV_NOHUGEPAGE (so every first touch is a 4 KiB fault), writes one byte per 4 KiB page,
 * and prints on stdout, as key=value:
 *   touch_ms=     elapsed time of the touch loop (CLOCK_MONOTONIC)
 *   minflt_loop=  minor faults of this process during the loop (getrusage delta)
 *   minflt_total= minor faults of this process from exec to the end (start-up included)
 *   pages=        pages touched
 * Built by scripts/bench.sh into build/bench/touch (cc -O2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define PAGE 4096UL

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

int main(int argc, char **argv)
{
	unsigned long mib, len, off;
	volatile char *p;
	long f0, f1;
	double t0, t1;
	char *end;

	if (argc != 2 || (mib = strtoul(argv[1], &end, 10)) == 0 || *end) {
		fprintf(stderr, "usage: touch MIB\n");
		return 2;
	}
	len = mib << 20;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("touch: mmap");
		return 1;
	}
	if (madvise((void *)p, len, MADV_NOHUGEPAGE))
		perror("touch: madvise(MADV_NOHUGEPAGE)");

	f0 = minflt();
	t0 = now_ms();
	for (off = 0; off < len; off += PAGE)
		p[off] = 1;
	t1 = now_ms();
	f1 = minflt();

	printf("touch_ms=%.1f\nminflt_loop=%ld\nminflt_total=%ld\npages=%lu\n", t1 - t0, f1 - f0,
	       f1, len / PAGE);
	return 0;
}
