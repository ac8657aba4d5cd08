// SPDX-License-Identifier: GPL-2.0
/* Checks before anything is loaded: each failure is one line on stderr. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include "preflight.h"
#include "lib/sysmem.h"
#include "lib/util.h"

static int check_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	static const int need[] = { CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE };
	unsigned int i;

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		int c = need[i];

		if (!(data[c / 32].effective & (1U << (c % 32)))) {
			fprintf(stderr, "memphase: needs root (or CAP_BPF, CAP_PERFMON and "
					"CAP_SYS_PTRACE): run it with sudo\n");
			return -EPERM;
		}
	}
	return 0;
}

const char *preflight__btf_path(void)
{
	const char *p = getenv("MEMPHASE_VMLINUX_BTF");

	return p && *p ? p : "/sys/kernel/btf/vmlinux";
}

static int check_btf(void)
{
	const char *p = preflight__btf_path();

	if (access(p, R_OK)) {
		fprintf(stderr, "memphase: kernel BTF not found at %s: the kernel needs "
				"CONFIG_DEBUG_INFO_BTF=y\n", p);
		return -ENOENT;
	}
	return 0;
}

/* libbpf resolves tracepoint ids through tracefs; mount it if nobody did. */
static int ensure_tracefs(void)
{
	if (!access("/sys/kernel/tracing/events", F_OK) ||
	    !access("/sys/kernel/debug/tracing/events", F_OK))
		return 0;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
		fprintf(stderr, "memphase: tracefs is not mounted at /sys/kernel/tracing and "
				"mounting it failed: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

/* A guard that would fire at once is a mistake in the command line. */
static int check_min_available(const struct env *e)
{
	struct sysmem sm = {};
	char b[2][24];

	if (!e->min_available || sysmem__read_meminfo(&sm, NULL) || !sm.have_meminfo ||
	    sm.mem_available >= e->min_available)
		return 0;
	fprintf(stderr, "memphase: MemAvailable is already %s, below --min-available %s\n",
		util__fmt_bytes(b[0], sizeof(b[0]), sm.mem_available),
		util__fmt_bytes(b[1], sizeof(b[1]), e->min_available));
	return -EINVAL;
}

int preflight__btf_overridden(void)
{
	return getenv("MEMPHASE_VMLINUX_BTF") != NULL;
}

int preflight__check(const struct env *e)
{
	int err;

	err = check_caps();
	if (!err)
		err = check_btf();
	if (!err)
		err = ensure_tracefs();
	if (!err)
		err = check_min_available(e);
	return err;
}
