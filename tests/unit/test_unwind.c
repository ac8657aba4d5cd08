// SPDX-License-Identifier: GPL-2.0
/*
 * Stack unwinding and symbolization (user/unwind.c). Fixtures are compiled at test time
 * into a mkdtemp() directory: -O2 -fomit-frame-pointer programs with a main -> level1 ->
 * level2 -> leaf chain that stop themselves (raise(SIGSTOP)) inside leaf when run with an
 * argument. The test copies the stopped child's registers (ptrace PTRACE_SEIZE +
 * PTRACE_INTERRUPT + PTRACE_GETREGS) and up to MP_STACK_MAX bytes of stack from rsp, page
 * by page as the BPF side does, then unwinds and symbolizes the copy.
 * The ptrace tests need root (ptrace, /proc/PID/map_files) and skip otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "harness.h"
#include "collect/unwind.h"

#define NOINLINE "__attribute__((noinline, noclone))"

static const char prog_src[] =
	"#include <signal.h>\n"
	"#include <stdio.h>\n"
	"#include <string.h>\n"
	"#define NOINLINE " NOINLINE "\n"
	"#ifndef VARIANT\n"
	"#define VARIANT 0\n"
	"#endif\n"
	"volatile long sink;\n"
	"static int stop_here;\n"
	"NOINLINE static long leaf(long n)\n"
	"{\n"
	"	char buf[512];\n"
	"	long i, s = VARIANT;\n"
	"	memset(buf, (int)n, sizeof(buf));\n"
	"	for (i = 0; i < (long)sizeof(buf); i++)\n"
	"		s += buf[i] * (i + 1);\n"
	"	sink = s;\n"
	"	if (stop_here)\n"
	"		raise(SIGSTOP);\n"
	"	return s + sink;\n"
	"}\n"
	"NOINLINE static long level2(long n)\n"
	"{ long r = leaf(n * 3 + 1); sink ^= r; return r + n; }\n"
	"NOINLINE long level1(long n) { long r = level2(n + 5); sink ^= r; return r * 2; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	stop_here = argc > 1;\n"
	"	printf(\"%ld\\n\", level1(argc));\n"
	"	return 0;\n"
	"}\n";

static const char lib_src[] =
	"#include <signal.h>\n"
	"#define NOINLINE " NOINLINE "\n"
	"volatile long lib_sink;\n"
	"NOINLINE static long lib_inner(long n)\n"
	"{\n"
	"	lib_sink += n;\n"
	"	if (n > 2)\n"
	"		raise(SIGSTOP);\n"
	"	return lib_sink * 2;\n"
	"}\n"
	"long mp_lib_work(long n) { long r = lib_inner(n + 1); lib_sink ^= r; return r + 1; }\n";

static const char use_src[] =
	"#include <stdio.h>\n"
	"#define NOINLINE " NOINLINE "\n"
	"long mp_lib_work(long n);\n"
	"NOINLINE long caller(long n) { long r = mp_lib_work(n); return r * 3; }\n"
	"int main(int argc, char **argv) { printf(\"%ld\\n\", caller(argc)); return 0; }\n";

/* stops once before it dlopen()s libmpunw.so, then again inside it */
static const char late_src[] =
	"#include <dlfcn.h>\n"
	"#include <signal.h>\n"
	"#include <stdio.h>\n"
	"#define NOINLINE " NOINLINE "\n"
	"NOINLINE long caller(long (*fn)(long), long n) { long r = fn(n); return r * 3; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	long (*fn)(long);\n"
	"	void *h;\n"
	"	raise(SIGSTOP);\n"
	"	h = dlopen(LIBPATH, RTLD_NOW);\n"
	"	if (!h)\n"
	"		return 1;\n"
	"	fn = (long (*)(long))dlsym(h, \"mp_lib_work\");\n"
	"	printf(\"%ld\\n\", caller(fn, argc));\n"
	"	return 0;\n"
	"}\n";

static const char cxx_src[] =
	"#include <csignal>\n"
	"#include <cstdio>\n"
	"namespace mp {\n"
	"template <typename T> struct Worker {\n"
	"	T v;\n"
	"	__attribute__((noinline)) T fixture__run(int n);\n"
	"};\n"
	"template <typename T> T Worker<T>::fixture__run(int n)\n"
	"{\n"
	"	v += n;\n"
	"	if (n > 1)\n"
	"		std::raise(SIGSTOP);\n"
	"	return v * 2;\n"
	"}\n"
	"}\n"
	"int main(int argc, char **)\n"
	"{\n"
	"	mp::Worker<long> w{3};\n"
	"	std::printf(\"%ld\\n\", w.fixture__run(argc));\n"
	"	return 0;\n"
	"}\n";

