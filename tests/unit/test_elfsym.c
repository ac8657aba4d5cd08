// SPDX-License-Identifier: GPL-2.0
/*
 * ELF function symbols. Fixtures are compiled at test time with cc into a mkdtemp()
 * directory. Expected offsets never come from elfsym: they are computed from readelf's
 * symbol and program-header listings, and checked against the bytes of the functions
 * as loaded by dlopen() and as running in this test binary.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/elfsym.h"
#include "fixture.h"
#include "harness.h"
#include "lib/hist.h"

static const char lib_src[] =
	"int mp_lib_one(int x) { return x + 1; }\n"
	"int mp_lib_two(int x) { return x * 2; }\n"
	"static int mp_lib_static(int x) { return x - 3; }\n"
	"int (*mp_keep)(int) = mp_lib_static;\n"
	"__attribute__((visibility(\"hidden\"))) int mp_lib_hidden(int x) { return x ^ 5; }\n"
	"int mp_lib_hidden_user(int x) { return mp_lib_hidden(x) + 1; }\n"
	"int mp_ver_old(int x) { return x + 100; }\n"
	"int mp_ver_new(int x) { return x + 200; }\n"
	"__asm__(\".symver mp_ver_old, mp_ver@VER_1\");\n"
	"__asm__(\".symver mp_ver_new, mp_ver@@VER_2\");\n"
	"static int impl(int x) { return x; }\n"
	"static void *resolve(void) { return (void *)impl; }\n"
	"int mp_ifunc(int x) __attribute__((ifunc(\"resolve\")));\n"
	"int mp_data = 42;\n";

static const char lib_map[] =
	"VER_1 { global: mp_lib_*; mp_ver; mp_ver_*; mp_ifunc; mp_data; mp_keep; local: *; };\n"
	"VER_2 { global: mp_ver; } VER_1;\n";

static const char exe_src[] =
	"int mp_alpha(int x) { return x + 7; }\n"
	"int mp_beta(int x) { return mp_alpha(x) * 3; }\n"
	"static int mp_local(int x) { return x - 1; }\n"
	"int (*volatile fp)(int) = mp_local;\n"
	"int main(int argc, char **argv) { return mp_beta(argc) + fp(argc); }\n";

/* fixture files, relative to the temporary directory */
static const char *const fixture_files[] = {
	"lib.c", "ver.map", "exe.c", "libfix.so", "libshift.so", "libfix.stripped.so",
	"exe_pie", "exe_pie.stripped", "exe_nopie", "obj.o", "not_elf.txt", "empty",
	"short", "build.log",
};

static char fix_dir[64];
static int fix_state;	/* 0 not built, 1 built, -1 cannot build */
static char fix_reason[256];

static void fix_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", fix_dir, name);
}

static int write_file(const char *name, const void *data, size_t len)
{
	return fixture__write(fix_dir, name, data, len);
}


static void fixtures_remove(void)
{
	char path[128];
	size_t i;

	if (!fix_dir[0])
		return;
	for (i = 0; i < sizeof(fixture_files) / sizeof(fixture_files[0]); i++) {
		fix_path(path, sizeof(path), fixture_files[i]);
		unlink(path);
	}
	rmdir(fix_dir);
	fix_dir[0] = '\0';
}

__attribute__((destructor)) static void fixtures_cleanup(void)
{
	fixtures_remove();
}

