// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data writer. perfdata_format reads a written file back by hand (header, attribute,
 * records, feature table). perfdata_perf builds a small program (main -> mp_work_alpha ->
 * mp_leaf_alpha, main -> mp_work_beta -> mp_leaf_beta) with cc into a mkdtemp() directory,
 * runs it until it has printed its functions' addresses and the return addresses it saw,
 * reads its executable mappings from /proc/PID/maps, writes comm, mmap and sample records
 * with those call chains, and checks what perf script and perf report make of the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "harness.h"
#include "lib/perfdata.h"

/* --- helpers --- */

static int pd_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int pd_run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int n, st;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* whole file, NUL-terminated; NULL on error */
static char *pd_slurp(const char *path, size_t *len)
{
	char *buf = NULL, *tmp;
	size_t n = 0, cap = 0, r;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return NULL;
	do {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 65536;
			tmp = realloc(buf, cap + 1);
			if (!tmp) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = tmp;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* --- the file as written, read back by hand --- */

struct rd_header {
	char magic[8];
	__u64 size, attr_size;
	__u64 attrs_off, attrs_size, data_off, data_size, types_off, types_size;
	__u64 feat[4];
};

/* perf's x86 get_cpuid() string as /proc/cpuinfo tells it, or "" (not x86) */
static void pd_cpuid(char *out, size_t len)
{
	char line[512], vendor[64] = "";
	unsigned int family = 0, model = 0, step = 0, have = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f) && have != 15) {
		if (!(have & 1) && sscanf(line, "vendor_id : %63s", vendor) == 1)
			have |= 1;
		else if (!(have & 2) && sscanf(line, "cpu family : %u", &family) == 1)
			have |= 2;
		else if (!(have & 4) && sscanf(line, "model : %u", &model) == 1)
			have |= 4;
		else if (!(have & 8) && sscanf(line, "stepping : %u", &step) == 1)
			have |= 8;
	}
	if (f)
		fclose(f);
	if (have == 15)
		snprintf(out, len, "%s,%u,%u,%u", vendor, family, model, step);
}

