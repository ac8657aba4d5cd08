// SPDX-License-Identifier: GPL-2.0
/* The engine's settings and its build's flags, from the observed process (see engine.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <gelf.h>
#include "collect/engine.h"
#include "lib/procmaps.h"
#include "lib/userfs.h"

#define ENGINE_PROC_MAX	(1U << 20)	/* cmdline and environ read, at most */
#define ENGINE_FILE_MAX	(256U << 20)	/* a build file scanned for its strings, at most */

/* Is word one of the space-separated words of list? */
static bool in_list(const char *list, const char *word, size_t n)
{
	const char *p = list, *e;

	while (p && *p) {
		e = strchr(p, ' ');
		if (!e)
			e = p + strlen(p);
		if ((size_t)(e - p) == n && !strncmp(p, word, n))
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

/* The last (the long) one of a setting's space-separated flags. */
static void canonical(char *buf, size_t len, const char *flags)
{
	const char *last = flags ? strrchr(flags, ' ') : NULL;

	snprintf(buf, len, "%s", !flags ? "" : last ? last + 1 : flags);
}

static struct engine_setting *slot_of(struct model_engine *e, const struct preset_setting *ps)
{
	unsigned int i;

	for (i = 0; i < e->nsettings; i++)
		if (!strcmp(e->settings[i].name, ps->name))
			return &e->settings[i];
	return NULL;
}

static void set(struct engine_setting *s, const char *value, size_t n, __u32 src,
		const char *from, size_t nfrom)
{
	snprintf(s->value, sizeof(s->value), "%.*s", (int)n, value);
	s->src = src;
	snprintf(s->from, sizeof(s->from), "%.*s", (int)nfrom, from);
}

static struct engine_setting *named(struct model_engine *e, const char *name, size_t n)
{
	unsigned int i;

	for (i = 0; i < e->nsettings; i++)
		if (strlen(e->settings[i].name) == n && !strncmp(e->settings[i].name, name, n))
			return &e->settings[i];
	return NULL;
}

/*
 * A default or an explicit "decide later": the build's choice for this program, and what
 * that choice implies for another setting left at its default.
 */
static void resolve_auto(struct model_engine *e, struct engine_setting *s,
			 const struct preset_setting *ps, const char *program)
{
	struct engine_setting *o;
	const char *imp, *eq;
	unsigned int k;

	if (!ps->auto_is || strcmp(s->value, ps->auto_is))
		return;
	for (k = 0; k < PRESET_MAX_AUTOS && ps->autos[k].value; k++) {
		if (ps->autos[k].prog &&
		    strncmp(program, ps->autos[k].prog, strlen(ps->autos[k].prog)))
			continue;
		snprintf(s->value, sizeof(s->value), "%s", ps->autos[k].value);
		if (s->src == ENGINE_SRC_DEFAULT)
			snprintf(s->from, sizeof(s->from), "auto");
		imp = ps->autos[k].implies;
		eq = imp ? strchr(imp, '=') : NULL;
		o = eq ? named(e, imp, (size_t)(eq - imp)) : NULL;
		if (o && o->src == ENGINE_SRC_DEFAULT)
			set(o, eq + 1, strlen(eq + 1), ENGINE_SRC_DEFAULT, "auto", 4);
		return;
	}
}

static void unknown(struct model_engine *e, const char *flag, size_t n)
{
	unsigned int i;

	for (i = 0; i < e->nunknown; i++)
		if (strlen(e->unknown[i]) == n && !strncmp(e->unknown[i], flag, n))
			return;
	if (e->nunknown < ENGINE_MAX_UNKNOWN)
		snprintf(e->unknown[e->nunknown++], ENGINE_FLAG_MAX, "%.*s", (int)n, flag);
}

int engine__parse(struct model_engine *e, const struct preset *p, const char *program,
		  char *const *argv, char *const *envp)
{
	const struct preset_setting *ps;
	struct engine_setting *s;
	unsigned int i, k;
	size_t n;

	if (!p || !p->settings)
		return -EINVAL;
	e->nsettings = e->nunknown = 0;
	snprintf(e->program, sizeof(e->program), "%s", program);
	for (ps = p->settings; ps->name && e->nsettings < ENGINE_MAX_SETTINGS; ps++) {
		s = &e->settings[e->nsettings++];
		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", ps->name);
		snprintf(s->what, sizeof(s->what), "%s", ps->what ? ps->what : "");
		canonical(s->flag, sizeof(s->flag), ps->flags ? ps->flags : ps->on);
		set(s, ps->def ? ps->def : "", ps->def ? strlen(ps->def) : 0, ENGINE_SRC_DEFAULT,
		    "", 0);
	}
	/* the command line: the last flag of a setting wins */
	for (i = 1; argv && argv[i]; i++) {
		const char *a = argv[i], *eq = strchr(a, '='), *val = NULL;
		bool matched = false;

		if (a[0] != '-' || !a[1] || (a[1] >= '0' && a[1] <= '9'))
			continue;
		if (!strcmp(a, "--"))
			break;
		n = eq && a[1] == '-' ? (size_t)(eq - a) : strlen(a);
		for (ps = p->settings; ps->name && !matched; ps++) {
			s = slot_of(e, ps);
			if (!s)
				continue;
			if (ps->flags && in_list(ps->flags, a, n)) {
				matched = true;
				if (eq && a[1] == '-')
					val = eq + 1;
				else if (ps->optional && (!argv[i + 1] ||
					 !in_list(ps->optional, argv[i + 1], strlen(argv[i + 1]))))
					val = "on";
				else if (argv[i + 1])
					val = argv[++i];
				if (val)
					set(s, val, strlen(val), ENGINE_SRC_FLAG, a, n);
			} else if (ps->on && in_list(ps->on, a, n)) {
				matched = true;
				set(s, "true", 4, ENGINE_SRC_FLAG, a, n);
			} else if (ps->off && in_list(ps->off, a, n)) {
				matched = true;
				set(s, "false", 5, ENGINE_SRC_FLAG, a, n);
			}
		}
		if (!matched)
			unknown(e, a, n);
	}
	/* the environment, for what no flag set */
	for (k = 0; envp && envp[k]; k++) {
		const char *eq = strchr(envp[k], '=');

		if (!eq)
			continue;
		for (ps = p->settings; ps->name; ps++) {
			s = slot_of(e, ps);
			if (!s || !ps->env || s->src != ENGINE_SRC_DEFAULT ||
			    strlen(ps->env) != (size_t)(eq - envp[k]) ||
			    strncmp(envp[k], ps->env, eq - envp[k]))
				continue;
			set(s, eq + 1, strlen(eq + 1), ENGINE_SRC_ENV, ps->env, strlen(ps->env));
		}
	}
	for (ps = p->settings; ps->name; ps++) {
		s = slot_of(e, ps);
		if (s)
			resolve_auto(e, s, ps, program);
	}
	snprintf(e->slots_setting, sizeof(e->slots_setting), "%s",
		 p->slots_setting ? p->slots_setting : "");
	snprintf(e->shared_setting, sizeof(e->shared_setting), "%s",
		 p->shared_setting ? p->shared_setting : "");
	e->known = true;
	return 0;
}

static bool flag_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* "-x" or "--xx-yy": a dash or two, a lower-case letter, then letters, digits, dashes. */
static bool is_flag(const char *s, size_t n)
{
	size_t i = s[0] == '-' && n > 1 && s[1] == '-' ? 2 : 1;

	if (n <= i || n >= ENGINE_FLAG_MAX || s[0] != '-' || s[i] < 'a' || s[i] > 'z')
		return false;
	for (; i < n; i++)
		if (!flag_char(s[i]))
			return false;
	return s[n - 1] != '-';
}

/*
 * "DEPRECATED: --a and --b are deprecated. use --c x instead" (or "--a is deprecated ...
 * no longer necessary"): every flag before "is/are deprecated" goes, for the first flag
 * after "use" if there is one. Anything else that starts with DEPRECATED: is left.
 */
static int deprecation(struct model_engine *e, const char *s, size_t n)
{
	char flags[8][ENGINE_FLAG_MAX], repl[ENGINE_FLAG_MAX] = "";
	const char *p = s + strlen("DEPRECATED: "), *end = s + n, *use;
	unsigned int nf = 0, i;
	int err;

	for (;;) {
		const char *f = p;

		while (p < end && (flag_char(*p) || (p == f && *p == '-')))
			p++;
		if (!is_flag(f, p - f) || nf == 8)
			return 0;
		snprintf(flags[nf++], ENGINE_FLAG_MAX, "%.*s", (int)(p - f), f);
		if (end - p >= 5 && !strncmp(p, " and ", 5))
			p += 5;
		else if (end - p >= 2 && !strncmp(p, ", ", 2))
			p += 2;
		else
			break;
	}
	if (!((end - p >= 15 && !strncmp(p, " is deprecated", 14)) ||
	      (end - p >= 16 && !strncmp(p, " are deprecated", 15))))
		return 0;
	use = memmem(p, end - p, "use ", 4);
	if (use) {
		const char *f = use + 4, *q = f;

		while (q < end && flag_char(*q))
			q++;
		if (is_flag(f, q - f))
			snprintf(repl, sizeof(repl), "%.*s", (int)(q - f), f);
	}
	for (i = 0; i < nf; i++) {
		err = model_engine__add_deprecated(e, flags[i], repl);
		if (err)
			return err;
	}
	return 0;
}

int engine__scan_strings(struct model_engine *e, const char *data, size_t len)
{
	size_t i = 0, j;
	int err = 0;

	while (i < len && !err) {
		/* a run of printable bytes (a message may end in a newline) ended by a NUL */
		for (j = i; j < len && ((data[j] >= 0x20 && data[j] < 0x7f) || data[j] == '\n'); j++)
			;
		if (j < len && !data[j] && j > i) {
			if (is_flag(data + i, j - i)) {
				char f[ENGINE_FLAG_MAX];
				size_t k;

				/* and its tails from a dash on: the linker keeps "-ngl" as the end
				 * of "--spec-draft-ngl" */
				for (k = i; k < j && !err; k++) {
					if (data[k] != '-' || (k > i && data[k - 1] == '-') ||
					    !is_flag(data + k, j - k))
						continue;
					snprintf(f, sizeof(f), "%.*s", (int)(j - k), data + k);
					err = model_engine__add_flag(e, f);
				}
			} else if (j - i > 12 && !strncmp(data + i, "DEPRECATED: ", 12)) {
				err = deprecation(e, data + i, j - i);
			}
		}
		i = j + 1;
	}
	return err;
}

/* A whole /proc file of pid, opened as fd: NUL-separated entries into a NULL-terminated
 * vector (malloc'd, with its text after it). */
static char **read_vector(int fd)
{
	size_t cap = 65536, len = 0, n = 0, i;
	char *buf = malloc(cap), **v, *p;
	ssize_t k;

	if (!buf) {
		close(fd);
		return NULL;
	}
	while ((k = read(fd, buf + len, cap - len - 1)) > 0) {
		len += k;
		if (len + 1 >= cap) {
			if (cap >= ENGINE_PROC_MAX)
				break;
			p = realloc(buf, cap * 2);
			if (!p)
				break;
			buf = p;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	for (i = 0; i < len; i++)
		n += !buf[i];
	v = malloc((n + 2) * sizeof(*v) + len + 1);
	if (!v) {
		free(buf);
		return NULL;
	}
	p = (char *)(v + n + 2);
	memcpy(p, buf, len + 1);
	free(buf);
	for (i = 0, n = 0; i < len; i += strlen(p + i) + 1)
		v[n++] = p + i;
	v[n] = NULL;
	return v;
}

int engine__scan_file(struct model_engine *e, const char *data, size_t len)
{
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	bool any = false;
	int err = 0;

	/* string literals are in .rodata: the rest of an ELF file (code, tables) is not read */
	if (elf_version(EV_CURRENT) != EV_NONE)
		elf = elf_memory((char *)data, len);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		goto whole;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".rodata", 7) || sh.sh_offset > len ||
		    sh.sh_size > len - sh.sh_offset)
			continue;
		any = true;
		err = engine__scan_strings(e, data + sh.sh_offset, sh.sh_size);
	}
whole:
	if (elf)
		elf_end(elf);
	/* not ELF, or an ELF file without section headers: all of it */
	return any || err ? err : engine__scan_strings(e, data, len);
}

/* The file open as fd (a regular one the user may read), scanned for the build's flags. */
static int scan_fd(struct model_engine *e, int fd)
{
	struct stat st;
	void *m;
	int err;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size ||
	    st.st_size > ENGINE_FILE_MAX)
		return 0;
	m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	err = engine__scan_file(e, m, st.st_size);
	munmap(m, st.st_size);
	return err;
}

