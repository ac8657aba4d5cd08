// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF object of one observation: loaded and attached on a thread of its own while the
 * target is set up, the probes on the files it maps, and released in a child at the end
 * (each link costs an RCU grace period).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "collect/bpfmaps.h"
#include "collect/probes.h"
#include "kbtf.h"
#include "loader.h"
#include "preflight.h"
#include "session_int.h"
#include "memphase.skel.h"

int session_bpf__print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && env.verbose < 2)
		return 0;
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* Opens, configures and loads the object (s->skel, s->side): 0 or -errno (said). */
static int bpf_load(struct session *s)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct bpfmaps_config cc = {
		.stack_mode = s->env->stack_mode,
		.sample_bytes = s->env->sample_bytes,
		.max_samples = s->env->max_samples,
		.mappings = !s->env->no_mappings,
		.max_rss = s->env->max_rss,
		.ringbuf_kib = s->env->ringbuf_kib,
		/* origins are symbolized with the stacks: none without them */
		.origin_min = s->env->stack_mode != MP_STACKS_NONE ? s->env->origin_min : 0,
		.attach = s->env->mode == MODE_ATTACH,
	};
	struct kbtf kb = { .fd = -1 };
	struct loader_opts lo = { .phases = &s->phases, .cc = &cc };
	int err;

	/* MEMPHASE_VMLINUX_BTF for the CO-RE relocations; else the build's minimal BTF when
	 * this kernel is the build's (the kernel's own is not parsed then) */
	if (preflight__btf_overridden()) {
		oo.btf_custom_path = preflight__btf_path();
	} else {
		err = kbtf__open(&kb, preflight__btf_path());
		if (!err)
			oo.btf_custom_path = kb.path;
		if (s->env->verbose)
			fprintf(stderr, "memphase: kernel BTF: %s%s\n", !err ? "the build's (its "
				"minimal BTF is used)" : err == -ESTALE ? "not the build's (parsed)"
				: err == -ENOENT ? "this build has no minimal BTF (parsed)" :
				strerror(-err), err && err != -ESTALE && err != -ENOENT ? " (parsed)"
				: "");
	}
	s->skel = memphase_bpf__open_opts(&oo);
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "memphase: failed to open BPF object: %s\n", strerror(-err));
		kbtf__close(&kb);
		return err;
	}
	err = bpfmaps__configure(s->skel, &s->phases, &cc);
	if (err) {
		kbtf__close(&kb);
		return err;
	}
	lo.oo = &oo;
	lo.split = kb.fd >= 0;
	err = loader__load(s->skel, &lo, &s->side);
	/* the minimal BTF is read by the load */
	kbtf__close(&kb);
	if (err) {
		fprintf(stderr, "memphase: failed to load BPF programs: %s%s\n", strerror(-err),
			err == -EPERM ? " (needs root or CAP_BPF and CAP_PERFMON)" : "");
		return err;
	}
	return 0;
}

/* After the load: the programs attached (before any target is added). 0 or -errno (said). */
static int bpf_attach(struct session *s)
{
	int err;

	s->skel->bss->stop_on_map = s->env->mode == MODE_RUN;
	bpfmaps__reserve_unknown(s->skel, s->phases.nphases);
	/* the side object's programs are attached (loader.h) */
	err = memphase_bpf__attach(s->skel);
	if (err)
		fprintf(stderr, "memphase: failed to attach tracepoints: %s\n", strerror(-err));
	return err;
}

static void *bpf_load_thread(void *arg)
{
	struct session *s = arg;
	int err = bpf_load(s);

	pthread_mutex_lock(&s->load_lock);
	s->load_err = err;
	s->loaded = true;
	pthread_cond_broadcast(&s->load_cond);
	pthread_mutex_unlock(&s->load_lock);
	/* the links (a few ms), while the main thread sets up the collector */
	if (!err)
		s->attach_err = bpf_attach(s);
	return NULL;
}