#define CFLAGS_NOFP "-g -O2 -fomit-frame-pointer"

static char fix_dir[64];
static int fix_state;	/* 0 not built, 1 built, -1 cannot build */
static char fix_reason[256];
static bool have_cxx;
/* installed under /usr/lib/debug/.build-id by unwind_buildid_debug, removed at exit */
static char buildid_debug[512];

static void fix_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", fix_dir, name);
}

static int write_file(const char *name, const char *data)
{
	return fixture__write(fix_dir, name, data, strlen(data));
}


static void buildid_debug_remove(void)
{
	char dir[512], *slash;

	if (!buildid_debug[0])
		return;
	unlink(buildid_debug);
	snprintf(dir, sizeof(dir), "%s", buildid_debug);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		rmdir(dir);	/* only if we emptied it */
	}
	buildid_debug[0] = '\0';
}

__attribute__((destructor)) static void fixtures_cleanup(void)
{
	buildid_debug_remove();
	if (fix_dir[0])
		fixture__run("rm -rf '%s'", fix_dir);
	fix_dir[0] = '\0';
}

static bool need_root(void)
{
	if (geteuid() == 0)
		return true;
	test__skip("needs root (ptrace of the fixtures, /proc/PID/map_files)");
	return false;
}

/* builds the fixtures once; false (and the test skipped or failed) when it cannot */
static bool fixtures(void)
{
	const char *d = fix_dir;

	if (fix_state > 0)
		return true;
	if (fix_state < 0) {
		test__skip(fix_reason);
		return false;
	}
	fix_state = -1;
	if (fixture__run("cc --version >/dev/null 2>&1 && objcopy --version >/dev/null 2>&1")) {
		snprintf(fix_reason, sizeof(fix_reason), "no working cc or objcopy for fixtures");
		goto skip;
	}
	snprintf(fix_dir, sizeof(fix_dir), "/tmp/memphase-unwind-XXXXXX");
	if (!mkdtemp(fix_dir)) {
		snprintf(fix_reason, sizeof(fix_reason), "mkdtemp: %s", strerror(errno));
		fix_dir[0] = '\0';
		goto skip;
	}
	if (write_file("prog.c", prog_src) || write_file("lib.c", lib_src) ||
	    write_file("use.c", use_src) || write_file("late.c", late_src) ||
	    write_file("prog.cpp", cxx_src)) {
		snprintf(fix_reason, sizeof(fix_reason), "cannot write fixtures in %s", d);
		goto fail;
	}
	/*
	 * prog: PIE; prog_nopie; prog_dbg: no .symtab, .gnu_debuglink to prog_dbg.debug;
	 * prog_nodbg: no .symtab and no debug file; prog_bid (another build ID): no .symtab,
	 * debug file by build ID only; uselib + libmpunw.so; late: dlopen()s libmpunw.so.
	 */
	if (fixture__run("cd %s && { "
		"cc " CFLAGS_NOFP " -o prog prog.c && "
		"cc " CFLAGS_NOFP " -no-pie -o prog_nopie prog.c && "
		"cc " CFLAGS_NOFP " -o prog_dbg prog.c && "
		"objcopy --only-keep-debug prog_dbg prog_dbg.debug && "
		"objcopy --strip-all --add-gnu-debuglink=prog_dbg.debug prog_dbg && "
		"objcopy --strip-all prog prog_nodbg && "
		"cc " CFLAGS_NOFP " -DVARIANT=7 -o prog_bid prog.c && "
		"objcopy --only-keep-debug prog_bid prog_bid.debug && "
		"objcopy --strip-all prog_bid && "
		"cc " CFLAGS_NOFP " -fPIC -shared -o libmpunw.so lib.c && "
		"cc " CFLAGS_NOFP " -o uselib use.c -L. -lmpunw -Wl,-rpath,%s && "
		"cc " CFLAGS_NOFP " -DLIBPATH='\"%s/libmpunw.so\"' -o late late.c -ldl; "
		"} >build.log 2>&1", d, d, d)) {
		fixture__run("cat %s/build.log", d);
		snprintf(fix_reason, sizeof(fix_reason), "building the fixtures with cc failed");
		goto fail;
	}
	have_cxx = !fixture__run("cd %s && g++ " CFLAGS_NOFP " -o progxx prog.cpp >>build.log 2>&1", d);
	fix_state = 1;
	return true;

fail:
	/* the toolchain is there but broken: a failure, not a skip */
	test__fail();
	printf("%s\n", fix_reason);
	return false;
skip:
	test__skip(fix_reason);
	return false;
}

