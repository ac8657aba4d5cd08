/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guard: --max-rss (BPF tells when a process crosses it) and --min-available (checked
 * here on every new system memory reading, whatever the view does). When it trips it
 * freezes the process, has the outputs written as things stand (so a machine that goes
 * down anyway keeps them), then sends SIGTERM and, after --grace, SIGKILL.
 */
#ifndef __MP_GUARD_H
#define __MP_GUARD_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct collector;
struct guard;

struct guard_opts {
	__u64 max_rss;			/* for the message; BPF does the watching */
	__u64 min_available;		/* 0: off */
	double grace_s;
	/* write every output from a snapshot of the model */
	void (*snapshot)(void *ctx);
	/* a line for the user */
	void (*notice)(void *ctx, const char *msg);
	void *ctx;
};

struct guard *guard__new(struct collector *c, const struct guard_opts *o);
void guard__free(struct guard *g);
/* BPF saw pid cross --max-rss. */
void guard__max_rss(struct guard *g, pid_t pid, const char *comm);
/* Checks --min-available on a new reading, and sends the SIGKILL when --grace is over. */
void guard__tick(struct guard *g, __u64 now_ns);
/* It is ending a process: the SIGKILL is still to come, or its exit still to be seen. */
bool guard__ending(const struct guard *g, __u64 now_ns);

#endif