/* builds the fixtures once; false (and the test skipped) when the toolchain is missing */
static bool fixtures(void)
{
	const char *not_elf = "#!/bin/sh\necho not an ELF file\n", *d = fix_dir;

	if (fix_state > 0)
		return true;
	if (fix_state < 0) {
		test__skip(fix_reason);
		return false;
	}
	fix_state = -1;
	if (fixture__run("cc --version >/dev/null 2>&1")) {
		snprintf(fix_reason, sizeof(fix_reason), "no working 'cc' to build ELF fixtures");
		goto skip;
	}
	if (fixture__run("readelf --version >/dev/null 2>&1 && strip --version >/dev/null 2>&1")) {
		snprintf(fix_reason, sizeof(fix_reason), "readelf or strip (binutils) missing");
		goto skip;
	}
	snprintf(fix_dir, sizeof(fix_dir), "/tmp/memphase-elfsym-XXXXXX");
	if (!mkdtemp(fix_dir)) {
		snprintf(fix_reason, sizeof(fix_reason), "mkdtemp: %s", strerror(errno));
		fix_dir[0] = '\0';
		goto skip;
	}
	if (write_file("lib.c", lib_src, strlen(lib_src)) ||
	    write_file("ver.map", lib_map, strlen(lib_map)) ||
	    write_file("exe.c", exe_src, strlen(exe_src)) ||
	    write_file("not_elf.txt", not_elf, strlen(not_elf)) ||
	    write_file("empty", "", 0) || write_file("short", "\177EL", 3)) {
		snprintf(fix_reason, sizeof(fix_reason), "cannot write fixtures in %s", d);
		goto fail;
	}
	/* libshift.so: text at 0x11000 but file offset 0x1000, so offset != address */
	if (fixture__run("cd %s && { "
		"cc -O1 -fPIC -shared -Wl,--version-script=ver.map -o libfix.so lib.c && "
		"cc -O1 -fPIC -shared -Wl,--version-script=ver.map -Wl,-Ttext-segment=0x10000 "
		"-o libshift.so lib.c && "
		"strip -o libfix.stripped.so libfix.so && "
		"cc -O1 -fPIE -pie -o exe_pie exe.c && "
		"strip -o exe_pie.stripped exe_pie && "
		"cc -O1 -no-pie -o exe_nopie exe.c && "
		"cc -O1 -c -o obj.o exe.c; } >build.log 2>&1", d)) {
		fixture__run("cat %s/build.log", d);
		snprintf(fix_reason, sizeof(fix_reason), "building ELF fixtures with cc failed");
		goto fail;
	}
	fix_state = 1;
	return true;

fail:
	/* the toolchain is there but broken: a failure, not a skip */
	test__fail();
	printf("%s\n", fix_reason);
	fixtures_remove();
	return false;
skip:
	test__skip(fix_reason);
	return false;
}

/* --- expectations from readelf, an independent reader --- */

struct re_sym {
	char name[512];		/* without "@VER" */
	unsigned long long value;
	int local, hidden_ver;	/* STB_LOCAL; "name@VER" (not "@@") */
};

/*
 * Defined FUNC/IFUNC symbols with a non-zero value from readelf -W --syms (both tables;
 * readelf appends versions from .gnu.version to .dynsym names). Returns the count or -1.
 */
static int readelf_syms(const char *path, struct re_sym **out)
{
	char cmd[256], line[1024], type[32], bind[32], vis[32], ndx[32], name[512], *at;
	struct re_sym *syms = NULL, *tmp;
	unsigned long long value;
	int n = 0, cap = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -W --syms '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%*d: %llx %*s %31s %31s %31s %31s %511s", &value, type, bind, vis,
			   ndx, name) != 6)
			continue;
		if (strcmp(type, "FUNC") && strcmp(type, "IFUNC"))
			continue;
		if (!strcmp(ndx, "UND") || !strcmp(ndx, "ABS") || !value)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(syms, cap * sizeof(*syms));
			if (!tmp)
				break;
			syms = tmp;
		}
		at = strchr(name, '@');
		syms[n].hidden_ver = at && at[1] != '@';
		if (at)
			*at = '\0';
		snprintf(syms[n].name, sizeof(syms[n].name), "%s", name);
		syms[n].value = value;
		syms[n].local = !strcmp(bind, "LOCAL");
		n++;
	}
	if (pclose(p)) {
		free(syms);
		return -1;
	}
	*out = syms;
	return n;
}

