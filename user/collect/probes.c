// SPDX-License-Identifier: GPL-2.0
/*
 * Phase markers -> uprobes, file by file as the target maps them. Where the kernel has
 * multi-uprobe links (6.6+), a file's markers are one link: detaching it waits for the
 * uprobes' RCU grace period once instead of once per uprobe (about 100 ms each here).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/asuser.h"
#include "lib/elfsym.h"
#include "lib/userfs.h"
#include "collect/probes.h"
#include "lib/utf8.h"
#include "lib/procmaps.h"

#define PROBES_MAX_FILES	512
#define PROBES_MAX_LINKS	1024

struct file_id {
	dev_t dev;
	ino_t ino;
};

struct probes {
	struct probes_progs pp;
	const struct phases *ph;
	int verbose;
	struct userfs *fs;		/* may the invoking user read a mapped file? */
	const struct creds *user;	/* ... who names the markers' binaries */
	unsigned int nfiles;
	struct file_id files[PROBES_MAX_FILES];
	bool multi;			/* the program attaches as multi-uprobe links */
	unsigned int nlinks;
	struct bpf_link *links[PROBES_MAX_LINKS];
	unsigned int nfds;
	int fds[2 * PROBES_MAX_FILES];	/* multi-uprobe links, entry and return per file */
	unsigned int nprobes;
	bool user_found[PHASES_MAX_MARKERS];
	bool user_matched[PHASES_MAX_MARKERS];	/* a scanned file matched its binary */
	/* the second kind: allocation probes (entry, and return for allocations) */
	const struct alloc_sym *allocs;
	unsigned int nallocs;
	unsigned int nalloc_links;		/* allocation functions probed */
	unsigned int nalloc_rets;		/* ... of which also at return */
};

struct probes *probes__new(const struct phases *ph, const struct probes_progs *pp,
			   struct userfs *fs, const struct creds *user, int verbose)
{
	struct probes *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->fs = fs;
	p->user = user;
	p->pp = *pp;
	p->multi = pp->marker &&
		   bpf_program__expected_attach_type(pp->marker) == PROBES_UPROBE_MULTI;
	p->ph = ph;
	p->verbose = verbose;
	return p;
}

/* BPF_LINK_CREATE's uprobe_multi member, as in the kernel's uapi since 6.6 */
struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad;
};

/* One link for n uprobes in path: its fd, or -errno. */
static int uprobe_multi_attach(int prog_fd, const char *path, const __u64 *offsets,
			       const __u64 *cookies, unsigned int n, bool ret)
{
	struct uprobe_multi_attr a = {
		.prog_fd = prog_fd,
		.multi_flags = ret ? 1 : 0,	/* BPF_F_UPROBE_MULTI_RETURN */
		.attach_type = PROBES_UPROBE_MULTI,
		.path = (__u64)(uintptr_t)path,
		.offsets = (__u64)(uintptr_t)offsets,
		.cookies = (__u64)(uintptr_t)cookies,
		.cnt = n,
	};
	int fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));

	return fd < 0 ? -errno : fd;
}

bool probes__multi_supported(void)
{
	static int supported = -1;
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = PROBES_UPROBE_MULTI);
	__u64 off = 0, cookie = 0;
	int fd, link;

	if (supported >= 0)
		return supported;
	/* a kernel without them refuses the attach type at load, or the link */
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &o);
	if (fd < 0) {
		supported = 0;
		return false;
	}
	/*
	 * A path that does not exist: where they exist the kernel looks it up (ENOENT) and
	 * creates no link (closing one costs an RCU grace period, tens of ms at start-up);
	 * elsewhere the attach type is refused first (EINVAL, or ENOTSUPP: 524)
	 */
	link = uprobe_multi_attach(fd, "/proc/self/memphase-probe-absent", &off, &cookie, 1,
				   false);
	supported = link >= 0 || (link != -EINVAL && link != -EOPNOTSUPP && link != -524);
	if (link >= 0)
		close(link);
	close(fd);
	return supported;
}

void probes__set_allocs(struct probes *p, const struct alloc_sym *syms, unsigned int n)
{
	p->allocs = syms;
	p->nallocs = n < MP_MAX_ALLOC_RULES ? n : MP_MAX_ALLOC_RULES;
}

