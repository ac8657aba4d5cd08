// SPDX-License-Identifier: GPL-2.0
/*
 * cases CASE [MIB [last]]: growth that the fault tracepoint does not bring, for onetp's
 * exactness mode. Touches 1 MiB of a mapping ("pre": the faults before), does CASE on a
 * mapping of MIB MiB (default 32; "op"), touches 1 MiB of another ("post": the faults after;
 * not with "last"), prints the three mappings' addresses, and stops itself (SIGSTOP) for
 * the loader to compare; it ends at SIGCONT.
 *
 *   none      nothing (op is mapped, never touched)
 *   populate  mmap(MAP_POPULATE): the pages arrive inside the syscall, no fault
 *   mlock     mmap, then mlock(): the same through mlock
 *   read      read() from /dev/zero into the fresh mapping: kernel-mode faults
 *   dontneed  op touched, then MADV_DONTNEED on its first half: a shrink in a syscall
 *   munmap    op touched, then its first half unmapped
 *   fork      a child touches op (MIB) and stops itself too; the parent touches post
 *   migrate   op touched with the process moved to the next CPU every 16 pages
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE 4096UL

static char *map(unsigned long len, int flags)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags,
		       -1, 0);

	if (p == MAP_FAILED) {
		perror("cases: mmap");
		exit(1);
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

static void touch(volatile char *p, unsigned long len)
{
	unsigned long off;

	for (off = 0; off < len; off += PAGE)
		p[off] = 1;
}

int main(int argc, char **argv)
{
	unsigned long len = 32UL << 20, off, got;
	int last = argc > 3 && !strcmp(argv[3], "last"), fd, ncpu, cpu = 0;
	const char *c = argc > 1 ? argv[1] : "";
	char *pre, *op = NULL, *post = NULL;
	pid_t kid = -1;
	cpu_set_t set;
	ssize_t n;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: cases none|populate|mlock|read|dontneed|munmap|fork|"
			"migrate [MIB [last]]\n");
		return 2;
	}
	if (argc > 2)
		len = strtoul(argv[2], NULL, 10) << 20;
	pre = map(1 << 20, 0);
	touch(pre, 1 << 20);
	if (!strcmp(c, "none")) {
		op = map(len, 0);
	} else if (!strcmp(c, "populate")) {
		op = map(len, MAP_POPULATE);
	} else if (!strcmp(c, "mlock")) {
		op = map(len, 0);
		if (mlock(op, len))
			perror("cases: mlock");
	} else if (!strcmp(c, "read")) {
		op = map(len, 0);
		fd = open("/dev/zero", O_RDONLY);
		for (got = 0; fd >= 0 && got < len; got += n) {
			n = read(fd, op + got, len - got);
			if (n <= 0)
				break;
		}
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(c, "dontneed") || !strcmp(c, "munmap")) {
		op = map(len, 0);
		touch(op, len);
		if (c[0] == 'd')
			madvise(op, len / 2, MADV_DONTNEED);
		else
			munmap(op, len / 2);
	} else if (!strcmp(c, "fork")) {
		kid = fork();
		if (!kid) {
			op = map(len, 0);
			touch(op, len);
			printf("child=%d op=%p\n", getpid(), (void *)op);
			fflush(stdout);
			raise(SIGSTOP);
			_exit(0);
		}
		waitpid(kid, NULL, WUNTRACED);
	} else if (!strcmp(c, "migrate")) {
		op = map(len, 0);
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		for (off = 0; off < len; off += PAGE) {
			if (!(off / PAGE % 16)) {
				CPU_ZERO(&set);
				CPU_SET(cpu, &set);
				sched_setaffinity(0, sizeof(set), &set);
				cpu = (cpu + 1) % ncpu;
			}
			op[off] = 1;
		}
	} else {
		fprintf(stderr, "cases: no case '%s'\n", c);
		return 2;
	}
	if (!last) {
		post = map(1 << 20, 0);
		touch(post, 1 << 20);
	}
	printf("case=%s pre=%p op=%p post=%p\n", c, (void *)pre, (void *)op, (void *)post);
	fflush(stdout);
	raise(SIGSTOP);
	if (kid > 0) {
		kill(kid, SIGCONT);
		waitpid(kid, NULL, 0);
	}
	return 0;
}
