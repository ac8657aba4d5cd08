// SPDX-License-Identifier: GPL-2.0
/*
 * NVML through dlopen. The declarations below are NVML's ABI (nvml.h): functions return
 * nvmlReturn_t (0 NVML_SUCCESS), devices are opaque handles, sizes are bytes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/nvml.h"

#define NVML_SUCCESS			0
#define NVML_ERROR_INSUFFICIENT_SIZE	7
#define NVML_VALUE_NOT_AVAILABLE	(~0ULL)
#define NVML_MAX_PROCS			1024

typedef int nvml_ret;
typedef void *nvml_device;

struct nvml_memory {		/* nvmlMemory_t */
	unsigned long long total, free, used;
};

struct nvml_proc_v1 {		/* nvmlProcessInfo_v1_t */
	unsigned int pid;
	unsigned long long used;
};

struct nvml_proc_v2 {		/* nvmlProcessInfo_v2_t, nvmlProcessInfo_t of _v2 and _v3 */
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};

struct nvml {
	void *lib;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	nvml_ret (*count)(unsigned int *n);
	nvml_ret (*handle)(unsigned int i, nvml_device *d);
	nvml_ret (*memory)(nvml_device d, struct nvml_memory *m);
	nvml_ret (*name)(nvml_device d, char *name, unsigned int len);
	nvml_ret (*procs)(nvml_device d, unsigned int *n, void *infos);
	size_t proc_size;	/* sizeof the info struct procs() fills */
	void *buf;		/* NVML_MAX_PROCS infos */
};

static void *sym(struct nvml *n, const char *name, char *why, size_t len)
{
	void *p = dlsym(n->lib, name);

	if (!p && why[0] == '\0')
		snprintf(why, len, "NVML has no %s", name);
	return p;
}

struct nvml *nvml__open(char *why, size_t len)
{
	const char *path = getenv(NVML_ENV_LIB);
	struct nvml *n = calloc(1, sizeof(*n));
	const char *err;
	nvml_ret r;

	why[0] = '\0';
	if (!path || !path[0])
		path = NVML_DEFAULT_LIB;
	if (!n) {
		snprintf(why, len, "%s", strerror(ENOMEM));
		return NULL;
	}
	n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		err = dlerror();
		snprintf(why, len, "%s", err ? err : path);
		goto fail;
	}
	n->init = sym(n, "nvmlInit_v2", why, len);
	n->shutdown = sym(n, "nvmlShutdown", why, len);
	n->count = sym(n, "nvmlDeviceGetCount_v2", why, len);
	n->handle = sym(n, "nvmlDeviceGetHandleByIndex_v2", why, len);
	n->memory = sym(n, "nvmlDeviceGetMemoryInfo", why, len);
	n->name = dlsym(n->lib, "nvmlDeviceGetName");	/* optional */
	/* the newest process list the library exports */
	n->proc_size = sizeof(struct nvml_proc_v2);
	n->procs = dlsym(n->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!n->procs)
		n->procs = dlsym(n->lib, "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!n->procs) {
		n->procs = sym(n, "nvmlDeviceGetComputeRunningProcesses", why, len);
		n->proc_size = sizeof(struct nvml_proc_v1);
	}
	if (why[0])
		goto fail;
	n->buf = calloc(NVML_MAX_PROCS, n->proc_size);
	if (!n->buf) {
		snprintf(why, len, "%s", strerror(ENOMEM));
		goto fail;
	}
	r = n->init();
	if (r != NVML_SUCCESS) {
		snprintf(why, len, "nvmlInit_v2 failed (NVML error %d)", r);
		n->shutdown = NULL;
		goto fail;
	}
	return n;
fail:
	nvml__close(n);
	return NULL;
}

void nvml__close(struct nvml *n)
{
	if (!n)
		return;
	if (n->lib && n->shutdown && n->buf)
		n->shutdown();
	if (n->lib)
		dlclose(n->lib);
	free(n->buf);
	free(n);
}

/* What the observed processes use on one device (0 when NVML cannot say). */
static __u64 target_used(struct nvml *n, nvml_device d,
			 bool (*is_target)(void *ctx, __u32 pid), void *ctx)
{
	unsigned int cnt = NVML_MAX_PROCS, i;
	__u64 sum = 0;

	if (n->procs(d, &cnt, n->buf) != NVML_SUCCESS)
		return 0;
	if (cnt > NVML_MAX_PROCS)
		cnt = NVML_MAX_PROCS;
	for (i = 0; i < cnt; i++) {
		const char *at = (const char *)n->buf + i * n->proc_size;
		unsigned long long used;
		unsigned int pid;

		/* both layouts start with pid and usedGpuMemory */
		memcpy(&pid, at, sizeof(pid));
		memcpy(&used, at + offsetof(struct nvml_proc_v1, used), sizeof(used));
		if (used == NVML_VALUE_NOT_AVAILABLE || !is_target(ctx, pid))
			continue;
		sum += used;
	}
	return sum;
}

int nvml__read(struct nvml *n, struct model_gpu_device *dev, unsigned int max,
	       unsigned int *ndev, bool (*is_target)(void *ctx, __u32 pid), void *ctx)
{
	struct nvml_memory mem;
	unsigned int cnt, i, k = 0;
	nvml_device d;

	*ndev = 0;
	if (n->count(&cnt) != NVML_SUCCESS)
		return -EIO;
	for (i = 0; i < cnt && k < max; i++) {
		struct model_gpu_device *o = &dev[k];

		if (n->handle(i, &d) != NVML_SUCCESS || n->memory(d, &mem) != NVML_SUCCESS)
			continue;
		memset(o, 0, sizeof(*o));
		o->index = i;
		if (!n->name || n->name(d, o->name, sizeof(o->name)) != NVML_SUCCESS)
			snprintf(o->name, sizeof(o->name), "GPU %u", i);
		o->name[sizeof(o->name) - 1] = '\0';
		o->total = mem.total;
		o->used = mem.used;
		o->free = mem.free;
		o->target_used = target_used(n, d, is_target, ctx);
		k++;
	}
	*ndev = k;
	return 0;
}