/*
 * The load (tens of ms, most of it the kernel's verifier) starts on a thread as soon as the
 * phases are known, while the users, outputs and the command's child are set up;
 * session_bpf__loaded() waits for it, session_bpf__join() for the attach that follows on the same thread.
 * Signals go to the main thread (the thread blocks them). Without a thread, both happen
 * here.
 */
void session_bpf__begin(struct session *s)
{
	sigset_t all, old;

	pthread_mutex_init(&s->load_lock, NULL);
	pthread_cond_init(&s->load_cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->loading = !pthread_create(&s->load_th, NULL, bpf_load_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (s->loading)
		return;
	s->load_err = bpf_load(s);
	s->loaded = true;
	if (!s->load_err)
		s->attach_err = bpf_attach(s);
}

/* The load's result (0 or -errno, said): the objects can be used, their links may still be
 * in the making. */
int session_bpf__loaded(struct session *s)
{
	pthread_mutex_lock(&s->load_lock);
	while (!s->loaded)
		pthread_cond_wait(&s->load_cond, &s->load_lock);
	pthread_mutex_unlock(&s->load_lock);
	return s->load_err;
}

/* The load's and the attach's result (0 or -errno, said); idempotent. */
int session_bpf__join(struct session *s)
{
	if (s->loading) {
		pthread_join(s->load_th, NULL);
		s->loading = false;
	}
	return s->load_err ? s->load_err : s->attach_err;
}

/* The program named name, if it loaded (else NULL: not configured to). */
static struct bpf_program *prog_loaded(struct memphase_bpf *skel, const char *name)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(skel->obj, name);

	return prog && bpf_program__fd(prog) >= 0 ? prog : NULL;
}

/* After session_bpf__loaded(): the marker and allocation probes. 0 or -errno. */
int session_bpf__probes_start(struct session *s)
{
	struct probes_progs pp = {
		.marker = prog_loaded(s->skel, "handle_marker"),
		.marker_ret = prog_loaded(s->skel, "handle_marker_ret"),
		.alloc_entry = prog_loaded(s->skel, "handle_alloc_entry"),
		.alloc_return = prog_loaded(s->skel, "handle_alloc_return"),
	};

	s->probes = probes__new(&s->phases, &pp, s->fs, &s->user, s->env->verbose);
	if (!s->probes)
		return -ENOMEM;
	probes__set_allocs(s->probes, cuda_allocs, cuda_nallocs);
	return 0;
}

/* Whether fd is a BPF object or a perf event (what a BPF link may hold). */
static bool fd_is_bpf(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strncmp(target, "anon_inode:bpf", 14) ||
	       !strcmp(target, "anon_inode:[perf_event]");
}

/*
 * Releasing the links takes the kernel an RCU grace period per uprobe link and per
 * tracepoint (hundreds of ms in all, in whatever process closes the last descriptor). Once
 * the outputs are written and the summary printed, a child that keeps a copy of the BPF
 * descriptors only (no terminal, pipe, file or watchdog descriptor: nothing waits for it)
 * closes them after memphase has exited, so the shell gets control back at once. It is
 * named memphase-detach; no program or link outlives it.
 */
void session_bpf__release(struct memphase_bpf *skel)
{
	pid_t parent = getpid();
	sigset_t usr1, old;
	struct dirent *de;
	int fd, dfd, sig;
	DIR *d;

	fflush(stdout);
	fflush(stderr);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	switch (fork()) {
	case 0:
		break;
	default:
		/* memphase (or no child: the release stays in memphase) */
		sigprocmask(SIG_SETMASK, &old, NULL);
		return;
	}
	/* told when memphase has exited (checked after asking: it may be gone already) */
	prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0);
	prctl(PR_SET_NAME, "memphase-detach", 0, 0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	d = opendir("/proc/self/fd");
	if (!d)
		_exit(0);
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd != dfd && !fd_is_bpf(fd))
			close(fd);
	}
	closedir(d);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (getppid() == parent)
		sigwait(&usr1, &sig);
	/* memphase's watchdog has let held targets go by then; nothing more to hold or count
	 * until the links are gone, which exiting closes */
	if (skel)
		bpfmaps__drop_targets(skel);
	_exit(0);
}
