// SPDX-License-Identifier: GPL-2.0
/*
 * User stack unwinding (DWARF CFI over a copied stack) and symbolization with libdwfl.
 *
 * Three layers:
 *  - uw_file: one per distinct executable file (device + inode as /proc/PID/maps shows
 *    them), shared by all processes (collect/unwind_file.c). Its function symbols are
 *    read here once, sorted by address.
 *  - uw_map: one executable mapping of a process, with the load bias of its file.
 *  - uw_proc: a process' mappings and, built when first needed, a Dwfl with one module per
 *    loaded image (dwfl_report_module + a find_elf callback handing out a reference to the
 *    shared Elf) and our thread callbacks attached (dwfl_attach_state): memory_read reads
 *    the copied stack of the sample being unwound, set_initial_registers its registers.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "lib/util.h"
#include "lib/elfsym.h"
#include "lib/procmaps.h"
#include "lib/userfs.h"
#include "collect/unwind.h"
#include "collect/unwind_int.h"


#define UW_REFRESH_NS		(100ULL * 1000 * 1000)	/* between refreshes on a miss */
#define UW_EXEC_NS		(1000ULL * 1000 * 1000)	/* after an exec: a refresh each miss */
#define UW_DELETED		" (deleted)"
#define UW_USER_END		0x0000800000000000ULL	/* [vsyscall] lies above */

/* x86-64 DWARF register numbers 0..16: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
static const int uw_dwarf_regs[17] = {
	MP_RAX, MP_RDX, MP_RCX, MP_RBX, MP_RSI, MP_RDI, MP_RBP, MP_RSP, MP_R8, MP_R9,
	MP_R10, MP_R11, MP_R12, MP_R13, MP_R14, MP_R15, MP_RIP,
};

struct uw_proc {
	struct uw_proc *next;
	pid_t pid;
	struct uw_map *maps;	/* sorted by start, not overlapping */
	size_t nmaps;
	Dwfl *dwfl;		/* NULL until needed, and after the maps changed */
	int dwfl_err;		/* building it failed: not retried until the maps change */
	bool gone;		/* /proc/PID/maps vanished: no more refreshes */
	__u64 refreshed_ns;	/* last snapshot (CLOCK_MONOTONIC) */
	__u64 exec_ns;		/* its last exec: its libraries are still being mapped */
	/* the sample being unwound, for the thread callbacks */
	const __u64 *regs;
	const unsigned char *stack;
	__u32 stack_len;
};

struct uw_walk {
	__u64 *ips;
	int n, max;
};

static __u64 uw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- symbols ---- */

/*
 * Reads the function symbols of mod (its .symtab, the debug file's, or .dynsym, as libdwfl
 * finds them) into f's table (lib/elfsym), by address in the file's own address space.
 */
static int uw_file_read_syms(struct uw_file *f, Dwfl_Module *mod)
{
	GElf_Addr addr, mod_bias;
	Dwarf_Addr sym_bias;
	GElf_Word shndx;
	const char *name;
	GElf_Sym sym;
	Elf *elf;
	int n, k, err;

	if (!dwfl_module_getelf(mod, &mod_bias))
		return -ENOENT;
	n = dwfl_module_getsymtab(mod);
	if (n < 0)
		return -ENOENT;
	f->syms = elfsym_table__new();
	if (!f->syms)
		return -ENOMEM;
	for (k = 1; k < n; k++) {
		elf = NULL;
		name = dwfl_module_getsym_info(mod, k, &sym, &addr, &shndx, &elf, &sym_bias);
		if (!name)
			continue;
		err = elfsym_table__add(f->syms, elf, name, &sym, shndx, addr - mod_bias);
		if (err)
			return err;
	}
	return elfsym_table__finish(f->syms) ? 0 : -ENOENT;
}

/* ---- processes ---- */

static struct uw_proc *uw_proc_find(struct unwinder *u, pid_t pid)
{
	struct uw_proc *p;