/* st_value -> file offset through readelf -W -l's LOAD lines */
static int readelf_vaddr_to_off(const char *path, unsigned long long vaddr,
				unsigned long long *off)
{
	unsigned long long o, va, pa, filesz, memsz;
	char cmd[256], line[512];
	int found = -ENOENT;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -W -l '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx", &o, &va, &pa, &filesz,
			   &memsz) != 5)
			continue;
		if (vaddr >= va && vaddr < va + filesz) {
			*off = vaddr - va + o;
			found = 0;
		}
	}
	pclose(p);
	return found;
}

/*
 * The offset uprobes want for name, per readelf: the global default-version definition
 * if there is one, else a hidden version, else a local one; -ENOENT if none, -EEXIST if
 * the best candidates disagree.
 */
static int expected_off(const char *path, const char *name, unsigned long long *off)
{
	struct re_sym *syms = NULL;
	unsigned long long value = 0;
	int n, i, best = 3, rank, err = -ENOENT;

	n = readelf_syms(path, &syms);
	if (n < 0)
		return -EIO;
	for (i = 0; i < n; i++) {
		if (strcmp(syms[i].name, name))
			continue;
		rank = syms[i].local ? 2 : syms[i].hidden_ver;
		if (rank < best) {
			best = rank;
			value = syms[i].value;
			err = 0;
		} else if (rank == best && syms[i].value != value) {
			err = -EEXIST;
		}
	}
	free(syms);
	if (err)
		return err;
	return readelf_vaddr_to_off(path, value, off);
}

/* lookup agrees with readelf on name: both find the same offset, or both find nothing */
static bool check_sym(struct elfsym *e, const char *path, const char *name, bool present)
{
	unsigned long long want = 0;
	__u64 off = 0;
	int err, werr;

	werr = expected_off(path, name, &want);
	err = elfsym__lookup(e, name, &off);
	if (!present) {
		return ASSERT_EQ(werr, -ENOENT, name) && ASSERT_EQ(err, -ENOENT, name);
	}
	if (!ASSERT_OK(werr, "readelf knows the symbol") || !ASSERT_OK(err, "elfsym__lookup"))
		goto fail;
	if (!ASSERT_EQ(off, want, "file offset"))
		goto fail;
	return true;
fail:
	printf("  symbol %s in %s\n", name, path);
	return false;
}

static struct elfsym *open_fixture(const char *name, char *path, size_t len)
{
	struct elfsym *e;

	fix_path(path, len, name);
	e = elfsym__open(path);
	ASSERT_OK_PTR(e, name);
	return e;
}

/* bytes at off in the file equal len bytes at mem */
static bool file_bytes_equal(const char *path, __u64 off, const void *mem, size_t len)
{
	unsigned char buf[64];
	ssize_t n;
	int fd;

	if (len > sizeof(buf))
		len = sizeof(buf);
	fd = open(path, O_RDONLY);
	if (!ASSERT_GE(fd, 0, "open"))
		return false;
	n = pread(fd, buf, len, off);
	close(fd);
	if (!ASSERT_EQ(n, (ssize_t)len, "pread"))
		return false;
	return !memcmp(buf, mem, len);
}

/* --- tests --- */

TEST(elfsym_pie_executable)
{
	char path[128];
	struct elfsym *e;

	if (!fixtures())
		return;
	e = open_fixture("exe_pie", path, sizeof(path));
	if (!e)
		return;
	check_sym(e, path, "mp_alpha", true);
	check_sym(e, path, "mp_beta", true);
	check_sym(e, path, "main", true);
	check_sym(e, path, "mp_local", true);	/* static: .symtab only */
	check_sym(e, path, "mp_missing", false);
	check_sym(e, path, "fp", false);	/* an object, not a function */
	check_sym(e, path, "__libc_start_main", false);	/* undefined here */
	check_sym(e, path, "", false);
	check_sym(e, path, "mp_alph", false);	/* no prefix matches */
	check_sym(e, path, "mp_alphaa", false);
	elfsym__close(e);
}

