// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that fault at once in one address space: NTHREADS threads each write one byte
 * per 4 KiB page of their MIB MiB slice of one anonymous mapping (no huge pages), started
 * together, so that the RSS counter's per-CPU parts and folds of several CPUs interleave
 * (and threads migrate, with more threads than CPUs). Then the main thread unmaps the
 * second half of the mapping. It prints its /proc/self/status figures (KiB) after the
 * writes and after the unmap, then exits.
 *
 * Usage: slices NTHREADS MIB
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static pthread_barrier_t start;
static char *base;
static size_t slice;

static void *writer(void *arg)
{
	char *p = base + (size_t)arg * slice;
	size_t off;

	pthread_barrier_wait(&start);
	for (off = 0; off < slice; off += 4096)
		p[off] = 1;
	return NULL;
}

/* prints "PREFIX_KEY=VALUE" for the status lines named */
static void status(const char *prefix)
{
	static const char *const keys[] = { "RssAnon", "VmHWM" };
	char line[256];
	unsigned int i;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f) {
		perror("slices: /proc/self/status");
		exit(1);
	}
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strncmp(line, keys[i], strlen(keys[i])) && line[strlen(keys[i])] == ':')
				printf("%s_%s=%lld\n", prefix, keys[i],
				       atoll(line + strlen(keys[i]) + 1));
	fclose(f);
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	size_t total;
	long i, n;

	if (argc != 3 || (n = atol(argv[1])) < 1 || n > 64 || atol(argv[2]) < 1) {
		fprintf(stderr, "usage: slices NTHREADS(1-64) MIB\n");
		return 2;
	}
	slice = (size_t)atol(argv[2]) << 20;
	total = slice * n;
	base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED || madvise(base, total, MADV_NOHUGEPAGE)) {
		perror("slices: mmap");
		return 1;
	}
	pthread_barrier_init(&start, NULL, n);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, writer, (void *)i)) {
			fprintf(stderr, "slices: pthread_create failed\n");
			return 1;
		}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	status("written");
	if (munmap(base + total / 2, total / 2)) {
		perror("slices: munmap");
		return 1;
	}
	status("unmapped");
	fflush(stdout);
	return 0;
}