	for (p = u->procs[(unsigned int)pid % UW_PROC_BUCKETS]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

static void uw_maps_free(struct unwinder *u, struct uw_map *maps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uw_file_put(u, maps[i].file);
		free(maps[i].path);
	}
	free(maps);
}

static void uw_proc_free(struct unwinder *u, struct uw_proc *p)
{
	/* the Dwfl holds references to the files' Elf: end it first */
	if (p->dwfl)
		dwfl_end(p->dwfl);
	uw_maps_free(u, p->maps, p->nmaps);
	free(p);
}

static struct uw_map *uw_map_find(struct uw_proc *p, __u64 addr)
{
	size_t lo = 0, hi = p->nmaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

static int uw_map_cmp(const void *a, const void *b)
{
	const struct uw_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool uw_map_same(const struct uw_map *a, const struct uw_map *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->file == b->file && a->bias == b->bias && a->has_bias == b->has_bias;
}

/* one mapping of /proc/PID/maps; 1 if it is an executable user mapping, 0 if not, -errno */
static int uw_map_from(const struct procmaps_entry *e, struct uw_map *m)
{
	if (e->perms[2] != 'x' || e->start >= UW_USER_END || e->start >= e->end)
		return 0;
	memset(m, 0, sizeof(*m));
	m->start = e->start;
	m->end = e->end;
	m->pgoff = e->offset;
	m->dev = makedev(e->dev_major, e->dev_minor);
	m->ino = e->inode;
	m->deleted = e->deleted;
	m->path = strdup(e->path);
	return m->path ? 1 : -ENOMEM;
}

int unwinder__snapshot(struct unwinder *u, pid_t pid)
{
	struct uw_map *fresh = NULL, *merged = NULL, m;
	size_t nfresh = 0, cap = 0, nmerged = 0, i, j;
	struct procmaps *pm = NULL;
	struct procmaps_entry e;
	struct uw_proc *p = NULL;
	bool created = false, changed;
	int err = 0, r;

	if (!u || pid <= 0)
		return -EINVAL;
	p = uw_proc_find(u, pid);
	/* as the user: after an exec they could not ptrace, the kernel says no */
	pm = procmaps__open_as(pid, u->fs);
	if (!pm) {
		err = errno == ENOENT ? -ESRCH : -errno;
		goto cleanup;
	}
	while ((r = procmaps__next(pm, &e)) > 0) {
		r = uw_map_from(&e, &m);
		if (r < 0) {
			err = r;
			goto cleanup;
		}
		if (!r)
			continue;
		if (util__grow((void **)&fresh, &cap, nfresh, sizeof(*fresh))) {
			free(m.path);
			err = -ENOMEM;
			goto cleanup;
		}
		m.file = uw_file_get(u, pid, &m);
		if (m.file && m.file->elf)
			m.has_bias = uw_map_bias(m.file, &m, u->page_size, &m.bias);
		fresh[nfresh++] = m;
	}
	/* a zombie (or a kernel thread) has no mappings */
	if (r < 0 || !nfresh) {
		err = -ESRCH;
		goto cleanup;
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p) {
			err = -ENOMEM;
			goto cleanup;
		}
		p->pid = pid;
		created = true;
	}
	/* new mappings, plus the old ones that no new one overlaps */
	merged = calloc(nfresh + p->nmaps, sizeof(*merged));
	if (!merged) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < p->nmaps; i++) {
		for (j = 0; j < nfresh; j++)
			if (p->maps[i].start < fresh[j].end && fresh[j].start < p->maps[i].end)
				break;
		if (j == nfresh) {
			merged[nmerged++] = p->maps[i];
			p->maps[i].file = NULL;
			p->maps[i].path = NULL;
		}
	}
	memcpy(merged + nmerged, fresh, nfresh * sizeof(*fresh));
	nmerged += nfresh;
	nfresh = 0;
	qsort(merged, nmerged, sizeof(*merged), uw_map_cmp);

	changed = nmerged != p->nmaps;
	for (i = 0; !changed && i < nmerged; i++)
		changed = !uw_map_same(&merged[i], &p->maps[i]);
	if (changed && p->dwfl) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
	}
	if (changed)
		p->dwfl_err = 0;
	uw_maps_free(u, p->maps, p->nmaps);
	p->maps = merged;
	p->nmaps = nmerged;
	merged = NULL;
	p->gone = false;
	p->refreshed_ns = uw_now_ns();
	if (created) {
		p->next = u->procs[(unsigned int)pid % UW_PROC_BUCKETS];
		u->procs[(unsigned int)pid % UW_PROC_BUCKETS] = p;
		created = false;
	}
cleanup:
	if (err == -ESRCH && p && !created)
		p->gone = true;
	if (created)
		free(p);
	uw_maps_free(u, fresh, nfresh);
	free(merged);
	procmaps__close(pm);
	return err;
}

