// SPDX-License-Identifier: GPL-2.0
/* OOM forensics: growth before a kill (from the timeline), cgroup OOM counters. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "model/oom.h"
#include "model/model.h"

void oom__ring_add(struct oom_ring *r, const struct model *m, __u64 ts_ns)
{
	unsigned int i = (r->head + r->len) % OOM_RING, id;
	int c;

	if (r->len == OOM_RING)
		r->head = (r->head + 1) % OOM_RING;
	else
		r->len++;
	r->snap[i].ts_ns = ts_ns;
	for (id = 0; id < MP_MAX_PHASES; id++)
		for (c = 0; c < MP_NR_CLASSES; c++)
			r->snap[i].growth[id][c] = m->stats[id].growth[c];
}

int oom__ring_window(const struct oom_ring *r, __u64 end_ns, double window_s,
		     __u64 growth[MP_MAX_PHASES][MP_NR_CLASSES], double *span_s)
{
	__u64 from = end_ns > window_s * 1e9 ? end_ns - (__u64)(window_s * 1e9) : 0;
	unsigned int k, a, b, id;
	int c;

	if (r->len < 2)
		return -ENODATA;
	b = (r->head + r->len - 1) % OOM_RING;
	a = r->head;
	for (k = 0; k < r->len; k++) {
		unsigned int i = (r->head + k) % OOM_RING;

		if (r->snap[i].ts_ns <= from)
			a = i;
	}
	for (id = 0; id < MP_MAX_PHASES; id++)
		for (c = 0; c < MP_NR_CLASSES; c++)
			growth[id][c] = r->snap[b].growth[id][c] - r->snap[a].growth[id][c];
	*span_s = (r->snap[b].ts_ns - r->snap[a].ts_ns) / 1e9;
	return 0;
}

/* Depth-first search of dir for a directory with inode ino; rel is dir's path. */
static int find_ino(const char *dir, const char *rel, __u64 ino, int depth, char *buf,
		    size_t len)
{
	char sub[PATH_MAX], subrel[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int err = -ENOENT;
	DIR *d;

	if (depth > 16)
		return -ENOENT;
	d = opendir(dir);
	if (!d)
		return -errno;
	while (err && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		snprintf(subrel, sizeof(subrel), "%s/%s", rel, de->d_name);
		if (stat(sub, &st))
			continue;
		if (st.st_ino == ino || st.st_ino == (ino & 0xffffffffULL)) {
			snprintf(buf, len, "%s", subrel);
			err = 0;
			break;
		}
		err = find_ino(sub, subrel, ino, depth + 1, buf, len);
	}
	closedir(d);
	return err;
}

int oom__cgroup_path(__u64 cg_id, const char *name, const char *sys_root, char *buf,
		     size_t len)
{
	static const char *const roots[] = { "fs/cgroup/memory", "fs/cgroup/unified",
					     "fs/cgroup" };
	const char *sys = sys_root ? sys_root : "/sys";
	char dir[PATH_MAX];
	unsigned int i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", sys, roots[i]);
		if (!find_ino(dir, "", cg_id, 0, buf, len))
			return 0;
	}
	snprintf(buf, len, "/.../%s", name);
	return -ENOENT;
}