TEST(perfdata_format)
{
	static const unsigned char bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					       7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	const __u64 chain[3] = { 0x401000, 0x401100, 0x401200 };
	struct perf_event_attr attr;
	struct perf_event_header eh;
	struct perfdata *p = NULL;
	struct rd_header h;
	char *buf = NULL, path[] = "/tmp/memphase-pd-XXXXXX";
	size_t len = 0, off, nrec = 0;
	__u64 *u, nsec, secs[2];
	static const char *const events[2] = { "phase-alpha", "phase-beta" };
	static const char *const empty[2] = { "phase-alpha", "" };
	int fd = -1, pfd[2] = { -1, -1 }, types[3] = {}, err, i;
	FILE *f = NULL, *pf = NULL;
	char cpuid[256];
	struct utsname uts;

	pd_cpuid(cpuid, sizeof(cpuid));
	if (!cpuid[0] && !uname(&uts))
		snprintf(cpuid, sizeof(cpuid), "%s", uts.machine);

	/* argument checks */
	errno = 0;
	ASSERT_NULL(perfdata__new(NULL, NULL, 0), "new(NULL)");
	ASSERT_EQ(errno, EINVAL, "new(NULL) errno");
	if (!ASSERT_OK(pipe(pfd), "pipe"))
		goto cleanup;
	pf = fdopen(pfd[1], "w");
	if (!ASSERT_OK_PTR(pf, "fdopen"))
		goto cleanup;
	pfd[1] = -1;
	errno = 0;
	ASSERT_NULL(perfdata__new(pf, NULL, 0), "new(pipe)");
	ASSERT_EQ(errno, ESPIPE, "new(pipe) errno");

	fd = mkstemp(path);
	if (!ASSERT_GE(fd, 0, "mkstemp"))
		goto cleanup;
	close(fd);
	fd = -1;
	f = fopen(path, "a");
	if (!ASSERT_OK_PTR(f, "fopen append"))
		goto cleanup;
	errno = 0;
	ASSERT_NULL(perfdata__new(f, NULL, 0), "new(append)");
	ASSERT_EQ(errno, EINVAL, "new(append) errno");
	fclose(f);
	f = NULL;

	fd = open(path, O_RDWR | O_TRUNC);
	if (!ASSERT_GE(fd, 0, "open"))
		goto cleanup;
	f = fdopen(fd, "w+");
	if (!ASSERT_OK_PTR(f, "fdopen"))
		goto cleanup;
	fd = -1;
	errno = 0;
	ASSERT_NULL(perfdata__new(f, empty, 2), "new(empty event name)");
	ASSERT_EQ(errno, EINVAL, "new(empty event name) errno");
	p = perfdata__new(f, events, 2);
	if (!ASSERT_OK_PTR(p, "new"))
		goto cleanup;
	ASSERT_EQ(perfdata__sample(p, 0, 1, 1, 0, 5, 4096, chain, 0), -EINVAL, "sample n=0");
	ASSERT_EQ(perfdata__sample(p, 0, 1, 1, 0, 5, 4096, NULL, 1), -EINVAL, "sample NULL");
	ASSERT_EQ(perfdata__sample(p, 0, 1, 1, 0, 5, 4096, chain, 9000), -E2BIG,
		  "sample n=9000");
	ASSERT_EQ(perfdata__sample(p, 2, 1, 1, 0, 5, 4096, chain, 1), -EINVAL, "no event 2");
	ASSERT_EQ(perfdata__mmap(p, 1, 1, 2, 0x400000, 0x1000, 0, "/bin/x", bid, 21), -EINVAL,
		  "mmap build id 21 bytes");
	ASSERT_EQ(perfdata__comm(p, 1, 1, 1, "", false), -EINVAL, "comm empty");

	err = perfdata__comm(p, 100, 101, 1, "0123456789abcdefXYZ", true);
	ASSERT_OK(err, "comm");
	err = perfdata__mmap(p, 100, 100, 2, 0x400000, 0x2000, 0x1000, "/bin/x", bid, 20);
	ASSERT_OK(err, "mmap");
	err = perfdata__mmap(p, 100, 100, 2, 0x400000, 0x2000, 0x1000, "/bin/x", bid, 20);
	ASSERT_OK(err, "mmap again");
	err = perfdata__mmap(p, 100, 100, 3, 0x7f0000, 0x1000, 0, "/lib/libc.so.6", NULL, 0);
	ASSERT_OK(err, "mmap no build id");
	err = perfdata__sample(p, 1, 100, 101, 1, 7, 8192, chain, 3);
	ASSERT_OK(err, "sample");
	err = perfdata__sample(p, 0, 100, 101, 0, 6, 4096, chain, 1);
	ASSERT_OK(err, "sample earlier");
	if (!ASSERT_OK(perfdata__close(p), "close"))
		goto cleanup;
	ASSERT_EQ(perfdata__close(p), -EINVAL, "close twice");
	ASSERT_EQ(perfdata__sample(p, 0, 1, 1, 0, 5, 4096, chain, 1), -EINVAL,
		  "sample after close");
	ASSERT_EQ(ftello(f), (off_t)lseek(fileno(f), 0, SEEK_END), "left at the end");

	buf = pd_slurp(path, &len);
	if (!ASSERT_OK_PTR(buf, "read back") || !ASSERT_GE(len, sizeof(h), "file size"))
		goto cleanup;
	memcpy(&h, buf, sizeof(h));
	ASSERT_OK(memcmp(h.magic, "PERFILE2", 8), "magic");
	ASSERT_EQ(h.size, 104, "header size");
	ASSERT_EQ(h.attr_size, 144, "attr_size");
	ASSERT_EQ(h.attrs_off, 104, "attrs offset");
	ASSERT_EQ(h.attrs_size, 2 * 144, "attrs size: 2 events");
	ASSERT_EQ(h.data_off, 104 + 2 * 144 + 2 * 8, "data offset: after the attrs and ids");
	for (i = 0; i < 2; i++) {
		memcpy(&attr, buf + h.attrs_off + i * 144, sizeof(attr) < 128 ? sizeof(attr) : 128);
		ASSERT_EQ(attr.size, 128, "attr.size");
		ASSERT_EQ(attr.type, PERF_TYPE_SOFTWARE, "attr.type");
		ASSERT_EQ(attr.sample_type, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			  PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			  PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_WEIGHT,
			  "sample_type");
		ASSERT_EQ((int)attr.sample_id_all, 1, "sample_id_all");
		/* its ids section: one id, i + 1 */
		memcpy(secs, buf + h.attrs_off + i * 144 + 128, sizeof(secs));
		ASSERT_EQ(secs[0], 104 + 2 * 144 + i * 8, "ids offset");
		ASSERT_EQ(secs[1], 8, "ids size");
		if (secs[0] + 8 <= len)
			ASSERT_EQ(*(__u64 *)(buf + secs[0]), (__u64)i + 1, "sample id");
	}
	/* BUILD_ID, HOSTNAME .. ARCH, NRCPUS, CPUDESC, CPUID, CMDLINE, EVENT_DESC, SAMPLE_TIME */
	ASSERT_EQ(h.feat[0], (1ULL << 2) | (1ULL << 3) | (1ULL << 4) | (1ULL << 5) | (1ULL << 6) |
		  (1ULL << 7) | (1ULL << 8) | (1ULL << 9) | (1ULL << 11) | (1ULL << 12) |
		  (1ULL << 21), "feature bits");
	ASSERT_EQ(h.feat[1] | h.feat[2] | h.feat[3], 0, "feature bits 64..255");

	/* records: all 8-byte sized and inside the data section */
	for (off = 0; off + sizeof(eh) <= h.data_size; off += eh.size, nrec++) {
		memcpy(&eh, buf + h.data_off + off, sizeof(eh));
		if (!ASSERT_EQ(eh.size % 8, 0, "record size aligned") ||
		    !ASSERT_GE(eh.size, 8, "record size"))
			goto cleanup;
		u = (__u64 *)(buf + h.data_off + off);
		if (eh.type == PERF_RECORD_COMM) {
			ASSERT_EQ(eh.misc, PERF_RECORD_MISC_COMM_EXEC, "comm misc");
			ASSERT_STREQ((char *)&u[2], "0123456789abcdefXYZ", "comm");
			/* the sample_id_all trailer: pid/tid, time, cpu, identifier */
			ASSERT_EQ(u[eh.size / 8 - 4], (__u64)100 | (__u64)101 << 32,
				  "comm pid/tid");
			ASSERT_EQ(u[eh.size / 8 - 3], 1, "comm time");
			ASSERT_EQ(u[eh.size / 8 - 2], 0, "comm cpu");
			ASSERT_EQ(u[eh.size / 8 - 1], 1, "comm identifier");
			types[0]++;
		} else if (eh.type == PERF_RECORD_MMAP2) {
			ASSERT_EQ(u[2] == 0x400000 ? u[4] : 0x1000, 0x1000, "mmap pgoff");
			if (u[2] == 0x400000) {
				ASSERT_EQ(eh.misc, PERF_RECORD_MISC_USER |
					  PERF_RECORD_MISC_MMAP_BUILD_ID, "mmap misc");
				ASSERT_EQ(((__u8 *)&u[5])[0], 20, "build id size");
				ASSERT_OK(memcmp((__u8 *)&u[5] + 4, bid, 20), "build id");
				ASSERT_STREQ((char *)&u[9], "/bin/x", "mmap file");
			} else {
				ASSERT_EQ(eh.misc, PERF_RECORD_MISC_USER, "mmap misc no id");
				ASSERT_EQ(u[5] | u[6] | u[7], 0, "no build id: inode 0");
				ASSERT_STREQ((char *)&u[9], "/lib/libc.so.6", "mmap file");
			}
			types[1]++;
		} else if (eh.type == PERF_RECORD_SAMPLE) {
			ASSERT_EQ(eh.misc, PERF_RECORD_MISC_USER, "sample misc");
			/* identifier: event 1 (id 2) at time 7, event 0 (id 1) at time 6 */
			ASSERT_EQ(u[1], u[4] == 7 ? 2 : 1, "sample identifier");
			ASSERT_EQ(u[2], chain[0], "sample ip");
			ASSERT_EQ(u[3], (__u64)100 | (__u64)101 << 32, "sample pid/tid");
			ASSERT_EQ(u[5], u[4] == 7 ? 1 : 0, "sample cpu");
			ASSERT_EQ(u[8], PERF_CONTEXT_USER, "callchain context");
			ASSERT_EQ(u[9], chain[0], "callchain[0]");
			ASSERT_EQ(u[eh.size / 8 - 1], u[6], "weight = period");
			ASSERT_EQ(u[7], (__u64)(eh.size / 8 - 9), "callchain nr");
			types[2]++;
		}
	}
	ASSERT_EQ(off, h.data_size, "records fill the data section");
	ASSERT_EQ(nrec, 6, "records");
	ASSERT_EQ(types[0], 1, "comm records");
	ASSERT_EQ(types[1], 3, "mmap2 records");
	ASSERT_EQ(types[2], 2, "sample records");

	/* feature table after the data; the last section (SAMPLE_TIME) ends the file */
	nsec = 11;
	if (!ASSERT_LE(h.data_off + h.data_size + nsec * 16, len, "feature table"))
		goto cleanup;
	memcpy(secs, buf + h.data_off + h.data_size + (nsec - 1) * 16, sizeof(secs));
	ASSERT_EQ(secs[0] + secs[1], len, "last feature ends the file");
	ASSERT_EQ(secs[1], 16, "SAMPLE_TIME size");
	if (secs[0] + 16 <= len) {
		memcpy(secs, buf + secs[0], sizeof(secs));
		ASSERT_EQ(secs[0], 6, "first sample time");
		ASSERT_EQ(secs[1], 7, "last sample time");
	}
	ASSERT_TRUE(memmem(buf, len, "phase-alpha", 12) != NULL, "event name in EVENT_DESC");
	ASSERT_TRUE(memmem(buf, len, "phase-beta", 11) != NULL, "event name in EVENT_DESC");
	/* CPUID (9), the 8th section (after BUILD_ID .. NRCPUS, CPUDESC): vendor,family,... */
	memcpy(secs, buf + h.data_off + h.data_size + 7 * 16, sizeof(secs));
	if (ASSERT_LE(secs[0] + secs[1], len, "CPUID section") && ASSERT_GT(secs[1], 4, "CPUID"))
		ASSERT_STREQ(buf + secs[0] + 4, cpuid, "CPUID string");

cleanup:
	perfdata__free(p);
	free(buf);
	if (f)
		fclose(f);
	if (pf)
		fclose(pf);
	if (fd >= 0)
		close(fd);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	unlink(path);
}

