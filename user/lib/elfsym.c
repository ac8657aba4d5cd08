// SPDX-License-Identifier: GPL-2.0
/*
 * Function symbols of an ELF file. elfsym__open() reads .symtab and .dynsym once into an
 * array (names copied into one pool, so the file is closed again at once). The first
 * ELFSYM_SCANS lookups scan it; the next one sorts it by name, and lookups become binary
 * searches (sorting libc's 3000 names is ~0.7 ms, a scan ~15 us: the probes look a few
 * names up in each library a target maps, while it waits). struct elfsym_table keeps them
 * by address instead, for symbolization.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/elfsym.h"
#include "lib/util.h"

/* what to prefer when a name occurs more than once, best first */
enum elfsym_rank {
	ELFSYM_GLOBAL = 0,	/* global or weak, unversioned or default "@@" version */
	ELFSYM_HIDDEN_VER = 1,	/* global or weak, non-default "@" version */
	ELFSYM_LOCAL = 2,	/* static functions (.symtab only) */
};

#define ELFSYM_VERSYM_HIDDEN	0x8000	/* binutils' VERSYM_HIDDEN; not in <elf.h> */
#define ELFSYM_SCANS		32

struct elfsym_ent {
	const char *name;	/* into the pool, set once the pool stops moving */
	size_t name_off;
	__u64 off;		/* file offset */
	int rank;
};

struct elfsym {
	struct elfsym_ent *ents;
	size_t nents, cap;
	char *pool;
	size_t pool_len, pool_cap;
	bool sorted;
	unsigned int nlookups;
	/* PT_LOAD segments while indexing */
	GElf_Phdr *loads;
	size_t nloads;
};

static int elfsym__add(struct elfsym *e, const char *name, size_t len, __u64 off, int rank)
{
	if (util__grow((void **)&e->ents, &e->cap, e->nents, sizeof(*e->ents)))
		return -ENOMEM;
	if (util__reserve((void **)&e->pool, &e->pool_cap, e->pool_len + len + 1, 1))
		return -ENOMEM;
	memcpy(e->pool + e->pool_len, name, len);
	e->pool[e->pool_len + len] = '\0';
	e->ents[e->nents].name_off = e->pool_len;
	e->ents[e->nents].off = off;
	e->ents[e->nents].rank = rank;
	e->nents++;
	e->pool_len += len + 1;
	return 0;
}

