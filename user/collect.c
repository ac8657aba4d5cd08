// SPDX-License-Identifier: GPL-2.0
/* Reading the BPF maps into the model. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect.h"
#include "memphase.skel.h"

static int ncpus(void)
{
	static int n;

	if (!n)
		n = libbpf_num_possible_cpus();
	return n;
}

static int collect_stats(struct memphase_bpf *skel, struct model *m)
{
	int fd = bpf_map__fd(skel->maps.stats), n = ncpus(), c, k, h, s;
	struct mp_phase_stats *v, sum;
	__u32 id;

	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (id = 0; id < m->nphases; id++) {
		if (bpf_map_lookup_elem(fd, &id, v))
			continue;
		memset(&sum, 0, sizeof(sum));
		for (c = 0; c < n; c++) {
			sum.faults += v[c].faults;
			sum.calls += v[c].calls;
			sum.entries += v[c].entries;
			for (k = 0; k < MP_NR_CLASSES; k++) {
				sum.growth[k] += v[c].growth[k];
				sum.shrink[k] += v[c].shrink[k];
			}
			sum.mmap_bytes += v[c].mmap_bytes;
			sum.munmap_bytes += v[c].munmap_bytes;
			sum.brk_bytes += v[c].brk_bytes;
			sum.brk_shrink_bytes += v[c].brk_shrink_bytes;
			for (h = 0; h < MP_NR_HISTS; h++)
				for (s = 0; s < MP_MAX_SLOTS; s++)
					sum.hist[h][s] += v[c].hist[h][s];
		}
		model__set_stats(m, id, &sum);
	}
	free(v);
	return 0;
}

static int collect_mms(struct memphase_bpf *skel, struct model *m)
{
	int fd = bpf_map__fd(skel->maps.mms);
	__u32 key, next, *prev = NULL;
	struct mp_mm mm;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &mm))
			continue;
		model__set_rss(m, mm.tgid, mm.rss, mm.peak, mm.peak_total);
	}
	return 0;
}

static int collect_drops(struct memphase_bpf *skel, struct model *m)
{
	int fd = bpf_map__fd(skel->maps.drops), n = ncpus(), c;
	struct mp_drops *v;
	__u32 zero = 0;
	__u64 lost = 0;

	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (!bpf_map_lookup_elem(fd, &zero, v)) {
		for (c = 0; c < n; c++) {
			lost += v[c].ringbuf + v[c].targets_full + v[c].mms_full;
		}
	}
	m->lost_kernel = lost;
	free(v);
	return 0;
}

int collect__maps(struct memphase_bpf *skel, struct model *m)
{
	int err;

	err = collect_stats(skel, m);
	if (!err)
		err = collect_mms(skel, m);
	if (!err)
		err = collect_drops(skel, m);
	return err;
}

int collect__add_target(struct memphase_bpf *skel, __u32 tgid, __u32 flags)
{
	struct mp_target t = { .flags = flags };

	if (bpf_map__update_elem(skel->maps.targets, &tgid, sizeof(tgid), &t, sizeof(t), BPF_ANY))
		return -errno;
	return 0;
}