void probes__free(struct probes *p)
{
	unsigned int i;

	if (!p)
		return;
	for (i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	for (i = 0; i < p->nfds; i++)
		close(p->fds[i]);
	free(p);
}

static bool file_seen(struct probes *p, const struct stat *st)
{
	unsigned int i;

	for (i = 0; i < p->nfiles; i++)
		if (p->files[i].dev == st->st_dev && p->files[i].ino == st->st_ino)
			return true;
	if (p->nfiles < PROBES_MAX_FILES) {
		p->files[p->nfiles].dev = st->st_dev;
		p->files[p->nfiles].ino = st->st_ino;
		p->nfiles++;
	}
	return false;
}

/* Libraries nearly every process maps: markers there cost the whole machine. */
static bool shared_widely(const char *path)
{
	static const char *const libs[] = { "libc.so", "libc-", "ld-linux", "libpthread.so",
					    "libstdc++.so", "libm.so", "libgcc_s.so" };
	const char *base = strrchr(path, '/');
	unsigned int i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(base, libs[i], strlen(libs[i])))
			return true;
	return false;
}

/* one uprobe per offset (no multi-uprobe links): 0 or -errno */
static int attach_single(struct probes *p, struct bpf_program *prog, const char *path,
			 const __u64 *offs, const __u64 *cookies, unsigned int n, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret);
	struct bpf_link *link;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (p->nlinks == PROBES_MAX_LINKS)
			return -E2BIG;
		opts.bpf_cookie = cookies[i];
		link = bpf_program__attach_uprobe_opts(prog, -1, path, offs[i], &opts);
		if (!link)
			return -errno;
		p->links[p->nlinks++] = link;
	}
	return 0;
}

static struct bpf_link *attach_one(struct probes *p, struct bpf_program *prog, const char *path,
				   __u64 off, __u64 cookie, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = ret);
	struct bpf_link *link;

	if (!prog) {
		errno = ENOENT;
		return NULL;
	}
	if (p->nlinks == PROBES_MAX_LINKS) {
		errno = E2BIG;
		return NULL;
	}
	link = bpf_program__attach_uprobe_opts(prog, -1, path, off, &opts);
	if (link)
		p->links[p->nlinks++] = link;
	return link;
}

/*
 * The allocation functions in one file: an entry probe each, and a return probe for
 * allocations (the pointer and the status are known at return). Returns how many
 * functions were probed.
 */
static int scan_allocs(struct probes *p, struct elfsym *es, const char *name, const char *path)
{
	char esc[PATH_MAX];
	unsigned int i;
	int n = 0, err;
	bool ok;

	for (i = 0; i < p->nallocs; i++) {
		const struct alloc_sym *a = &p->allocs[i];
		__u64 off;

		if (elfsym__lookup(es, a->symbol, &off))
			continue;
		ok = attach_one(p, p->pp.alloc_entry, path, off, i, false) != NULL;
		if (ok && a->rule.op == MP_AOP_ALLOC &&
		    !attach_one(p, p->pp.alloc_return, path, off, i, true)) {
			/* an entry without its return would leave the thread's call open */
			err = errno;
			bpf_link__destroy(p->links[--p->nlinks]);
			errno = err;
			ok = false;
		}
		if (!ok) {
			fprintf(stderr, "memphase: failed to attach uprobe %s:%s: %s\n",
				utf8__esc_term(esc, sizeof(esc), name), a->symbol,
				strerror(errno));
			continue;
		}
		if (p->verbose)
			fprintf(stderr, "memphase: allocation probe %s:%s (+%#" PRIx64 ")\n",
				utf8__esc_term(esc, sizeof(esc), name), a->symbol, (uint64_t)off);
		p->nalloc_links++;
		p->nalloc_rets += a->rule.op == MP_AOP_ALLOC;
		n++;
	}
	return n;
}

