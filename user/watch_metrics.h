/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `memphase watch --metrics ADDR:PORT` and `--metrics-textfile FILE`: the metrics of every
 * observed process as one exposition, with the supervisor's own series.
 *
 * The channel: each `memphase attach` child gets one end of a SOCK_SEQPACKET socket pair
 * (--metrics-fd) and sends its whole exposition (OpenMetrics; its series labelled with its
 * process's comm and pid) every second and once more at its end, after its files. The
 * supervisor keeps the last one per process (read back and checked by lib/promtext), and
 * merges them, each family's HELP and TYPE once, when a scrape asks (lib/httpd, polled
 * from watch's loop: non-blocking, bounded) and every WATCH_TEXTFILE_NS into the textfile
 * (report/outputs: atomically, as the invoking user).
 *
 * Why a socket and not a textfile per child in a directory of the supervisor's: a child
 * writes its files as the invoking user (lib/userfs), who cannot create a file in a
 * directory only root may enter; a directory that user may write in is one where they can
 * put what the supervisor (root) then reads and serves. The socket needs no file system
 * (nothing to clean after a crash; works under ProtectSystem=strict), carries only whole
 * expositions, and a child cannot reach another child's.
 *
 * A process's series stay one scrape interval after its child ended (the longest gap
 * between the last WATCH_GAPS scrapes, plus WATCH_LINGER_SLACK_NS; WATCH_LINGER_DEFAULT_NS
 * before two scrapes, e.g. with a textfile alone; at most WATCH_LINGER_MAX_NS), so that a
 * scrape sees its final figures, then go: the series are those of the processes alive.
 */
#ifndef __MP_WATCH_METRICS_H
#define __MP_WATCH_METRICS_H

#include <stdbool.h>
#include <linux/types.h>
#include "env.h"
#include "lib/userfs.h"

#define WATCH_TEXTFILE_NS	(5ULL * 1000000000)	/* the merged textfile's period */
#define WATCH_GAPS		8
#define WATCH_LINGER_SLACK_NS	(2ULL * 1000000000)
#define WATCH_LINGER_DEFAULT_NS	(60ULL * 1000000000)	/* Prometheus's default interval */
#define WATCH_LINGER_MAX_NS	(65ULL * 1000000000)

/* The supervisor's count, for its own series. */
struct watch_counts {
	__u64 matched, written, gone, skipped, failed;
	unsigned int observed;		/* attach children now */
};

struct watch_metrics;

/*
 * Listens (--metrics, bound as user) and opens the textfile (--metrics-textfile) as fs's
 * user. NULL with errno 0 when neither is asked; NULL with errno set after one line on
 * stderr.
 */
struct watch_metrics *watch_metrics__new(const struct env *e, struct userfs *fs,
					 const struct creds *user);
/*
 * A channel for a process about to get its attach child: its id (>= 0), and the child's
 * end in *child_fd (for --metrics-fd); -errno. m NULL: -1 and *child_fd -1.
 */
int watch_metrics__open(struct watch_metrics *m, int *child_fd);
/* After the fork: the supervisor's copy of the child's end is closed; !ok: all of it. */
void watch_metrics__forked(struct watch_metrics *m, int id, bool ok);
/* The child ended: what it sent last stays one scrape interval more. */
void watch_metrics__ended(struct watch_metrics *m, int id, __u64 now);
/* From watch's loop: channels read, scrapes answered, ended processes dropped, textfile. */
void watch_metrics__tick(struct watch_metrics *m, const struct watch_counts *c, __u64 now);
/* Are an ended process's final figures still waiting for a scrape (--metrics, scraped)? */
bool watch_metrics__lingering(const struct watch_metrics *m);
/* At the end: the textfile once more (every observation has sent its last). 0 or -errno. */
int watch_metrics__finish(struct watch_metrics *m, const struct watch_counts *c);
/* NULL-safe. */
void watch_metrics__free(struct watch_metrics *m);

#endif
