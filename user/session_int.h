/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One observation's state, shared by the session's rooms (session.c: the lifecycle and the
 * poll loop; session_bpf.c: the BPF object's load, attach and release; session_target.c:
 * the command started or the process found; session_record.c: --record and its segments;
 * session_metrics.c: --metrics, the textfile and watch's channel). Not for other users.
 */
#ifndef __MP_SESSION_INT_H
#define __MP_SESSION_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <bpf/libbpf.h>
#include "collect/collector.h"
#include "collect/phases.h"
#include "collect/probes.h"
#include "collect/record.h"
#include "collect/target.h"
#include "collect/watchdog.h"
#include "env.h"
#include "guard.h"
#include "lib/creds.h"
#include "lib/httpd.h"
#include "lib/userfs.h"
#include "loader.h"
#include "model/model.h"
#include "report/live/live.h"
#include "report/outputs.h"

#define POLL_MS		100
#define REAP_POLL_MS	2	/* ... once the command's exit was seen, until it is reaped */
#define TEXTFILE_NS	(5ULL * 1000000000)	/* --metrics-textfile period */
#define CHANNEL_NS	(1ULL * 1000000000)	/* under watch: the exposition sent this often */
#define CHANNEL_FINAL_MS 2000			/* the last one may wait this long for room */
/* after the run: wait for one more scrape this much past the scrape interval, at most */
#define METRICS_LINGER_SLACK_NS	(2ULL * 1000000000)
#define METRICS_LINGER_MAX_NS	(65ULL * 1000000000)

struct session {
	const struct env *env;
	struct creds user;		/* who started memphase: files are theirs */
	struct creds run_as;		/* run: who the command runs as */
	struct userfs *fs;		/* file operations as user */
	int status;			/* memphase's exit status */
	struct memphase_bpf *skel;
	struct memphase_bpf *side;	/* the side program's object (loader.h), or NULL */
	/* bpf_load(), then bpf_attach(), on a thread from bpf_begin() to bpf_join() */
	pthread_t load_th;
	pthread_mutex_t load_lock;
	pthread_cond_t load_cond;
	bool loading;			/* the thread runs */
	bool loaded;			/* bpf_load() returned load_err */
	int load_err;
	int attach_err;
	struct probes *probes;
	struct phases phases;
	struct target target;
	struct model model;		/* written by the collector alone */
	struct collector *collector;
	struct guard *guard;
	struct outputs out;
	struct userfs_file rec_file;	/* --record: the recording */
	bool rec_open, rec_committed;
	struct recorder *rec;
	/* --record-keep: the older segments kept, oldest first, and the last one's number */
	struct userfs_file rec_old[RECORD_KEEP_MAX];
	unsigned int nrec_old, rec_seq;
	__u64 rec_preamble;		/* bytes the current segment began with */
	bool rec_rotate_failed;
	struct watchdog wd;		/* run mode: continues held targets if memphase dies */
	int stats_fd;			/* BPF_ENABLE_STATS while open */
	bool use_tui;
	struct live *live;
	__u64 kill_at;			/* SIGKILL the target at this time (0: no) */
	bool detached;			/* 'q': stop observing, leave the command running */
	struct httpd *httpd;		/* --metrics: served from the poll loop */
	int textfile;			/* --metrics-textfile: its registry index (-1: none) */
	__u64 textfile_next;		/* its next write while the run goes on */
	__u64 textfile_at;		/* ... the last one */
	__u64 textfile_read_at;		/* ... the last one a reader read (node_exporter) */
	__u64 textfile_gap_ns;		/* ... the time between the last two it read */
	struct output_self self;	/* memphase's own cost, for the metrics */
	__u64 scrapes;			/* GET /metrics answered */
	int channel;			/* under watch: the socket to it (--metrics-fd), -1 */
	__u64 channel_next;		/* ... the next exposition sent */
	bool channel_big;		/* ... one did not fit (said once) */
	__u64 scrape_ns, scrape_gap_ns;	/* the last one, and the time since the one before */
};

/* the signal that ends the run (0: none yet), set by the handler */
extern volatile sig_atomic_t session_exiting_sig;

/* session.c */
/* The collector started on the model, with the session's hooks (notices, the guard). */
int session__start_collector(struct session *s);

/* session_bpf.c */
/* libbpf's messages: only with -v, but for warnings and errors */
int session_bpf__print(enum libbpf_print_level level, const char *fmt, va_list args);
/* Loads and attaches s->skel on a thread of its own, while the rest is set up. */
void session_bpf__begin(struct session *s);
/* Waits for the load alone: 0 or its -errno. */
int session_bpf__loaded(struct session *s);
/* Waits for the load and the attach: 0 or the first -errno. */
int session_bpf__join(struct session *s);
/* The markers' and the allocation probes' uprobes on every file the targets map. */
int session_bpf__probes_start(struct session *s);
/* The object closed in a child that releases its links (an RCU grace period each). */
void session_bpf__release(struct memphase_bpf *skel);

/* session_target.c */
/* run: the command started stopped as the user; attach: the process found and checked. */
int session_target__run(struct session *s);
int session_target__attach(struct session *s);

/* session_record.c */
/* --record: opened as the user, its segments rotated at --record-max, kept or removed. */
int session_record__open(struct session *s);
int session_record__commit(struct session *s);
int session_record__rotate(struct session *s);
int session_record__close(struct session *s);

/* session_metrics.c */
/* What the exporters read now (the model, the run's own cost, the last reading). */
struct output_ctx session_metrics__ctx(struct session *s, __u64 now);
/* --metrics served from the poll loop; the textfile and watch's channel written as it goes. */
int session_metrics__open(struct session *s);
void session_metrics__send(struct session *s, __u64 now, bool final);
void session_metrics__tick(struct session *s, __u64 now);
/* After the run: one more scrape of the server and of the textfile, within a bound. */
void session_metrics__linger(struct session *s);

#endif