/* a file's entry (or return) probes: one multi-uprobe link, or one uprobe each; -errno */
static int attach_markers(struct probes *p, struct bpf_program *prog, const char *path,
			  const __u64 *offs, const __u64 *cookies, unsigned int n, bool ret)
{
	int fd;

	if (!prog)
		return -ENOENT;
	if (!p->multi)
		return attach_single(p, prog, path, offs, cookies, n, ret);
	if (p->nfds == 2 * PROBES_MAX_FILES)
		return -E2BIG;
	fd = uprobe_multi_attach(bpf_program__fd(prog), path, offs, cookies, n, ret);
	if (fd < 0)
		return fd;
	p->fds[p->nfds++] = fd;
	return 0;
}

/*
 * The file the kernel names (a mapping's path, or its map_files link), opened once: every
 * later read and the uprobes go through the descriptor (path: /proc/self/fd/N), so they
 * are of the file checked. -1 + errno; errno 0: nothing to scan (not a regular file,
 * seen already, or one the invoking user may not read).
 */
static int scan_open(struct probes *p, const char *open_path, const char *name, char *path,
		     size_t len)
{
	char esc[PATH_MAX];
	struct stat st;
	int fd;

	fd = open(open_path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	errno = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || file_seen(p, &st))
		goto skip;
	if (userfs__may_read(p->fs, fd)) {
		if (p->verbose)
			fprintf(stderr, "memphase: %s is not readable by you: not probed\n",
				utf8__esc_term(esc, sizeof(esc), name));
		goto skip;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
skip:
	close(fd);
	errno = 0;
	return -1;
}

int probes__scan_file(struct probes *p, const char *name, const char *open_path)
{
	char esc[PATH_MAX], what[2 * PHASE_NAME_MAX], path[64];
	__u64 offs[PHASES_MAX_MARKERS], cookies[PHASES_MAX_MARKERS];
	__u64 roffs[PHASES_MAX_MARKERS], rcookies[PHASES_MAX_MARKERS];
	unsigned int i, idx[PHASES_MAX_MARKERS], n = 0, nr = 0, nwant = 0, nmatch = 0;
	const char *want[PHASES_MAX_MARKERS + MP_MAX_ALLOC_RULES];
	unsigned int match[PHASES_MAX_MARKERS];
	struct elfsym *es = NULL;
	int err = 0, fd;

	fd = scan_open(p, open_path ? open_path : name, name, path, sizeof(path));
	if (fd < 0)
		return -errno;
	if (!elfsym__is_elf(path))
		goto cleanup;
	/* the names looked up here: most files (libc...) have none, and say so cheaply */
	for (i = 0; i < p->ph->nmarkers; i++) {
		const struct marker *mk = &p->ph->markers[i];

		if (!phases__marker_matches(mk, name))
			continue;
		p->user_matched[i] |= mk->user;
		want[nwant++] = mk->symbol;
		match[nmatch++] = i;
	}
	for (i = 0; i < p->nallocs; i++)
		want[nwant++] = p->allocs[i].symbol;
	if (!elfsym__may_define(path, want, nwant))
		goto cleanup;
	es = elfsym__open(path);
	if (!es) {
		err = -errno;
		goto cleanup;
	}
	/* the markers that name this file, found above */
	for (i = 0; i < nmatch; i++) {
		const struct marker *mk = &p->ph->markers[match[i]];

		if (elfsym__lookup(es, mk->symbol, &offs[n]))
			continue;
		cookies[n] = phases__cookie(mk);
		if (mk->ret_phase >= 0) {
			roffs[nr] = offs[n];
			rcookies[nr++] = phases__ret_cookie(mk);
		}
		idx[n++] = match[i];
	}
	/* the allocation functions (pinned host memory) in the same file */
	scan_allocs(p, es, name, path);
	elfsym__close(es);
	if (!n)
		goto cleanup;
	err = attach_markers(p, p->pp.marker, path, offs, cookies, n, false);
	if (!err && nr)
		err = attach_markers(p, p->pp.marker_ret, path, roffs, rcookies, nr, true);
	if (err) {
		fprintf(stderr, "memphase: failed to attach uprobes in %s: %s\n",
			utf8__esc_term(esc, sizeof(esc), name), strerror(-err));
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		const struct marker *mk = &p->ph->markers[idx[i]];

		if (mk->user && shared_widely(name))
			fprintf(stderr, "memphase: marker %s is in %s: every process that maps it "
					"takes a uprobe trap on each call, not only the target\n",
				mk->symbol, utf8__esc_term(esc, sizeof(esc), name));
		if (mk->user)
			p->user_found[idx[i]] = true;
		if (p->verbose)
			fprintf(stderr, "memphase: marker %s:%s (+%#" PRIx64 ") -> phase %s\n",
				utf8__esc_term(esc, sizeof(esc), name), mk->symbol,
				(uint64_t)offs[i], phases__marker_str(p->ph, mk, what, sizeof(what)));
	}
	p->nprobes += n;
	err = n;
cleanup:
	close(fd);
	return err;
}

static int scan_entry(struct probes *p, pid_t pid, const struct procmaps_entry *e)
{
	char link[96];
	struct stat st;

	if (e->path[0] != '/')
		return 0;	/* [heap], [vdso], anonymous */
	/* deleted files and files of other mount namespaces: open through map_files */
	snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, e->start,
		 e->end);
	if (e->deleted || stat(e->path, &st))
		return probes__scan_file(p, e->path, link);
	return probes__scan_file(p, e->path, NULL);
}

