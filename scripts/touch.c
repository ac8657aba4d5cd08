// SPDX-License-Identifier: GPL-2.0
/*
 * touch MIB [hops | interleave N | threads N]: the benchmark's fault storm. Maps MIB MiB of anonymous memory with
 * MADV_NOHUGEPAGE (so every first touch is a 4 KiB fault), writes one byte per 4 KiB page,
 * and prints on stdout, as key=value:
 *   touch_ms=     elapsed time of the touch loop (CLOCK_MONOTONIC)
 *   minflt_loop=  minor faults of this process during the loop (getrusage delta)
 *   minflt_total= minor faults of this process from exec to the end (start-up included)
 *   pages=        pages touched
 * With "hops", the memory is MIB * 16 mappings of 64 KiB, each followed by a PROT_NONE page
 * (so that no two merge into one VMA), and the loop touches page k of every mapping before
 * page k + 1 of any: every fault lands in another mapping than the one before.
 * With "interleave N", the memory is N mappings (2-64, each followed by a PROT_NONE page)
 * touched the same way: faults alternate between a few large mappings, as llama.cpp's do
 * between its model file, KV cache and compute buffers.
 * With "threads N", N threads (1-64) touch one slice each of the one mapping at the same
 * time (released together by a barrier); touch_ms is from their release to the last one's end.
 * With TOUCH_STOP=1 in the environment, the process stops itself (SIGSTOP) after the loop and
 * before it prints, so that a tool can read its /proc files and its counters while nothing
 * moves (scripts/onetp), and goes on at SIGCONT.
 * Built by scripts/bench.sh into build/bench/touch (cc -O2).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define PAGE 4096UL
#define HOP (64UL << 10)	/* one mapping of the hops mode */

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

struct slice {
	volatile char *p;
	unsigned long len;
};

static pthread_barrier_t start;

static void *toucher(void *arg)
{
	struct slice *s = arg;
	unsigned long off;

	pthread_barrier_wait(&start);
	for (off = 0; off < s->len; off += PAGE)
		s->p[off] = 1;
	return NULL;
}

/* nthreads threads touch [p, p + len) in slices, at once: 0 or -1 */
static int touch_threads(volatile char *p, unsigned long len, int nthreads)
{
	unsigned long per = len / nthreads / PAGE * PAGE;
	struct slice s[64];
	pthread_t t[64];
	int i;

	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++) {
		s[i].p = p + i * per;
		s[i].len = i == nthreads - 1 ? len - i * per : per;
		if (pthread_create(&t[i], NULL, toucher, &s[i])) {
			perror("touch: pthread_create");
			return -1;
		}
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib, len, off, i, n = 0;
	volatile char *p = NULL, **maps = NULL;
	int hops, nthreads = 0, ninter = 0;
	long f0, f1;
	double t0, t1;
	char *end;

	if (argc == 4 && !strcmp(argv[2], "threads")) {
		nthreads = atoi(argv[3]);
		if (nthreads < 1 || nthreads > 64)
			argc = 0;	/* usage */
		else
			argc = 2;
	} else if (argc == 4 && !strcmp(argv[2], "interleave")) {
		ninter = atoi(argv[3]);
		if (ninter < 2 || ninter > 64)
			argc = 0;	/* usage */
		else
			argc = 2;
	}
	if (argc < 2 || argc > 3 || (mib = strtoul(argv[1], &end, 10)) == 0 || *end ||
	    (argc == 3 && strcmp(argv[2], "hops"))) {
		fprintf(stderr, "usage: touch MIB [hops | interleave N(2-64) | threads N(1-64)]\n");
		return 2;
	}
	hops = argc == 3 || ninter;
	len = mib << 20;
	if (hops) {
		/* hop: the size of each mapping */
		unsigned long hop = ninter ? len / ninter / PAGE * PAGE : HOP;

		n = ninter ? (unsigned long)ninter : len / HOP;
		len = n * hop;
		maps = calloc(n, sizeof(*maps));
		if (!maps) {
			perror("touch: calloc");
			return 1;
		}
		for (i = 0; i < n; i++) {
			p = mmap(NULL, hop + PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED || mprotect((void *)(p + hop), PAGE, PROT_NONE)) {
				perror("touch: mmap (hops)");
				return 1;
			}
			madvise((void *)p, hop, MADV_NOHUGEPAGE);
			maps[i] = p;
		}
	} else {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("touch: mmap");
			return 1;
		}
		if (madvise((void *)p, len, MADV_NOHUGEPAGE))
			perror("touch: madvise(MADV_NOHUGEPAGE)");
	}

	f0 = minflt();
	t0 = now_ms();
	if (nthreads) {
		if (touch_threads(p, len, nthreads))
			return 1;
	} else if (hops) {
		for (off = 0; off < len / n; off += PAGE)
			for (i = 0; i < n; i++)
				maps[i][off] = 1;
	} else {
		for (off = 0; off < len; off += PAGE)
			p[off] = 1;
	}
	t1 = now_ms();
	/* every thread's faults: the process's, not the main thread's only */
	f1 = minflt();
	end = getenv("TOUCH_STOP");
	if (end && !strcmp(end, "1"))
		raise(SIGSTOP);

	printf("touch_ms=%.1f\nminflt_loop=%ld\nminflt_total=%ld\npages=%lu\n", t1 - t0, f1 - f0,
	       f1, len / PAGE);
	return 0;
}