/* --- perf's own tools on a file about a real program --- */

static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"#define NI __attribute__((noinline, noclone))\n"
	"void *volatile in_work_alpha, *volatile in_main_alpha;\n"
	"void *volatile in_work_beta, *volatile in_main_beta;\n"
	"volatile int sink;\n"
	"NI void mp_leaf_alpha(void) { in_work_alpha = __builtin_return_address(0); sink += 1; }\n"
	"NI void mp_work_alpha(void) { mp_leaf_alpha(); in_main_alpha = "
	"__builtin_return_address(0); sink += 3; }\n"
	"NI void mp_leaf_beta(void) { in_work_beta = __builtin_return_address(0); sink += 5; }\n"
	"NI void mp_work_beta(void) { mp_leaf_beta(); in_main_beta = "
	"__builtin_return_address(0); sink += 7; }\n"
	"int main(void)\n"
	"{\n"
	"	mp_work_alpha();\n"
	"	mp_work_beta();\n"
	"	printf(\"%p %p %p %p %p %p %p\\n\", (void *)mp_leaf_alpha, in_work_alpha,\n"
	"	       in_main_alpha, (void *)mp_leaf_beta, in_work_beta, in_main_beta,\n"
	"	       __builtin_return_address(0));\n"
	"	fflush(stdout);\n"
	"	pause();\n"
	"	return sink;\n"
	"}\n";

