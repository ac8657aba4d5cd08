// SPDX-License-Identifier: GPL-2.0
/*
 * One address range, two mappings in turn: anonymous memory is mapped there and its first
 * half written, then unmapped, and FILE is mapped at the same address and its first half
 * read. A fault in the file mapping lies inside the range of the thread's last VMA: only a
 * lookup that notices the address space changed charges it to the file, not to the anon.
 * Prints "anon START LEN" and "file START LEN" (LEN bytes made resident in each).
 *
 * Usage: remap FILE (of at least 8 MiB)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define MIB (1UL << 20)
#define LEN (8 * MIB)
#define PAGE 4096UL

int main(int argc, char **argv)
{
	volatile char *p, *f;
	unsigned long off;
	long sum = 0;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: remap FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "remap: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("remap: mmap anon");
		return 1;
	}
	/* 4 KiB pages only: the sizes stay exact whatever THP is set to */
	madvise((void *)p, LEN, MADV_NOHUGEPAGE);
	for (off = 0; off < LEN / 2; off += PAGE)
		p[off] = 1;
	/* no output until the end: nothing else faults between the two mappings' touches */
	if (munmap((void *)p, LEN)) {
		perror("remap: munmap");
		return 1;
	}
	f = mmap((void *)p, LEN, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	if (f != p) {
		perror("remap: mmap file at the same address");
		return 1;
	}
	/* one page per fault: no fault-around beyond what is read */
	madvise((void *)f, LEN, MADV_RANDOM);
	for (off = 0; off < LEN / 2; off += PAGE)
		sum += f[off];
	printf("anon %lu %lu\n", (unsigned long)p, LEN / 2);
	printf("file %lu %lu\n", (unsigned long)f, LEN / 2);
	fflush(stdout);
	return sum == 12345 ? 3 : 0;
}
