/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In run mode the BPF side holds a target (SIGSTOP) at new code until memphase has
 * probed it and continued it. If memphase dies (SIGKILL, a crash) between the two, the
 * target would stay stopped for good: a small watchdog process, holding only the maps
 * it needs, in a session of its own (a kill of memphase's process group does not reach
 * it), notices memphase's end and continues every target still held.
 */
#ifndef __MP_WATCHDOG_H
#define __MP_WATCHDOG_H

#include <sys/types.h>

struct memphase_bpf;

struct watchdog {
	pid_t pid;
	int fd;		/* write end: its closing is memphase's end */
};

/* Starts the watchdog (after the skeleton is loaded). 0 or -errno. */
int watchdog__start(struct watchdog *w, struct memphase_bpf *skel);
/* Ends it (it releases any hold first) and reaps it; NULL-safe fields. */
void watchdog__stop(struct watchdog *w);

#endif
