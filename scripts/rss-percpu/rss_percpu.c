// SPDX-License-Identifier: GPL-2.0
/* rss_percpu CMD [ARGS]: runs CMD and compares the two rss_stat programs' sizes (.bpf.c). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
typedef __u64 u64;
typedef __s64 s64;
typedef __u32 u32;
typedef __s32 s32;
#include "rss_percpu.skel.h"

int main(int argc, char **argv)
{
	struct rss_percpu_bpf *s;
	int p[2];
	pid_t pid;
	char c;

	if (argc < 2 || pipe(p)) {
		fprintf(stderr, "usage: rss_percpu CMD [ARGS...]\n");
		return 2;
	}
	s = rss_percpu_bpf__open();
	if (!s)
		return 1;
	pid = fork();
	if (!pid) {
		/* exec only once the programs are attached */
		if (read(p[0], &c, 1) == 1)
			execvp(argv[1], argv + 1);
		_exit(127);
	}
	s->rodata->target_tgid = pid;
	s->rodata->ncpu = libbpf_num_possible_cpus();
	if (rss_percpu_bpf__load(s) || !bpf_program__attach(s->progs.on_tp) ||
	    !bpf_program__attach(s->progs.on_btf)) {
		fprintf(stderr, "rss_percpu: load or attach failed\n");
		kill(pid, SIGKILL);
		return 1;
	}
	if (write(p[1], "x", 1) != 1)
		return 1;
	waitpid(pid, NULL, 0);
	printf("btf %llu tp %llu equal %llu differ %llu (max |diff| %lld pages, last %lld) "
	       "retries %llu fail %llu\n", s->bss->n_btf, s->bss->n_tp, s->bss->n_eq,
	       s->bss->n_ne, s->bss->maxdiff, s->bss->lastdiff, s->bss->n_retry, s->bss->n_fail);
	rss_percpu_bpf__destroy(s);
	return 0;
}