/* ---- a stopped child and its copied stack ---- */

struct child {
	pid_t pid;
	__u64 regs[MP_NR_REGS];
	unsigned char stack[MP_STACK_MAX];
	__u32 stack_len;
};

static void child_kill(struct child *c)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	c->pid = 0;
}

/* runs a fixture with an argument and waits until it stopped itself */
static bool child_start(struct child *c, const char *name)
{
	char path[128];
	int st = 0;
	pid_t r;

	memset(c, 0, sizeof(*c));
	fix_path(path, sizeof(path), name);
	c->pid = fork();
	if (!ASSERT_GE(c->pid, 0, "fork"))
		return false;
	if (!c->pid) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 1);
		execl(path, path, "stop", "here", (char *)NULL);
		_exit(127);
	}
	r = waitpid(c->pid, &st, WUNTRACED);
	if (ASSERT_EQ(r, c->pid, "waitpid") && ASSERT_TRUE(WIFSTOPPED(st), "child stopped itself"))
		return true;
	if (r == c->pid)
		c->pid = 0;	/* it ended and was reaped */
	child_kill(c);
	return false;
}

/* end of the mapping holding addr in /proc/PID/maps, 0 if none */
static __u64 vma_end(pid_t pid, __u64 addr)
{
	unsigned long long s, e, end = 0;
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && addr >= s && addr < e)
			end = e;
	fclose(f);
	return end;
}

/*
 * Copies regs and the stack the way bpf/stacks.bpf.c does. Returns 1 on success, 0 if
 * ptrace is not permitted (the test is skipped), -1 on failure.
 */
static int child_capture(struct child *c)
{
	struct user_regs_struct r;
	struct iovec local, remote;
	__u64 sp, end, addr, chunk;
	int st, ret = -1;
	ssize_t n;

	if (ptrace(PTRACE_SEIZE, c->pid, 0, 0)) {
		if (errno == EPERM || errno == EACCES) {
			char reason[128];

			snprintf(reason, sizeof(reason), "ptrace not permitted: %s",
				 strerror(errno));
			test__skip(reason);
			return 0;
		}
		ASSERT_OK(-errno, "PTRACE_SEIZE");
		return -1;
	}
	if (!ASSERT_OK(ptrace(PTRACE_INTERRUPT, c->pid, 0, 0), "PTRACE_INTERRUPT") ||
	    !ASSERT_EQ(waitpid(c->pid, &st, __WALL), c->pid, "waitpid tracee") ||
	    !ASSERT_OK(ptrace(PTRACE_GETREGS, c->pid, 0, &r), "PTRACE_GETREGS"))
		goto detach;
	/* user_regs_struct starts with struct pt_regs' 21 registers, in its order */
	memcpy(c->regs, &r, sizeof(c->regs));
	sp = c->regs[MP_RSP];
	end = vma_end(c->pid, sp);
	if (!ASSERT_GT(end, sp, "stack mapping"))
		goto detach;
	if (end - sp > MP_STACK_MAX)
		end = sp + MP_STACK_MAX;
	/* page by page, stopping at the first page that cannot be read */
	for (addr = sp; addr < end; addr += chunk) {
		chunk = ((addr | 4095) + 1) - addr;
		if (chunk > end - addr)
			chunk = end - addr;
		local.iov_base = c->stack + (addr - sp);
		local.iov_len = chunk;
		remote.iov_base = (void *)(uintptr_t)addr;
		remote.iov_len = chunk;
		n = process_vm_readv(c->pid, &local, 1, &remote, 1, 0);
		if (n != (ssize_t)chunk)
			break;
		c->stack_len += chunk;
	}
	if (ASSERT_GT(c->stack_len, 0, "stack copied"))
		ret = 1;
detach:
	ptrace(PTRACE_DETACH, c->pid, 0, 0);
	return ret;
}

/* ---- frames ---- */

struct frames {
	__u64 ips[128];
	int n;
	struct unwind_sym syms[128];
};

static void frames_print(const struct frames *fr)
{
	int i;

	for (i = 0; i < fr->n; i++)
		printf("  #%-2d %#llx %s (%s +%#llx)\n", i, (unsigned long long)fr->ips[i],
		       fr->syms[i].name, fr->syms[i].module,
		       (unsigned long long)fr->syms[i].offset);
}

