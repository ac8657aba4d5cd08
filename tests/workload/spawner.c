// SPDX-License-Identifier: GPL-2.0
/*
 * spawner: starts N short-lived processes one after the other, for memphase's own memory
 * over many processes. Usage: spawner N KIB DIR [CHECKPOINT...]. Each child is this
 * program exec'd again (so it maps code: its executable, libc, ld.so), touches KIB KiB
 * of anon memory in touch_pages() and exits; the parent waits for it before starting the
 * next. Before child number CHECKPOINT (and after the last one when CHECKPOINT is N), the
 * parent creates DIR/at.CHECKPOINT and waits until DIR/go.CHECKPOINT exists, so that a
 * test can look at memphase at known points of the run, whatever the machine's speed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __clang__
#define WORKER __attribute__((noinline))
#else
#define WORKER __attribute__((noinline, noclone))
#endif

WORKER static void touch_pages(void *addr, size_t len)
{
	volatile char *p = addr;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	size_t off;

	for (off = 0; off < len; off += ps)
		p[off] = 1;
}

static int child(long kib)
{
	size_t len = (size_t)kib << 10;
	void *p;

	if (!len)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	touch_pages(p, len);
	return 0;
}

static int checkpoint(const char *dir, long i)
{
	char at[4096], go[4096];
	struct stat st;
	int fd;

	snprintf(at, sizeof(at), "%s/at.%ld", dir, i);
	snprintf(go, sizeof(go), "%s/go.%ld", dir, i);
	fd = open(at, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "spawner: %s: %s\n", at, strerror(errno));
		return 1;
	}
	close(fd);
	while (stat(go, &st))
		usleep(10000);
	return 0;
}

int main(int argc, char **argv)
{
	long n, i;
	int k, status;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child(atol(argv[2]));
	if (argc < 4) {
		fprintf(stderr, "usage: spawner N KIB DIR [CHECKPOINT...]\n");
		return 2;
	}
	n = atol(argv[1]);
	for (i = 0; i <= n; i++) {
		for (k = 4; k < argc; k++)
			if (atol(argv[k]) == i && checkpoint(argv[3], i))
				return 1;
		if (i == n)
			break;
		pid = fork();
		if (pid < 0) {
			perror("spawner: fork");
			return 1;
		}
		if (!pid) {
			execl("/proc/self/exe", argv[0], "--child", argv[2], (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "spawner: child %ld failed (status %d)\n", i, status);
			return 1;
		}
	}
	return 0;
}