/* a fixed build id, so the test knows it without reading the ELF notes */
#define PD_BUILD_ID_HEX "6d656d7068617365706572666461746174657374"

struct pd_map {
	unsigned long long start, end, pgoff;
	char path[512];
};

/* Starts dir/prog, reads its 7 addresses and its executable mappings, kills it. */
static int pd_probe(const char *dir, int *pid_out, unsigned long long addr[7],
		    struct pd_map *exe, struct pd_map *libc)
{
	char prog[512], line[1024], perms[8], path[512], maps[64];
	unsigned long long s, e, o;
	int pfd[2], pid, n, err = 0;
	FILE *in = NULL, *m = NULL;

	snprintf(prog, sizeof(prog), "%s/prog", dir);
	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	in = fdopen(pfd[0], "r");
	if (!in) {
		err = -errno;
		close(pfd[0]);
		goto cleanup;
	}
	if (!fgets(line, sizeof(line), in) ||
	    sscanf(line, "%llx %llx %llx %llx %llx %llx %llx", &addr[0], &addr[1], &addr[2],
		   &addr[3], &addr[4], &addr[5], &addr[6]) != 7) {
		err = -EPROTO;
		goto cleanup;
	}
	/* the process is now waiting in pause() */
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	m = fopen(maps, "r");
	if (!m) {
		err = -errno;
		goto cleanup;
	}
	memset(exe, 0, sizeof(*exe));
	memset(libc, 0, sizeof(*libc));
	while (fgets(line, sizeof(line), m)) {
		n = sscanf(line, "%llx-%llx %7s %llx %*s %*s %511s", &s, &e, perms, &o, path);
		if (n != 5 || !strchr(perms, 'x'))
			continue;
		if (!strcmp(path, prog) && !exe->end)
			*exe = (struct pd_map){ s, e, o, "" };
		else if (strstr(path, "/libc.so") && !libc->end)
			*libc = (struct pd_map){ s, e, o, "" };
		else
			continue;
		snprintf(!strcmp(path, prog) ? exe->path : libc->path, sizeof(exe->path), "%s",
			 path);
	}
	if (!exe->end || !libc->end)
		err = -ENOENT;

cleanup:
	if (m)
		fclose(m);
	if (in)
		fclose(in);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	*pid_out = pid;
	return err;
}