static bool frames_get(struct unwinder *u, const struct child *c, pid_t pid, struct frames *fr)
{
	int i;

	fr->n = unwinder__unwind(u, pid, c->regs, c->stack, c->stack_len, fr->ips, 128);
	if (!ASSERT_GE(fr->n, 1, "unwinder__unwind"))
		return false;
	for (i = 0; i < fr->n; i++)
		if (!ASSERT_OK(unwinder__symbolize(u, pid, fr->ips[i], i > 0, &fr->syms[i]),
			       "unwinder__symbolize"))
			return false;
	return true;
}

/* want[] appear as consecutive frames, innermost first; module checked if given */
static bool frames_expect(const struct frames *fr, const char *const *want, int nwant,
			  const char *module)
{
	int i, j;

	for (i = 0; i < fr->n; i++)
		if (!strcmp(fr->syms[i].name, want[0]))
			break;
	for (j = 0; i < fr->n && j < nwant && i + j < fr->n; j++)
		if (strcmp(fr->syms[i + j].name, want[j]))
			break;
	if (!ASSERT_EQ(j, nwant, "expected frames in order") ||
	    (module && !ASSERT_STREQ(fr->syms[i].module, module, "module"))) {
		printf("  want %s", want[0]);
		for (j = 1; j < nwant; j++)
			printf(" <- %s", want[j]);
		printf(", got %d frames:\n", fr->n);
		frames_print(fr);
		return false;
	}
	for (j = 0; j < fr->n; j++)
		if (!ASSERT_TRUE(fr->syms[j].name[0] && fr->syms[j].module[0], "never empty"))
			return false;
	if (getenv("MP_TEST_VERBOSE"))
		frames_print(fr);
	return true;
}

static const char *const chain[] = { "leaf", "level2", "level1", "main" };

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* runs fixture name, unwinds while alive, checks the leaf..main chain */
static void check_fixture(const char *name, bool timing)
{
	struct unwinder *u = NULL;
	struct child c = {};
	struct frames *fr = NULL;
	__u64 t0, t1, t2, t_cold, t_cold_sym, t_snap;
	int i, k, iters = 2000, r;

	if (!need_root() || !fixtures())
		return;
	fr = calloc(1, sizeof(*fr));
	if (!ASSERT_OK_PTR(fr, "calloc") || !child_start(&c, name))
		goto cleanup;
	r = child_capture(&c);
	if (r <= 0) {
		if (r < 0)
			test__fail();
		goto cleanup;
	}
	u = unwinder__new(NULL);
	if (!ASSERT_OK_PTR(u, "unwinder__new"))
		goto cleanup;
	t0 = now_ns();
	if (!ASSERT_OK(unwinder__snapshot(u, c.pid), "unwinder__snapshot"))
		goto cleanup;
	t1 = now_ns();
	fr->n = unwinder__unwind(u, c.pid, c.regs, c.stack, c.stack_len, fr->ips, 128);
	t2 = now_ns();
	t_snap = t1 - t0;
	t_cold = t2 - t1;
	t1 = now_ns();
	for (i = 0; i < fr->n; i++)
		unwinder__symbolize(u, c.pid, fr->ips[i], i > 0, &fr->syms[i]);
	t_cold_sym = now_ns() - t1;
	if (!frames_get(u, &c, c.pid, fr))
		goto cleanup;
	if (!frames_expect(fr, chain, 4, name))
		goto cleanup;
	if (!ASSERT_EQ(fr->ips[0], c.regs[MP_RIP], "ips[0] is rip"))
		goto cleanup;
	if (!timing)
		goto cleanup;
	t0 = now_ns();
	for (k = 0; k < iters; k++) {
		struct unwind_sym s;

		fr->n = unwinder__unwind(u, c.pid, c.regs, c.stack, c.stack_len, fr->ips, 128);
		for (i = 0; i < fr->n; i++)
			unwinder__symbolize(u, c.pid, fr->ips[i], i > 0, &s);
	}
	t1 = now_ns();
	printf("  %s: %d frames, %u stack bytes; snapshot %.0f us; first unwind (builds the "
	       "Dwfl) %.0f us, first symbolize (reads symbol tables) %.0f us; cached: %.1f us "
	       "per unwind + symbolize of all frames\n", name, fr->n, c.stack_len,
	       t_snap / 1e3, t_cold / 1e3, t_cold_sym / 1e3, (t1 - t0) / 1e3 / iters);
	t0 = now_ns();
	for (k = 0; k < iters; k++)
		unwinder__unwind(u, c.pid, c.regs, c.stack, c.stack_len, fr->ips, 128);
	t1 = now_ns();
	printf("  %s: cached unwind alone %.1f us\n", name, (t1 - t0) / 1e3 / iters);
cleanup:
	child_kill(&c);
	unwinder__free(u);
	free(fr);
}