/* st_value -> file offset through the PT_LOAD that maps it; -ENOENT if none does */
static int elfsym__file_off(const struct elfsym *e, __u64 addr, __u64 *off)
{
	size_t i;

	for (i = 0; i < e->nloads; i++) {
		const GElf_Phdr *ph = &e->loads[i];

		if (addr >= ph->p_vaddr && addr < ph->p_vaddr + ph->p_filesz) {
			*off = addr - ph->p_vaddr + ph->p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int elfsym__load_phdrs(struct elfsym *e, Elf *elf)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	e->loads = calloc(n ? n : 1, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			return -ENOEXEC;
		if (ph.p_type == PT_LOAD)
			e->loads[e->nloads++] = ph;
	}
	return 0;
}

/*
 * versym: .gnu.version of a .dynsym (NULL if none). There, versions are not part of the
 * names; a set hidden bit marks a non-default "name@VER".
 */
static int elfsym__load_symtab(struct elfsym *e, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
			       Elf_Data *versym)
{
	Elf_Data *data;
	size_t i, n, len;
	const char *name, *at;
	GElf_Sym sym;
	GElf_Versym ver;
	__u64 off;
	int err, rank;

	if (!sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	data = elf_getdata(scn, NULL);
	if (!data)
		return 0;	/* e.g. SHT_NOBITS in a debuginfo file: nothing to index */

	for (i = 1; i < n; i++) {
		if (!gelf_getsym(data, i, &sym))
			break;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !elfsym__is_function(elf, name, &sym, sym.st_shndx, false) ||
		    !sym.st_value)
			continue;
		if (elfsym__file_off(e, sym.st_value, &off))
			continue;

		/* "name@VER" and "name@@VER" are found as "name"; "@@" is the default */
		at = strchr(name, '@');
		len = at ? (size_t)(at - name) : strlen(name);
		if (!len)
			continue;
		if (GELF_ST_BIND(sym.st_info) == STB_LOCAL)
			rank = ELFSYM_LOCAL;
		else if (at && at[1] != '@')
			rank = ELFSYM_HIDDEN_VER;
		else if (versym && gelf_getversym(versym, i, &ver) && (ver & ELFSYM_VERSYM_HIDDEN))
			rank = ELFSYM_HIDDEN_VER;
		else
			rank = ELFSYM_GLOBAL;
		err = elfsym__add(e, name, len, off, rank);
		if (err)
			return err;
	}
	return 0;
}

static int elfsym__cmp(const void *a, const void *b)
{
	const struct elfsym_ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->off < y->off ? -1 : x->off > y->off;
}

struct elfsym *elfsym__open(const char *path)
{
	struct elfsym *e = NULL;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	Elf_Data *versym = NULL;
	size_t versym_link = 0, i;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int fd = -1, err = 0;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;

	e = calloc(1, sizeof(*e));
	if (!e) {
		err = -ENOMEM;
		goto cleanup;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	err = elfsym__load_phdrs(e, elf);
	if (err)
		goto cleanup;

	/* .gnu.version first: it says which .dynsym entries are non-default versions */
	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym) {
			versym = elf_getdata(scn, NULL);
			versym_link = sh.sh_link;
			break;
		}
	}
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		err = elfsym__load_symtab(e, elf, scn, &sh,
					  sh.sh_type == SHT_DYNSYM &&
					  versym_link == elf_ndxscn(scn) ? versym : NULL);
		if (err)
			goto cleanup;
	}

	for (i = 0; i < e->nents; i++)
		e->ents[i].name = e->pool + e->ents[i].name_off;

cleanup:
	if (e) {
		free(e->loads);
		e->loads = NULL;
		e->nloads = 0;
	}
	elf_end(elf);
	close(fd);
	if (err) {
		elfsym__close(e);
		errno = -err;
		return NULL;
	}
	return e;
}

void elfsym__close(struct elfsym *e)
{
	if (!e)
		return;
	free(e->ents);
	free(e->pool);
	free(e->loads);
	free(e);
}

/* libstdc++'s demangler (the project links -lstdc++) */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * The mangled prefix of a plain nested name ("a::b::c", identifiers only): "N1a1b1c", as
 * "_ZN" or "_ZNK" (a const method) begins every symbol of it. False for anything else
 * (templates, operators, a parameter list, std::, whose names are abbreviated): those are
 * demangled one by one.
 */
static bool elfsym__nested_prefix(const char *name, char *buf, size_t len)
{
	const char *p = name, *e;
	size_t n = 0;
	int k;

	if (!strncmp(name, "std::", 5))
		return false;
	while (*p) {
		e = strstr(p, "::");
		if (!e)
			e = p + strlen(p);
		if (e == p)
			return false;
		for (const char *c = p; c < e; c++)
			if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (c > p && *c >= '0' && *c <= '9')))
				return false;
		k = snprintf(buf + n, len - n, "%zu%.*s", (size_t)(e - p), (int)(e - p), p);
		if (k < 0 || (size_t)k >= len - n)
			return false;
		n += k;
		p = *e ? e + 2 : e;
	}
	return n > 0 && strstr(name, "::");
}

/*
 * Slow path for C++ names: demangle every mangled symbol and compare, with or without
 * the parameter list and ABI tag ("ns::f" matches "ns::f(int)" and
 * "ns::f[abi:cxx11](int)"). The best-ranked match wins. A plain
 * nested name demangles only the symbols that begin with its mangled prefix.
 */
