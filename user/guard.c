// SPDX-License-Identifier: GPL-2.0
/* The guard: --max-rss and --min-available end the target before the OOM killer does. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "collect/collector.h"
#include "guard.h"
#include "lib/utf8.h"
#include "lib/util.h"

struct guard {
	struct collector *c;
	struct guard_opts o;
	unsigned int seen_seq;		/* the last system memory reading checked */
	bool tripped;
	pid_t victim;
	__u64 kill_at;			/* SIGKILL the victim then (0: no) */
	__u64 killed_ns;		/* when the SIGKILL went (0: not yet) */
};

struct guard *guard__new(struct collector *c, const struct guard_opts *o)
{
	struct guard *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->c = c;
	g->o = *o;
	return g;
}

void guard__free(struct guard *g)
{
	free(g);
}

static const char *victim_comm(const struct model *m, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == (__u32)pid && m->procs[i].comm[0])
			return m->procs[i].comm;
	return "the target";
}

static void trip(struct guard *g, pid_t victim, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void trip(struct guard *g, pid_t victim, const char *fmt, ...)
{
	char why[256], msg[320];
	va_list ap;

	if (g->tripped)
		return;
	g->tripped = true;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	collector__stopped_by(g->c, why);
	g->victim = victim;
	kill(victim, SIGSTOP);
	snprintf(msg, sizeof(msg), "%s: ending %.16s (pid %d)", why,
		 victim_comm(collector__model(g->c), victim), victim);
	if (g->o.notice)
		g->o.notice(g->o.ctx, msg);
	if (g->o.snapshot)
		g->o.snapshot(g->o.ctx);
	kill(victim, SIGTERM);
	kill(victim, SIGCONT);
	g->kill_at = util__now_ns() + (__u64)(g->o.grace_s * 1e9) + 1;
}

void guard__max_rss(struct guard *g, pid_t pid, const char *comm)
{
	char b[24], c[64];

	trip(g, pid, "RSS of %s (pid %d) crossed --max-rss %s",
	     utf8__esc_term(c, sizeof(c), comm), pid, util__fmt_bytes(b, sizeof(b), g->o.max_rss));
}

/*
 * The memory left to the command is the system's MemAvailable, or its memory cgroup's
 * room below the limit (inactive file pages count as room) when that is less.
 */
static void check_available(struct guard *g, const struct sysmem *sm, pid_t victim)
{
	__u64 min = g->o.min_available;
	char b[3][24], cg[80];
	__s64 room;

	if (!sysmem__headroom(sm, SYSMEM_CGROUP, &room) &&
	    (!sm->have_meminfo || room < (__s64)sm->mem_available) && room < (__s64)min) {
		trip(g, victim, "the room left in memory cgroup %s (%s below its limit %s) fell "
		     "below --min-available %s", utf8__esc_term(cg, sizeof(cg), sm->cg_limit_path),
		     util__fmt_bytes(b[0], sizeof(b[0]), room > 0 ? room : 0),
		     util__fmt_bytes(b[1], sizeof(b[1]), sm->cg_limit),
		     util__fmt_bytes(b[2], sizeof(b[2]), min));
		return;
	}
	if (sm->have_meminfo && sm->mem_available < min)
		trip(g, victim, "MemAvailable %s fell below --min-available %s",
		     util__fmt_bytes(b[0], sizeof(b[0]), sm->mem_available),
		     util__fmt_bytes(b[1], sizeof(b[1]), min));
}

void guard__tick(struct guard *g, __u64 now_ns)
{
	const struct sysmem *sm;
	unsigned int seq;

	if (g->kill_at && now_ns >= g->kill_at) {
		kill(g->victim, SIGKILL);
		g->kill_at = 0;
		g->killed_ns = now_ns;
	}
	if (!g->o.min_available || g->tripped)
		return;
	sm = collector__sysmem(g->c, &seq);
	if (!sm || seq == g->seen_seq)
		return;
	g->seen_seq = seq;
	check_available(g, sm, model__largest_live(collector__model(g->c)));
}

static bool victim_exited(const struct model *m, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == (__u32)pid)
			return m->procs[i].exited;
	return true;
}

bool guard__ending(const struct guard *g, __u64 now_ns)
{
	if (g->kill_at)
		return true;
	/* after the SIGKILL, until its exit is seen (at most 1 s): the run's record of it */
	return g->killed_ns && now_ns - g->killed_ns < 1000000000ULL &&
	       !victim_exited(collector__model(g->c), g->victim);
}
