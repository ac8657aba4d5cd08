/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `memphase watch`: the supervisor. It finds the processes that match (--comm, --exe,
 * --cgroup: a /proc scan at start and every WATCH_RESCAN_S, and exec events from
 * bpf/watch.bpf.c in between; -p PID...: those), and runs one `memphase attach -p PID
 * --watched=START` child per process with that process's files in --out-dir
 * (COMM.PID.START.EXT). A child writes its files when its process exits (or is OOM-killed)
 * and exits; the supervisor reaps it and forgets the process. SIGINT, SIGTERM, SIGHUP or
 * --duration: every child is sent SIGTERM (it writes its files), waited for at most
 * WATCH_STOP_S, then memphase exits 0.
 *
 * Bounded: at most --max-procs children at once (more matches are skipped and counted), a
 * fixed table of them and of recently decided processes, nothing kept per process once its
 * child is reaped.
 *
 * Metrics (a later step): each child can be given `--metrics-textfile` into a private
 * directory of the supervisor (see child_exec() in watch.c, the one place that builds a
 * child's command line), and the supervisor's loop (loop() in watch.c, once per poll)
 * merges those files into its own exposition; a reaped child's file is removed with it.
 */
#ifndef __MP_WATCH_H
#define __MP_WATCH_H

#include "env.h"

#define WATCH_RESCAN_S	10	/* /proc is scanned again this often (missed execs, cgroup moves) */
#define WATCH_STOP_S	30	/* on stop, children get this long to write their files */

/* Runs until stopped; returns 0 or -errno, *status what memphase exits with. */
int watch__run(const struct env *e, int *status);

#endif
