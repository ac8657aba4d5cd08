// SPDX-License-Identifier: GPL-2.0
/*
 * The GPU side on hand-computed cases: pinned and managed bytes per phase from allocation
 * events, origins, VRAM readings per phase, the VRAM rate and time to full in the live
 * view's forecast, and the CUDA table (every function of the CUDA runtime and driver APIs
 * that pins, manages or frees host memory, with its argument layout).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "collect/cuda.h"
#include "model/model.h"
#include "report/live/forecast.h"

#define NS	1000000000ULL
#define MIB	(1ULL << 20)

static void ev(struct model_gpu *g, __u32 type, __u32 cls, __u32 phase, __u64 size)
{
	struct mp_alloc_event e = { .type = type, .pid = 42, .phase = phase, .size = size,
				    .cls = cls };

	model_gpu__on_event(g, &e);
}

TEST(gpu_pinned_per_phase)
{
	static struct model m;
	struct model_gpu *g = &m.gpu;

	model__init(&m, 42, 0);
	ev(g, MP_EV_ALLOC, MP_ALLOC_PINNED, 1, 8 * MIB);
	ev(g, MP_EV_ALLOC, MP_ALLOC_PINNED, 2, 16 * MIB);
	ev(g, MP_EV_ALLOC, MP_ALLOC_MANAGED, 2, 4 * MIB);
	ev(g, MP_EV_FREE, MP_ALLOC_PINNED, 3, 8 * MIB);
	ev(g, MP_EV_ALLOC, MP_ALLOC_PINNED, 3, 2 * MIB);
	ev(g, MP_EV_ALLOC, 7, 3, 1);			/* no such class: ignored */
	ev(g, MP_EV_ALLOC, MP_ALLOC_PINNED, MP_MAX_PHASES, 1);	/* no such phase */
	ASSERT_EQ(g->alloc_bytes[MP_ALLOC_PINNED][1], 8 * MIB, "load");
	ASSERT_EQ(g->alloc_bytes[MP_ALLOC_PINNED][2], 16 * MIB, "context");
	ASSERT_EQ(g->alloc_bytes[MP_ALLOC_PINNED][3], 2 * MIB, "prompt");
	ASSERT_EQ(g->free_bytes[MP_ALLOC_PINNED][3], 8 * MIB, "freed in prompt");
	ASSERT_EQ(g->alloc_bytes[MP_ALLOC_MANAGED][2], 4 * MIB, "managed apart");
	ASSERT_EQ(g->peak[MP_ALLOC_PINNED], (__s64)(24 * MIB), "peak before the free");
	ASSERT_EQ(g->current[MP_ALLOC_PINNED], (__s64)(18 * MIB), "held");
	ASSERT_EQ(g->allocs[MP_ALLOC_PINNED][3], 1, "calls");

	model_gpu__origin(g, MP_ALLOC_PINNED, 1, "a < main", 8 * MIB);
	model_gpu__origin(g, MP_ALLOC_PINNED, 1, "a < main", 8 * MIB);
	model_gpu__origin(g, MP_ALLOC_PINNED, 2, "a < main", 1);
	ASSERT_EQ(g->norigins, 2, "merged by class, phase, callers");
	ASSERT_EQ(g->origins[0].bytes, 16 * MIB, "bytes");
	ASSERT_EQ(g->origins[0].calls, 2, "calls");
	model__free(&m);
}

static void reading(struct model *m, __u32 phase, __u64 t, __u64 target, __u64 free)
{
	struct model_gpu_device d[2] = {
		{ .index = 0, .total = 8192 * MIB, .used = 8192 * MIB - free, .free = free,
		  .target_used = target },
		{ .index = 1, .total = 4096 * MIB, .used = 0, .free = 4096 * MIB },
	};

	model_gpu__reading(&m->gpu, phase, t, d, 2);
}

