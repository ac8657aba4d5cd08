// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that malloc while others hold the address space locked: NTHREADS threads each
 * malloc MIB MiB in blocks of 32 KiB (their own glibc arenas, grown by mprotect) and write
 * every page, keeping it all; meanwhile CHURN threads mmap, mprotect and munmap without a
 * pause (each holds the mmap lock for writing) until the others are done. Then the
 * process copies /proc/self/smaps to OUT and prints the number of bytes written.
 *
 * Usage: threads NTHREADS MIB CHURN OUT
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BLOCK (32 << 10)

static size_t per_thread;
static atomic_int done;

static void *grower(void *arg)
{
	size_t got;

	for (got = 0; got < per_thread; got += BLOCK) {
		char *volatile p = malloc(BLOCK);

		if (!p)
			break;
		memset(p, 1, BLOCK);	/* kept: malloc'd and never freed */
	}
	return NULL;
}

static void *churn(void *arg)
{
	while (!atomic_load(&done)) {
		void *p = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			continue;
		mprotect(p, 1 << 19, PROT_READ | PROT_WRITE);
		munmap(p, 1 << 20);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n, nchurn, i;
	pthread_t t[64], c[16];
	char buf[65536];
	FILE *in, *o;
	size_t len;

	if (argc != 5 || (n = atoi(argv[1])) < 1 || n > 64 || (nchurn = atoi(argv[3])) < 0 ||
	    nchurn > 16 || atoi(argv[2]) < 1) {
		fprintf(stderr, "usage: threads NTHREADS(1-64) MIB CHURN(0-16) SMAPS_OUT\n");
		return 2;
	}
	per_thread = (size_t)atoi(argv[2]) << 20;
	for (i = 0; i < nchurn; i++)
		pthread_create(&c[i], NULL, churn, NULL);
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, grower, NULL);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	atomic_store(&done, 1);
	for (i = 0; i < nchurn; i++)
		pthread_join(c[i], NULL);
	in = fopen("/proc/self/smaps", "r");
	o = fopen(argv[4], "w");
	if (!in || !o) {
		fprintf(stderr, "threads: %s: %s\n", argv[4], strerror(errno));
		return 1;
	}
	while ((len = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, len, o);
	fclose(in);
	if (fclose(o))
		return 1;
	printf("%zu\n", per_thread * n);
	return 0;
}
