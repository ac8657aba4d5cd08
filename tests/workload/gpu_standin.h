/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shared state of the GPU stand-ins (libcuda.so.1, libnvidia-ml.so.1): a file named by
 * $MEMPHASE_STANDIN_GPU that the test writes (devices, their memory, what other processes
 * use), the stand-in driver updates (device memory of each process) and the stand-in NVML
 * reports. Test-only; no real GPU is involved.
 */
#ifndef __GPU_STANDIN_H
#define __GPU_STANDIN_H

#include <stdint.h>

#define STANDIN_ENV		"MEMPHASE_STANDIN_GPU"
#define STANDIN_MAGIC		0x6e69646e61747367ULL	/* "gstandin" */
#define STANDIN_MAX_DEVS	4
#define STANDIN_MAX_PROCS	16

struct standin_proc {
	uint32_t pid;		/* 0: free slot */
	uint32_t dev;
	uint64_t used;		/* device memory in bytes */
};

struct standin_state {
	uint64_t magic;
	uint32_t ndevs;
	uint32_t pad;
	uint64_t total[STANDIN_MAX_DEVS];
	uint64_t other_used[STANDIN_MAX_DEVS];	/* used by processes not listed */
	struct standin_proc procs[STANDIN_MAX_PROCS];
};

#endif