TEST(unwind_pie)
{
	check_fixture("prog", true);
}

TEST(unwind_nopie)
{
	check_fixture("prog_nopie", false);
}

/* stripped, symbols (static ones too) only in the .gnu_debuglink file next to it */
TEST(unwind_debuglink)
{
	char path[128], cmd[256];

	if (!need_root() || !fixtures())
		return;
	fix_path(path, sizeof(path), "prog_dbg");
	snprintf(cmd, sizeof(cmd), "readelf -S '%s' | grep -q '\\.symtab'", path);
	if (!ASSERT_NEQ(system(cmd), 0, "prog_dbg has no .symtab"))
		return;
	check_fixture("prog_dbg", false);
}

/* address of a symbol from nm, 0 if not found */
static __u64 nm_addr(const char *path, const char *sym)
{
	unsigned long long addr = 0, a;
	char cmd[256], line[512], type, name[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && !strcmp(name, sym))
			addr = a;
	pclose(p);
	return addr;
}

/* stripped, no debug file: unwinding works (.eh_frame stays); names are module+0xOFF */
TEST(unwind_stripped_no_debug)
{
	struct unwinder *u = NULL;
	struct frames *fr = NULL, *ref = NULL;
	struct child c = {}, cref = {};
	char want[300], path[128];
	int i, checked = 0;
	__u64 start;

	if (!need_root() || !fixtures())
		return;
	fr = calloc(1, sizeof(*fr));
	ref = calloc(1, sizeof(*ref));
	u = unwinder__new(NULL);
	if (!ASSERT_OK_PTR(fr, "calloc") || !ASSERT_OK_PTR(ref, "calloc") ||
	    !ASSERT_OK_PTR(u, "unwinder__new"))
		goto cleanup;
	/* the same code unstripped, for the expected offsets */
	if (!child_start(&cref, "prog") || child_capture(&cref) <= 0 ||
	    !frames_get(u, &cref, cref.pid, ref) || !frames_expect(ref, chain, 4, "prog"))
		goto cleanup;
	if (!child_start(&c, "prog_nodbg") || child_capture(&c) <= 0 ||
	    !frames_get(u, &c, c.pid, fr))
		goto cleanup;
	if (!ASSERT_EQ(fr->n, ref->n, "same depth")) {
		frames_print(fr);
		goto cleanup;
	}
	fix_path(path, sizeof(path), "prog");
	for (i = 0; i < fr->n; i++) {
		if (strcmp(ref->syms[i].module, "prog"))
			continue;
		/* unknown function: module+0x<address in the file> = symbol + offset */
		start = nm_addr(path, ref->syms[i].name);
		if (!ASSERT_NEQ(start, 0, "nm address"))
			break;
		snprintf(want, sizeof(want), "prog_nodbg+0x%llx",
			 (unsigned long long)(start + ref->syms[i].offset));
		if (!ASSERT_STREQ(fr->syms[i].name, want, "module+0xOFF") ||
		    !ASSERT_STREQ(fr->syms[i].module, "prog_nodbg", "module") ||
		    !ASSERT_EQ(fr->syms[i].offset, start + ref->syms[i].offset, "offset"))
			break;
		checked++;
	}
	ASSERT_EQ(checked, 5, "frames in prog checked");
	if (getenv("MP_TEST_VERBOSE"))
		frames_print(fr);
cleanup:
	child_kill(&c);
	child_kill(&cref);
	unwinder__free(u);
	free(fr);
	free(ref);
}

struct map_find {
	const char *path;	/* mapping wanted */
	unsigned char id[64];
	int len;		/* build ID length, -1 if the mapping was not seen */
};

static int map_find_cb(void *ctx, pid_t pid, __u64 start, __u64 end, __u64 pgoff,
		       const char *path, const unsigned char *build_id, int build_id_len)
{
	struct map_find *mf = ctx;

	if (strcmp(path, mf->path))
		return 0;
	mf->len = build_id_len;
	if (build_id && build_id_len > 0 && build_id_len <= (int)sizeof(mf->id))
		memcpy(mf->id, build_id, build_id_len);
	return 0;
}

