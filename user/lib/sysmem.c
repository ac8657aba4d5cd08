// SPDX-License-Identifier: GPL-2.0
/* System memory, memory cgroup limits and memory PSI, from /proc and cgroupfs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/sysmem.h"

/* cgroup v1 says "no limit" with PAGE_COUNTER_MAX pages: anything this big is none */
#define CG_UNLIMITED	(1ULL << 62)

static const char *proc_dir(const char *proc_root)
{
	return proc_root ? proc_root : "/proc";
}

static const char *sys_dir(const char *sys_root)
{
	return sys_root ? sys_root : "/sys";
}

int sysmem__read_meminfo(struct sysmem *sm, const char *proc_root)
{
	unsigned long long v, mfree = 0, buffers = 0, cached = 0;
	bool total = false, avail = false;
	char fn[512], line[256], key[64];
	FILE *f;

	snprintf(fn, sizeof(fn), "%s/meminfo", proc_dir(proc_root));
	f = fopen(fn, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63[^:]: %llu", key, &v) != 2)
			continue;
		v *= 1024;	/* kB */
		if (!strcmp(key, "MemTotal")) {
			sm->mem_total = v;
			total = true;
		} else if (!strcmp(key, "MemAvailable")) {
			sm->mem_available = v;
			avail = true;
		} else if (!strcmp(key, "MemFree")) {
			mfree = v;
		} else if (!strcmp(key, "Buffers")) {
			buffers = v;
		} else if (!strcmp(key, "Cached")) {
			cached = v;
		} else if (!strcmp(key, "SwapTotal")) {
			sm->swap_total = v;
		} else if (!strcmp(key, "SwapFree")) {
			sm->swap_free = v;
		}
	}
	fclose(f);
	if (!total)
		return -EINVAL;
	/* kernels before 3.14 lack MemAvailable: a rough stand-in */
	if (!avail)
		sm->mem_available = mfree + buffers + cached;
	sm->have_meminfo = true;
	return 0;
}

/* One number from a cgroup file; "max" sets *max. 0 or -errno. */
static int read_u64(const char *dir, const char *name, __u64 *v, bool *max)
{
	char fn[SYSMEM_PATH_MAX + 320], buf[64];
	unsigned long long x;
	int err = 0;
	FILE *f;

	snprintf(fn, sizeof(fn), "%s/%s", dir, name);
	f = fopen(fn, "re");
	if (!f)
		return -errno;
	if (max)
		*max = false;
	if (!fgets(buf, sizeof(buf), f))
		err = -EIO;
	else if (max && !strncmp(buf, "max", 3))
		*max = true;
	else if (sscanf(buf, "%llu", &x) == 1)
		*v = x;
	else
		err = -EINVAL;
	fclose(f);
	return err;
}

/* A key of memory.stat, 0 when missing. */
static __u64 read_stat(const char *dir, const char *key1, const char *key2)
{
	char fn[SYSMEM_PATH_MAX + 320], k[64];
	unsigned long long v, v1 = 0, v2 = 0;
	bool have1 = false;
	FILE *f;

	snprintf(fn, sizeof(fn), "%s/memory.stat", dir);
	f = fopen(fn, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu", k, &v) == 2) {
		if (!strcmp(k, key1)) {
			v1 = v;
			have1 = true;
		} else if (key2 && !strcmp(k, key2)) {
			v2 = v;
		}
	}
	fclose(f);
	return have1 ? v1 : v2;
}