TEST(elfsym_non_pie_executable)
{
	unsigned long long vaddr_off;
	char path[128];
	struct elfsym *e;
	__u64 off;

	if (!fixtures())
		return;
	e = open_fixture("exe_nopie", path, sizeof(path));
	if (!e)
		return;
	check_sym(e, path, "mp_alpha", true);
	check_sym(e, path, "mp_local", true);
	/* ET_EXEC: the file offset is far below the link address */
	if (ASSERT_OK(elfsym__lookup(e, "mp_alpha", &off), "lookup") &&
	    ASSERT_OK(expected_off(path, "mp_alpha", &vaddr_off), "readelf"))
		ASSERT_LT(off, 0x400000, "offset, not address");
	elfsym__close(e);
}

TEST(elfsym_shared_object)
{
	char path[128];
	struct elfsym *e;
	__u64 ver, ver_new, ver_old;

	if (!fixtures())
		return;
	e = open_fixture("libfix.so", path, sizeof(path));
	if (!e)
		return;
	check_sym(e, path, "mp_lib_one", true);
	check_sym(e, path, "mp_lib_two", true);
	check_sym(e, path, "mp_lib_static", true);
	check_sym(e, path, "mp_lib_hidden", true);
	check_sym(e, path, "mp_ifunc", true);	/* STT_GNU_IFUNC */
	check_sym(e, path, "mp_data", false);
	check_sym(e, path, "mp_keep", false);
	/* mp_ver@VER_1 and mp_ver@@VER_2: "mp_ver" is the default, VER_2 */
	check_sym(e, path, "mp_ver", true);
	if (ASSERT_OK(elfsym__lookup(e, "mp_ver", &ver), "mp_ver") &&
	    ASSERT_OK(elfsym__lookup(e, "mp_ver_new", &ver_new), "mp_ver_new") &&
	    ASSERT_OK(elfsym__lookup(e, "mp_ver_old", &ver_old), "mp_ver_old")) {
		ASSERT_EQ(ver, ver_new, "mp_ver is mp_ver@@VER_2");
		ASSERT_NEQ(ver, ver_old, "not mp_ver@VER_1");
	}
	check_sym(e, path, "mp_ver@VER_1", false);
	check_sym(e, path, "mp_ver@@VER_2", false);
	elfsym__close(e);
}

TEST(elfsym_offset_differs_from_address)
{
	unsigned long long want;
	char path[128];
	struct elfsym *e;
	__u64 off = 0;

	if (!fixtures())
		return;
	e = open_fixture("libshift.so", path, sizeof(path));
	if (!e)
		return;
	check_sym(e, path, "mp_lib_one", true);
	check_sym(e, path, "mp_ver", true);
	check_sym(e, path, "mp_lib_static", true);
	/* the same code sits at the same file offset as in libfix.so, 0x10000 below its address */
	if (ASSERT_OK(elfsym__lookup(e, "mp_lib_two", &off), "lookup")) {
		fix_path(path, sizeof(path), "libfix.so");
		if (ASSERT_OK(expected_off(path, "mp_lib_two", &want), "readelf libfix.so"))
			ASSERT_EQ(off, want, "same offset as unshifted");
	}
	elfsym__close(e);
}

TEST(elfsym_stripped)
{
	char path[128], full[128];
	struct elfsym *e, *f = NULL;
	__u64 a, b;

	if (!fixtures())
		return;
	/* only .dynsym is left: exported functions, with versions from .gnu.version */
	e = open_fixture("libfix.stripped.so", path, sizeof(path));
	if (!e)
		return;
	check_sym(e, path, "mp_lib_one", true);
	check_sym(e, path, "mp_ifunc", true);
	check_sym(e, path, "mp_ver", true);
	check_sym(e, path, "mp_lib_static", false);
	check_sym(e, path, "mp_lib_hidden", false);
	f = open_fixture("libfix.so", full, sizeof(full));
	if (f && ASSERT_OK(elfsym__lookup(e, "mp_ver", &a), "stripped") &&
	    ASSERT_OK(elfsym__lookup(f, "mp_ver", &b), "unstripped"))
		ASSERT_EQ(a, b, "mp_ver same as unstripped");
	elfsym__close(e);
	elfsym__close(f);

	/* a stripped executable exports none of its functions */
	e = open_fixture("exe_pie.stripped", path, sizeof(path));
	if (!e)
		return;
	check_sym(e, path, "mp_alpha", false);
	check_sym(e, path, "main", false);
	elfsym__close(e);
}

