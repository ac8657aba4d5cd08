/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VRAM from NVML, loaded at run time (no build dependency): dlopen("libnvidia-ml.so.1"),
 * or the library $MEMPHASE_NVML_LIB names (for tests: a stand-in). Each device's total,
 * used and free memory, and what the observed processes use on it
 * (nvmlDeviceGetComputeRunningProcesses).
 */
#ifndef __MP_NVML_H
#define __MP_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "model/gpu.h"

#define NVML_ENV_LIB	"MEMPHASE_NVML_LIB"
#define NVML_DEFAULT_LIB "libnvidia-ml.so.1"

struct nvml;

/* Loads and initialises NVML. NULL when there is none, with why ("libnvidia-ml.so.1: ..."). */
struct nvml *nvml__open(char *why, size_t len);
/* nvmlShutdown and dlclose; NULL-safe. */
void nvml__close(struct nvml *n);
/*
 * One reading: up to max devices into dev[], their count in *ndev. is_target(ctx, pid) says
 * whether a process using a device is observed; their usedGpuMemory adds to target_used.
 * 0 or -EIO (NVML failed: nothing filled in).
 */
int nvml__read(struct nvml *n, struct model_gpu_device *dev, unsigned int max,
	       unsigned int *ndev, bool (*is_target)(void *ctx, __u32 pid), void *ctx);

#endif