int probes__scan_mapping(struct probes *p, pid_t pid, __u64 addr)
{
	struct procmaps *pm = procmaps__open_as(pid, p->fs);
	struct procmaps_entry e;
	int err = -ENOENT;

	if (!pm)
		return -errno;
	while (procmaps__next(pm, &e) > 0) {
		if (addr < e.start || addr >= e.end)
			continue;
		err = scan_entry(p, pid, &e);
		break;
	}
	procmaps__close(pm);
	return err;
}

int probes__scan_pid(struct probes *p, pid_t pid)
{
	struct procmaps *pm = procmaps__open_as(pid, p->fs);
	struct procmaps_entry e;
	int n = 0, r;

	if (!pm)
		return -errno;
	while (procmaps__next(pm, &e) > 0) {
		if (e.perms[2] != 'x')
			continue;
		r = scan_entry(p, pid, &e);
		if (r > 0)
			n += r;
	}
	procmaps__close(pm);
	return n;
}

unsigned int probes__count(const struct probes *p)
{
	return p->nprobes;
}

unsigned int probes__alloc_count(const struct probes *p)
{
	return p->nalloc_links;
}


void probes__missing_user(const struct probes *p, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int i;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < p->ph->nmarkers; i++) {
		const struct marker *mk = &p->ph->markers[i];

		if (!mk->user || p->user_found[i] || used >= len)
			continue;
		used += snprintf(buf + used, len - used, "%s%s%s%s", used ? ", " : "",
				 mk->binary, mk->binary[0] ? ":" : "", mk->symbol);
	}
}

int probes__unmatched(const struct probes *p, unsigned int i, char *why, size_t len)
{
	const struct marker *mk = &p->ph->markers[i];
	char path[64], w[160];
	struct elfsym *es;
	__u64 off;
	int fd, err;

	if (i >= p->ph->nmarkers || !mk->user || p->user_found[i])
		return 0;
	if (!mk->binary[0]) {
		snprintf(why, len, "no mapped object has the symbol");
		return 1;
	}
	if (!strchr(mk->binary, '/')) {
		snprintf(why, len, p->user_matched[i] ? "not in the mapped %s" :
				   "no mapped object is named %s", mk->binary);
		return 1;
	}
	/* a path the user named: what it holds is asked as them */
	err = p->user ? asuser__open(p->user, mk->binary, O_RDONLY | O_NONBLOCK, &fd, w,
				     sizeof(w)) : -EACCES;
	if (err) {
		snprintf(why, len, "%s: %s", mk->binary, w[0] && p->user ? w : strerror(-err));
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!elfsym__is_elf(path)) {
		snprintf(why, len, "%s is not an ELF file", mk->binary);
	} else {
		es = elfsym__open(path);
		if (es && elfsym__lookup(es, mk->symbol, &off))
			snprintf(why, len, "%s has no such symbol", mk->binary);
		else
			snprintf(why, len, "%s was never mapped by an observed process",
				 mk->binary);
		elfsym__close(es);
	}
	close(fd);
	return 1;
}
