// SPDX-License-Identifier: GPL-2.0
/* /proc/meminfo, memory cgroups (v1, v2) and PSI, read from fake trees. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "harness.h"
#include "lib/sysmem.h"

#define KB(x)	((__u64)(x) * 1024)

static const char meminfo[] =
	"MemTotal:       24683652 kB\n"
	"MemFree:        22732964 kB\n"
	"MemAvailable:   23988188 kB\n"
	"Buffers:           55604 kB\n"
	"Cached:          1344108 kB\n"
	"SwapCached:            0 kB\n"
	"SwapTotal:       2097148 kB\n"
	"SwapFree:        1048576 kB\n"
	"HugePages_Total:       0\n";

/* Writes root/rel (creating directories) with printf-style content. */
static int put(const char *root, const char *rel, const char *fmt, ...)
{
	char path[1024], *p;
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f)
		return -errno;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	return 0;
}

static char *fake_root(void)
{
	char tmpl[] = "/tmp/memphase-sysmem-XXXXXX";
	char *d = mkdtemp(tmpl);

	return d ? strdup(d) : NULL;
}

static void rm_tree(const char *root)
{
	char cmd[1100];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		printf("cannot remove %s\n", root);
}

TEST(sysmem_meminfo)
{
	char *root = fake_root(), proc[512];
	struct sysmem sm;
	__s64 room = 0;

	if (!ASSERT_NEQ(root, NULL, "tmp"))
		return;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	put(root, "proc/meminfo", "%s", meminfo);
	if (!ASSERT_OK(sysmem__read(&sm, proc, root, 0), "read"))
		goto cleanup;
	ASSERT_TRUE(sm.have_meminfo, "have meminfo");
	ASSERT_EQ(sm.mem_total, KB(24683652), "MemTotal");
	ASSERT_EQ(sm.mem_available, KB(23988188), "MemAvailable");
	ASSERT_EQ(sm.swap_total, KB(2097148), "SwapTotal");
	ASSERT_EQ(sm.swap_free, KB(1048576), "SwapFree");
	ASSERT_EQ(sm.cg_version, 0, "no pid: no cgroup");
	ASSERT_FALSE(sm.have_psi, "no PSI file");
	if (ASSERT_OK(sysmem__headroom(&sm, SYSMEM_SYSTEM, &room), "system headroom"))
		ASSERT_EQ(room, (__s64)KB(23988188 + 1048576), "MemAvailable + SwapFree");
	ASSERT_EQ(sysmem__headroom(&sm, SYSMEM_CGROUP, &room), -ENODATA, "no cgroup headroom");
	/* an old kernel without MemAvailable */
	put(root, "proc/meminfo", "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\n"
				  "Cached: 200 kB\n");
	if (ASSERT_OK(sysmem__read(&sm, proc, root, 0), "read old"))
		ASSERT_EQ(sm.mem_available, KB(310), "estimated MemAvailable");
	/* no /proc/meminfo at all */
	snprintf(proc, sizeof(proc), "%s/nothing", root);
	ASSERT_EQ(sysmem__read(&sm, proc, root, 0), -ENOENT, "missing meminfo");
	ASSERT_EQ(sysmem__headroom(&sm, SYSMEM_SYSTEM, &room), -ENODATA, "unknown");
cleanup:
	rm_tree(root);
	free(root);
}

TEST(sysmem_psi)
{
	char *root = fake_root(), proc[512];
	struct sysmem sm;

	if (!ASSERT_NEQ(root, NULL, "tmp"))
		return;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	put(root, "proc/meminfo", "%s", meminfo);
	put(root, "proc/pressure/memory",
	    "some avg10=1.25 avg60=0.50 avg300=0.10 total=123456\n"
	    "full avg10=0.75 avg60=0.20 avg300=0.00 total=65432\n");
	if (!ASSERT_OK(sysmem__read(&sm, proc, root, 0), "read"))
		goto cleanup;
	ASSERT_TRUE(sm.have_psi, "have PSI");
	ASSERT_TRUE(sm.psi_some_avg10 > 1.24 && sm.psi_some_avg10 < 1.26, "some avg10");
	ASSERT_TRUE(sm.psi_full_avg10 > 0.74 && sm.psi_full_avg10 < 0.76, "full avg10");
	ASSERT_EQ(sm.psi_some_total_us, 123456, "some total");
	ASSERT_EQ(sm.psi_full_total_us, 65432, "full total");
	/* absent: not an error */
	snprintf(proc, sizeof(proc), "%s/proc/pressure/memory", root);
	unlink(proc);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	ASSERT_OK(sysmem__read_psi(&sm, proc), "no PSI is fine");
	ASSERT_FALSE(sm.have_psi, "no PSI");
cleanup:
	rm_tree(root);
	free(root);
}