static int elfsym__lookup_demangled(struct elfsym *e, const char *name, __u64 *file_off)
{
	size_t i, n = strlen(name), np = 0;
	int best = -1, status;
	char pre[512];
	bool nested = elfsym__nested_prefix(name, pre, sizeof(pre));
	char *d;

	if (nested)
		np = strlen(pre);
	for (i = 0; i < e->nents; i++) {
		const char *s = e->ents[i].name;

		if (strncmp(s, "_Z", 2))
			continue;
		if (nested && strncmp(s, "_ZN", 3) == 0 &&
		    strncmp(s + 3 + (s[3] == 'K'), pre, np))
			continue;
		if (nested && strncmp(s, "_ZN", 3))
			continue;
		d = __cxa_demangle(e->ents[i].name, NULL, NULL, &status);
		if (!d)
			continue;
		/* "ns::f" is "ns::f(int)", or "ns::f[abi:cxx11](int)" */
		if ((!strcmp(d, name) || (!strncmp(d, name, n) &&
					   (d[n] == '(' || !strncmp(d + n, "[abi:", 5)))) &&
		    (best < 0 || e->ents[i].rank < e->ents[best].rank))
			best = i;
		free(d);
	}
	if (best < 0)
		return -ENOENT;
	*file_off = e->ents[best].off;
	return 0;
}

/* The best entry named name (elfsym__cmp()'s first of them), by a scan; -1: none. */
static ssize_t elfsym__scan(const struct elfsym *e, const char *name)
{
	ssize_t best = -1;
	size_t i;

	for (i = 0; i < e->nents; i++)
		if (!strcmp(e->ents[i].name, name) &&
		    (best < 0 || elfsym__cmp(&e->ents[i], &e->ents[best]) < 0))
			best = i;
	return best;
}