/* the GNU build ID of a file as readelf prints it, "" if none */
static void readelf_build_id(const char *path, char *hex, size_t len)
{
	char cmd[256];
	FILE *p;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null | sed -n 's/.*Build ID: *//p'",
		 path);
	p = popen(cmd, "r");
	if (!p)
		return;
	if (!fgets(hex, len, p))
		hex[0] = '\0';
	pclose(p);
	hex[strcspn(hex, "\n")] = '\0';
}

/* debug file found by build ID only (/usr/lib/debug/.build-id/xx/yyyy.debug) */
TEST(unwind_buildid_debug)
{
	char path[128], dbg[128], dir[200], hex[129], got[129];
	struct map_find mf = { .len = -1 };
	struct unwinder *u = NULL;
	struct child c = {};
	struct stat st;
	int i;

	if (!need_root() || !fixtures())
		return;
	fix_path(path, sizeof(path), "prog_bid");
	fix_path(dbg, sizeof(dbg), "prog_bid.debug");
	readelf_build_id(path, hex, sizeof(hex));
	if (strlen(hex) < 4) {
		test__skip("fixture has no GNU build ID (linker without --build-id)");
		return;
	}
	snprintf(dir, sizeof(dir), "/usr/lib/debug/.build-id/%.2s", hex);
	snprintf(buildid_debug, sizeof(buildid_debug), "%s/%s.debug", dir, hex + 2);
	if (!stat(buildid_debug, &st)) {
		buildid_debug[0] = '\0';
		test__skip("a debug file with the fixture's build ID exists already");
		return;
	}
	if (!ASSERT_OK(fixture__run("mkdir -p '%s' && cp '%s' '%s'", dir, dbg, buildid_debug),
		       "install the debug file"))
		goto cleanup;
	check_fixture("prog_bid", false);

	/* for_each_map reports the file's build ID */
	u = unwinder__new(NULL);
	if (!ASSERT_OK_PTR(u, "unwinder__new") || !child_start(&c, "prog_bid") ||
	    !ASSERT_OK(unwinder__snapshot(u, c.pid), "unwinder__snapshot"))
		goto cleanup;
	mf.path = path;
	if (!ASSERT_OK(unwinder__for_each_map(u, c.pid, map_find_cb, &mf), "for_each_map") ||
	    !ASSERT_EQ(mf.len * 2, (int)strlen(hex), "build ID length"))
		goto cleanup;
	for (i = 0; i < mf.len; i++)
		sprintf(got + 2 * i, "%02x", mf.id[i]);
	ASSERT_STREQ(got, hex, "build ID");
cleanup:
	child_kill(&c);
	unwinder__free(u);
	buildid_debug_remove();
}

/* a function of a shared object (static, .symtab only) called from the executable */
TEST(unwind_shared_object)
{
	static const char *const want[] = { "lib_inner", "mp_lib_work", "caller", "main" };
	struct unwinder *u = NULL;
	struct frames *fr = NULL;
	struct child c = {};
	int i;

	if (!need_root() || !fixtures())
		return;
	fr = calloc(1, sizeof(*fr));
	u = unwinder__new(NULL);
	if (!ASSERT_OK_PTR(fr, "calloc") || !ASSERT_OK_PTR(u, "unwinder__new") ||
	    !child_start(&c, "uselib") || child_capture(&c) <= 0 ||
	    !frames_get(u, &c, c.pid, fr) || !frames_expect(fr, want, 4, "libmpunw.so"))
		goto cleanup;
	for (i = 0; i < fr->n; i++)
		if (!strcmp(fr->syms[i].name, "caller"))
			ASSERT_STREQ(fr->syms[i].module, "uselib", "caller's module");
cleanup:
	child_kill(&c);
	unwinder__free(u);
	free(fr);
}

/* a library dlopen()ed after the snapshot: the miss refreshes the snapshot */
TEST(unwind_late_library)
{
	static const char *const want[] = { "lib_inner", "mp_lib_work", "caller", "main" };
	struct unwinder *u = NULL;
	struct frames *fr = NULL;
	struct child c = {};
	int st;

	if (!need_root() || !fixtures())
		return;
	fr = calloc(1, sizeof(*fr));
	u = unwinder__new(NULL);
	if (!ASSERT_OK_PTR(fr, "calloc") || !ASSERT_OK_PTR(u, "unwinder__new") ||
	    !child_start(&c, "late") || !ASSERT_OK(unwinder__snapshot(u, c.pid), "snapshot"))
		goto cleanup;
	/* let it dlopen() and stop again, inside the library */
	if (!ASSERT_OK(kill(c.pid, SIGCONT), "SIGCONT") ||
	    !ASSERT_EQ(waitpid(c.pid, &st, WUNTRACED), c.pid, "waitpid") ||
	    !ASSERT_TRUE(WIFSTOPPED(st), "stopped in the library"))
		goto cleanup;
	/* past the rate limit of miss refreshes */
	usleep(150 * 1000);
	if (child_capture(&c) <= 0 || !frames_get(u, &c, c.pid, fr))
		goto cleanup;
	frames_expect(fr, want, 4, "libmpunw.so");
cleanup:
	child_kill(&c);
	unwinder__free(u);
	free(fr);
}