TEST(gpu_vram_per_phase_and_forecast)
{
	static struct model m;
	struct forecast fc;
	__s64 rss[MP_NR_CLASSES] = {};
	int i;

	model__init(&m, 42, 0);
	model__set_rss(&m, 42, rss, rss, 0);
	forecast__compute(&fc, &m, NULL, NULL, NS);
	ASSERT_FALSE(fc.have_vram, "no reading, no VRAM");
	/* 100 ms apart, +10 MiB each: 100 MiB/s; the last one has 1000 MiB free on device 0 */
	for (i = 0; i <= 30; i++)
		reading(&m, i < 15 ? 1 : 2, NS + i * (NS / 10), i * 10 * MIB,
			1000 * MIB + (30 - i) * 10 * MIB);
	ASSERT_EQ(m.gpu.vram_phase_peak[1], 140 * MIB, "load's peak");
	ASSERT_EQ(m.gpu.vram_phase_first[2], 150 * MIB, "context's first");
	ASSERT_EQ(m.gpu.vram_peak, 300 * MIB, "peak");
	ASSERT_FALSE(m.gpu.vram_seen[3], "no reading in prompt");
	forecast__compute(&fc, &m, NULL, NULL, 4 * NS);
	ASSERT_TRUE(fc.have_vram && fc.have_vram_rate, "rate");
	ASSERT_EQ(fc.vram, 300 * MIB, "last");
	/* the device the target uses, not device 1's 4 GiB */
	ASSERT_EQ(fc.vram_free, 1000 * MIB, "free where the target is");
	ASSERT_TRUE(fabs(fc.vram_rate - 100.0 * MIB) < 1, "100 MiB/s over the window");
	ASSERT_TRUE(fc.have_vram_full && fabs(fc.vram_full_s - 10.0) < 1e-6,
		    "1000 MiB at 100 MiB/s: 10 s");
	/* flat: no time to full */
	reading(&m, 2, 5 * NS, 300 * MIB, 1000 * MIB);
	for (i = 1; i <= 60; i++)
		reading(&m, 2, 5 * NS + i * (NS / 10), 300 * MIB, 1000 * MIB);
	forecast__compute(&fc, &m, NULL, NULL, 11 * NS);
	ASSERT_TRUE(fc.have_vram_rate && !fc.have_vram_full, "not growing");
	/* ended: no projection */
	model__finish(&m, 12 * NS);
	forecast__compute(&fc, &m, NULL, NULL, 12 * NS);
	ASSERT_TRUE(fc.have_vram && !fc.have_vram_rate, "ended");
	model__free(&m);
}

static const struct alloc_sym *cuda_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < cuda_nallocs; i++)
		if (!strcmp(cuda_allocs[i].symbol, name))
			return &cuda_allocs[i];
	return NULL;
}

TEST(gpu_cuda_table)
{
	static const struct {
		const char *sym;
		__u32 op, cls, ptr_src;
	} want[] = {
		{ "cudaHostAlloc", MP_AOP_ALLOC, MP_ALLOC_PINNED, MP_PTR_OUT },
		{ "cudaMallocHost", MP_AOP_ALLOC, MP_ALLOC_PINNED, MP_PTR_OUT },
		{ "cudaHostRegister", MP_AOP_ALLOC, MP_ALLOC_PINNED, MP_PTR_ARG },
		{ "cudaFreeHost", MP_AOP_FREE, 0, MP_PTR_ARG },
		{ "cudaHostUnregister", MP_AOP_FREE, 0, MP_PTR_ARG },
		{ "cuMemHostAlloc", MP_AOP_ALLOC, MP_ALLOC_PINNED, MP_PTR_OUT },
		{ "cuMemAllocHost", MP_AOP_ALLOC, MP_ALLOC_PINNED, MP_PTR_OUT },
		{ "cuMemAllocHost_v2", MP_AOP_ALLOC, MP_ALLOC_PINNED, MP_PTR_OUT },
		{ "cuMemHostRegister", MP_AOP_ALLOC, MP_ALLOC_PINNED, MP_PTR_ARG },
		{ "cuMemHostRegister_v2", MP_AOP_ALLOC, MP_ALLOC_PINNED, MP_PTR_ARG },
		{ "cuMemFreeHost", MP_AOP_FREE, 0, MP_PTR_ARG },
		{ "cuMemHostUnregister", MP_AOP_FREE, 0, MP_PTR_ARG },
		{ "cudaMallocManaged", MP_AOP_ALLOC, MP_ALLOC_MANAGED, MP_PTR_OUT },
		{ "cuMemAllocManaged", MP_AOP_ALLOC, MP_ALLOC_MANAGED, MP_PTR_OUT },
	};
	struct mp_config cfg = {};
	unsigned int i;
	char name[80];

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct alloc_sym *a = cuda_find(want[i].sym);

		snprintf(name, sizeof(name), "%s", want[i].sym);
		if (!ASSERT_NEQ(a, NULL, name))
			continue;
		ASSERT_EQ(a->rule.op, want[i].op, name);
		ASSERT_EQ(a->rule.ptr_src, want[i].ptr_src, name);
		ASSERT_EQ(a->rule.ptr_arg, 1, name);	/* every one: the pointer comes first */
		ASSERT_EQ(a->rule.ok_zero, 1, name);	/* cudaSuccess, CUDA_SUCCESS */
		if (want[i].op == MP_AOP_ALLOC) {
			ASSERT_EQ(a->rule.cls, want[i].cls, name);
			ASSERT_EQ(a->rule.size_arg, 2, name);
		}
	}
	cuda__fill_cfg(&cfg);
	ASSERT_EQ(cfg.nallocs, cuda_nallocs, "nallocs");
	ASSERT_LE(cuda_nallocs, MP_MAX_ALLOC_RULES, "fits");
	for (i = 0; i < cuda_nallocs; i++) {
		ASSERT_EQ(memcmp(&cfg.allocs[i], &cuda_allocs[i].rule, sizeof(cfg.allocs[i])), 0,
			  cuda_allocs[i].symbol);
		ASSERT_TRUE(cfg.allocs[i].ptr_arg >= 1 && cfg.allocs[i].ptr_arg <= 6, "arg");
		ASSERT_TRUE(cfg.allocs[i].cls < MP_NR_ALLOC_CLS, "class");
	}
}