/* every unambiguous function readelf lists is found at readelf's offset */
static void check_all(const char *path)
{
	struct re_sym *syms = NULL;
	unsigned long long want;
	struct elfsym *e;
	int n, i, j, checked = 0, bad = 0;
	__u64 off;

	e = elfsym__open(path);
	if (!ASSERT_OK_PTR(e, path))
		return;
	n = readelf_syms(path, &syms);
	if (!ASSERT_GT(n, 0, "readelf symbols"))
		goto cleanup;
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++)
			if (!strcmp(syms[i].name, syms[j].name) && syms[i].value != syms[j].value)
				break;
		if (j < n)
			continue;	/* several definitions: checked by the named tests */
		if (readelf_vaddr_to_off(path, syms[i].value, &want))
			continue;
		checked++;
		if (elfsym__lookup(e, syms[i].name, &off) || off != want) {
			if (bad++ < 5)
				printf("  %s: %s not at 0x%llx\n", path, syms[i].name, want);
		}
	}
	ASSERT_EQ(bad, 0, "symbols that disagree with readelf");
	ASSERT_GE(checked, 5, "symbols checked");
cleanup:
	free(syms);
	elfsym__close(e);
}

TEST(elfsym_all_symbols_match_readelf)
{
	char path[128];

	if (!fixtures())
		return;
	fix_path(path, sizeof(path), "libfix.so");
	check_all(path);
	fix_path(path, sizeof(path), "exe_pie");
	check_all(path);
	fix_path(path, sizeof(path), "exe_nopie");
	check_all(path);
}

/*
 * The first lookups scan the index, later ones search it sorted: both give the same answer
 * for every name (readelf's, and names that are not there), duplicates included.
 */
#define LIBC_PATH "/usr/lib/x86_64-linux-gnu/libc.so.6"

static void check_scan_equals_search(const char *path)
{
	struct re_sym *syms = NULL;
	struct elfsym *scan, *search;
	__u64 a, b;
	int n, i, j, ra, rb, bad = 0;

	scan = elfsym__open(path);
	search = elfsym__open(path);
	if (!ASSERT_OK_PTR(scan, path) || !ASSERT_OK_PTR(search, path))
		goto cleanup;
	n = readelf_syms(path, &syms);
	if (!ASSERT_GT(n, 0, "readelf symbols"))
		goto cleanup;
	/* past the scans: sorted from here on */
	for (j = 0; j < 64; j++)
		elfsym__lookup(search, "mp_no_such_function", &b);
	for (i = 0; i < n + 1; i++) {
		const char *name = i < n ? syms[i].name : "mp_no_such_function";

		/* a fresh one every 16 lookups: all of its lookups are scans (ELFSYM_SCANS) */
		if (i && !(i % 16)) {
			elfsym__close(scan);
			scan = elfsym__open(path);
			if (!ASSERT_OK_PTR(scan, "reopen"))
				goto cleanup;
		}
		a = b = 0;
		ra = elfsym__lookup(scan, name, &a);
		rb = elfsym__lookup(search, name, &b);
		if ((ra != rb || a != b) && bad++ < 5)
			printf("  %s: %s: scan %d 0x%llx, search %d 0x%llx\n", path, name, ra,
			       (unsigned long long)a, rb, (unsigned long long)b);
	}
	ASSERT_EQ(bad, 0, "lookups where scan and search disagree");
cleanup:
	free(syms);
	elfsym__close(scan);
	elfsym__close(search);
}

TEST(elfsym_scan_equals_search)
{
	char path[128];

	if (!fixtures())
		return;
	fix_path(path, sizeof(path), "libfix.so");
	check_scan_equals_search(path);
	fix_path(path, sizeof(path), "exe_pie");
	check_scan_equals_search(path);
	/* many names, versioned duplicates */
	if (!access(LIBC_PATH, R_OK))
		check_scan_equals_search(LIBC_PATH);
}

