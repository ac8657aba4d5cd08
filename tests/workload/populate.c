// SPDX-License-Identifier: GPL-2.0
/*
 * Growth that arrives inside syscalls holding the address-space lock, one mapping each:
 *   file     FILE mapped with MAP_POPULATE (file pages, read)
 *   madvise  anonymous, filled by madvise(MADV_POPULATE_WRITE)
 *   mlock    anonymous, filled by mlock
 *   locked   anonymous, mmap(MAP_LOCKED)
 *   mremap   a second mlock'ed mapping moved and grown by mremap (its new part is filled
 *            in mremap), last so that no later mapping takes its old address
 * Prints "NAME START LEN" per mapping (LEN bytes are resident) and, when asked, copies
 * /proc/self/smaps to OUT before it exits.
 *
 * Usage: populate FILE [OUT]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MIB (1UL << 20)

static void *anon(size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags,
		       -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "populate: mmap %zu: %s\n", len, strerror(errno));
		exit(1);
	}
	/* 4 KiB pages only: the sizes stay exact whatever THP is set to */
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

static void say(const char *name, void *p, size_t len)
{
	printf("%s %lu %zu\n", name, (unsigned long)p, len);
}

static int copy_smaps(const char *out)
{
	char buf[65536];
	FILE *in = fopen("/proc/self/smaps", "r"), *o = fopen(out, "w");
	size_t n;

	if (!in || !o) {
		fprintf(stderr, "populate: %s: %s\n", out, strerror(errno));
		return 1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, o);
	fclose(in);
	return fclose(o) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct stat st;
	void *f, *a, *l, *r, *k;
	int fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: populate FILE [SMAPS_OUT]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "populate: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	f = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (f == MAP_FAILED) {
		fprintf(stderr, "populate: mmap %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	close(fd);
	say("file", f, st.st_size);

	a = anon(8 * MIB, 0);
	if (madvise(a, 8 * MIB, MADV_POPULATE_WRITE)) {
		fprintf(stderr, "populate: MADV_POPULATE_WRITE: %s\n", strerror(errno));
		return 1;
	}
	say("madvise", a, 8 * MIB);

	l = anon(2 * MIB, 0);
	if (mlock(l, 2 * MIB)) {
		fprintf(stderr, "populate: mlock: %s\n", strerror(errno));
		return 1;
	}
	say("mlock", l, 2 * MIB);

	k = anon(1 * MIB, MAP_LOCKED);
	say("locked", k, 1 * MIB);

	r = anon(1 * MIB, 0);
	if (mlock(r, 1 * MIB)) {
		fprintf(stderr, "populate: mlock: %s\n", strerror(errno));
		return 1;
	}
	r = mremap(r, 1 * MIB, 3 * MIB, MREMAP_MAYMOVE);
	if (r == MAP_FAILED) {
		fprintf(stderr, "populate: mremap: %s\n", strerror(errno));
		return 1;
	}
	say("mremap", r, 3 * MIB);

	fflush(stdout);
	return argc == 3 ? copy_smaps(argv[2]) : 0;
}
