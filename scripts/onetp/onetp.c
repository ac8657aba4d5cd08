// SPDX-License-Identifier: GPL-2.0
/*
 * onetp [-m cpu|sum] [-K] [-V] [-s SHIFT] time|exact OUTFILE -- CMD [ARGS...]: runs CMD under the
 * one-tracepoint design's programs (onetp.bpf.c) with the kernel's BPF run-time stats on.
 *
 *   -m cpu|sum  how a fault reads the counters (default cpu; see onetp.bpf.c)
 *   -K          without the page_fault_kernel programs
 *   -s SHIFT    bucket = address >> SHIFT (default 21 in time mode, 12 in exact mode)
 *   -V          bucket = the VMA's start, looked up (bpf_find_vma) in the fault program when
 *               the address charged is outside the CPU's last VMA (time mode: the cost)
 *
 * time: only onetp_fault, onetp_fault_kernel and onetp_fork attached; OUTFILE gets key=value
 * lines in the floor's format (scripts/floor/floor.c), for scripts/bench_report.py:
 *   mode=onetp-cpu|onetp-sum, progs=onetp_fault onetp_fault_kernel (the fault path),
 *   prog_NAME_runs=N, prog_NAME_run_time_ns=N (every program loaded), counted_faults=N (the
 *   target faults the programs read at), counted_rss=0, charged_anon_bytes=N (the anon
 *   growth charged to fault addresses, net, the change after each CPU's last fault not
 *   included: nothing syncs in time mode), diag_NAME=N (struct ot_diag), exit_code=N
 *   or exit_signal=N.
 *
 * exact: the reference programs (ref_fault, ref_fault_kernel, ref_rss) too. CMD must stop
 * itself (SIGSTOP: touch with TOUCH_STOP=1, scripts/onetp/cases.c); at each stop, for CMD
 * and each of its stopped children, the loader reads /proc/PID/status and smaps, runs
 * onetp_sync, and compares: each class's size as the design counts it (baseline + what it
 * charged) and as the reference does against /proc, and the growth charged per page,
 * per 2 MiB and per mapping (smaps at the stop) against the reference's and against each
 * mapping's Rss; then sends SIGCONT. A table on stdout, key=value lines to OUTFILE.
 *
 * CMD is forked first and waits on a pipe; it execs once its pid is a target and the
 * programs are attached. Root. Built by scripts/onetp/run.sh and scripts/bench.sh.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor.h"
#include "onetp.h"
#include "onetp.skel.h"

#define PAGE 4096LL

static const char *const cls_name[OT_NCLS] = { "file", "anon", "swap", "shmem" };

struct vma {
	unsigned long start, end;
	long long rss;		/* bytes */
	char name[96];
};

struct proc {
	int pid;
	long long status[OT_NCLS];	/* bytes: RssFile, RssAnon, VmSwap, RssShmem */
	struct vma *vmas;
	int nvma;
	unsigned long *pages;	/* the present pages (pagemap), in address order */
	size_t npages;
};

struct entry {
	struct ot_bkey key;
	struct ot_bval val;
};

static struct entry *ents;
static size_t nents;

static int target_add(struct onetp_bpf *skel, __u32 tgid)
{
	struct floor_target t = { .tgid = tgid };
	__u32 slot = floor_tslot(tgid, 0);

	return bpf_map__update_elem(skel->maps.tslots, &slot, sizeof(slot), &t, sizeof(t),
				    BPF_ANY);
}

static int diag_sum(struct onetp_bpf *skel, struct ot_diag *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i, j, err;
	struct ot_diag *v;
	__u32 zero = 0;

	memset(sum, 0, sizeof(*sum));
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map__lookup_elem(skel->maps.diag, &zero, sizeof(zero), v, ncpu * sizeof(*v), 0);
	for (i = 0; !err && i < ncpu; i++)
		for (j = 0; j < (int)(sizeof(*sum) / 8); j++)
			((__u64 *)sum)[j] += ((__u64 *)&v[i])[j];
	free(v);
	return err;
}