void unwinder__forget(struct unwinder *u, pid_t pid)
{
	struct uw_proc **pp;

	if (!u)
		return;
	for (pp = &u->procs[(unsigned int)pid % UW_PROC_BUCKETS]; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct uw_proc *p = *pp;

			*pp = p->next;
			uw_proc_free(u, p);
			return;
		}
	}
}

void unwinder__exec(struct unwinder *u, pid_t pid)
{
	struct uw_proc *p = u ? uw_proc_find(u, pid) : NULL;

	if (p) {
		p->refreshed_ns = 0;
		p->exec_ns = uw_now_ns();
	}
}

/*
 * Re-reads the maps of a live process after a miss, at most every UW_REFRESH_NS; in the
 * UW_EXEC_NS after an exec at each miss: the new image's libraries are mapped by its ld.so
 * with no event of their own (the files were seen before, in the image before), and a
 * refresh taken before libc was mapped would leave its frames unknown for 100 ms (under
 * load test_stacks' exec chain got [unknown]+0x7f... for 32 MiB).
 */
static bool uw_proc_refresh(struct unwinder *u, struct uw_proc *p)
{
	__u64 now = uw_now_ns();

	if (p->gone)
		return false;
	if (now - p->refreshed_ns < UW_REFRESH_NS &&
	    (!p->exec_ns || now - p->exec_ns > UW_EXEC_NS))
		return false;
	p->refreshed_ns = now;
	return !unwinder__snapshot(u, p->pid);
}

/* ---- Dwfl ---- */

/*
 * libdwfl dlopen()s libdebuginfod the first time a module's debug info is not found
 * locally, whether or not a server is configured, and with it libcurl, GnuTLS, Kerberos,
 * LDAP, ... (about 8 MiB of memphase's RSS on a Python target, whose libraries have no
 * local debug info) for a client that answers every query with ENOSYS when
 * DEBUGINFOD_URLS is unset or empty. The executable comes first in the symbol lookup
 * scope, so libdw's dlopen() calls come here: that library is refused when no server is
 * configured (libdwfl then goes without, as when it is not installed); every other call
 * goes to libc's.
 */
void *dlopen(const char *file, int mode)
{
	static void *(*libc_dlopen)(const char *, int);
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (file && !strncmp(file, "libdebuginfod.so", strlen("libdebuginfod.so")) &&
	    (!urls || !*urls))
		return NULL;
	if (!libc_dlopen)
		libc_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	return libc_dlopen ? libc_dlopen(file, mode) : NULL;
}

static int uw_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct uw_file *f = *userdata;

	*elfp = NULL;
	if (!f || !f->elf)
		return -1;
	/* a new reference to the shared Elf: libdwfl's elf_end() drops it */
	*elfp = elf_begin(-1, ELF_C_READ_MMAP, f->elf);
	/* the name is where dwfl_standard_find_debuginfo looks for .gnu_debuglink files */
	if (*elfp && f->path[0] == '/' && !*file_name)
		*file_name = strdup(f->path);
	return -1;
}

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct uw_proc *p = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return p->pid;
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct uw_proc *p = arg;
	__u64 sp = p->regs[MP_RSP], off = addr - sp;

	if (addr < sp || off > p->stack_len || p->stack_len - off < sizeof(*result))
		return false;
	memcpy(result, p->stack + off, sizeof(*result));
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct uw_proc *p = arg;
	Dwarf_Word dw[17];
	int i;

	for (i = 0; i < 17; i++)
		dw[i] = p->regs[uw_dwarf_regs[i]];
	if (!dwfl_thread_state_registers(thread, 0, 17, dw))
		return false;
	dwfl_thread_state_register_pc(thread, p->regs[MP_RIP]);
	return true;
}

/*
 * The standard search (build id, .gnu_debuglink), for files the user may read, until the
 * file's symbols are read (they are the debug file's when it has no .symtab of its own).
 * After that a process's module goes without: where .eh_frame does not unwind a frame (a
 * stack's last one), libdw asks for .debug_frame, and the debug file's DWARF was
 * decompressed again for each new Dwfl (ld.so's, each time a program mapped a library:
 * docs/performance.md); .eh_frame has the same CFI for the code of an x86-64 system.
 */
