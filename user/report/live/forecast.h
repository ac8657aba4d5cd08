/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The forecast of the live view: how fast the observed processes grow, how much room is
 * left, and when it runs out. Pure arithmetic over the model, its timeline and the last
 * system memory reading: no terminal, no I/O (tests/unit/test_forecast.c).
 *
 * - rate: the smoothed growth of anon + shmem + swap (what file-page reclaim cannot give
 *   back), from timeline__rate(); rate_all: the resident anon + file + shmem, for display;
 * - headrooms: the system's (MemAvailable + SwapFree) and the binding cgroup's (limit -
 *   usage + inactive file), from sysmem__headroom();
 * - time to OOM: each headroom / rate, and the nearer of the two. None when not growing
 *   (rate under TIMELINE_MIN_RATE: flat or shrinking), when no headroom is known, or once
 *   the command has ended (every observed process exited): it will not run out of memory.
 * - VRAM: the same for the GPU's memory, from the NVML readings in the model (the free
 *   memory of the devices the observed processes use / their VRAM growth rate).
 */
#ifndef __MP_FORECAST_H
#define __MP_FORECAST_H

#include <stdbool.h>
#include <linux/types.h>

struct model;
struct timeline;
struct sysmem;

struct forecast {
	bool have_rate;		/* anon + shmem + swap, bytes/s (signed) */
	double rate;
	bool have_rate_all;	/* anon + file + shmem, bytes/s (signed) */
	double rate_all;
	bool have_sys_room;	/* MemAvailable + SwapFree, bytes */
	__s64 sys_room;
	bool have_cg_room;	/* cgroup limit - usage + inactive file, bytes */
	__s64 cg_room;
	bool have_sys_oom;	/* seconds until sys_room is used up at rate */
	double sys_oom_s;
	bool have_cg_oom;	/* seconds until cg_room is used up at rate */
	double cg_oom_s;
	bool have_oom;		/* the nearer of the two */
	double oom_s;
	bool by_cgroup;		/* the nearer is the cgroup's */
	/* VRAM (NVML): the observed processes' growth, the free memory of their devices */
	bool have_vram;		/* an NVML reading */
	__u64 vram;		/* the observed processes' VRAM, last reading */
	__u64 vram_free;	/* free on the devices they use (all devices if none) */
	bool have_vram_rate;
	double vram_rate;	/* bytes/s over FORECAST_VRAM_WINDOW_S */
	bool have_vram_full;	/* seconds until vram_free is used up at vram_rate */
	double vram_full_s;
};

#define FORECAST_VRAM_WINDOW_S	5.0

/* Has the observed command ended (finished, or every process exited)? */
bool forecast__ended(const struct model *m);
/* Fills *fc as of now_ns; tl and sm may be NULL (not known yet: no rate, no room). */
void forecast__compute(struct forecast *fc, const struct model *m, const struct timeline *tl,
		       const struct sysmem *sm, __u64 now_ns);
/* Is an OOM projected within warn_s seconds (highlighted, and noticed once)? */
bool forecast__warn(const struct forecast *fc, double warn_s);

#endif