static void diag_print(FILE *out, const struct ot_diag *d)
{
	fprintf(out, "diag_fast=%llu\ndiag_slow=%llu\ndiag_deferred=%llu\ndiag_fold_one=%llu\n"
		"diag_fold_guess=%llu\ndiag_fold_multi=%llu\ndiag_inits=%llu\ndiag_bad=%llu\n"
		"diag_sync_pages=%llu\ndiag_ref_events=%llu\ndiag_ref_sums=%llu\n"
		"diag_vma_lookups=%llu\ndiag_vma_busy=%llu\n",
		(unsigned long long)d->fast, (unsigned long long)d->slow,
		(unsigned long long)d->deferred, (unsigned long long)d->fold_one,
		(unsigned long long)d->fold_guess, (unsigned long long)d->fold_multi,
		(unsigned long long)d->inits, (unsigned long long)d->bad,
		(unsigned long long)d->sync_pages, (unsigned long long)d->ref_events,
		(unsigned long long)d->ref_sums, (unsigned long long)d->vma_lookups,
		(unsigned long long)d->vma_busy);
}

static int prog_print(FILE *out, struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return -errno;
	fprintf(out, "prog_%s_runs=%llu\nprog_%s_run_time_ns=%llu\n", bpf_program__name(prog),
		(unsigned long long)info.run_cnt, bpf_program__name(prog),
		(unsigned long long)info.run_time_ns);
	return 0;
}

/* the buckets hash, whole, into ents */
static int buckets_read(struct onetp_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.buckets);
	struct ot_bkey key, next;
	size_t cap = 0;
	void *prev = NULL;

	nents = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (nents == cap) {
			cap = cap ? cap * 2 : 4096;
			ents = realloc(ents, cap * sizeof(*ents));
			if (!ents)
				return -ENOMEM;
		}
		ents[nents].key = next;
		if (!bpf_map_lookup_elem(fd, &next, &ents[nents].val))
			nents++;
		key = next;
		prev = &key;
	}
	return 0;
}

/* the CPUs' batches not yet flushed (time mode: nothing syncs), of class k, every target */
static long long batches_sum(struct onetp_bpf *skel, int k)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	struct ot_cpu *v = calloc(ncpu, sizeof(*v));
	long long sum = 0;
	__u32 slot;

	if (!v)
		return 0;
	for (slot = 0; slot < OT_MMS; slot++) {
		if (bpf_map__lookup_elem(skel->maps.cpus, &slot, sizeof(slot), v,
					 ncpu * sizeof(*v), 0))
			continue;
		for (i = 0; i < ncpu; i++)
			sum += v[i].bgrow[k] + v[i].bshrink[k];
	}
	free(v);
	return sum;
}

/* the truth per page: which pages of each mapping are present now (/proc/PID/pagemap) */
static int pages_read(struct proc *p)
{
	unsigned long a, n, i, *buf;
	size_t cap = 0;
	char path[64];
	int fd, v;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", p->pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	buf = malloc(512 * sizeof(*buf));
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	p->npages = 0;
	for (v = 0; v < p->nvma; v++) {
		/* [vsyscall] is not in the page tables; nothing else is this large */
		if (p->vmas[v].start >= 0x800000000000UL ||
		    p->vmas[v].end - p->vmas[v].start > (16UL << 30))
			continue;
		for (a = p->vmas[v].start; a < p->vmas[v].end; a += n * PAGE) {
			n = (p->vmas[v].end - a) / PAGE;
			if (n > 512)
				n = 512;
			if (pread(fd, buf, n * 8, a / PAGE * 8) != (ssize_t)(n * 8))
				break;
			for (i = 0; i < n; i++) {
				if (!(buf[i] >> 63))
					continue;
				if (p->npages == cap) {
					cap = cap ? cap * 2 : 65536;
					p->pages = realloc(p->pages, cap * sizeof(*p->pages));
					if (!p->pages) {
						free(buf);
						close(fd);
						return -ENOMEM;
					}
				}
				p->pages[p->npages++] = a + i * PAGE;
			}
		}
	}
	free(buf);
	close(fd);
	return 0;
}