static int uw_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct uw_file *f = *userdata;
	int fd;

	if (f && f->syms_state)
		return -1;
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					  debuglink_file, debuglink_crc, debuginfo_file_name);

	if (fd >= 0 && f && userfs__may_read(f->fs, fd)) {
		close(fd);
		free(*debuginfo_file_name);
		*debuginfo_file_name = NULL;
		return -1;
	}
	return fd;
}

static const Dwfl_Callbacks uw_dwfl_callbacks = {
	.find_elf = uw_find_elf,
	.find_debuginfo = uw_find_debuginfo,
};

static const Dwfl_Thread_Callbacks uw_thread_callbacks = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

/* builds p->dwfl from the snapshot unless it is there; 0 or -errno */
static int uw_proc_dwfl(struct uw_proc *p)
{
	struct uw_map *m;
	Dwfl_Module *mod;
	Dwfl *dwfl = NULL;
	Elf *arch = NULL;
	__u64 lo, hi;
	void **ud;
	size_t i, j;
	int err = 0;

	if (p->dwfl)
		return 0;
	if (p->dwfl_err)
		return p->dwfl_err;
	dwfl = dwfl_begin(&uw_dwfl_callbacks);
	if (!dwfl) {
		err = -ENOMEM;
		goto cleanup;
	}
	dwfl_report_begin(dwfl);
	for (i = 0; i < p->nmaps; i++) {
		m = &p->maps[i];
		if (!m->file || !m->file->elf || !m->has_bias)
			continue;
		/* one module per image, however many executable mappings it has */
		for (j = 0; j < i; j++)
			if (p->maps[j].file == m->file && p->maps[j].has_bias &&
			    p->maps[j].bias == m->bias)
				break;
		if (j < i)
			continue;
		uw_file_range(m->file, m->bias, &lo, &hi);
		mod = dwfl_report_module(dwfl, m->file->path, lo, hi);
		if (!mod)
			continue;
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = m->file;
		if (!arch)
			arch = m->file->elf;
	}
	if (dwfl_report_end(dwfl, NULL, NULL)) {
		err = -EINVAL;
		goto cleanup;
	}
	if (!arch) {
		err = -ENOENT;
		goto cleanup;
	}
	if (!dwfl_attach_state(dwfl, arch, p->pid, &uw_thread_callbacks, p)) {
		err = -EINVAL;
		goto cleanup;
	}
	p->dwfl = dwfl;
	dwfl = NULL;
cleanup:
	if (dwfl)
		dwfl_end(dwfl);
	p->dwfl_err = err;
	return err;
}

static int uw_frame(Dwfl_Frame *state, void *arg)
{
	struct uw_walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (w->n && !pc)
		return DWARF_CB_ABORT;
	/* an exact pc after a signal frame: +1 so that "ip - 1" finds it like the others */
	if (w->n && activation)
		pc++;
	w->ips[w->n++] = pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int uw_walk(struct uw_proc *p, const __u64 *regs, const void *stack, __u32 stack_len,
		   __u64 *ips, int max_frames)
{
	struct uw_walk w = { .ips = ips, .max = max_frames };

	ips[0] = regs[MP_RIP];
	if (uw_proc_dwfl(p))
		return 1;
	p->regs = regs;
	p->stack = stack;
	p->stack_len = stack ? stack_len : 0;
	/* its result is -1 at the end of most stacks: the frames are what counts */
	dwfl_getthread_frames(p->dwfl, p->pid, uw_frame, &w);
	p->regs = NULL;
	p->stack = NULL;
	if (!w.n) {
		ips[0] = regs[MP_RIP];
		return 1;
	}
	return w.n;
}

/* all frames in known mappings (return addresses looked up as ip - 1)? */
static bool uw_covered(struct uw_proc *p, const __u64 *ips, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!uw_map_find(p, i && ips[i] ? ips[i] - 1 : ips[i]))
			return false;
	return true;
}

int unwinder__unwind(struct unwinder *u, pid_t pid, const __u64 *regs, const void *stack,
		     __u32 stack_len, __u64 *ips, int max_frames)
{
	struct uw_proc *p;
	int n;

	if (!u || !regs || !ips || max_frames <= 0)
		return -EINVAL;
	ips[0] = regs[MP_RIP];
	p = uw_proc_find(u, pid);
	if (!p && (unwinder__snapshot(u, pid) || !(p = uw_proc_find(u, pid))))
		return 1;
	n = uw_walk(p, regs, stack, stack_len, ips, max_frames);
	if (!uw_covered(p, ips, n) && uw_proc_refresh(u, p) && !p->dwfl)
		n = uw_walk(p, regs, stack, stack_len, ips, max_frames);
	return n;
}

