// SPDX-License-Identifier: GPL-2.0
/*
 * swarm N: N processes alive at once, each with its own address space (so that memphase
 * tracks N + 1 of them side by side: their ids land near each other in its table). Child i
 * (0-based) touches (i % 8 + 1) MiB of anon memory, tells the parent, and waits until all
 * have; then all exit. Prints "pid MiB" per child on stdout, then "parent_rss_kib=K" (the
 * parent's RSS at the forks: what each child inherits).
 * Usage: swarm N (1-1000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static long rss_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	int n, i, ready[2], go[2];
	pid_t *pids;
	char c;

	if (argc != 2 || (n = atoi(argv[1])) < 1 || n > 1000) {
		fprintf(stderr, "usage: swarm N(1-1000)\n");
		return 2;
	}
	pids = calloc(n, sizeof(*pids));
	if (!pids || pipe(ready) || pipe(go)) {
		perror("swarm");
		return 1;
	}
	printf("parent_rss_kib=%ld\n", rss_kib());
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("swarm: fork");
			return 1;
		}
		if (!pids[i]) {
			size_t len = (size_t)(i % 8 + 1) << 20, off;
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				_exit(1);
			for (off = 0; off < len; off += 4096)
				p[off] = 1;
			close(go[1]);
			if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
	}
	close(go[0]);
	for (i = 0; i < n; i++)
		if (read(ready[0], &c, 1) != 1)
			return 1;
	for (i = 0; i < n; i++)
		printf("%d %d\n", (int)pids[i], i % 8 + 1);
	fflush(stdout);
	close(go[1]);	/* all exit */
	for (i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	return 0;
}
