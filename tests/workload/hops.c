// SPDX-License-Identifier: GPL-2.0
/*
 * Faults that hop between mappings: NTRACK (10) "tracked" anonymous mappings of 2, 3, ...
 * MiB and NFILL filler mappings of 64 KiB, each followed by a PROT_NONE page (so that no two merge into
 * one VMA). Page k of every mapping is written before page k + 1 of any, in an order that
 * mixes the tracked mappings among the fillers: nearly every fault lands in another mapping
 * than the one before (with NFILL 0, faults that go round the tracked mappings: with 3,
 * the pattern of llama.cpp's weights, KV cache and compute buffers). With NTHREADS > 1, thread j writes the mappings whose index is j
 * modulo NTHREADS, all threads at once.
 *
 * Then it prints, for each tracked mapping, "tracked START BYTES RSS": its start, its size
 * and the Rss /proc/self/smaps gives the VMA at that start (bytes), and "fillers N RSS"
 * with the fillers' Rss summed. With "wait", it reads a line from stdin before it writes
 * (an observer attaches first) and stays until stdin closes (the observer detaches while
 * it runs).
 *
 * Usage: hops [-t NTRACK] [-n NTHREADS] [-w] NFILL   (-w: wait)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define PAGE	4096UL
#define FILL	(64UL << 10)

struct region {
	char *p;
	size_t len;
};

static struct region *regions;
static size_t nregions, maxpages;
static long nthreads = 1;
static pthread_barrier_t start;

static void *writer(void *arg)
{
	long j = (long)arg;
	size_t k, i;

	pthread_barrier_wait(&start);
	for (k = 0; k < maxpages; k++)
		for (i = j; i < nregions; i += nthreads)
			if (k * PAGE < regions[i].len)
				((volatile char *)regions[i].p)[k * PAGE] = 1;
	return NULL;
}

struct vma_rss {
	unsigned long start;
	long long rss;
};

static struct vma_rss *vmas;
static size_t nvmas;

/* every VMA's start and Rss (bytes) from /proc/self/smaps, in address order */
static int smaps_read(void)
{
	size_t cap = 0;
	char line[512];
	unsigned long lo;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *dash = strchr(line, '-'), *sp = strchr(line, ' ');

		if (dash && sp && dash < sp && sscanf(line, "%lx-", &lo) == 1) {
			if (nvmas == cap) {
				cap = cap ? 2 * cap : 1024;
				vmas = realloc(vmas, cap * sizeof(*vmas));
				if (!vmas)
					return -1;
			}
			vmas[nvmas].start = lo;
			vmas[nvmas++].rss = -1;
		} else if (nvmas && !strncmp(line, "Rss:", 4)) {
			vmas[nvmas - 1].rss = atoll(line + 4) * 1024;
		}
	}
	fclose(f);
	return 0;
}

/* Rss of the VMA that starts at start (bytes), or -1 */
static long long smaps_rss(unsigned long start)
{
	size_t lo = 0, hi = nvmas;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (vmas[mid].start == start)
			return vmas[mid].rss;
		if (vmas[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int main(int argc, char **argv)
{
	pthread_t t[16];
	size_t nfill, i, total = 0, off = 0;
	long long fill_rss = 0;
	char *base, line[64];
	long ntrack = 10;
	int wait = 0, c;
	long j;

	while ((c = getopt(argc, argv, "t:n:w")) != -1) {
		switch (c) {
		case 't':
			ntrack = atol(optarg);
			break;
		case 'n':
			nthreads = atol(optarg);
			break;
		case 'w':
			wait = 1;
			break;
		default:
			ntrack = 0;
		}
	}
	if (optind != argc - 1 || atol(argv[optind]) < 0 || atol(argv[optind]) > 100000 ||
	    ntrack < 1 || ntrack > 64 || nthreads < 1 || nthreads > 16) {
		fprintf(stderr, "usage: hops [-t NTRACK(1-64)] [-n NTHREADS(1-16)] [-w] "
			"NFILL(0-100000)\n");
		return 2;
	}
	nfill = atol(argv[optind]);
	nregions = ntrack + nfill;
	regions = calloc(nregions, sizeof(*regions));
	if (!regions)
		return 1;
	/* tracked mapping i at position i * (nfill / ntrack + 1): spread among the fillers */
	for (i = 0; i < nregions; i++)
		regions[i].len = FILL;
	for (i = 0; i < (size_t)ntrack; i++)
		regions[i * (nfill / ntrack + 1)].len = (i + 2) << 20;
	for (i = 0; i < nregions; i++)
		total += regions[i].len + PAGE;
	base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		perror("hops: mmap");
		return 1;
	}
	for (i = 0; i < nregions; i++) {
		regions[i].p = base + off;
		if (mprotect(regions[i].p, regions[i].len, PROT_READ | PROT_WRITE) ||
		    madvise(regions[i].p, regions[i].len, MADV_NOHUGEPAGE)) {
			perror("hops: mprotect");
			return 1;
		}
		if (regions[i].len / PAGE > maxpages)
			maxpages = regions[i].len / PAGE;
		off += regions[i].len + PAGE;
	}
	/* the first page written once an observer is attached is a tracked mapping's (the
	 * first region's first page): the observer must count it like any other */
	if (wait && !fgets(line, sizeof(line), stdin))
		return 1;
	pthread_barrier_init(&start, NULL, nthreads);
	for (j = 1; j < nthreads; j++)
		if (pthread_create(&t[j], NULL, writer, (void *)j)) {
			fprintf(stderr, "hops: pthread_create failed\n");
			return 1;
		}
	writer((void *)0);
	for (j = 1; j < nthreads; j++)
		pthread_join(t[j], NULL);
	if (smaps_read()) {
		perror("hops: /proc/self/smaps");
		return 1;
	}
	for (i = 0; i < nregions; i++) {
		long long rss = smaps_rss((unsigned long)regions[i].p);

		if (regions[i].len != FILL)
			printf("tracked %lu %zu %lld\n", (unsigned long)regions[i].p,
			       regions[i].len, rss);
		else if (rss > 0)
			fill_rss += rss;
	}
	printf("fillers %zu %lld\n", nfill, fill_rss);
	fflush(stdout);
	while (wait && fgets(line, sizeof(line), stdin))
		;
	return 0;
}
