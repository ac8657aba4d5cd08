// SPDX-License-Identifier: GPL-2.0
/* The build's minimal kernel BTF, when the running kernel is the build's (see kbtf.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kbtf.h"
#include "kbtf_data.h"


/* kbtf__on_load(): called once, at the next tp_btf program's load */
static void (*on_load)(void *ctx);
static void *on_load_ctx;

void kbtf__on_load(void (*fn)(void *ctx), void *ctx)
{
	on_load_ctx = ctx;
	__atomic_store_n(&on_load, fn, __ATOMIC_RELEASE);
}

/* Whether the running kernel's build id is the build's (false: unknown, or another). */
static bool build_id_matches(void)
{
	unsigned char notes[4096];
	const unsigned char *id;
	int len;

	if (!KBTF_BUILD_ID_LEN)
		return false;
	len = kbtf__kernel_build_id(notes, sizeof(notes), &id);
	return len == KBTF_BUILD_ID_LEN && !memcmp(id, kbtf_build_id, len);
}

/* Hashed where sysfs maps it (kbtf__hash_fd()): no copy, no fault per page. */
int kbtf__matches(const char *path)
{
	__u64 size = 0, hash = 0;
	struct stat st;
	int fd, err;

	if (!KBTF_SIZE)
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if ((__u64)st.st_size != KBTF_SIZE) {
		err = -ESTALE;
		goto cleanup;
	}
	if (!strcmp(path, KBTF_SYSFS) && build_id_matches()) {
		err = 0;
		goto cleanup;
	}
	err = kbtf__hash_fd(fd, &size, &hash);
	if (!err && (size != KBTF_SIZE || hash != KBTF_HASH))
		err = -ESTALE;
cleanup:
	close(fd);
	return err;
}

/*
 * The tp_btf and iter section handlers. Such a program is a tracing program whose target
 * is given by a BTF id of the kernel's: libbpf 1.1 looks it up in the kernel BTF it parses
 * for it, and parses that BTF for every object with a tracing program. Programs of these
 * handlers are raw tracepoint programs until their load (so the object needs no kernel
 * BTF) and become tracing programs with the build's id just before it; they attach as
 * tp_btf and iter programs do.
 */
static int attach_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts,
			  long cookie)
{
	const char *sec = bpf_program__section_name(prog);
	void (*fn)(void *ctx);
	const struct kbtf_attach *a;
	int err;

	/* the first tp_btf program's load: the object's maps exist */
	if (!strncmp(sec, "tp_btf/", 7)) {
		fn = __atomic_exchange_n(&on_load, NULL, __ATOMIC_ACQ_REL);
		if (fn)
			fn(on_load_ctx);
	}
	for (a = kbtf_attach; a->sec; a++) {
		if (strcmp(a->sec, sec))
			continue;
		err = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);
		if (err)
			return err;
		opts->expected_attach_type = strncmp(sec, "iter/", 5) ? BPF_TRACE_RAW_TP
								      : BPF_TRACE_ITER;
		opts->attach_btf_obj_fd = 0;
		opts->attach_btf_id = a->btf_id;
		return 0;
	}
	fprintf(stderr, "memphase: no BTF id of %s in the build\n", sec);
	return -ESRCH;
}

static int tp_btf_attach(const struct bpf_program *prog, long cookie, struct bpf_link **link)
{
	*link = bpf_program__attach_trace(prog);
	return *link ? 0 : -errno;
}

static int iter_attach(const struct bpf_program *prog, long cookie, struct bpf_link **link)
{
	*link = bpf_program__attach_iter(prog, NULL);
	return *link ? 0 : -errno;
}

int kbtf__open(struct kbtf *kb, const char *vmlinux)
{
	LIBBPF_OPTS(libbpf_prog_handler_opts, ho, .prog_prepare_load_fn = attach_prepare,
		    .prog_attach_fn = tp_btf_attach);
	LIBBPF_OPTS(libbpf_prog_handler_opts, io, .prog_prepare_load_fn = attach_prepare,
		    .prog_attach_fn = iter_attach);
	static int handler = -1, ihandler = -1;
	int err;

	kb->fd = -1;
	err = kbtf__matches(vmlinux);
	if (err)
		return err;
	kb->fd = memfd_create("memphase-btf", MFD_CLOEXEC);
	if (kb->fd < 0)
		return -errno;
	if (write(kb->fd, kbtf_min, sizeof(kbtf_min)) != (ssize_t)sizeof(kbtf_min)) {
		err = errno ? -errno : -EIO;
		goto cleanup;
	}
	snprintf(kb->path, sizeof(kb->path), "/proc/self/fd/%d", kb->fd);
	/* once per process: the handler stays for the objects' attach and later opens */
	if (handler < 0) {
		handler = libbpf_register_prog_handler("tp_btf/", BPF_PROG_TYPE_RAW_TRACEPOINT,
						       BPF_TRACE_RAW_TP, &ho);
		if (handler < 0) {
			err = handler;
			goto cleanup;
		}
	}
	if (ihandler < 0) {
		ihandler = libbpf_register_prog_handler("iter/", BPF_PROG_TYPE_RAW_TRACEPOINT,
							BPF_TRACE_RAW_TP, &io);
		if (ihandler < 0) {
			err = ihandler;
			goto cleanup;
		}
	}
	return 0;
cleanup:
	kbtf__close(kb);
	return err;
}

void kbtf__close(struct kbtf *kb)
{
	if (kb && kb->fd >= 0)
		close(kb->fd);
	if (kb)
		kb->fd = -1;
}