/*
 * The .gnu.hash filter never rules out a function the index has (every one libc defines
 * passes), rules out names libc lacks, and does not apply where a .symtab or "::" is.
 */
TEST(elfsym_may_define)
{
	const char *cuda[] = { "cudaMallocHost", "cuMemAllocHost_v2", "mp_no_such_function" };
	const char *some[] = { "cudaMallocHost", "malloc" };
	const char *cxx[] = { "ns::f" };
	struct re_sym *syms = NULL;
	char path[128];
	int n, i, missed = 0;

	if (access(LIBC_PATH, R_OK)) {
		test__skip("no " LIBC_PATH);
		return;
	}
	ASSERT_FALSE(elfsym__may_define(LIBC_PATH, cuda, 3), "libc: none of them");
	ASSERT_TRUE(elfsym__may_define(LIBC_PATH, some, 2), "libc: malloc");
	ASSERT_TRUE(elfsym__may_define(LIBC_PATH, cxx, 1), "a C++ name");
	ASSERT_TRUE(elfsym__may_define("/nonexistent", cuda, 3), "no file: cannot tell");
	n = readelf_syms(LIBC_PATH, &syms);
	if (!ASSERT_GT(n, 100, "libc's functions"))
		goto cleanup;
	for (i = 0; i < n; i++) {
		const char *one[] = { syms[i].name };

		if (!elfsym__may_define(LIBC_PATH, one, 1) && missed++ < 5)
			printf("  ruled out: %s\n", syms[i].name);
	}
	ASSERT_EQ(missed, 0, "libc functions ruled out");
	if (!fixtures())
		goto cleanup;
	/* a .symtab (static functions): no filter */
	fix_path(path, sizeof(path), "libfix.so");
	ASSERT_TRUE(elfsym__may_define(path, cuda, 3), "with .symtab");
cleanup:
	free(syms);
}

TEST(elfsym_bytes_match_dlopen)
{
	char path[128];
	struct elfsym *e;
	void *h = NULL, *fn;
	__u64 off;

	if (!fixtures())
		return;
	e = open_fixture("libfix.so", path, sizeof(path));
	if (!e)
		return;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!ASSERT_OK_PTR(h, "dlopen")) {
		printf("  %s\n", dlerror());
		goto cleanup;
	}
	/* the code the dynamic linker resolves is the code at the offset in the file */
	fn = dlsym(h, "mp_lib_one");
	if (ASSERT_OK_PTR(fn, "dlsym mp_lib_one") &&
	    ASSERT_OK(elfsym__lookup(e, "mp_lib_one", &off), "lookup"))
		ASSERT_TRUE(file_bytes_equal(path, off, fn, 4), "mp_lib_one bytes");
	fn = dlsym(h, "mp_ver");	/* the default version */
	if (ASSERT_OK_PTR(fn, "dlsym mp_ver") &&
	    ASSERT_OK(elfsym__lookup(e, "mp_ver", &off), "lookup"))
		ASSERT_TRUE(file_bytes_equal(path, off, fn, 7), "mp_ver bytes");
	fn = dlvsym(h, "mp_ver", "VER_1");	/* different code: proves the check can fail */
	if (ASSERT_OK_PTR(fn, "dlvsym mp_ver@VER_1"))
		ASSERT_FALSE(file_bytes_equal(path, off, fn, 7), "mp_ver@VER_1 differs");
cleanup:
	if (h)
		dlclose(h);
	elfsym__close(e);
}

TEST(elfsym_bytes_match_self)
{
	struct elfsym *e;
	char path[4096];
	ssize_t n;
	__u64 off;

	/* this very binary: its own functions, as they run */
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (!ASSERT_GT(n, 0, "readlink /proc/self/exe"))
		return;
	path[n] = '\0';
	e = elfsym__open(path);
	if (!ASSERT_OK_PTR(e, path))
		return;
	if (ASSERT_OK(elfsym__lookup(e, "elfsym__lookup", &off), "elfsym__lookup"))
		ASSERT_TRUE(file_bytes_equal(path, off, (const void *)elfsym__lookup, 32),
			    "elfsym__lookup bytes");
	if (ASSERT_OK(elfsym__lookup(e, "hist__slot", &off), "hist__slot"))
		ASSERT_TRUE(file_bytes_equal(path, off, (const void *)hist__slot, 16),
			    "hist__slot bytes");
	elfsym__close(e);
}