static int proc_read(struct proc *p)
{
	static const char *const keys[OT_NCLS] = { "RssFile:", "RssAnon:", "VmSwap:",
						   "RssShmem:" };
	char path[64], line[512], name[96];
	unsigned long s, e;
	long long kb;
	FILE *f;
	int k, cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		for (k = 0; k < OT_NCLS; k++)
			if (!strncmp(line, keys[k], strlen(keys[k])))
				p->status[k] = atoll(line + strlen(keys[k])) * 1024;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/smaps", p->pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	p->nvma = 0;
	while (fgets(line, sizeof(line), f)) {
		name[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %95s", &s, &e, name) >= 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			if (p->nvma == cap) {
				cap = cap ? cap * 2 : 64;
				p->vmas = realloc(p->vmas, cap * sizeof(*p->vmas));
				if (!p->vmas)
					return -ENOMEM;
			}
			p->vmas[p->nvma].start = s;
			p->vmas[p->nvma].end = e;
			p->vmas[p->nvma].rss = 0;
			snprintf(p->vmas[p->nvma].name, sizeof(p->vmas[0].name), "%s",
				 name[0] ? name : "[anon]");
			p->nvma++;
		} else if (p->nvma && sscanf(line, "Rss: %lld kB", &kb) == 1) {
			p->vmas[p->nvma - 1].rss = kb * 1024;
		}
	}
	fclose(f);
	return pages_read(p);
}

/* index of the VMA holding addr, -1: none (smaps lists them in order) */
static int vma_of(const struct proc *p, unsigned long addr)
{
	int lo = 0, hi = p->nvma - 1, mid;

	while (lo <= hi) {
		mid = (lo + hi) / 2;
		if (addr < p->vmas[mid].start)
			hi = mid - 1;
		else if (addr >= p->vmas[mid].end)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

/*
 * One group (a page or bucket, a 2 MiB range, a mapping) and class (-1: every class but
 * swap, for the truth, which has no class): the design's and the reference's net pages,
 * and the present pages.
 */
struct cell {
	long long id;
	int k;
	long long o, r, t;
};

static int cell_cmp(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->k - y->k;
}

static long long group_of(const struct proc *p, int level, unsigned long addr,
			  unsigned int shift)
{
	if (level == 0)
		return (addr >> shift) + 1;
	if (level == 1)
		return addr >> 21;
	return vma_of(p, addr) < 0 ? -2 : vma_of(p, addr);
}

/*
 * Pages charged to another group: half the sum over groups of |a - b| (what one has too
 * much in a group, the other has too little in others). mis[0]: the design against the
 * reference (per class); mis[1], mis[2]: the design, the reference against the present
 * pages (the baseline's pages are among those, in no charge).
 */
static int misattributed(const struct proc *p, int slot, int level, unsigned int shift,
			 long long *mis)
{
	size_t i, j, n = 0, cap = nents * 5 + p->npages + 1;
	struct cell *c = calloc(cap, sizeof(*c));
	long long id, o, r, t;
	int k;

	if (!c)
		return -ENOMEM;
	for (i = 0; i < nents; i++) {
		const struct entry *e = &ents[i];
		unsigned long addr = e->key.bucket ? (e->key.bucket - 1) << shift : 0;
		long long all = 0;

		if ((int)e->key.tgid != p->pid || e->key.slot != slot)
			continue;
		/* before any fault: its own group */
		id = e->key.bucket ? group_of(p, level, addr, shift) : -1;
		for (k = 0; k < OT_NCLS; k++) {
			long long v = e->val.grow[k] + e->val.shrink[k];

			if (!v)
				continue;
			if (k != 2)
				all += v;
			c[n] = (struct cell){ id, k, e->key.who == OT_WHO_ONETP ? v : 0,
					      e->key.who == OT_WHO_REF ? v : 0, 0 };
			n++;
		}
		if (all)
			c[n++] = (struct cell){ id, -1, e->key.who == OT_WHO_ONETP ? all : 0,
						e->key.who == OT_WHO_REF ? all : 0, 0 };
	}
	for (i = 0; i < p->npages; i++)
		c[n++] = (struct cell){ group_of(p, level, p->pages[i], shift), -1, 0, 0, 1 };
	qsort(c, n, sizeof(*c), cell_cmp);
	mis[0] = mis[1] = mis[2] = 0;
	for (i = 0; i < n; i = j) {
		o = r = t = 0;
		for (j = i; j < n && c[j].id == c[i].id && c[j].k == c[i].k; j++) {
			o += c[j].o;
			r += c[j].r;
			t += c[j].t;
		}
		if (c[i].k >= 0) {
			mis[0] += llabs(o - r);
		} else {
			mis[1] += llabs(o - t);
			mis[2] += llabs(r - t);
		}
	}
	free(c);
	for (i = 0; i < 3; i++)
		mis[i] /= 2;
	return 0;
}

/* the slot of pid's live address space (its latest: ids grow), -1: none */
static int slot_of(struct onetp_bpf *skel, int pid, struct ot_mm *out)
{
	struct ot_mm m;
	__u64 best = 0;
	int slot, found = -1;

	for (slot = 0; slot < OT_MMS; slot++) {
		__u32 s = slot;

		if (bpf_map__lookup_elem(skel->maps.mms, &s, sizeof(s), &m, sizeof(m), 0))
			continue;
		if ((int)m.tgid == pid && m.ready == 1 && m.id > best) {
			best = m.id;
			found = slot;
			*out = m;
		}
	}
	return found;
}

static int sync_run(struct onetp_bpf *skel, int pid)
{
	struct ot_mm m;
	__u64 args[2] = { pid, 0 };
	int slot = slot_of(skel, pid, &m);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

	if (slot < 0)
		return 0;
	args[1] = slot;
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.onetp_sync), &opts))
		return -errno;
	return 0;
}

