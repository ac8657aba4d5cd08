// SPDX-License-Identifier: GPL-2.0
/*
 * libcudart.so stand-in: the CUDA runtime API's memory functions with their real names and
 * signatures (cuda_runtime_api.h), calling the driver API as the real runtime does (so a
 * runtime call and the driver call inside it are one allocation, as memphase must see).
 */
#include <stddef.h>
#include <stdint.h>

#define API __attribute__((visibility("default"), noinline))

typedef int cudaError_t;
typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define cudaSuccess			0
#define cudaErrorInvalidValue		1
#define cudaErrorMemoryAllocation	2

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags);
CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags);
CUresult cuMemFreeHost(void *p);
CUresult cuMemHostUnregister(void *p);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);

static cudaError_t err_of(CUresult r)
{
	return r == 0 ? cudaSuccess : r == 2 ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
}

API cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	return err_of(cuMemHostAlloc(pHost, size, flags));
}

API cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return err_of(cuMemAllocHost_v2(ptr, size));
}

API cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	return err_of(cuMemHostRegister_v2(ptr, size, flags));
}

API cudaError_t cudaFreeHost(void *ptr)
{
	return err_of(cuMemFreeHost(ptr));
}

API cudaError_t cudaHostUnregister(void *ptr)
{
	return err_of(cuMemHostUnregister(ptr));
}

API cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	CUdeviceptr d = 0;
	CUresult r = cuMemAllocManaged(&d, size, flags);

	if (!r)
		*devPtr = (void *)(uintptr_t)d;
	return err_of(r);
}

API cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	CUdeviceptr d = 0;
	CUresult r = cuMemAlloc_v2(&d, size);

	if (!r)
		*devPtr = (void *)(uintptr_t)d;
	return err_of(r);
}

API cudaError_t cudaFree(void *devPtr)
{
	return err_of(cuMemFree_v2((CUdeviceptr)(uintptr_t)devPtr));
}
