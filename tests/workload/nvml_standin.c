// SPDX-License-Identifier: GPL-2.0
/*
 * libnvidia-ml.so.1 stand-in: the NVML functions memphase calls, with their real names and
 * signatures (nvml.h), reporting the devices of the stand-in state file
 * ($MEMPHASE_STANDIN_GPU): total memory, used = other processes' + the listed processes'
 * that are still alive, free = total - used, and the listed processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "gpu_standin.h"

#define API __attribute__((visibility("default")))

typedef int nvmlReturn_t;
typedef struct standin_dev *nvmlDevice_t;

#define NVML_SUCCESS			0
#define NVML_ERROR_UNINITIALIZED	1
#define NVML_ERROR_INVALID_ARGUMENT	2
#define NVML_ERROR_INSUFFICIENT_SIZE	7
#define NVML_ERROR_DRIVER_NOT_LOADED	9

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

struct standin_dev {
	unsigned int index;
};

static struct standin_dev devs[STANDIN_MAX_DEVS] = { { 0 }, { 1 }, { 2 }, { 3 } };
static struct standin_state *st;

static int alive(unsigned int pid)
{
	return pid && (!kill((pid_t)pid, 0) || errno == EPERM);
}

API nvmlReturn_t nvmlInit_v2(void)
{
	const char *path = getenv(STANDIN_ENV);
	int fd;

	if (!path)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	st = mmap(NULL, sizeof(*st), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (st == MAP_FAILED || st->magic != STANDIN_MAGIC || st->ndevs > STANDIN_MAX_DEVS) {
		if (st != MAP_FAILED)
			munmap(st, sizeof(*st));
		st = NULL;
		return NVML_ERROR_DRIVER_NOT_LOADED;
	}
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlShutdown(void)
{
	if (!st)
		return NVML_ERROR_UNINITIALIZED;
	munmap(st, sizeof(*st));
	st = NULL;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!st)
		return NVML_ERROR_UNINITIALIZED;
	*count = st->ndevs;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (!st)
		return NVML_ERROR_UNINITIALIZED;
	if (index >= st->ndevs)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &devs[index];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	if (!st)
		return NVML_ERROR_UNINITIALIZED;
	snprintf(name, length, "Stand-in GPU %u", device->index);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	unsigned long long used;
	unsigned int i;

	if (!st)
		return NVML_ERROR_UNINITIALIZED;
	used = st->other_used[device->index];
	for (i = 0; i < STANDIN_MAX_PROCS; i++)
		if (st->procs[i].dev == device->index && alive(st->procs[i].pid))
			used += __atomic_load_n(&st->procs[i].used, __ATOMIC_ACQUIRE);
	memory->total = st->total[device->index];
	memory->used = used;
	memory->free = used < memory->total ? memory->total - used : 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
							 unsigned int *infoCount,
							 nvmlProcessInfo_t *infos)
{
	unsigned int i, n = 0, cap;

	if (!st)
		return NVML_ERROR_UNINITIALIZED;
	cap = *infoCount;
	for (i = 0; i < STANDIN_MAX_PROCS; i++) {
		const struct standin_proc *p = &st->procs[i];

		if (p->dev != device->index || !alive(p->pid) || !p->used)
			continue;
		if (n < cap && infos) {
			memset(&infos[n], 0, sizeof(infos[n]));
			infos[n].pid = p->pid;
			infos[n].usedGpuMemory = __atomic_load_n(&p->used, __ATOMIC_ACQUIRE);
		}
		n++;
	}
	*infoCount = n;
	return n > cap ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}
