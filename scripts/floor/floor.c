// SPDX-License-Identifier: GPL-2.0
/*
 * floor classic|btf OUTFILE -- CMD [ARGS...]: runs CMD under the floor programs of memphase's
 * fault-path design (floor.bpf.c) with the kernel's BPF run-time stats on, and writes their
 * figures to OUTFILE as key=value lines for scripts/bench_report.py:
 *
 *   mode=classic|btf          which rss_stat program ran beside floor_fault
 *   progs=floor_fault floor_rss_classic    the fault-path programs (those the floor's BPF
 *                             time per fault is the sum of)
 *   prog_NAME_runs=N, prog_NAME_run_time_ns=N   run_cnt and run_time_ns of every program
 *                             loaded (as memphase's --json bpf_stats: runs, run_time_ns)
 *   counted_faults=N, counted_rss=N   the target's events the programs found and counted
 *                             (CMD and its descendants): a floor that missed its target
 *                             would be no floor
 *   exit_code=N / exit_signal=N
 *
 * CMD is forked first and waits on a pipe; it execs once its pid is in the target slots and
 * the programs are attached. Its exit status is floor's. Root. Built by scripts/bench.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor.h"
#include "floor.skel.h"

static int target_add(struct floor_bpf *skel, __u32 tgid)
{
	struct floor_target t = { .tgid = tgid };
	__u32 slot = floor_tslot(tgid, 0);

	return bpf_map__update_elem(skel->maps.tslots, &slot, sizeof(slot), &t, sizeof(t),
				    BPF_ANY);
}

static int counts_sum(struct floor_bpf *skel, struct floor_counts *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i, err;
	struct floor_counts *v;
	__u32 zero = 0;

	if (ncpu < 0)
		return ncpu;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map__lookup_elem(skel->maps.counts, &zero, sizeof(zero), v, ncpu * sizeof(*v),
				   0);
	for (i = 0; !err && i < ncpu; i++) {
		sum->faults += v[i].faults;
		sum->rss += v[i].rss;
	}
	free(v);
	return err;
}

static int prog_print(FILE *out, struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	/* libbpf 1.1.2 has no bpf_prog_get_info_by_fd (1.2): the generic call */
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return -errno;
	fprintf(out, "prog_%s_runs=%llu\nprog_%s_run_time_ns=%llu\n", bpf_program__name(prog),
		(unsigned long long)info.run_cnt, bpf_program__name(prog),
		(unsigned long long)info.run_time_ns);
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[3] = {};
	struct bpf_program *rss, *progs[3];
	struct floor_counts sum = {};
	struct floor_bpf *skel = NULL;
	int p[2] = { -1, -1 }, stats_fd = -1, err = 0, st = 0, i, btf;
	FILE *out = NULL;
	pid_t pid = -1;
	char c = 0;

	if (argc < 5 || strcmp(argv[3], "--") ||
	    (strcmp(argv[1], "classic") && strcmp(argv[1], "btf"))) {
		fprintf(stderr, "usage: floor classic|btf OUTFILE -- CMD [ARGS...]\n");
		return 2;
	}
	btf = !strcmp(argv[1], "btf");
	out = fopen(argv[2], "w");
	if (!out) {
		err = -errno;
		fprintf(stderr, "floor: failed to open %s: %s\n", argv[2], strerror(-err));
		goto cleanup;
	}
	skel = floor_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "floor: failed to open the BPF object: %s\n", strerror(-err));
		goto cleanup;
	}
	rss = btf ? skel->progs.floor_rss_btf : skel->progs.floor_rss_classic;
	bpf_program__set_autoload(btf ? skel->progs.floor_rss_classic : skel->progs.floor_rss_btf,
				  false);
	err = floor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "floor: failed to load the BPF programs: %s (needs root)\n",
			strerror(-err));
		goto cleanup;
	}
	if (pipe(p)) {
		err = -errno;
		fprintf(stderr, "floor: failed to create a pipe: %s\n", strerror(-err));
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		fprintf(stderr, "floor: failed to fork: %s\n", strerror(-err));
		goto cleanup;
	}
	if (!pid) {
		/* exec only once the programs are attached (EOF: the parent failed) */
		close(p[1]);
		if (read(p[0], &c, 1) == 1) {
			close(p[0]);
			execvp(argv[4], argv + 4);
			fprintf(stderr, "floor: %s: %s\n", argv[4], strerror(errno));
		}
		_exit(127);
	}
	close(p[0]);
	p[0] = -1;
	err = target_add(skel, pid);
	if (err) {
		fprintf(stderr, "floor: failed to add the target: %s\n", strerror(-err));
		goto cleanup;
	}
	/* before attaching: every run of the programs is timed, as in memphase --bpf-stats */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		err = stats_fd;
		fprintf(stderr, "floor: failed to enable BPF run-time stats: %s\n", strerror(-err));
		goto cleanup;
	}
	progs[0] = skel->progs.floor_fault;
	progs[1] = rss;
	progs[2] = skel->progs.floor_fork;
	for (i = 0; i < 3; i++) {
		links[i] = bpf_program__attach(progs[i]);
		if (!links[i]) {
			err = -errno;
			fprintf(stderr, "floor: failed to attach %s: %s\n",
				bpf_program__name(progs[i]), strerror(-err));
			goto cleanup;
		}
	}
	if (write(p[1], "x", 1) != 1) {
		err = -errno;
		fprintf(stderr, "floor: failed to start %s: %s\n", argv[4], strerror(-err));
		goto cleanup;
	}
	close(p[1]);
	p[1] = -1;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			fprintf(stderr, "floor: failed to wait for %s: %s\n", argv[4],
				strerror(-err));
			goto cleanup;
		}
	}
	pid = -1;
	err = counts_sum(skel, &sum);
	if (err) {
		fprintf(stderr, "floor: failed to read the counters: %s\n", strerror(-err));
		goto cleanup;
	}
	fprintf(out, "mode=%s\nprogs=%s %s\n", argv[1], bpf_program__name(progs[0]),
		bpf_program__name(progs[1]));
	for (i = 0; i < 3 && !err; i++)
		err = prog_print(out, progs[i]);
	if (err) {
		fprintf(stderr, "floor: failed to read the program stats: %s\n", strerror(-err));
		goto cleanup;
	}
	fprintf(out, "counted_faults=%llu\ncounted_rss=%llu\n", (unsigned long long)sum.faults,
		(unsigned long long)sum.rss);
	if (WIFEXITED(st))
		fprintf(out, "exit_code=%d\n", WEXITSTATUS(st));
	else
		fprintf(out, "exit_signal=%d\n", WTERMSIG(st));
	if (fflush(out)) {
		err = -errno;
		fprintf(stderr, "floor: failed to write %s: %s\n", argv[2], strerror(-err));
	}

cleanup:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);	/* a child still waiting reads EOF and exits */
	if (pid > 0)
		waitpid(pid, NULL, 0);
	for (i = 0; i < 3; i++)
		bpf_link__destroy(links[i]);
	if (stats_fd >= 0)
		close(stats_fd);
	floor_bpf__destroy(skel);
	if (out)
		fclose(out);
	if (err)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