TEST(elfsym_not_elf)
{
	static const char *const bad[] = { "not_elf.txt", "empty", "short", "obj.o" };
	static const char *const good[] = {
		"exe_pie", "exe_nopie", "libfix.so", "libfix.stripped.so", "exe_pie.stripped",
	};
	char path[128];
	size_t i;

	if (!fixtures())
		return;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fix_path(path, sizeof(path), bad[i]);
		ASSERT_EQ(elfsym__is_elf(path), 0, bad[i]);
		errno = 0;
		ASSERT_NULL(elfsym__open(path), bad[i]);
		ASSERT_EQ(errno, ENOEXEC, bad[i]);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		fix_path(path, sizeof(path), good[i]);
		ASSERT_EQ(elfsym__is_elf(path), 1, good[i]);
	}

	fix_path(path, sizeof(path), "does-not-exist");
	ASSERT_EQ(elfsym__is_elf(path), 0, "missing file");
	errno = 0;
	ASSERT_NULL(elfsym__open(path), "missing file");
	ASSERT_EQ(errno, ENOENT, "errno of a missing file");
	ASSERT_EQ(elfsym__is_elf(fix_dir), 0, "directory");
	ASSERT_NULL(elfsym__open(fix_dir), "directory");
	ASSERT_EQ(elfsym__is_elf(NULL), 0, "NULL");
	elfsym__close(NULL);
}

/* one symbol as libelf would give it: type, binding, size, in section 1 */
static GElf_Sym tsym(int type, int bind, __u64 size)
{
	GElf_Sym s = {};

	s.st_info = GELF_ST_INFO(bind, type);
	s.st_size = size;
	s.st_shndx = 1;
	return s;
}

TEST(elfsym_table_by_address)
{
	struct elfsym_table *t = elfsym_table__new();
	GElf_Sym f64 = tsym(STT_FUNC, STB_GLOBAL, 64), loc = tsym(STT_FUNC, STB_LOCAL, 64);
	GElf_Sym nosz = tsym(STT_FUNC, STB_GLOBAL, 0), obj = tsym(STT_OBJECT, STB_GLOBAL, 8);
	GElf_Sym undef = tsym(STT_FUNC, STB_GLOBAL, 8);
	__u64 off = 0;

	undef.st_shndx = SHN_UNDEF;
	if (!ASSERT_OK_PTR(t, "table"))
		return;
	/* at 0x1000 three names: the global, unversioned, fewest underscores wins */
	ASSERT_OK(elfsym_table__add(t, NULL, "__libc_malloc", &f64, 1, 0x1000), "alias");
	ASSERT_OK(elfsym_table__add(t, NULL, "malloc@@GLIBC_2.2.5", &f64, 1, 0x1000), "malloc");
	ASSERT_OK(elfsym_table__add(t, NULL, "malloc_local", &loc, 1, 0x1000), "local");
	/* a sizeless symbol reaches to the next one */
	ASSERT_OK(elfsym_table__add(t, NULL, "_ZN14llama_kv_cacheC2Ev", &nosz, 1, 0x2000), "c++");
	ASSERT_OK(elfsym_table__add(t, NULL, "next", &f64, 1, 0x2100), "next");
	/* not functions: kept out */
	ASSERT_OK(elfsym_table__add(t, NULL, "table", &obj, 1, 0x3000), "object");
	ASSERT_OK(elfsym_table__add(t, NULL, "imported", &undef, SHN_UNDEF, 0x4000), "undef");
	ASSERT_EQ(elfsym_table__finish(t), 3UL, "one per address, functions only");
	ASSERT_STREQ(elfsym_table__find(t, 0x1010, &off), "malloc", "preferred name");
	ASSERT_EQ(off, 0x10ULL, "offset in it");
	ASSERT_STREQ(elfsym_table__find(t, 0x20ff, &off), "llama_kv_cache::llama_kv_cache()",
		     "demangled, sizeless up to the next");
	ASSERT_EQ(off, 0xffULL, "offset in the sizeless one");
	ASSERT_STREQ(elfsym_table__find(t, 0x2100, NULL), "next", "the next one");
	ASSERT_TRUE(elfsym_table__find(t, 0x1040, NULL) == NULL, "past a sized symbol");
	ASSERT_TRUE(elfsym_table__find(t, 0xfff, NULL) == NULL, "below the first");
	ASSERT_TRUE(elfsym_table__find(t, 0x3000, NULL) == NULL, "an object is no function");
	elfsym_table__free(t);
}

