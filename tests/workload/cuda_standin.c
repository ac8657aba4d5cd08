// SPDX-License-Identifier: GPL-2.0
/*
 * libcuda.so.1 stand-in: the CUDA driver API's memory functions with their real names and
 * signatures (cuda.h), without a GPU. Pinned host memory is a shared mapping of a memfd
 * named like the device the real driver maps (/dev/nvidiactl), populated as pinning does;
 * a registered range is faulted in; managed memory is a shared anonymous mapping; device
 * memory is bookkeeping in the stand-in state file ($MEMPHASE_STANDIN_GPU), which the
 * stand-in NVML reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "gpu_standin.h"

#define API __attribute__((visibility("default"), noinline))

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define CUDA_SUCCESS				0
#define CUDA_ERROR_INVALID_VALUE		1
#define CUDA_ERROR_OUT_OF_MEMORY		2
#define CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED	713

enum kind { K_FREE = 0, K_PINNED, K_REGISTERED, K_MANAGED, K_DEVICE };

#define MAX_ALLOCS	256

static struct alloc {
	uintptr_t ptr;
	size_t size;
	enum kind kind;
} allocs[MAX_ALLOCS];

static uint64_t next_dev_addr = 0x7e0000000000ULL;

static struct alloc *find(uintptr_t ptr, enum kind k1, enum kind k2)
{
	int i;

	for (i = 0; i < MAX_ALLOCS; i++)
		if (allocs[i].kind != K_FREE && allocs[i].ptr == ptr &&
		    (allocs[i].kind == k1 || allocs[i].kind == k2))
			return &allocs[i];
	return NULL;
}

static int remember(uintptr_t ptr, size_t size, enum kind k)
{
	int i;

	for (i = 0; i < MAX_ALLOCS; i++) {
		if (allocs[i].kind == K_FREE) {
			allocs[i].ptr = ptr;
			allocs[i].size = size;
			allocs[i].kind = k;
			return 0;
		}
	}
	return -1;
}

static void touch(void *p, size_t size)
{
	volatile char *c = p;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), off;

	for (off = 0; off < size; off += ps)
		c[off] = c[off];
}

/* The process's device memory in the state file (the test's "GPU"). */
static int device_account(int64_t delta)
{
	const char *path = getenv(STANDIN_ENV);
	struct standin_state *st;
	uint32_t pid = (uint32_t)getpid(), zero;
	int fd, i, err = -1;

	if (!path)
		return -1;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (st == MAP_FAILED)
		return -1;
	for (i = 0; i < STANDIN_MAX_PROCS; i++) {
		zero = 0;
		if (__atomic_load_n(&st->procs[i].pid, __ATOMIC_ACQUIRE) == pid ||
		    __atomic_compare_exchange_n(&st->procs[i].pid, &zero, pid, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			__atomic_add_fetch(&st->procs[i].used, (uint64_t)delta, __ATOMIC_ACQ_REL);
			err = 0;
			break;
		}
	}
	munmap(st, sizeof(*st));
	return err;
}

API CUresult cuInit(unsigned int flags)
{
	return CUDA_SUCCESS;
}

API CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	void *p;
	int fd;

	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	fd = memfd_create("nvidiactl", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (ftruncate(fd, (off_t)bytesize)) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	p = mmap(NULL, bytesize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	touch(p, bytesize);
	if (remember((uintptr_t)p, bytesize, K_PINNED)) {
		munmap(p, bytesize);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pp = p;
	return CUDA_SUCCESS;
}

API CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

API CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

API CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags)
{
	if (!p || !bytesize || find((uintptr_t)p, K_REGISTERED, K_REGISTERED))
		return CUDA_ERROR_INVALID_VALUE;
	touch(p, bytesize);
	if (remember((uintptr_t)p, bytesize, K_REGISTERED))
		return CUDA_ERROR_OUT_OF_MEMORY;
	return CUDA_SUCCESS;
}

API CUresult cuMemHostRegister(void *p, unsigned int bytesize, unsigned int flags)
{
	return cuMemHostRegister_v2(p, bytesize, flags);
}

API CUresult cuMemFreeHost(void *p)
{
	struct alloc *a = find((uintptr_t)p, K_PINNED, K_PINNED);

	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	munmap(p, a->size);
	a->kind = K_FREE;
	return CUDA_SUCCESS;
}

API CUresult cuMemHostUnregister(void *p)
{
	struct alloc *a = find((uintptr_t)p, K_REGISTERED, K_REGISTERED);

	if (!a)
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	a->kind = K_FREE;
	return CUDA_SUCCESS;
}

API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	void *p;

	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	p = mmap(NULL, bytesize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	touch(p, bytesize);
	if (remember((uintptr_t)p, bytesize, K_MANAGED)) {
		munmap(p, bytesize);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (device_account((int64_t)bytesize))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (remember((uintptr_t)next_dev_addr, bytesize, K_DEVICE)) {
		device_account(-(int64_t)bytesize);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = next_dev_addr;
	next_dev_addr += (bytesize + 0xfffff) & ~0xfffffULL;
	return CUDA_SUCCESS;
}

API CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct alloc *a = find((uintptr_t)dptr, K_MANAGED, K_DEVICE);

	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->kind == K_MANAGED)
		munmap((void *)(uintptr_t)dptr, a->size);
	else
		device_account(-(int64_t)a->size);
	a->kind = K_FREE;
	return CUDA_SUCCESS;
}