/* the executable is deleted while running: opened through /proc/PID/map_files */
TEST(unwind_deleted_binary)
{
	struct unwinder *u = NULL;
	struct frames *fr = NULL;
	char src[128], del[128];
	struct child c = {};
	pid_t pid;

	if (!need_root() || !fixtures())
		return;
	fix_path(src, sizeof(src), "prog");
	fix_path(del, sizeof(del), "prog_del");
	fr = calloc(1, sizeof(*fr));
	u = unwinder__new(NULL);
	if (!ASSERT_OK_PTR(fr, "calloc") || !ASSERT_OK_PTR(u, "unwinder__new") ||
	    !ASSERT_OK(fixture__run("cp '%s' '%s'", src, del), "copy prog") ||
	    !child_start(&c, "prog_del") || !ASSERT_OK(unlink(del) ? -errno : 0, "unlink") ||
	    child_capture(&c) <= 0 || !ASSERT_OK(unwinder__snapshot(u, c.pid), "snapshot") ||
	    !frames_get(u, &c, c.pid, fr) || !frames_expect(fr, chain, 4, "prog_del"))
		goto cleanup;
	/* and after it exited too */
	pid = c.pid;
	child_kill(&c);
	if (!frames_get(u, &c, pid, fr))
		goto cleanup;
	frames_expect(fr, chain, 4, "prog_del");
cleanup:
	child_kill(&c);
	unwinder__free(u);
	free(fr);
}

/* snapshot, capture, kill: the captured stack still unwinds and symbolizes */
TEST(unwind_after_exit)
{
	struct unwinder *u = NULL;
	struct frames *fr = NULL;
	struct child c = {};
	pid_t pid;

	if (!need_root() || !fixtures())
		return;
	fr = calloc(1, sizeof(*fr));
	u = unwinder__new(NULL);
	if (!ASSERT_OK_PTR(fr, "calloc") || !ASSERT_OK_PTR(u, "unwinder__new") ||
	    !child_start(&c, "prog") || child_capture(&c) <= 0 ||
	    !ASSERT_OK(unwinder__snapshot(u, c.pid), "snapshot"))
		goto cleanup;
	pid = c.pid;
	child_kill(&c);
	/* gone: a refresh fails and keeps the snapshot */
	if (!ASSERT_EQ(unwinder__snapshot(u, pid), -ESRCH, "snapshot of a dead process") ||
	    !frames_get(u, &c, pid, fr) || !frames_expect(fr, chain, 4, "prog"))
		goto cleanup;
	/* forgotten: only rip is left, and it is [unknown] */
	unwinder__forget(u, pid);
	if (!frames_get(u, &c, pid, fr) || !ASSERT_EQ(fr->n, 1, "frames after forget"))
		goto cleanup;
	ASSERT_STREQ(fr->syms[0].module, "[unknown]", "module after forget");
	ASSERT_EQ(fr->syms[0].offset, c.regs[MP_RIP], "offset is the address");
cleanup:
	child_kill(&c);
	unwinder__free(u);
	free(fr);
}

/* C++: demangled names */
TEST(unwind_cxx_demangle)
{
	static const char *const want[] = { "mp::Worker<long>::fixture__run(int)", "main" };
	struct unwinder *u = NULL;
	struct frames *fr = NULL;
	struct child c = {};

	if (!need_root() || !fixtures())
		return;
	if (!have_cxx) {
		test__skip("no working g++ to build the C++ fixture");
		return;
	}
	fr = calloc(1, sizeof(*fr));
	u = unwinder__new(NULL);
	if (!ASSERT_OK_PTR(fr, "calloc") || !ASSERT_OK_PTR(u, "unwinder__new") ||
	    !child_start(&c, "progxx") || child_capture(&c) <= 0 ||
	    !frames_get(u, &c, c.pid, fr))
		goto cleanup;
	frames_expect(fr, want, 2, "progxx");
cleanup:
	child_kill(&c);
	unwinder__free(u);
	free(fr);
}

/* ---- without ptrace: this process ---- */