static void compare(FILE *out, struct onetp_bpf *skel, const struct proc *p, int stop,
		    unsigned int shift)
{
	long long o[OT_NCLS] = {}, r[OT_NCLS] = {}, grow_r = 0, grow_o = 0, nofault_o = 0;
	long long nofault_r = 0, *vo, *vr, vmis = 0, tmis = 0, base_all = 0, unm_o = 0;
	struct ot_mm m;
	size_t i;
	int slot, k, v;
	char pre[48];

	snprintf(pre, sizeof(pre), "stop%d_pid%d_", stop, p->pid);
	slot = slot_of(skel, p->pid, &m);
	if (slot < 0) {
		printf("pid %d: no address space read (no fault seen?)\n", p->pid);
		fprintf(out, "%sread=0\n", pre);
		return;
	}
	vo = calloc(p->nvma + 1, sizeof(*vo));
	vr = calloc(p->nvma + 1, sizeof(*vr));
	if (!vo || !vr)
		return;
	for (i = 0; i < nents; i++) {
		const struct entry *e = &ents[i];
		unsigned long addr = e->key.bucket ? (e->key.bucket - 1) << shift : 0;
		int at = e->key.bucket ? vma_of(p, addr) : -1;

		if ((int)e->key.tgid != p->pid || e->key.slot != slot)
			continue;
		for (k = 0; k < OT_NCLS; k++) {
			long long net = e->val.grow[k] + e->val.shrink[k];

			if (e->key.who == OT_WHO_ONETP) {
				o[k] += net;
				grow_o += e->val.grow[k];
				if (!e->key.bucket)
					nofault_o += net;
				else if (at < 0)
					unm_o += net;
				if (k != 2)
					vo[at < 0 ? p->nvma : at] += net;
			} else {
				r[k] += net;
				grow_r += e->val.grow[k];
				if (!e->key.bucket)
					nofault_r += net;
				if (k != 2)
					vr[at < 0 ? p->nvma : at] += net;
			}
		}
	}
	printf("pid %d, stop %d (mm slot %d):\n", p->pid, stop, slot);
	printf("  %-6s %14s %14s %14s %12s %12s\n", "class", "/proc", "one-tp", "reference",
	       "one-tp-proc", "ref-proc");
	for (k = 0; k < OT_NCLS; k++) {
		long long ob = (m.base[k] + o[k]) * PAGE, rb = (m.base[k] + r[k]) * PAGE;

		base_all += m.base[k];
		printf("  %-6s %14lld %14lld %14lld %+12lld %+12lld\n", cls_name[k], p->status[k],
		       ob, rb, ob - p->status[k], rb - p->status[k]);
		fprintf(out, "%s%s_proc=%lld\n%s%s_onetp=%lld\n%s%s_ref=%lld\n%s%s_refheld=%lld\n",
			pre, cls_name[k], p->status[k], pre, cls_name[k], ob, pre, cls_name[k], rb,
			pre, cls_name[k], (long long)m.held[k] * PAGE);
	}
	printf("  baseline (first reading) %lld KiB; growth charged: one-tp %lld KiB, reference "
	       "%lld KiB; before any fault: one-tp %lld KiB, reference %lld KiB\n",
	       base_all * 4, grow_o * 4, grow_r * 4, nofault_o * 4, nofault_r * 4);
	fprintf(out, "%sgrowth_onetp=%lld\n%sgrowth_ref=%lld\n%snofault_onetp=%lld\n"
		"%snofault_ref=%lld\n%sbase=%lld\n", pre, grow_o * PAGE, pre, grow_r * PAGE, pre,
		nofault_o * PAGE, pre, nofault_r * PAGE, pre, base_all * PAGE);
	{
		static const char *const lv[3] = { "bucket", "2mib", "vma" };
		static const char *const what[3] = { "one-tp vs reference", "one-tp vs present",
						      "reference vs present" };
		static const char *const key[3] = { "onetp_ref", "onetp_truth", "ref_truth" };
		long long mis[3][3];
		int l, w;

		for (l = 0; l < 3; l++)
			if (misattributed(p, slot, l, shift, mis[l]))
				return;
		printf("  charged to another group, KiB (%% of the reference's growth):  %s\n",
		       shift == 12 ? "page / 2 MiB / mapping" : "bucket / 2 MiB / mapping");
		for (w = 0; w < 3; w++) {
			printf("    %-22s", what[w]);
			for (l = 0; l < 3; l++) {
				printf(" %9lld (%.3f%%)", mis[l][w] * 4,
				       grow_r ? 100.0 * mis[l][w] / grow_r : 0.0);
				fprintf(out, "%smis_%s_%s=%lld\n", pre, key[w], lv[l],
					mis[l][w] * PAGE);
			}
			printf("\n");
		}
		printf("    (present pages: %zu; the baseline's are in them, in no charge)\n",
		       p->npages);
	}
	/* against smaps: each mapping's Rss (the baseline's pages are in it too) */
	for (v = 0; v < p->nvma; v++) {
		long long d = vo[v] * PAGE - p->vmas[v].rss;

		tmis += d > 0 ? d : -d;
		d = vr[v] * PAGE - p->vmas[v].rss;
		vmis += d > 0 ? d : -d;
	}
	tmis += (vo[p->nvma] > 0 ? vo[p->nvma] : -vo[p->nvma]) * PAGE;
	vmis += (vr[p->nvma] > 0 ? vr[p->nvma] : -vr[p->nvma]) * PAGE;
	printf("  per mapping against smaps Rss (sum of |charged - Rss| / 2, baseline "
	       "included): one-tp %lld KiB, reference %lld KiB; one-tp outside any mapping "
	       "%lld KiB\n", tmis / 2048, vmis / 2048, unm_o * 4);
	fprintf(out, "%ssmaps_onetp=%lld\n%ssmaps_ref=%lld\n", pre, tmis / 2, pre, vmis / 2);
	for (v = 0; v <= p->nvma; v++) {
		long long rss = v < p->nvma ? p->vmas[v].rss : 0;

		if (vo[v] * PAGE == rss && vr[v] * PAGE == rss)
			continue;
		if (llabs(vo[v] * PAGE - rss) < (64 << 10) &&
		    llabs(vr[v] * PAGE - rss) < (64 << 10))
			continue;
		if (v < p->nvma)
			printf("    %lx-%lx %-24.24s Rss %9lld KiB  one-tp %9lld KiB  reference "
			       "%9lld KiB\n", p->vmas[v].start, p->vmas[v].end, p->vmas[v].name,
			       rss >> 10, vo[v] * 4, vr[v] * 4);
		else
			printf("    %-38s one-tp %9lld KiB  reference %9lld KiB\n",
			       "(no mapping now, or no fault)", vo[v] * 4, vr[v] * 4);
	}
	free(vo);
	free(vr);
}

