// SPDX-License-Identifier: GPL-2.0
/*
 * The target: run starts the command stopped as the user (after the observer is set in
 * BPF); attach finds the process and checks the user may ptrace it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "collect/bpfmaps.h"
#include "collect/collector.h"
#include "collect/target.h"
#include "collect/watchdog.h"
#include "loader.h"
#include "report/outputs.h"
#include "session_int.h"
#include "memphase.skel.h"

/*
 * Before any target is added: whose reach the observation stays within. Under sudo a
 * target the invoking user could no longer ptrace (a setuid exec...) stops being followed
 * (MP_EV_LEFT); root itself may observe anything.
 */
static void observer_set(struct session *s)
{
	struct mp_observer *o = &s->skel->bss->observer;

	o->uid = s->user.uid;
	o->gid = s->user.gid;
	o->check = !s->user.root;
}

/* Once the BPF objects are loaded: whose reach the targets stay in, the probes, the
 * collector. Run and attach alike; 0 or -errno. */
static int observe_begin(struct session *s)
{
	int err = session_bpf__loaded(s);

	if (err)
		return err;
	observer_set(s);
	err = session_bpf__probes_start(s);
	return err ? err : session__start_collector(s);
}

int session_target__run(struct session *s)
{
	const struct env *e = s->env;
	int fds[3], devnull, err;
	bool redirect;

	redirect = target__stdio(outputs__log_fd(&s->out), s->use_tui, s->out.to_stdout, fds,
				 &devnull);
	err = target__spawn(&s->target, e->argv, &s->run_as, redirect ? fds : NULL);
	/* the child has its copies */
	if (devnull >= 0)
		close(devnull);
	if (err)
		return err;
	err = observe_begin(s);
	if (!err)
		err = collector__begin_run(s->collector, s->target.pid, e->argv, s->target.exe);
	if (!err)
		err = watchdog__start(&s->wd, s->skel);
	/* the links are made before the command is one of the targets */
	if (!err)
		err = session_bpf__join(s);
	/* ignore the forked copy of memphase until it execs the command */
	if (!err)
		err = bpfmaps__add_target(s->skel, s->target.pid, MP_T_WAIT_EXEC);
	if (err)
		return err;
	/* scanned already: its exec need not hold the target */
	bpfmaps__seen_file(s->skel, s->target.exe);
	collector__started(s->collector);
	err = session_record__commit(s);
	if (err)
		return err;
	err = target__resume(&s->target);
	if (err)
		return err;
	/* it runs: its log is a log now */
	outputs__log_commit(&s->out);
	return 0;
}

int session_target__attach(struct session *s)
{
	const struct env *e = s->env;
	int err;

	err = target__attach(&s->target, e->pid);
	/* watch: the pid must still be the process that matched */
	if (!err && e->watched && s->target.start_time != e->watched_start)
		err = -ESRCH;
	if (!err)
		err = target__may_observe(&s->target, s->fs, &s->user);
	if (err == -ESRCH || err == -ECHILD) {
		/* watch counts these itself: a match that ended before its attach */
		if (!e->watched && err == -ECHILD)
			fprintf(stderr, "memphase: process %d has exited (a zombie its parent has "
					"not reaped): nothing to observe\n", e->pid);
		else if (!e->watched)
			fprintf(stderr, "memphase: no such process: %d\n", e->pid);
		return -ESRCH;
	}
	if (err)
		return err;
	if (target__is_kthread(e->pid)) {
		fprintf(stderr, "memphase: pid %d is a kernel thread: it has no user memory\n",
			e->pid);
		return -EINVAL;
	}
	err = observe_begin(s);
	if (!err)
		err = session_bpf__join(s);
	/* its events count once its sizes are read: the first of each class is growth */
	if (!err)
		err = bpfmaps__add_target(s->skel, e->pid, MP_T_SEEDING);
	if (!err) {
		int serr = bpfmaps__seed_attach(s->skel, s->side ? s->side->obj : NULL, e->pid);

		if (serr && s->env->verbose)
			fprintf(stderr, "memphase: sizes of %d not read at attach (%s): its first "
				"event of each class is its baseline\n", e->pid, strerror(-serr));
	}
	if (!err)
		err = collector__begin_attach(s->collector, e->pid, e->watched_exec);
	if (err)
		return err;
	if (!target__alive(&s->target)) {
		if (!e->watched)
			fprintf(stderr, "memphase: process %d exited while attaching\n", e->pid);
		return -ESRCH;
	}
	collector__started(s->collector);
	return session_record__commit(s);
}