/* The first entry named name in the sorted array (its best-ranked one); -1: none. */
static ssize_t elfsym__search(const struct elfsym *e, const char *name)
{
	size_t lo = 0, hi = e->nents, mid;

	/* lower bound */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(e->ents[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->nents && !strcmp(e->ents[lo].name, name) ? (ssize_t)lo : -1;
}

int elfsym__lookup(struct elfsym *e, const char *name, __u64 *file_off)
{
	ssize_t i;

	if (!e || !name || !file_off)
		return -EINVAL;
	if (!e->sorted && e->nlookups < ELFSYM_SCANS) {
		e->nlookups++;
		i = elfsym__scan(e, name);
	} else {
		if (!e->sorted && e->nents)
			qsort(e->ents, e->nents, sizeof(*e->ents), elfsym__cmp);
		e->sorted = true;
		i = elfsym__search(e, name);
	}
	if (i < 0) {
		/* "ns::f" or "ns::f(int)": a C++ name as people write it */
		if (strstr(name, "::"))
			return elfsym__lookup_demangled(e, name, file_off);
		return -ENOENT;
	}
	*file_off = e->ents[i].off;
	return 0;
}

/* The GNU hash of a symbol name (the dynamic linker's, in .gnu.hash). */
static __u32 elfsym__gnu_hash(const char *name)
{
	__u32 h = 5381;

	for (; *name; name++)
		h = h * 33 + (unsigned char)*name;
	return h;
}

/*
 * Whether name may be in .dynsym: the dynamic linker's lookup in .gnu.hash (hash, its
 * Bloom filter of 64-bit words: ELFCLASS64), then the bucket's chain, comparing names
 * (dynsym's entries, strings in section str). True when the table cannot tell.
 */
static bool elfsym__gnu_has(Elf *elf, const Elf_Data *hash, Elf_Data *dynsym, size_t str,
			    const char *name)
{
	const __u32 *hdr = hash->d_buf, *buckets, *chain;
	__u32 nbuckets, symoff, nbloom, shift, h, i;
	const __u64 *bloom;
	__u64 word, mask;
	size_t nchain;
	const char *sn;
	GElf_Sym sym;

	if (hash->d_size < 16)
		return true;
	nbuckets = hdr[0];
	symoff = hdr[1];
	nbloom = hdr[2];
	shift = hdr[3];
	if (!nbuckets || !nbloom ||
	    hash->d_size < 16 + (size_t)nbloom * 8 + (size_t)nbuckets * 4)
		return true;
	bloom = (const __u64 *)(hdr + 4);
	buckets = (const __u32 *)(bloom + nbloom);
	chain = buckets + nbuckets;
	nchain = (hash->d_size - 16 - (size_t)nbloom * 8 - (size_t)nbuckets * 4) / 4;
	h = elfsym__gnu_hash(name);
	word = bloom[(h / 64) % nbloom];
	mask = (1ULL << (h % 64)) | (1ULL << ((h >> shift) % 64));
	if ((word & mask) != mask)
		return false;
	i = buckets[h % nbuckets];
	if (!i)
		return false;
	for (; i >= symoff && i - symoff < nchain; i++) {
		if ((chain[i - symoff] | 1) == (h | 1)) {
			if (!gelf_getsym(dynsym, i, &sym))
				return true;
			sn = elf_strptr(elf, str, sym.st_name);
			if (!sn || !strcmp(sn, name))
				return true;
		}
		if (chain[i - symoff] & 1)
			return false;
	}
	return true;	/* a chain out of bounds: malformed */
}

bool elfsym__may_define(const char *path, const char *const *names, unsigned int n)
{
	Elf_Data *hash = NULL, *dynsym = NULL;
	size_t str = 0;
	Elf_Scn *scn = NULL;
	bool may = true;
	GElf_Shdr sh;
	unsigned int i;
	Elf *elf;
	int fd;

	for (i = 0; i < n; i++)
		if (strstr(names[i], "::"))
			return true;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return true;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* the table's words as this CPU reads them */
	if (!elf || gelf_getclass(elf) != ELFCLASS64 || !elf_getident(elf, NULL) ||
	    elf_getident(elf, NULL)[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
						  ELFDATA2LSB : ELFDATA2MSB))
		goto cleanup;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			goto cleanup;
		if (sh.sh_type == SHT_SYMTAB)
			goto cleanup;	/* local functions: no hash to rule them out */
		if (sh.sh_type == SHT_GNU_HASH)
			hash = elf_rawdata(scn, NULL);
		if (sh.sh_type == SHT_DYNSYM) {
			dynsym = elf_getdata(scn, NULL);
			str = sh.sh_link;
		}
	}
	if (!hash || !hash->d_buf || !dynsym)
		goto cleanup;
	for (i = 0, may = false; i < n && !may; i++)
		may = elfsym__gnu_has(elf, hash, dynsym, str, names[i]);
cleanup:
	elf_end(elf);
	close(fd);
	return may;
}

int elfsym__is_elf(const char *path)
{
	unsigned char hdr[18];
	unsigned int type;
	int fd;
	ssize_t n;

	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	n = pread(fd, hdr, sizeof(hdr), 0);
	close(fd);
	if (n != (ssize_t)sizeof(hdr) || memcmp(hdr, ELFMAG, SELFMAG))
		return 0;
	if (hdr[EI_CLASS] != ELFCLASS32 && hdr[EI_CLASS] != ELFCLASS64)
		return 0;
	/* e_type is the half-word right after e_ident */
	if (hdr[EI_DATA] == ELFDATA2LSB)
		type = hdr[16] | hdr[17] << 8;
	else if (hdr[EI_DATA] == ELFDATA2MSB)
		type = hdr[16] << 8 | hdr[17];
	else
		return 0;
	return type == ET_EXEC || type == ET_DYN;
}

bool elfsym__is_function(Elf *elf, const char *name, const GElf_Sym *sym, GElf_Word shndx,
			 bool labels)
{
	int type = GELF_ST_TYPE(sym->st_info);
	GElf_Shdr shdr;
	Elf_Scn *scn;

	if (!name || !name[0] || name[0] == '@' || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	if (!labels || type != STT_NOTYPE || !elf)
		return false;
	/* assembly labels: only in executable sections */
	scn = elf_getscn(elf, shndx);
	return scn && gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_EXECINSTR);
}

/* ---- by address ---- */

#define ELFSYM_SIZELESS_MAX	4096	/* extent of a last symbol without a size */
#define ELFSYM_BACKTRACK	16	/* enclosing symbols looked for behind the nearest */

/* libstdc++'s demangler (the project links -lstdc++) */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct elfsym_addr {
	__u64 start;		/* address in the ELF file's own address space */
	__u64 size;		/* sizeless symbols: up to the next symbol */
	__u32 name;		/* offset in strs */
	__u32 rank;		/* while sorting: lower is preferred at the same address */
	char *demangled;	/* C++ name, demangled when first asked for */
	bool tried;		/* demangling was tried */
};

struct elfsym_table {
	struct elfsym_addr *syms;
	size_t nsyms, cap;
	char *strs;
	size_t strs_len, strs_cap;
};

struct elfsym_table *elfsym_table__new(void)
{
	return calloc(1, sizeof(struct elfsym_table));
}

void elfsym_table__free(struct elfsym_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nsyms; i++)
		free(t->syms[i].demangled);
	free(t->syms);
	free(t->strs);
	free(t);
}

