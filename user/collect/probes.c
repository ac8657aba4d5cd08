// SPDX-License-Identifier: GPL-2.0
/* Phase markers -> uprobes, file by file as the target maps them. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "lib/elfsym.h"
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
	struct bpf_program *prog;
	struct bpf_program *ret_prog;	/* return probes of markers with a ret_phase */
	const struct phases *ph;
	int verbose;
	unsigned int nfiles;
	struct file_id files[PROBES_MAX_FILES];
	unsigned int nlinks;
	struct bpf_link *links[PROBES_MAX_LINKS];
	bool user_found[PHASES_MAX_MARKERS];
	bool user_matched[PHASES_MAX_MARKERS];	/* a scanned file matched its binary */
};

struct probes *probes__new(struct bpf_program *prog, struct bpf_program *ret_prog,
			   const struct phases *ph, int verbose)
{
	struct probes *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->prog = prog;
	p->ret_prog = ret_prog;
	p->ph = ph;
	p->verbose = verbose;
	return p;
}

void probes__free(struct probes *p)
{
	unsigned int i;

	if (!p)
		return;
	for (i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
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

int probes__scan_file(struct probes *p, const char *name, const char *open_path)
{
	const char *path = open_path ? open_path : name;
	char esc[PATH_MAX], what[2 * PHASE_NAME_MAX];
	struct elfsym *es = NULL;
	struct stat st;
	unsigned int i;
	int n = 0, err;

	if (stat(path, &st))
		return -errno;
	if (file_seen(p, &st))
		return 0;
	if (!elfsym__is_elf(path))
		return 0;
	es = elfsym__open(path);
	if (!es)
		return -errno;
	for (i = 0; i < p->ph->nmarkers; i++) {
		const struct marker *mk = &p->ph->markers[i];
		LIBBPF_OPTS(bpf_uprobe_opts, opts);
		struct bpf_link *link;
		__u64 off;

		if (!phases__marker_matches(mk, name))
			continue;
		p->user_matched[i] |= mk->user;
		if (elfsym__lookup(es, mk->symbol, &off))
			continue;
		if (p->nlinks == PROBES_MAX_LINKS) {
			err = -E2BIG;
			goto cleanup;
		}
		opts.bpf_cookie = phases__cookie(mk);
		link = bpf_program__attach_uprobe_opts(p->prog, -1, path, off, &opts);
		if (!link) {
			err = -errno;
			fprintf(stderr, "memphase: failed to attach uprobe %s:%s: %s\n",
				utf8__esc_term(esc, sizeof(esc), name), mk->symbol, strerror(-err));
			continue;
		}
		p->links[p->nlinks++] = link;
		if (mk->ret_phase >= 0 && p->ret_prog && p->nlinks < PROBES_MAX_LINKS) {
			LIBBPF_OPTS(bpf_uprobe_opts, ropts, .retprobe = true);

			ropts.bpf_cookie = phases__ret_cookie(mk);
			link = bpf_program__attach_uprobe_opts(p->ret_prog, -1, path, off, &ropts);
			if (link)
				p->links[p->nlinks++] = link;
			else
				fprintf(stderr, "memphase: failed to attach uretprobe %s:%s: %s\n",
					utf8__esc_term(esc, sizeof(esc), name), mk->symbol,
					strerror(errno));
		}
		if (mk->user && shared_widely(name))
			fprintf(stderr, "memphase: marker %s is in %s: every process that maps it "
					"takes a uprobe trap on each call, not only the target\n",
				mk->symbol, utf8__esc_term(esc, sizeof(esc), name));
		if (mk->user)
			p->user_found[i] = true;
		if (p->verbose)
			fprintf(stderr, "memphase: marker %s:%s (+%#" PRIx64 ") -> phase %s\n",
				utf8__esc_term(esc, sizeof(esc), name), mk->symbol, (uint64_t)off,
				phases__marker_str(p->ph, mk, what, sizeof(what)));
		n++;
	}
	err = n;
cleanup:
	elfsym__close(es);
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
	struct procmaps *pm = procmaps__open(pid);
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
	struct procmaps *pm = procmaps__open(pid);
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
	return p->nlinks;
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
	struct elfsym *es;
	struct stat st;
	__u64 off;

	if (i >= p->ph->nmarkers || !mk->user || p->user_found[i])
		return 0;
	if (!mk->binary[0]) {
		snprintf(why, len, "no mapped object has the symbol");
	} else if (!strchr(mk->binary, '/')) {
		snprintf(why, len, p->user_matched[i] ? "not in the mapped %s" :
				   "no mapped object is named %s", mk->binary);
	} else if (stat(mk->binary, &st)) {
		snprintf(why, len, "%s: %s", mk->binary, strerror(errno));
	} else if (!elfsym__is_elf(mk->binary)) {
		snprintf(why, len, "%s is not an ELF file", mk->binary);
	} else {
		es = elfsym__open(mk->binary);
		if (es && elfsym__lookup(es, mk->symbol, &off))
			snprintf(why, len, "%s has no such symbol", mk->binary);
		else
			snprintf(why, len, "%s was never mapped by an observed process",
				 mk->binary);
		elfsym__close(es);
	}
	return 1;
}