/* ---- symbolization ---- */

static void uw_sym_unknown(struct unwind_sym *out, __u64 addr)
{
	snprintf(out->module, sizeof(out->module), "[unknown]");
	snprintf(out->name, sizeof(out->name), "[unknown]+0x%llx", (unsigned long long)addr);
	out->offset = addr;
}

int unwinder__symbolize(struct unwinder *u, pid_t pid, __u64 ip, bool is_return,
			struct unwind_sym *out)
{
	__u64 addr = is_return && ip ? ip - 1 : ip, rel;
	Dwfl_Module *mod;
	struct uw_file *f;
	struct uw_proc *p;
	struct uw_map *m;
	const char *base, *name;
	__u64 off;

	if (!out)
		return -EINVAL;
	if (!u) {
		uw_sym_unknown(out, addr);
		return -EINVAL;
	}
	p = uw_proc_find(u, pid);
	if (!p && !unwinder__snapshot(u, pid))
		p = uw_proc_find(u, pid);
	m = p ? uw_map_find(p, addr) : NULL;
	if (!m && p && uw_proc_refresh(u, p))
		m = uw_map_find(p, addr);
	if (!m || (!m->file && m->path[0] != '/')) {
		uw_sym_unknown(out, addr);
		return 0;
	}
	f = m->file;
	base = f ? f->base : uw_basename(m->path);
	snprintf(out->module, sizeof(out->module), "%s", base);
	if (!f || !f->elf || !m->has_bias) {
		/* no ELF image: the offset in the file */
		out->offset = addr - m->start + m->pgoff;
		snprintf(out->name, sizeof(out->name), "%s+0x%llx", base,
			 (unsigned long long)out->offset);
		return 0;
	}
	rel = addr - m->bias;
	if (!f->syms_state) {
		mod = !uw_proc_dwfl(p) ? dwfl_addrmodule(p->dwfl, addr) : NULL;
		f->syms_state = mod ? uw_file_read_syms(f, mod) : -ENOENT;
		if (!f->syms_state)
			f->syms_state = 1;
	}
	name = f->syms_state > 0 ? elfsym_table__find(f->syms, rel, &off) : NULL;
	if (!name) {
		out->offset = rel;
		snprintf(out->name, sizeof(out->name), "%s+0x%llx", base, (unsigned long long)rel);
		return 0;
	}
	out->offset = off;
	snprintf(out->name, sizeof(out->name), "%s", name);
	return 0;
}

int unwinder__for_each_map(struct unwinder *u, pid_t pid, unwinder_map_cb cb, void *ctx)
{
	char name[PATH_MAX + sizeof(UW_DELETED)];
	struct uw_proc *p;
	struct uw_map *m;
	size_t i;
	int err;

	if (!u || !cb)
		return -EINVAL;
	p = uw_proc_find(u, pid);
	if (!p)
		return -ESRCH;
	for (i = 0; i < p->nmaps; i++) {
		m = &p->maps[i];
		snprintf(name, sizeof(name), "%s%s", m->path, m->deleted ? UW_DELETED : "");
		err = cb(ctx, pid, m->start, m->end, m->pgoff, name,
			 m->file && m->file->build_id_len ? m->file->build_id : NULL,
			 m->file ? m->file->build_id_len : 0);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the object ---- */

struct unwinder *unwinder__new(struct userfs *fs)
{
	struct unwinder *u;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->page_size = sysconf(_SC_PAGESIZE);
	if (u->page_size <= 0)
		u->page_size = 4096;
	u->fs = fs;
	return u;
}

void unwinder__free(struct unwinder *u)
{
	struct uw_proc *p;
	unsigned int i;

	if (!u)
		return;
	for (i = 0; i < UW_PROC_BUCKETS; i++) {
		while ((p = u->procs[i])) {
			u->procs[i] = p->next;
			uw_proc_free(u, p);
		}
	}
	/* every file is referenced by a mapping; nothing should be left */
	while (u->files) {
		u->files->refs = 1;
		uw_file_put(u, u->files);
	}
	free(u);
}