/* The memory cgroup's path from /proc/PID/cgroup: v1 memory controller first, then v2. */
static int cgroup_path(const char *proc_root, pid_t pid, char *v1, char *v2, size_t len)
{
	char fn[512], line[SYSMEM_PATH_MAX + 128], *c, *p, *tok, *save;
	FILE *f;

	v1[0] = v2[0] = '\0';
	snprintf(fn, sizeof(fn), "%s/%d/cgroup", proc_dir(proc_root), pid);
	f = fopen(fn, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* hierarchy-id:controller,list:path */
		c = strchr(line, ':');
		if (!c)
			continue;
		p = strchr(c + 1, ':');
		if (!p)
			continue;
		*p++ = '\0';
		if (c == line + 1 && line[0] == '0' && !c[1]) {
			snprintf(v2, len, "%s", p);
			continue;
		}
		for (tok = strtok_r(c + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (!strcmp(tok, "memory"))
				snprintf(v1, len, "%s", p);
	}
	fclose(f);
	return 0;
}

/* Reads one level; returns 0 when usage could be read. */
static int read_level(const char *dir, int version, __u64 *usage, bool *limited,
		      __u64 *limit, __u64 *inactive)
{
	bool max = false;
	int err;

	if (version == 1) {
		err = read_u64(dir, "memory.usage_in_bytes", usage, NULL);
		if (err)
			return err;
		if (read_u64(dir, "memory.limit_in_bytes", limit, NULL))
			max = true;
		*limited = !max && *limit < CG_UNLIMITED;
		*inactive = read_stat(dir, "total_inactive_file", "inactive_file");
		return 0;
	}
	err = read_u64(dir, "memory.current", usage, NULL);
	if (err)
		return err;
	if (read_u64(dir, "memory.max", limit, &max))
		max = true;
	*limited = !max && *limit < CG_UNLIMITED;
	*inactive = read_stat(dir, "inactive_file", NULL);
	return 0;
}

int sysmem__read_cgroup(struct sysmem *sm, const char *proc_root, const char *sys_root,
			pid_t pid)
{
	char v1[SYSMEM_PATH_MAX], v2[SYSMEM_PATH_MAX], base[SYSMEM_PATH_MAX];
	char dir[2 * SYSMEM_PATH_MAX + 8], path[SYSMEM_PATH_MAX], *slash;
	const char *sys = sys_dir(sys_root), *rel;
	__s64 best = 0;
	int version, err;
	bool leaf = true;

	sm->cg_version = 0;
	sm->cg_limited = false;
	sm->cg_path[0] = sm->cg_limit_path[0] = '\0';
	err = cgroup_path(proc_root, pid, v1, v2, sizeof(v1));
	if (err)
		return err;
	if (v1[0]) {
		version = 1;
		rel = v1;
		snprintf(base, sizeof(base), "%s/fs/cgroup/memory", sys);
	} else if (v2[0]) {
		version = 2;
		rel = v2;
		/* pure v2 mounts at fs/cgroup; hybrid systems at fs/cgroup/unified */
		snprintf(base, sizeof(base), "%s/fs/cgroup", sys);
		if (snprintf(dir, sizeof(dir), "%s%s/memory.current", base, rel) >=
		    (int)sizeof(dir))
			return 0;	/* a path no file can have */
		if (access(dir, R_OK)) {
			snprintf(base, sizeof(base), "%s/fs/cgroup/unified", sys);
			if (snprintf(dir, sizeof(dir), "%s%s/memory.current", base, rel) >=
			    (int)sizeof(dir) || access(dir, R_OK))
				return 0;	/* no memory controller for v2 */
		}
	} else {
		return 0;
	}
	/* outside our cgroup namespace: nothing we can read */
	if (rel[0] != '/' || strstr(rel, "/.."))
		return 0;
	snprintf(path, sizeof(path), "%s", rel);
	/* from the process's cgroup up to the root: the least room left binds */
	for (;;) {
		__u64 usage = 0, limit = 0, inactive = 0;
		bool limited = false;

		snprintf(dir, sizeof(dir), "%s%s", base, strcmp(path, "/") ? path : "");
		if (!read_level(dir, version, &usage, &limited, &limit, &inactive)) {
			if (leaf) {
				sm->cg_version = version;
				snprintf(sm->cg_path, sizeof(sm->cg_path), "%s", rel);
				sm->cg_usage = usage;
			}
			if (limited) {
				__s64 room = (__s64)limit - (__s64)usage + (__s64)inactive;

				if (!sm->cg_limited || room < best) {
					best = room;
					sm->cg_limited = true;
					sm->cg_limit = limit;
					sm->cg_limit_usage = usage;
					sm->cg_reclaimable = inactive;
					snprintf(sm->cg_limit_path, sizeof(sm->cg_limit_path), "%s",
						 path);
				}
			}
		} else if (leaf) {
			return 0;	/* the process's own cgroup is not readable */
		}
		leaf = false;
		if (!strcmp(path, "/"))
			break;
		slash = strrchr(path, '/');
		if (slash == path)
			path[1] = '\0';
		else
			*slash = '\0';
	}
	return 0;
}

int sysmem__read_psi(struct sysmem *sm, const char *proc_root)
{
	unsigned long long total;
	char fn[512], line[256], kind[8];
	double avg10;
	FILE *f;

	sm->have_psi = false;
	snprintf(fn, sizeof(fn), "%s/pressure/memory", proc_dir(proc_root));
	f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%7s avg10=%lf avg60=%*f avg300=%*f total=%llu", kind, &avg10,
			   &total) != 3)
			continue;
		if (!strcmp(kind, "some")) {
			sm->psi_some_avg10 = avg10;
			sm->psi_some_total_us = total;
			sm->have_psi = true;
		} else if (!strcmp(kind, "full")) {
			sm->psi_full_avg10 = avg10;
			sm->psi_full_total_us = total;
		}
	}
	fclose(f);
	return 0;
}

int sysmem__read(struct sysmem *sm, const char *proc_root, const char *sys_root, pid_t pid)
{
	int err;

	memset(sm, 0, sizeof(*sm));
	err = sysmem__read_meminfo(sm, proc_root);
	if (pid > 0)
		sysmem__read_cgroup(sm, proc_root, sys_root, pid);
	/* a kernel with psi=0 returns EOPNOTSUPP: the same as no PSI */
	sysmem__read_psi(sm, proc_root);
	return err;
}