int elfsym_table__add(struct elfsym_table *t, Elf *elf, const char *name, const GElf_Sym *sym,
		      GElf_Word shndx, __u64 addr)
{
	size_t len;

	if (!elfsym__is_function(elf, name, sym, shndx, true))
		return 0;
	len = strcspn(name, "@");	/* without "@VERSION" / "@@VERSION" */
	if (util__grow((void **)&t->syms, &t->cap, t->nsyms, sizeof(*t->syms)))
		return -ENOMEM;
	if (util__reserve((void **)&t->strs, &t->strs_cap, t->strs_len + len + 1, 1))
		return -ENOMEM;
	memcpy(t->strs + t->strs_len, name, len);
	t->strs[t->strs_len + len] = '\0';
	t->syms[t->nsyms++] = (struct elfsym_addr){
		.start = addr,
		.size = sym->st_size,
		.name = (__u32)t->strs_len,
		/* sized before sizeless, then global or weak before local */
		.rank = (sym->st_size ? 0 : 2) + (GELF_ST_BIND(sym->st_info) == STB_LOCAL),
	};
	t->strs_len += len + 1;
	return 0;
}

/* by address; at one address the preferred name first */
static int elfsym_addr_cmp(const void *a, const void *b, void *arg)
{
	const struct elfsym_addr *x = a, *y = b;
	const char *strs = arg, *nx = strs + x->name, *ny = strs + y->name;
	size_t ux = strspn(nx, "_"), uy = strspn(ny, "_"), lx, ly;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(nx);
	ly = strlen(ny);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(nx, ny);
}

size_t elfsym_table__finish(struct elfsym_table *t)
{
	size_t i, j;

	if (!t->nsyms)
		return 0;
	qsort_r(t->syms, t->nsyms, sizeof(*t->syms), elfsym_addr_cmp, t->strs);
	for (i = 1, j = 0; i < t->nsyms; i++)
		if (t->syms[i].start != t->syms[j].start)
			t->syms[++j] = t->syms[i];
	t->nsyms = j + 1;
	for (i = 0; i < t->nsyms; i++) {
		if (t->syms[i].size)
			continue;
		t->syms[i].size = i + 1 < t->nsyms ? t->syms[i + 1].start - t->syms[i].start
						   : ELFSYM_SIZELESS_MAX;
	}
	return t->nsyms;
}

const char *elfsym_table__find(struct elfsym_table *t, __u64 addr, __u64 *off)
{
	size_t lo = 0, hi = t ? t->nsyms : 0, mid, i;
	struct elfsym_addr *s = NULL;
	const char *name;
	int status = -1;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest symbol below, or one enclosing it */
	for (i = lo; i-- > 0 && lo - i <= ELFSYM_BACKTRACK;) {
		if (addr - t->syms[i].start < t->syms[i].size) {
			s = &t->syms[i];
			break;
		}
	}
	if (!s)
		return NULL;
	if (off)
		*off = addr - s->start;
	name = t->strs + s->name;
	if (name[0] != '_' || name[1] != 'Z')
		return name;
	if (!s->tried) {
		s->tried = true;
		s->demangled = __cxa_demangle(name, NULL, NULL, &status);
		if (status) {
			free(s->demangled);
			s->demangled = NULL;
		}
	}
	return s->demangled ? s->demangled : name;
}