/* occurrences of s in buf */
static int pd_count(const char *buf, const char *s)
{
	int n = 0;

	while ((buf = strstr(buf, s))) {
		n++;
		buf += strlen(s);
	}
	return n;
}

/*
 * Runs "perf ARGS -i perf.data" in dir; asserts it exits 0 and writes nothing on stderr
 * (no warning about the file). Returns its stdout (to free), NULL if it cannot be read.
 */
static char *pd_perf(const char *dir, const char *args)
{
	char path[128], *out, *err;
	int st;

	st = pd_run("cd %s && perf %s -i perf.data >perf.out 2>perf.err", dir, args);
	snprintf(path, sizeof(path), "%s/perf.out", dir);
	out = pd_slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/perf.err", dir);
	err = pd_slurp(path, NULL);
	if (!ASSERT_EQ(st, 0, args) | !ASSERT_STREQ(err, "", args))
		printf("stdout:\n%s", out ? out : "(none)\n");
	free(err);
	return out;
}

TEST(perfdata_perf)
{
	const char *phases[2] = { "phase-load", "phase-decode" };
	char dir[] = "/tmp/memphase-perfdata-XXXXXX", file[128], *out = NULL;
	unsigned char bid[20];
	unsigned long long addr[7], total = 0, sums[2] = {}, period, expect[2] = {};
	__u64 alpha[4], beta[4];
	struct perfdata *p = NULL;
	struct pd_map exe, libc;
	char *line, *ev;
	int pid = 0, tid2, i, err, st;
	unsigned int spid, stid;
	char comm[64];
	FILE *f = NULL;

	if (pd_run("perf --version >/dev/null 2>&1")) {
		test__skip("perf is not installed (Debian: linux-perf)");
		return;
	}
	if (pd_run("cc --version >/dev/null 2>&1")) {
		test__skip("no working 'cc' to build the fixture");
		return;
	}
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(file, sizeof(file), "%s/prog.c", dir);
	f = fopen(file, "w");
	if (!ASSERT_OK_PTR(f, "fopen prog.c"))
		goto cleanup;
	fputs(prog_src, f);
	if (!ASSERT_OK(fclose(f), "write prog.c")) {
		f = NULL;
		goto cleanup;
	}
	f = NULL;
	st = pd_run("cd %s && cc -O2 -g -Wl,--build-id=0x%s -o prog prog.c >build.log 2>&1", dir,
		    PD_BUILD_ID_HEX);
	if (!ASSERT_OK(st, "cc prog.c")) {
		pd_run("cat %s/build.log", dir);
		goto cleanup;
	}
	for (i = 0; i < 20; i++)
		sscanf(PD_BUILD_ID_HEX + 2 * i, "%2hhx", &bid[i]);

	err = pd_probe(dir, &pid, addr, &exe, &libc);
	if (!ASSERT_OK(err, "run prog and read its maps"))
		goto cleanup;
	tid2 = pid + 1;
	/* innermost first: the leaf's entry, the return addresses in work and in main */
	alpha[0] = addr[0], alpha[1] = addr[1], alpha[2] = addr[2], alpha[3] = addr[6];
	beta[0] = addr[3], beta[1] = addr[4], beta[2] = addr[5], beta[3] = addr[6];

	snprintf(file, sizeof(file), "%s/perf.data", dir);
	f = fopen(file, "w+");
	if (!ASSERT_OK_PTR(f, "fopen perf.data"))
		goto cleanup;
	p = perfdata__new(f, phases, 2);
	if (!ASSERT_OK_PTR(p, "perfdata__new"))
		goto cleanup;
	err = perfdata__comm(p, pid, pid, 1000, "prog", true);
	err = err ?: perfdata__mmap(p, pid, pid, 1100, exe.start, exe.end - exe.start, exe.pgoff,
				    exe.path, bid, sizeof(bid));
	err = err ?: perfdata__mmap(p, pid, pid, 1100, libc.start, libc.end - libc.start,
				    libc.pgoff, libc.path, NULL, 0);
	/* phase 1: alpha's stack, then beta's */
	err = err ?: perfdata__comm(p, pid, pid, 2000, phases[0], false);
	err = err ?: perfdata__sample(p, 0, pid, pid, 1, 3000, 4096, alpha, 4);
	err = err ?: perfdata__sample(p, 0, pid, pid, 0, 3100, 8192, alpha, 4);
	err = err ?: perfdata__sample(p, 0, pid, pid, 1, 3200, 3 << 20, alpha, 4);
	err = err ?: perfdata__sample(p, 0, pid, pid, 0, 3300, 65536, beta, 4);
	expect[0] = 4096 + 8192 + (3 << 20) + 65536;
	/* phase 2, for the process and a second thread */
	err = err ?: perfdata__comm(p, pid, pid, 5000, phases[1], false);
	err = err ?: perfdata__comm(p, pid, tid2, 5000, phases[1], false);
	err = err ?: perfdata__sample(p, 1, pid, pid, 0, 6000, 1 << 20, beta, 4);
	err = err ?: perfdata__sample(p, 1, pid, tid2, 1, 6100, 12288, alpha, 3);
	expect[1] = (1 << 20) + 12288;
	/* written late but earlier in time: perf sorts it back into phase 1 */
	err = err ?: perfdata__sample(p, 0, pid, pid, 0, 4500, 40960, beta, 2);
	expect[0] += 40960;
	if (!ASSERT_OK(err, "records"))
		goto cleanup;
	if (!ASSERT_OK(perfdata__close(p), "perfdata__close"))
		goto cleanup;
	fclose(f);
	f = NULL;

	/* perf script: every sample with its comm, period and resolved call chain */
	out = pd_perf(dir, "script -f -F comm,pid,tid,period,ip,sym");
	if (!ASSERT_OK_PTR(out, "perf script output"))
		goto cleanup;
	for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (*line == '\t' || *line == '\n')
			continue;
		if (sscanf(line, "%63s %u/%u %llu", comm, &spid, &stid, &period) != 4) {
			ASSERT_TRUE(false, "perf script sample line");
			printf("line: %.*s\n", (int)strcspn(line, "\n"), line);
			continue;
		}
		total += period;
		if (stid == (unsigned int)tid2)
			ASSERT_STREQ(comm, phases[1], "comm of the second thread");
		for (i = 0; i < 2; i++) {
			if (!strcmp(comm, phases[i]))
				sums[i] += period;
		}
	}
	ASSERT_EQ(sums[0], expect[0], "perf script periods of phase-load");
	ASSERT_EQ(sums[1], expect[1], "perf script periods of phase-decode");
	ASSERT_EQ(total, expect[0] + expect[1], "perf script periods");
	/* 7 samples; all but the 2-frame one name main; 5 end in libc */
	ASSERT_EQ(pd_count(out, " mp_leaf_alpha\n"), 4, "mp_leaf_alpha frames");
	ASSERT_EQ(pd_count(out, " mp_work_alpha\n"), 4, "mp_work_alpha frames");
	ASSERT_EQ(pd_count(out, " mp_leaf_beta\n"), 3, "mp_leaf_beta frames");
	ASSERT_EQ(pd_count(out, " mp_work_beta\n"), 3, "mp_work_beta frames");
	ASSERT_EQ(pd_count(out, " main\n"), 6, "main frames");
	ASSERT_EQ(pd_count(out, "[unknown]"), 5 - pd_count(out, " __libc_start"),
		  "only libc frames may be unknown");

	/* the libc frame (mapped without a build id) lands in libc */
	free(out);
	out = pd_perf(dir, "script -f -F ip,dso");
	if (!ASSERT_OK_PTR(out, "perf script -F ip,dso output"))
		goto cleanup;
	ASSERT_EQ(pd_count(out, "libc.so"), 5, "libc frames");
	ASSERT_EQ(pd_count(out, "/prog)"), 3 * 3 + 3 + 3 + 3 + 2, "prog frames");

	/* perf script: each sample under its phase's event */
	free(out);
	out = pd_perf(dir, "script -f -F event,period");
	if (!ASSERT_OK_PTR(out, "perf script -F event,period output"))
		goto cleanup;
	sums[0] = sums[1] = 0;
	for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (sscanf(line, "%llu %63[^:]:", &period, comm) != 2)
			continue;
		for (i = 0; i < 2; i++) {
			if (!strcmp(comm, phases[i]))
				sums[i] += period;
		}
	}
	ASSERT_EQ(sums[0], expect[0], "perf script periods of event phase-load");
	ASSERT_EQ(sums[1], expect[1], "perf script periods of event phase-decode");

	/* perf report: a section per phase (event), Event count = its bytes */
	free(out);
	out = pd_perf(dir, "report -f --stdio --sort comm,sym");
	if (!ASSERT_OK_PTR(out, "perf report output"))
		goto cleanup;
	for (i = 0; i < 2; i++) {
		snprintf(file, sizeof(file),
			 "# Samples: %d  of event '%s'\n# Event count (approx.): ", i ? 2 : 5,
			 phases[i]);
		ev = strstr(out, file);
		if (ASSERT_OK_PTR(ev, "Samples and Event count lines of the phase's event"))
			ASSERT_EQ(strtoull(ev + strlen(file), NULL, 10), expect[i], "Event count");
	}
	ASSERT_OK_PTR(strstr(out, phases[0]), "phase-load in report");
	ASSERT_OK_PTR(strstr(out, phases[1]), "phase-decode in report");
	ASSERT_OK_PTR(strstr(out, "mp_leaf_alpha"), "mp_leaf_alpha in report");
	ASSERT_OK_PTR(strstr(out, "mp_leaf_beta"), "mp_leaf_beta in report");
	ASSERT_OK_PTR(strstr(out, "mp_work_alpha"), "mp_work_alpha in report");
	ASSERT_OK_PTR(strstr(out, " main"), "main in report");

	/* perf report's bytes per phase */
	free(out);
	out = pd_perf(dir, "report -f --stdio --no-children -g none --sort comm -F period,comm");
	if (!ASSERT_OK_PTR(out, "perf report -F period,comm output"))
		goto cleanup;
	sums[0] = sums[1] = 0;
	for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (sscanf(line, "%llu %63s", &period, comm) != 2)
			continue;
		for (i = 0; i < 2; i++) {
			if (!strcmp(comm, phases[i]))
				sums[i] += period;
		}
	}
	ASSERT_EQ(sums[0], expect[0], "perf report period of phase-load");
	ASSERT_EQ(sums[1], expect[1], "perf report period of phase-decode");

	/* perf data convert --to-json reads the CPUID header (it crashed without it) */
	free(out);
	out = NULL;
	st = pd_run("cd %s && perf data convert -f --to-json perf.json -i perf.data "
		    ">/dev/null 2>convert.err", dir);
	if (!ASSERT_OK(st, "perf data convert --to-json")) {
		pd_run("cat %s/convert.err", dir);
		goto cleanup;
	}
	snprintf(file, sizeof(file), "%s/perf.json", dir);
	out = pd_slurp(file, NULL);
	if (ASSERT_OK_PTR(out, "perf.json")) {
		ASSERT_EQ(pd_count(out, "\"timestamp\""), 7, "samples in the JSON");
		ASSERT_EQ(pd_count(out, "\"comm\": \"phase-load\""), 5, "phase-load samples");
		ASSERT_EQ(pd_count(out, "\"comm\": \"phase-decode\""), 2, "phase-decode samples");
		/* each sample's CPU: 1 for the ones at 3000, 3200 and 6100 */
		ASSERT_EQ(pd_count(out, "\"cpu\": 1,"), 3, "samples on CPU 1");
		ASSERT_EQ(pd_count(out, "\"cpu\": 0,"), 4, "samples on CPU 0");
	}

cleanup:
	perfdata__free(p);
	if (f)
		fclose(f);
	free(out);
	if (getenv("MEMPHASE_KEEP_TMP"))
		printf("kept %s\n", dir);
	else
		pd_run("rm -rf '%s'", dir);
}
