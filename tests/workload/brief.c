// SPDX-License-Identifier: GPL-2.0
/*
 * A file mapping that lives for microseconds: the first LEN bytes of FILE are mapped with
 * MAP_POPULATE (made resident inside the mmap) and unmapped at once; then the program
 * exits. By the time a reader woken by the mmap could look in /proc/PID/maps the mapping
 * is gone, so its name can only come from what was read while the mmap ran.
 * Prints "file START LEN" (LEN bytes were made resident, then unmapped).
 *
 * Usage: brief FILE LEN
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long len;
	void *f;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: brief FILE LEN\n");
		return 2;
	}
	len = strtoul(argv[2], NULL, 0);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "brief: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	f = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (f == MAP_FAILED) {
		perror("brief: mmap");
		return 1;
	}
	munmap(f, len);
	printf("file %lu %lu\n", (unsigned long)f, len);
	return 0;
}