__attribute__((noinline)) int mp_unwind_test_marker(int x)
{
	return x * 7 + 1;
}

TEST(unwind_symbolize_self)
{
	__u64 addr = (__u64)(uintptr_t)mp_unwind_test_marker;
	char exe[256] = "", hex[129], got[129];
	struct map_find mf = { .len = -1 };
	struct unwinder *u = unwinder__new(NULL);
	struct unwind_sym s;
	ssize_t n;
	int i;

	if (!ASSERT_OK_PTR(u, "unwinder__new"))
		return;
	if (!ASSERT_OK(unwinder__snapshot(u, getpid()), "snapshot self"))
		goto cleanup;
	/* the function's first byte, and a return address just after it */
	if (!ASSERT_OK(unwinder__symbolize(u, getpid(), addr, false, &s), "symbolize") ||
	    !ASSERT_STREQ(s.name, "mp_unwind_test_marker", "name") ||
	    !ASSERT_EQ(s.offset, 0, "offset"))
		goto cleanup;
	if (!ASSERT_OK(unwinder__symbolize(u, getpid(), addr + 3, true, &s), "symbolize ret") ||
	    !ASSERT_STREQ(s.name, "mp_unwind_test_marker", "name (return address)") ||
	    !ASSERT_EQ(s.offset, 2, "offset (return address)"))
		goto cleanup;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (!ASSERT_GT(n, 0, "readlink"))
		goto cleanup;
	exe[n] = '\0';
	ASSERT_STREQ(s.module, strrchr(exe, '/') + 1, "module");
	/* a libc function */
	if (!ASSERT_OK(unwinder__symbolize(u, getpid(), (__u64)(uintptr_t)getpid, false, &s),
		       "symbolize getpid"))
		goto cleanup;
	ASSERT_TRUE(!strncmp(s.module, "libc", 4), "libc module");
	ASSERT_TRUE(strstr(s.name, "getpid") != NULL, "getpid name");
	/* our executable's mapping, with its build ID */
	mf.path = exe;
	if (!ASSERT_OK(unwinder__for_each_map(u, getpid(), map_find_cb, &mf), "for_each_map") ||
	    !ASSERT_GE(mf.len, 0, "executable mapping reported"))
		goto cleanup;
	readelf_build_id(exe, hex, sizeof(hex));
	if (hex[0] && ASSERT_EQ(mf.len * 2, (int)strlen(hex), "build ID length")) {
		for (i = 0; i < mf.len; i++)
			sprintf(got + 2 * i, "%02x", mf.id[i]);
		ASSERT_STREQ(got, hex, "build ID");
	}
cleanup:
	unwinder__free(u);
}

TEST(unwind_unknown)
{
	struct unwinder *u = unwinder__new(NULL);
	__u64 regs[MP_NR_REGS] = {}, ips[4];
	struct unwind_sym s;
	pid_t gone;

	if (!ASSERT_OK_PTR(u, "unwinder__new"))
		return;
	/* a pid that does not exist any more */
	gone = fork();
	if (!gone)
		_exit(0);
	if (!ASSERT_GT(gone, 0, "fork"))
		goto cleanup;
	waitpid(gone, NULL, 0);
	ASSERT_EQ(unwinder__snapshot(u, gone), -ESRCH, "snapshot of a reaped pid");
	ASSERT_EQ(unwinder__for_each_map(u, gone, map_find_cb, NULL), -ESRCH, "for_each_map");
	regs[MP_RIP] = 0x1234;
	ASSERT_EQ(unwinder__unwind(u, gone, regs, NULL, 0, ips, 4), 1, "unwind: rip only");
	ASSERT_EQ(ips[0], 0x1234, "ips[0]");
	ASSERT_EQ(unwinder__unwind(u, gone, regs, NULL, 0, ips, 0), -EINVAL, "max_frames 0");
	ASSERT_OK(unwinder__symbolize(u, gone, 0x1234, true, &s), "symbolize");
	ASSERT_STREQ(s.name, "[unknown]+0x1233", "name");
	ASSERT_STREQ(s.module, "[unknown]", "module");
	/* an unmapped address of a live process */
	ASSERT_OK(unwinder__symbolize(u, getpid(), 0x10, false, &s), "symbolize self");
	ASSERT_STREQ(s.name, "[unknown]+0x10", "unmapped name");
	unwinder__forget(u, gone);
	unwinder__forget(u, getpid());
	unwinder__forget(NULL, 1);
cleanup:
	unwinder__free(u);
	unwinder__free(NULL);
}
