// SPDX-License-Identifier: GPL-2.0
/*
 * oddnames: grows its RSS under names that outputs must carry exactly or escape.
 *
 *	oddnames comm MIB	renames itself to "\e]0;PWNED\a\xff" (a terminal title
 *				sequence and a byte that is not UTF-8), then touches MIB MiB
 *				of anon memory
 *	oddnames map MIB FILE... [--unlink FILE...]
 *				maps each FILE (MIB MiB each, which it must hold) and reads
 *				one byte per page (those after --unlink are unlinked once
 *				open, before they are mapped), then holds the mappings 300 ms
 *				so that they are seen alive
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define ODD_COMM	"\x1b]0;PWNED\x07\xff"

#ifdef __clang__
#define WORKER __attribute__((noinline))
#else
#define WORKER __attribute__((noinline, noclone))
#endif

WORKER static unsigned long touch_pages(void *addr, size_t len, int write)
{
	volatile char *p = addr;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), off;
	unsigned long sum = 0;

	for (off = 0; off < len; off += ps) {
		if (write)
			p[off] = 1;
		else
			sum += p[off];
	}
	return sum;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int grow_comm(size_t len)
{
	void *p;

	if (prctl(PR_SET_NAME, ODD_COMM)) {
		fprintf(stderr, "prctl(PR_SET_NAME): %s\n", strerror(errno));
		return 1;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "mmap: %s\n", strerror(errno));
		return 1;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	touch_pages(p, len, 1);
	munmap(p, len);
	return 0;
}

static int grow_files(size_t len, int n, char **files)
{
	bool unlink_it = false;
	void *p;
	int i, fd;

	for (i = 0; i < n; i++) {
		if (!strcmp(files[i], "--unlink")) {
			unlink_it = true;
			continue;
		}
		fd = open(files[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "open %s: %s\n", files[i], strerror(errno));
			return 1;
		}
		if (unlink_it && unlink(files[i])) {
			fprintf(stderr, "unlink %s: %s\n", files[i], strerror(errno));
			close(fd);
			return 1;
		}
		p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (p == MAP_FAILED) {
			fprintf(stderr, "mmap %s: %s\n", files[i], strerror(errno));
			return 1;
		}
		touch_pages(p, len, 0);
	}
	sleep_ms(300);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib = argc >= 3 ? strtoul(argv[2], NULL, 10) : 0;

	if (argc == 3 && !strcmp(argv[1], "comm") && mib)
		return grow_comm(mib << 20);
	if (argc >= 4 && !strcmp(argv[1], "map") && mib)
		return grow_files(mib << 20, argc - 3, argv + 3);
	fprintf(stderr, "Usage: oddnames comm MIB | oddnames map MIB FILE... [--unlink FILE...]\n");
	return 2;
}