/*
 * C++ names as people write them: "ns::Cls::method" finds the method (a const one too,
 * and one whose name carries an ABI tag), the same address readelf gives its mangled
 * symbol; "ns::Cls::method(int)" picks that overload; a name that is not there is not.
 */
TEST(elfsym_cxx_names)
{
	static const char src[] =
		"#include <string>\n"
		"namespace ns { struct Cls {\n"
		"  __attribute__((noinline)) int method(int x);\n"
		"  __attribute__((noinline)) int method(double x);\n"
		"  __attribute__((noinline)) int cmethod(int x) const;\n"
		"  __attribute__((noinline)) std::string tagged(int x);\n"
		"}; }\n"
		"int ns::Cls::method(int x) { return x + 1; }\n"
		"int ns::Cls::method(double x) { return (int)x + 2; }\n"
		"int ns::Cls::cmethod(int x) const { return x + 3; }\n"
		"std::string ns::Cls::tagged(int x) { return std::to_string(x); }\n";
	struct { const char *name, *mangled; } want[] = {
		{ "ns::Cls::cmethod", "_ZNK2ns3Cls7cmethodEi" },
		{ "ns::Cls::method(double)", "_ZN2ns3Cls6methodEd" },
		{ "ns::Cls::tagged", "_ZN2ns3Cls6taggedB5cxx11Ei" },
	};
	char path[128], dir[] = "/tmp/memphase-cxx-XXXXXX";
	struct re_sym *syms = NULL;
	struct elfsym *es = NULL;
	unsigned int i;
	__u64 off;
	int n, k;

	if (fixture__run("g++ --version >/dev/null 2>&1")) {
		test__skip("no g++ to build a C++ fixture");
		return;
	}
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(path, sizeof(path), "%s/cxx.cpp", dir);
	if (!ASSERT_OK(fixture__write(dir, "cxx.cpp", src, strlen(src)), "write") ||
	    !ASSERT_OK(fixture__run("cd %s && g++ -O1 -fPIC -shared -o libcxx.so cxx.cpp", dir),
		       "g++"))
		goto cleanup;
	snprintf(path, sizeof(path), "%s/libcxx.so", dir);
	es = elfsym__open(path);
	n = readelf_syms(path, &syms);
	if (!ASSERT_OK_PTR(es, "open") || !ASSERT_GT(n, 0, "readelf"))
		goto cleanup;
	ASSERT_OK(elfsym__lookup(es, "ns::Cls::method", &off), "an overloaded method");
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		for (k = 0; k < n && strcmp(syms[k].name, want[i].mangled); k++)
			;
		if (!ASSERT_LT(k, n, want[i].mangled) ||
		    !ASSERT_OK(elfsym__lookup(es, want[i].name, &off), want[i].name))
			continue;
		ASSERT_EQ(off, (__u64)syms[k].value, want[i].name);
	}
	ASSERT_EQ(elfsym__lookup(es, "ns::Cls::nothere", &off), -ENOENT, "no such method");
	ASSERT_EQ(elfsym__lookup(es, "ns::Other::method", &off), -ENOENT, "no such class");
cleanup:
	elfsym__close(es);
	free(syms);
	fixture__run("rm -rf %s", dir);
}
