// SPDX-License-Identifier: GPL-2.0
/*
 * CUDA's pinned and managed host memory, as data. The signatures are those of the CUDA
 * runtime (cuda_runtime_api.h) and driver (cuda.h) APIs; every function returns a 32-bit
 * status, 0 (cudaSuccess, CUDA_SUCCESS) on success:
 *   cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
 *   cudaMallocHost(void **ptr, size_t size)
 *   cudaHostRegister(void *ptr, size_t size, unsigned int flags)
 *   cudaFreeHost(void *ptr), cudaHostUnregister(void *ptr)
 *   cudaMallocManaged(void **devPtr, size_t size, unsigned int flags), cudaFree(void *devPtr)
 *   cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
 *   cuMemAllocHost(_v2)(void **pp, size_t bytesize)
 *   cuMemHostRegister(_v2)(void *p, size_t bytesize, unsigned int Flags)
 *   cuMemFreeHost(void *p), cuMemHostUnregister(void *p)
 *   cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
 *   cuMemFree(_v2)(CUdeviceptr dptr)
 * The runtime calls the driver: BPF counts the outermost probed call of a thread once.
 * cudaFree and cuMemFree also free device memory: BPF ignores pointers it never saw.
 */
#include <string.h>
#include "collect/cuda.h"

#define ALLOC_OUT(sym, cls)	{ sym, { MP_AOP_ALLOC, cls, 2, 1, MP_PTR_OUT, 1 } }
#define ALLOC_ARG(sym, cls)	{ sym, { MP_AOP_ALLOC, cls, 2, 1, MP_PTR_ARG, 1 } }
#define FREE_ARG(sym)		{ sym, { MP_AOP_FREE, 0, 0, 1, MP_PTR_ARG, 1 } }

const struct alloc_sym cuda_allocs[] = {
	/* runtime API (libcudart.so) */
	ALLOC_OUT("cudaHostAlloc", MP_ALLOC_PINNED),
	ALLOC_OUT("cudaMallocHost", MP_ALLOC_PINNED),
	ALLOC_ARG("cudaHostRegister", MP_ALLOC_PINNED),
	FREE_ARG("cudaFreeHost"),
	FREE_ARG("cudaHostUnregister"),
	ALLOC_OUT("cudaMallocManaged", MP_ALLOC_MANAGED),
	FREE_ARG("cudaFree"),
	/* driver API (libcuda.so.1) */
	ALLOC_OUT("cuMemHostAlloc", MP_ALLOC_PINNED),
	ALLOC_OUT("cuMemAllocHost", MP_ALLOC_PINNED),
	ALLOC_OUT("cuMemAllocHost_v2", MP_ALLOC_PINNED),
	ALLOC_ARG("cuMemHostRegister", MP_ALLOC_PINNED),
	ALLOC_ARG("cuMemHostRegister_v2", MP_ALLOC_PINNED),
	FREE_ARG("cuMemFreeHost"),
	FREE_ARG("cuMemHostUnregister"),
	ALLOC_OUT("cuMemAllocManaged", MP_ALLOC_MANAGED),
	FREE_ARG("cuMemFree"),
	FREE_ARG("cuMemFree_v2"),
};

const unsigned int cuda_nallocs = sizeof(cuda_allocs) / sizeof(cuda_allocs[0]);

_Static_assert(sizeof(cuda_allocs) / sizeof(cuda_allocs[0]) <= MP_MAX_ALLOC_RULES,
	       "more CUDA functions than MP_MAX_ALLOC_RULES");

void cuda__fill_cfg(struct mp_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cuda_nallocs; i++)
		cfg->allocs[i] = cuda_allocs[i].rule;
	cfg->nallocs = cuda_nallocs;
}