/* Does path's base name begin with one of names? */
static bool build_file(const char *path, const char *const *names)
{
	const char *base = strrchr(path, '/');
	unsigned int i;

	base = base ? base + 1 : path;
	for (i = 0; names && names[i]; i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

/* The program and the build files pid maps, each once, if the user may read them. */
static int scan_build(struct model_engine *e, const struct preset *p, pid_t pid,
		      struct userfs *fs)
{
	struct procmaps *pm = procmaps__open_as(pid, fs);
	struct procmaps_entry me;
	char link[96], exe[64];
	__u64 seen[16];
	unsigned int nseen = 0, i;
	int fd, err = 0;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	fd = open(exe, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && !userfs__may_read(fs, fd))
		err = scan_fd(e, fd);
	if (fd >= 0)
		close(fd);
	if (!pm)
		return err;
	while (!err && procmaps__next(pm, &me) > 0) {
		bool dup = false;

		if (me.path[0] != '/' || !me.inode || !build_file(me.path, p->build_files))
			continue;
		for (i = 0; i < nseen; i++)
			dup |= seen[i] == me.inode;
		if (dup || nseen == 16)
			continue;
		seen[nseen++] = me.inode;
		snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
			 me.start, me.end);
		fd = open(link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (!userfs__may_read(fs, fd))
			err = scan_fd(e, fd);
		close(fd);
	}
	procmaps__close(pm);
	return err;
}

/*
 * Is the program one of the engine's, with its argument parser (at least two of the
 * settings' flags among its build's strings)? If not (a program of one's own on the
 * library, a wrapper), its command line says nothing of the engine's settings, nor its
 * strings of the engine's flags.
 */
static bool recognized(const struct model_engine *e, const struct preset *p)
{
	const struct preset_setting *ps;
	unsigned int n = 0;

	for (ps = p->settings; e->flags && ps->name; ps++) {
		const char *lists[3] = { ps->flags, ps->on, ps->off };
		bool has = false;
		int k;

		for (k = 0; k < 3 && !has; k++) {
			const char *q = lists[k], *end;
			char f[ENGINE_FLAG_MAX];

			while (q && *q && !has) {
				end = strchr(q, ' ');
				if (!end)
					end = q + strlen(q);
				snprintf(f, sizeof(f), "%.*s", (int)(end - q), q);
				has = model_engine__has(e, f);
				q = *end ? end + 1 : end;
			}
		}
		n += has;
	}
	return n >= 2;
}

int engine__read(struct model_engine *e, const struct preset *p, pid_t pid, struct userfs *fs)
{
	char fn[64], exe[4096], **argv = NULL, **envp = NULL;
	const char *base;
	ssize_t n;
	int fd, dfd, err;

	if (!p || !p->settings)
		return -EINVAL;
	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)pid);
	n = readlink(fn, exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ESRCH;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	snprintf(fn, sizeof(fn), "/proc/%d/cmdline", (int)pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	argv = fd >= 0 ? read_vector(fd) : NULL;
	if (!argv)
		return -ESRCH;
	/* the environment only as the user may see it: the kernel's ptrace rule */
	snprintf(fn, sizeof(fn), "/proc/%d", (int)pid);
	dfd = open(fn, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = dfd >= 0 ? userfs__open_proc(fs, dfd, "environ") : -ESRCH;
	if (dfd >= 0)
		close(dfd);
	envp = fd >= 0 ? read_vector(fd) : NULL;
	err = engine__parse(e, p, base, argv, envp);
	e->pid = pid;
	free(argv);
	free(envp);
	if (!err)
		err = scan_build(e, p, pid, fs);
	if (!err && !recognized(e, p))
		err = -ENOENT;
	return err;
}