TEST(sysmem_cgroup_v1)
{
	char *root = fake_root(), proc[512];
	struct sysmem sm;
	__s64 room = 0;

	if (!ASSERT_NEQ(root, NULL, "tmp"))
		return;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	put(root, "proc/meminfo", "%s", meminfo);
	put(root, "proc/42/cgroup", "9:name=systemd:/\n8:pids:/\n4:memory:/bench/run1\n"
				    "2:cpu,cpuacct:/\n0::/\n");
	/* root: no limit; bench: 1 GiB limit; run1: v1's "unlimited" */
	put(root, "fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	put(root, "fs/cgroup/memory/memory.usage_in_bytes", "%llu\n", 8ULL << 30);
	put(root, "fs/cgroup/memory/bench/memory.limit_in_bytes", "%llu\n", 1ULL << 30);
	put(root, "fs/cgroup/memory/bench/memory.usage_in_bytes", "%llu\n", 600ULL << 20);
	put(root, "fs/cgroup/memory/bench/memory.stat",
	    "cache 1000\ninactive_file 5\ntotal_inactive_file %llu\n", 100ULL << 20);
	put(root, "fs/cgroup/memory/bench/run1/memory.limit_in_bytes", "9223372036854771712\n");
	put(root, "fs/cgroup/memory/bench/run1/memory.usage_in_bytes", "%llu\n", 500ULL << 20);
	if (!ASSERT_OK(sysmem__read(&sm, proc, root, 42), "read"))
		goto cleanup;
	ASSERT_EQ(sm.cg_version, 1, "v1");
	ASSERT_STREQ(sm.cg_path, "/bench/run1", "path");
	ASSERT_EQ(sm.cg_usage, 500ULL << 20, "own usage");
	ASSERT_TRUE(sm.cg_limited, "the parent's limit applies");
	ASSERT_STREQ(sm.cg_limit_path, "/bench", "binding cgroup");
	ASSERT_EQ(sm.cg_limit, 1ULL << 30, "limit");
	ASSERT_EQ(sm.cg_limit_usage, 600ULL << 20, "its usage");
	ASSERT_EQ(sm.cg_reclaimable, 100ULL << 20, "total_inactive_file");
	if (ASSERT_OK(sysmem__headroom(&sm, SYSMEM_CGROUP, &room), "headroom"))
		ASSERT_EQ(room, (__s64)((1024 - 600 + 100) << 20), "limit - usage + inactive");

	/* the process's own, tighter limit binds */
	put(root, "fs/cgroup/memory/bench/run1/memory.limit_in_bytes", "%llu\n", 512ULL << 20);
	if (ASSERT_OK(sysmem__read(&sm, proc, root, 42), "read tighter")) {
		ASSERT_STREQ(sm.cg_limit_path, "/bench/run1", "own limit binds");
		ASSERT_EQ(sm.cg_limit, 512ULL << 20, "own limit");
		ASSERT_EQ(sm.cg_reclaimable, 0, "no memory.stat");
	}

	/* nothing limited anywhere */
	put(root, "fs/cgroup/memory/bench/run1/memory.limit_in_bytes", "9223372036854771712\n");
	put(root, "fs/cgroup/memory/bench/memory.limit_in_bytes", "9223372036854771712\n");
	if (ASSERT_OK(sysmem__read(&sm, proc, root, 42), "read unlimited")) {
		ASSERT_EQ(sm.cg_version, 1, "still v1");
		ASSERT_FALSE(sm.cg_limited, "no limit");
		ASSERT_EQ(sysmem__headroom(&sm, SYSMEM_CGROUP, &room), -ENODATA, "no headroom");
	}

	/* a pid that is gone */
	ASSERT_OK(sysmem__read(&sm, proc, root, 43), "gone: meminfo still read");
	ASSERT_EQ(sm.cg_version, 0, "no cgroup");
cleanup:
	rm_tree(root);
	free(root);
}

TEST(sysmem_cgroup_v2)
{
	char *root = fake_root(), proc[512];
	struct sysmem sm;
	__s64 room = 0;

	if (!ASSERT_NEQ(root, NULL, "tmp"))
		return;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	put(root, "proc/meminfo", "%s", meminfo);
	put(root, "proc/7/cgroup", "0::/user.slice/bench.scope\n");
	put(root, "fs/cgroup/cgroup.controllers", "cpu memory pids\n");
	put(root, "fs/cgroup/user.slice/memory.max", "max\n");
	put(root, "fs/cgroup/user.slice/memory.current", "%llu\n", 3ULL << 30);
	put(root, "fs/cgroup/user.slice/bench.scope/memory.max", "%llu\n", 2ULL << 30);
	put(root, "fs/cgroup/user.slice/bench.scope/memory.current", "%llu\n", 1ULL << 30);
	put(root, "fs/cgroup/user.slice/bench.scope/memory.stat",
	    "anon 1000\nfile 2000\nactive_file 7\ninactive_file %llu\n", 64ULL << 20);
	if (!ASSERT_OK(sysmem__read(&sm, proc, root, 7), "read"))
		goto cleanup;
	ASSERT_EQ(sm.cg_version, 2, "v2");
	ASSERT_STREQ(sm.cg_path, "/user.slice/bench.scope", "path");
	ASSERT_EQ(sm.cg_usage, 1ULL << 30, "memory.current");
	ASSERT_TRUE(sm.cg_limited, "limited");
	ASSERT_EQ(sm.cg_limit, 2ULL << 30, "memory.max");
	ASSERT_EQ(sm.cg_reclaimable, 64ULL << 20, "inactive_file");
	if (ASSERT_OK(sysmem__headroom(&sm, SYSMEM_CGROUP, &room), "headroom"))
		ASSERT_EQ(room, (__s64)((1ULL << 30) + (64ULL << 20)), "2G - 1G + 64M");

	/* "max": no limit */
	put(root, "fs/cgroup/user.slice/bench.scope/memory.max", "max\n");
	if (ASSERT_OK(sysmem__read(&sm, proc, root, 7), "read max")) {
		ASSERT_EQ(sm.cg_version, 2, "v2");
		ASSERT_FALSE(sm.cg_limited, "max is no limit");
	}
cleanup:
	rm_tree(root);
	free(root);
}

TEST(sysmem_cgroup_v2_hybrid)
{
	char *root = fake_root(), proc[512];
	struct sysmem sm;

	if (!ASSERT_NEQ(root, NULL, "tmp"))
		return;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	put(root, "proc/meminfo", "%s", meminfo);
	/* v2 mounted at fs/cgroup/unified, no v1 memory controller */
	put(root, "proc/9/cgroup", "1:cpu:/\n0::/job\n");
	put(root, "fs/cgroup/unified/job/memory.max", "%llu\n", 256ULL << 20);
	put(root, "fs/cgroup/unified/job/memory.current", "%llu\n", 16ULL << 20);
	if (ASSERT_OK(sysmem__read(&sm, proc, root, 9), "read")) {
		ASSERT_EQ(sm.cg_version, 2, "v2 under unified");
		ASSERT_EQ(sm.cg_limit, 256ULL << 20, "limit");
		ASSERT_EQ(sm.cg_usage, 16ULL << 20, "usage");
	}
	/* a v2 hierarchy without the memory controller: no memory cgroup */
	put(root, "proc/10/cgroup", "0::/other\n");
	put(root, "fs/cgroup/unified/other/cgroup.procs", "10\n");
	if (ASSERT_OK(sysmem__read(&sm, proc, root, 10), "read no controller"))
		ASSERT_EQ(sm.cg_version, 0, "no memory controller");
	rm_tree(root);
	free(root);
}