/* the stopped children of pid (the fork case), into kids */
static int children(int pid, int *kids, int max)
{
	char path[64], buf[4096], st[512], *s, *c;
	int n = 0, kid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	for (s = strtok(buf, " \n"); s && n < max; s = strtok(NULL, " \n")) {
		kid = atoi(s);
		snprintf(path, sizeof(path), "/proc/%d/stat", kid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(st, sizeof(st), f) && (c = strrchr(st, ')')) && c[2] == 'T')
			kids[n++] = kid;
		fclose(f);
	}
	return n;
}

static int on_stop(FILE *out, struct onetp_bpf *skel, int pid, int stop, unsigned int shift)
{
	struct proc p[9] = {};
	int kids[8], n, i, err;

	n = children(pid, kids, 8);
	p[0].pid = pid;
	for (i = 0; i < n; i++)
		p[i + 1].pid = kids[i];
	n++;
	for (i = 0; i < n; i++) {
		err = proc_read(&p[i]);
		if (err) {
			fprintf(stderr, "onetp: reading /proc/%d: %s\n", p[i].pid, strerror(-err));
			return err;
		}
	}
	for (i = 0; i < n; i++) {
		err = sync_run(skel, p[i].pid);
		if (err) {
			fprintf(stderr, "onetp: the sync failed: %s\n", strerror(-err));
			return err;
		}
	}
	err = buckets_read(skel);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		compare(out, skel, &p[i], stop, shift);
		free(p[i].vmas);
		free(p[i].pages);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_program *progs[6] = {};
	struct bpf_link *links[6] = {};
	struct onetp_bpf *skel = NULL;
	int p[2] = { -1, -1 }, stats_fd = -1, err = 0, st = 0, i, nprogs = 0, opt;
	int sum = 0, nokernel = 0, exact, shift = -1, stops = 0, by_vma = 0;
	struct ot_diag d;
	FILE *out = NULL;
	pid_t pid = -1;
	char c = 0;

	while ((opt = getopt(argc, argv, "+m:KVs:")) != -1) {
		switch (opt) {
		case 'm':
			if (strcmp(optarg, "cpu") && strcmp(optarg, "sum"))
				goto usage;
			sum = !strcmp(optarg, "sum");
			break;
		case 'K':
			nokernel = 1;
			break;
		case 'V':
			by_vma = 1;
			break;
		case 's':
			shift = atoi(optarg);
			if (shift < 12 || shift > 40)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind < 4 || strcmp(argv[optind + 2], "--") ||
	    (strcmp(argv[optind], "time") && strcmp(argv[optind], "exact"))) {
usage:
		fprintf(stderr, "usage: onetp [-m cpu|sum] [-K] [-V] [-s SHIFT] time|exact OUTFILE "
			"-- CMD [ARGS...]\n");
		return 2;
	}
	exact = !strcmp(argv[optind], "exact");
	if (shift < 0)
		shift = exact ? 12 : 21;
	out = fopen(argv[optind + 1], "w");
	if (!out) {
		err = -errno;
		fprintf(stderr, "onetp: failed to open %s: %s\n", argv[optind + 1], strerror(-err));
		goto cleanup;
	}
	skel = onetp_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "onetp: failed to open the BPF object: %s\n", strerror(-err));
		goto cleanup;
	}
	skel->rodata->nr_cpus = libbpf_num_possible_cpus();
	skel->rodata->mode = sum ? OT_MODE_SUM : OT_MODE_CPU;
	skel->rodata->shift = shift;
	skel->rodata->by_vma = by_vma;
	if (!exact) {
		bpf_program__set_autoload(skel->progs.ref_fault, false);
		bpf_program__set_autoload(skel->progs.ref_fault_kernel, false);
		bpf_program__set_autoload(skel->progs.ref_rss, false);
	}
	if (nokernel) {
		bpf_program__set_autoload(skel->progs.onetp_fault_kernel, false);
		bpf_program__set_autoload(skel->progs.ref_fault_kernel, false);
	}
	err = onetp_bpf__load(skel);
	if (err) {
		fprintf(stderr, "onetp: failed to load the BPF programs: %s (needs root)\n",
			strerror(-err));
		goto cleanup;
	}
	progs[nprogs++] = skel->progs.onetp_fault;
	if (!nokernel)
		progs[nprogs++] = skel->progs.onetp_fault_kernel;
	progs[nprogs++] = skel->progs.onetp_fork;
	if (exact) {
		progs[nprogs++] = skel->progs.ref_fault;
		if (!nokernel)
			progs[nprogs++] = skel->progs.ref_fault_kernel;
		progs[nprogs++] = skel->progs.ref_rss;
	}
	if (pipe(p)) {
		err = -errno;
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (!pid) {
		close(p[1]);
		if (read(p[0], &c, 1) == 1) {
			close(p[0]);
			execvp(argv[optind + 3], argv + optind + 3);
			fprintf(stderr, "onetp: %s: %s\n", argv[optind + 3], strerror(errno));
		}
		_exit(127);
	}
	close(p[0]);
	p[0] = -1;
	err = target_add(skel, pid);
	if (err) {
		fprintf(stderr, "onetp: failed to add the target: %s\n", strerror(-err));
		goto cleanup;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		err = stats_fd;
		fprintf(stderr, "onetp: failed to enable BPF run-time stats: %s\n", strerror(-err));
		goto cleanup;
	}
	for (i = 0; i < nprogs; i++) {
		links[i] = bpf_program__attach(progs[i]);
		if (!links[i]) {
			err = -errno;
			fprintf(stderr, "onetp: failed to attach %s: %s\n",
				bpf_program__name(progs[i]), strerror(-err));
			goto cleanup;
		}
	}
	if (write(p[1], "x", 1) != 1) {
		err = -errno;
		goto cleanup;
	}
	close(p[1]);
	p[1] = -1;
	for (;;) {
		if (waitpid(pid, &st, WUNTRACED) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			fprintf(stderr, "onetp: failed to wait for %s: %s\n", argv[optind + 3],
				strerror(-err));
			goto cleanup;
		}
		if (!WIFSTOPPED(st))
			break;
		if (exact) {
			err = on_stop(out, skel, pid, ++stops, shift);
			if (err)
				goto cleanup;
		}
		kill(pid, SIGCONT);
	}
	pid = -1;
	if (exact && !stops)
		fprintf(stderr, "onetp: the command never stopped itself: nothing compared "
			"(touch: TOUCH_STOP=1)\n");
	err = diag_sum(skel, &d);
	if (err)
		goto cleanup;
	fprintf(out, "mode=onetp-%s\nprogs=%s%s\n", sum ? "sum" : "cpu",
		bpf_program__name(skel->progs.onetp_fault), nokernel ? "" : " onetp_fault_kernel");
	for (i = 0; i < nprogs && !err; i++)
		err = prog_print(out, progs[i]);
	if (err)
		goto cleanup;
	err = buckets_read(skel);
	if (err)
		goto cleanup;
	{
		long long anon = batches_sum(skel, 1);
		size_t j;

		for (j = 0; j < nents; j++)
			if (ents[j].key.who == OT_WHO_ONETP)
				anon += ents[j].val.grow[1] + ents[j].val.shrink[1];
		fprintf(out, "counted_faults=%llu\ncounted_rss=0\ncharged_anon_bytes=%lld\n",
			(unsigned long long)d.faults, anon * PAGE);
	}
	diag_print(out, &d);
	if (exact) {
		printf("diag: fast %llu slow %llu deferred %llu folds: one %llu guess %llu multi "
		       "%llu; sync %llu pages; bad %llu; reference events %llu (summed %llu)\n",
		       (unsigned long long)d.fast, (unsigned long long)d.slow,
		       (unsigned long long)d.deferred, (unsigned long long)d.fold_one,
		       (unsigned long long)d.fold_guess, (unsigned long long)d.fold_multi,
		       (unsigned long long)d.sync_pages, (unsigned long long)d.bad,
		       (unsigned long long)d.ref_events, (unsigned long long)d.ref_sums);
	}
	if (WIFEXITED(st))
		fprintf(out, "exit_code=%d\n", WEXITSTATUS(st));
	else
		fprintf(out, "exit_signal=%d\n", WTERMSIG(st));
	if (fflush(out))
		err = -errno;

cleanup:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	for (i = 0; i < 6; i++)
		bpf_link__destroy(links[i]);
	if (stats_fd >= 0)
		close(stats_fd);
	onetp_bpf__destroy(skel);
	if (out)
		fclose(out);
	free(ents);
	if (err)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
