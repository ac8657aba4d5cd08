// SPDX-License-Identifier: GPL-2.0
/*
 * What a process does that takes it out of its user's reach, after growth of its own:
 *   reach MIB                 touch MIB MiB in reach_grow(), say "euid N", wait for a line
 *                             on stdin (or its end), touch MIB more, exit
 *   reach MIB nodump          touch MIB MiB, make itself not dumpable (PR_SET_DUMPABLE 0),
 *                             touch MIB more in reach_hidden(), exit
 *   reach MIB exec PROG ARGS  touch MIB MiB, then exec PROG ARGS (a setuid copy of this
 *                             program, one its user cannot read...)
 * Each touch is its own mapping, written page by page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MIB (1UL << 20)

static void touch(size_t mib)
{
	size_t n = mib * MIB, i;
	volatile char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (i = 0; i < n; i += 4096)
		p[i] = 1;
}

__attribute__((noinline)) void reach_grow(size_t mib)
{
	touch(mib);
}

__attribute__((noinline)) void reach_hidden(size_t mib)
{
	touch(mib);
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 8;
	char line[64];

	reach_grow(mib);
	if (argc > 2 && !strcmp(argv[2], "nodump")) {
		prctl(PR_SET_DUMPABLE, 0);
		reach_hidden(mib);
		return 0;
	}
	if (argc > 3 && !strcmp(argv[2], "exec")) {
		execv(argv[3], argv + 3);
		perror("execv");
		return 126;
	}
	printf("euid %d\n", (int)geteuid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	reach_hidden(mib);
	return 0;
}
