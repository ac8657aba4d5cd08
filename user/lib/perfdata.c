// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data writer; the layout and the choices are described in perfdata.h. Record and
 * feature formats follow tools/perf/Documentation/perf.data-file-format.txt and
 * include/uapi/linux/perf_event.h; where they are silent, what perf 6.1 reads
 * (tools/perf/util/header.c, machine.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "lib/perfdata.h"
#include "lib/util.h"

#ifndef MEMPHASE_VERSION
#define MEMPHASE_VERSION "unknown"
#endif

/* perf's own record types and header features (tools/perf/util/{event,header}.h) */
#define PD_RECORD_HEADER_BUILD_ID	67
/* build_id_event: the size byte after the 20 id bytes is valid */
#define PD_MISC_BUILD_ID_SIZE		(1 << 15)
#define PD_HOST_PID			(-1)

enum {
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_VERSION = 5,
	PD_FEAT_ARCH = 6,
	PD_FEAT_NRCPUS = 7,
	PD_FEAT_CPUDESC = 8,
	PD_FEAT_CPUID = 9,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_BITS = 256,
};

#define PD_ATTR_SIZE	PERF_ATTR_SIZE_VER7
#define PD_HEADER_SIZE	104
#define PD_ATTR_OFF	PD_HEADER_SIZE
/* attr + its ids section */
#define PD_FILE_ATTR_SIZE (PD_ATTR_SIZE + 16)
/* the attributes, then one sample id per event, then the data */
#define PD_IDS_OFF(n)	(PD_ATTR_OFF + (n) * PD_FILE_ATTR_SIZE)
#define PD_DATA_OFF(n)	(PD_IDS_OFF(n) + (n) * 8)
/* perf pads header strings (and build id file names) to 64 bytes */
#define PD_NAME_ALIGN	64
#define PD_MAX_NAME	4096
#define PD_MAX_FRAMES	8000
#define PD_REC_MAX	65535

#define PD_ALIGN(x, a)	(((x) + (a) - 1) / (a) * (a))

_Static_assert(sizeof(struct perf_event_attr) >= PD_ATTR_SIZE, "perf_event_attr too old");

struct pd_file_section {
	__u64 offset;
	__u64 size;
};

struct pd_file_header {
	char magic[8];
	__u64 size;
	__u64 attr_size;
	struct pd_file_section attrs;
	struct pd_file_section data;
	struct pd_file_section event_types;
	__u64 features[PD_FEAT_BITS / 64];
};

_Static_assert(sizeof(struct pd_file_header) == PD_HEADER_SIZE, "perf_file_header size");

struct pd_build_id {
	char *filename;
	__u8 id[PERFDATA_BUILD_ID_MAX];
	__u8 len;
};

/* a growable byte buffer for the feature sections */
struct pd_buf {
	char *data;
	size_t len, cap;
	int err;
};

struct perfdata {
	FILE *f;
	struct perf_event_attr attr;	/* every event's: only the sample ids tell them apart */
	char **names;
	unsigned int nevents;
	__u64 data_size;
	__u64 nr_samples;
	__u64 first_time, last_time;
	struct pd_build_id *bids;
	size_t nr_bids, cap_bids;
	int err;	/* first write error, sticky */
	bool closed;
	/* one record being built; 8-byte units keep the fields aligned */
	__u64 rec[PD_ALIGN(PD_REC_MAX, 8) / 8];
};

static int perfdata__write(struct perfdata *p, const void *data, size_t len, bool is_data)
{
	if (p->err)
		return p->err;
	errno = 0;
	if (len && fwrite(data, 1, len, p->f) != len) {
		p->err = errno ? -errno : -EIO;
		return p->err;
	}
	if (is_data)
		p->data_size += len;
	return 0;
}

/* event i's sample id: never 0 */
static __u64 pd_id(unsigned int event)
{
	return (__u64)event + 1;
}

struct perfdata *perfdata__new(FILE *f, const char *const *events, unsigned int nevents)
{
	static const char *const def[] = { PERFDATA_EVENT_NAME };
	static const char zero[PD_HEADER_SIZE];
	struct pd_file_section ids;
	struct perfdata *p = NULL;
	unsigned int i;
	off_t pos;
	__u64 id;
	int fd, err;

	if (!events || !nevents) {
		events = def;
		nevents = 1;
	}
	if (!f || nevents > PERFDATA_MAX_EVENTS) {
		err = -EINVAL;
		goto cleanup;
	}
	for (i = 0; i < nevents; i++) {
		if (!events[i] || !events[i][0] || strlen(events[i]) > PD_MAX_NAME) {
			err = -EINVAL;
			goto cleanup;
		}
	}
	pos = ftello(f);
	if (pos < 0) {
		err = -errno;
		goto cleanup;
	}
	/* append mode would put the header at the end, not at offset 0 */
	fd = fileno(f);
	if (pos != 0 || (fd >= 0 && (fcntl(fd, F_GETFL) & O_APPEND))) {
		err = -EINVAL;
		goto cleanup;
	}
	/* ftello() works on some unseekable streams; the header needs a real seek */
	if (fseeko(f, 0, SEEK_SET)) {
		err = -errno;
		goto cleanup;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = -ENOMEM;
		goto cleanup;
	}
	p->f = f;
	p->names = calloc(nevents, sizeof(*p->names));
	if (!p->names) {
		err = -ENOMEM;
		goto cleanup;
	}
	p->nevents = nevents;
	for (i = 0; i < nevents; i++) {
		p->names[i] = strdup(events[i]);
		if (!p->names[i]) {
			err = -ENOMEM;
			goto cleanup;
		}
	}

	p->attr.type = PERF_TYPE_SOFTWARE;
	p->attr.size = PD_ATTR_SIZE;
	p->attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	p->attr.sample_period = 1;
	p->attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			      PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_WEIGHT;
	p->attr.exclude_kernel = 1;
	p->attr.exclude_hv = 1;
	p->attr.mmap = 1;
	p->attr.comm = 1;
	p->attr.comm_exec = 1;
	p->attr.mmap2 = 1;
	p->attr.task = 1;
	p->attr.sample_id_all = 1;

	/* the header is a placeholder until close; the attributes and ids are final */
	perfdata__write(p, zero, sizeof(zero), false);
	for (i = 0; i < nevents; i++) {
		ids.offset = PD_IDS_OFF(nevents) + i * 8;
		ids.size = 8;
		perfdata__write(p, &p->attr, PD_ATTR_SIZE, false);
		perfdata__write(p, &ids, sizeof(ids), false);
	}
	for (i = 0; i < nevents; i++) {
		id = pd_id(i);
		perfdata__write(p, &id, sizeof(id), false);
	}
	err = p->err;
	if (err)
		goto cleanup;
	return p;

cleanup:
	perfdata__free(p);
	errno = -err;
	return NULL;
}

/*
 * The pid, tid, time, cpu, identifier trailer of a non-sample record (sample_id_all): CPU 0
 * and the first event's id (every event has the same sample_type, so any of them reads
 * it). Returns its size.
 */
static size_t perfdata__id_trailer(__u64 *rec, __u32 pid, __u32 tid, __u64 time_ns)
{
	rec[0] = (__u64)pid | (__u64)tid << 32;
	rec[1] = time_ns;
	rec[2] = 0;
	rec[3] = pd_id(0);
	return 32;
}

static int perfdata__emit(struct perfdata *p, __u32 type, __u16 misc, size_t len)
{
	struct perf_event_header *hdr = (struct perf_event_header *)p->rec;

	hdr->type = type;
	hdr->misc = misc;
	hdr->size = len;
	return perfdata__write(p, p->rec, len, true);
}

int perfdata__comm(struct perfdata *p, __u32 pid, __u32 tid, __u64 time_ns, const char *comm,
		   bool exec)
{
	size_t n, len;
	char *c;

	if (!p || !comm || !*comm || p->closed)
		return -EINVAL;
	n = strnlen(comm, PD_MAX_NAME + 1);
	if (n > PD_MAX_NAME)
		return -EINVAL;

	/* header, pid, tid, comm[] padded to 8 with at least one NUL, trailer */
	p->rec[1] = (__u64)pid | (__u64)tid << 32;
	c = (char *)&p->rec[2];
	len = PD_ALIGN(n + 1, 8);
	memset(c, 0, len);
	memcpy(c, comm, n);
	len += 16;
	len += perfdata__id_trailer(&p->rec[len / 8], pid, tid, time_ns);
	return perfdata__emit(p, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, len);
}

/* Remembers filename's build id for HEADER_BUILD_ID, once per (filename, build id). */
static int perfdata__add_build_id(struct perfdata *p, const char *filename,
				  const unsigned char *id, int len)
{
	struct pd_build_id *b;
	size_t i;

	for (i = 0; i < p->nr_bids; i++) {
		b = &p->bids[i];
		if (b->len == len && !memcmp(b->id, id, len) && !strcmp(b->filename, filename))
			return 0;
	}
	if (util__grow((void **)&p->bids, &p->cap_bids, p->nr_bids, sizeof(*p->bids)))
		return -ENOMEM;
	b = &p->bids[p->nr_bids];
	memset(b, 0, sizeof(*b));
	b->filename = strdup(filename);
	if (!b->filename)
		return -ENOMEM;
	memcpy(b->id, id, len);
	b->len = len;
	p->nr_bids++;
	return 0;
}

int perfdata__mmap(struct perfdata *p, __u32 pid, __u32 tid, __u64 time_ns, __u64 start,
		   __u64 len, __u64 pgoff, const char *filename, const unsigned char *build_id,
		   int build_id_len)
{
	__u16 misc = PERF_RECORD_MISC_USER;
	size_t n, size;
	__u8 *u;
	int err;

	if (!p || !filename || !*filename || p->closed || build_id_len < 0 ||
	    build_id_len > PERFDATA_BUILD_ID_MAX || (build_id_len && !build_id))
		return -EINVAL;
	n = strnlen(filename, PD_MAX_NAME + 1);
	if (n > PD_MAX_NAME)
		return -EINVAL;
	if (build_id_len) {
		err = perfdata__add_build_id(p, filename, build_id, build_id_len);
		if (err)
			return err;
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	}

	/*
	 * header, pid, tid, addr, len, pgoff, then 24 bytes that are either maj, min, ino,
	 * ino_generation or build_id_size, 3 reserved bytes, build_id[20]; prot, flags,
	 * filename[] padded to 8, trailer
	 */
	p->rec[1] = (__u64)pid | (__u64)tid << 32;
	p->rec[2] = start;
	p->rec[3] = len;
	p->rec[4] = pgoff;
	memset(&p->rec[5], 0, 24);
	if (build_id_len) {
		u = (__u8 *)&p->rec[5];
		u[0] = build_id_len;
		memcpy(u + 4, build_id, build_id_len);
	}
	p->rec[8] = (__u64)(PROT_READ | PROT_EXEC) | (__u64)MAP_PRIVATE << 32;
	size = PD_ALIGN(n + 1, 8);
	memset(&p->rec[9], 0, size);
	memcpy(&p->rec[9], filename, n);
	size += 9 * 8;
	size += perfdata__id_trailer(&p->rec[size / 8], pid, tid, time_ns);
	return perfdata__emit(p, PERF_RECORD_MMAP2, misc, size);
}

int perfdata__sample(struct perfdata *p, unsigned int event, __u32 pid, __u32 tid, __u32 cpu,
		     __u64 time_ns, __u64 weight, const __u64 *callchain, int n)
{
	size_t i = 1;

	if (!p || !callchain || n < 1 || p->closed || event >= p->nevents)
		return -EINVAL;
	if (n > PD_MAX_FRAMES)
		return -E2BIG;

	/* identifier first, then in sample_type bit order: ip, pid/tid, time, cpu (and a
	 * reserved u32), period, callchain, weight */
	p->rec[i++] = pd_id(event);
	p->rec[i++] = callchain[0];
	p->rec[i++] = (__u64)pid | (__u64)tid << 32;
	p->rec[i++] = time_ns;
	p->rec[i++] = cpu;
	p->rec[i++] = weight;
	p->rec[i++] = n + 1;
	p->rec[i++] = PERF_CONTEXT_USER;
	memcpy(&p->rec[i], callchain, n * sizeof(*callchain));
	i += n;
	p->rec[i++] = weight;

	if (!p->nr_samples || time_ns < p->first_time)
		p->first_time = time_ns;
	if (!p->nr_samples || time_ns > p->last_time)
		p->last_time = time_ns;
	p->nr_samples++;
	return perfdata__emit(p, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, i * 8);
}

static void pd_buf__add(struct pd_buf *b, const void *data, size_t len)
{
	if (b->err)
		return;
	if (util__reserve((void **)&b->data, &b->cap, b->len + len, 1)) {
		b->err = -ENOMEM;
		return;
	}
	if (data)
		memcpy(b->data + b->len, data, len);
	else
		memset(b->data + b->len, 0, len);
	b->len += len;
}

static void pd_buf__u32(struct pd_buf *b, __u32 v)
{
	pd_buf__add(b, &v, sizeof(v));
}

/* perf_header_string: u32 len, then the string NUL-padded to len (a multiple of 64) */
static void pd_buf__string(struct pd_buf *b, const char *s, size_t n)
{
	__u32 len = PD_ALIGN(n + 1, PD_NAME_ALIGN);

	pd_buf__u32(b, len);
	pd_buf__add(b, s, n);
	pd_buf__add(b, NULL, len - n);
}

static void pd_buf__cstring(struct pd_buf *b, const char *s)
{
	pd_buf__string(b, s, strlen(s));
}

/* the value of the first "key\t: value" line of /proc/cpuinfo whose key is key, or "" */
static void pd_cpuinfo(const char *key, char *val, size_t len)
{
	char *line = NULL, *colon, *end;
	size_t cap = 0, n;
	FILE *f;

	val[0] = '\0';
	f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		colon = strchr(line, ':');
		if (!colon)
			continue;
		for (end = colon; end > line && (end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		if ((size_t)(end - line) != strlen(key) || strncmp(line, key, end - line))
			continue;
		/* perf's __write_cpudesc: the text after ": " */
		colon += colon[1] == ' ' ? 2 : 1;
		n = strcspn(colon, "\n");
		snprintf(val, len, "%.*s", (int)n, colon);
		break;
	}
	free(line);
	fclose(f);
}

/* HEADER_CPUDESC: cpuinfo's "model name", with white space runs made one space (as perf) */
static void pd_feat_cpudesc(struct pd_buf *b, const char *machine)
{
	char desc[256], *r, *w;
	bool space = false;

	pd_cpuinfo("model name", desc, sizeof(desc));
	for (r = w = desc; *r; r++) {
		if (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\v' || *r == '\f' ||
		    *r == '\r') {
			if (!space)
				*w++ = ' ';
			space = true;
		} else {
			*w++ = *r;
			space = false;
		}
	}
	*w = '\0';
	pd_buf__cstring(b, desc[0] ? desc : machine);
}

/*
 * HEADER_CPUID: perf's get_cpuid() on x86, "vendor,family,model,stepping" in decimal
 * ("GenuineIntel,6,85,7"); /proc/cpuinfo has the same numbers (extended family and model
 * folded in as perf does). Elsewhere, or without those lines, the machine name.
 */
static void pd_feat_cpuid(struct pd_buf *b, const char *machine)
{
	char vendor[64], family[16], model[16], step[16], id[128];

	pd_cpuinfo("vendor_id", vendor, sizeof(vendor));
	pd_cpuinfo("cpu family", family, sizeof(family));
	pd_cpuinfo("model", model, sizeof(model));
	pd_cpuinfo("stepping", step, sizeof(step));
	if (!vendor[0] || !family[0] || !model[0] || !step[0]) {
		pd_buf__cstring(b, machine);
		return;
	}
	snprintf(id, sizeof(id), "%s,%s,%s,%s", vendor, family, model, step);
	pd_buf__cstring(b, id);
}

/* HEADER_CMDLINE: perf_header_string_list of this process's argv */
static void perfdata__feat_cmdline(struct pd_buf *b)
{
	char buf[8192];
	size_t n = 0, i, start;
	__u32 nr = 0;
	ssize_t r;
	int fd;

	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (n < sizeof(buf) - 1) {
			r = read(fd, buf + n, sizeof(buf) - 1 - n);
			if (r <= 0)
				break;
			n += r;
		}
		close(fd);
	}
	if (n && buf[n - 1] != '\0')
		buf[n++] = '\0';
	for (i = 0; i < n; i++)
		nr += buf[i] == '\0';
	if (!nr) {
		pd_buf__u32(b, 1);
		pd_buf__cstring(b, "memphase");
		return;
	}
	pd_buf__u32(b, nr);
	for (i = start = 0; i < n; i++) {
		if (buf[i] == '\0') {
			pd_buf__string(b, buf + start, i - start);
			start = i + 1;
		}
	}
}

static void perfdata__feat_build_ids(struct perfdata *p, struct pd_buf *b)
{
	struct perf_event_header hdr;
	struct pd_build_id *bid;
	__u8 id[24];
	__s32 pid = PD_HOST_PID;
	size_t i, n, len;

	/*
	 * build_id_event: header, pid, build_id[20] + size byte + 3 reserved, filename
	 * padded to 64; pid -1 is the host machine, any other pid a guest
	 */
	for (i = 0; i < p->nr_bids; i++) {
		bid = &p->bids[i];
		n = strlen(bid->filename);
		len = PD_ALIGN(n + 1, PD_NAME_ALIGN);
		hdr.type = PD_RECORD_HEADER_BUILD_ID;
		hdr.misc = PERF_RECORD_MISC_USER | PD_MISC_BUILD_ID_SIZE;
		hdr.size = sizeof(hdr) + sizeof(pid) + sizeof(id) + len;
		memset(id, 0, sizeof(id));
		memcpy(id, bid->id, bid->len);
		id[20] = bid->len;
		pd_buf__add(b, &hdr, sizeof(hdr));
		pd_buf__add(b, &pid, sizeof(pid));
		pd_buf__add(b, id, sizeof(id));
		pd_buf__add(b, bid->filename, n);
		pd_buf__add(b, NULL, len - n);
	}
}

int perfdata__close(struct perfdata *p)
{
	struct pd_file_section secs[PD_FEAT_BITS];
	struct pd_file_header hdr;
	struct pd_buf b = {};
	struct utsname uts;
	int feats[16], nf = 0, i, err;
	unsigned int j;
	__u64 base, id;
	size_t start;
	long cpus;

	if (!p || p->closed)
		return -EINVAL;
	p->closed = true;
	if (p->err)
		return p->err;
	if (uname(&uts))
		memset(&uts, 0, sizeof(uts));

	if (p->nr_bids)
		feats[nf++] = PD_FEAT_BUILD_ID;
	feats[nf++] = PD_FEAT_HOSTNAME;
	feats[nf++] = PD_FEAT_OSRELEASE;
	feats[nf++] = PD_FEAT_VERSION;
	feats[nf++] = PD_FEAT_ARCH;
	feats[nf++] = PD_FEAT_NRCPUS;
	feats[nf++] = PD_FEAT_CPUDESC;
	feats[nf++] = PD_FEAT_CPUID;
	feats[nf++] = PD_FEAT_CMDLINE;
	feats[nf++] = PD_FEAT_EVENT_DESC;
	if (p->nr_samples)
		feats[nf++] = PD_FEAT_SAMPLE_TIME;

	/* the section table follows the data; the sections follow the table */
	base = PD_DATA_OFF(p->nevents) + p->data_size + nf * sizeof(struct pd_file_section);
	for (i = 0; i < nf; i++) {
		start = b.len;
		switch (feats[i]) {
		case PD_FEAT_BUILD_ID:
			perfdata__feat_build_ids(p, &b);
			break;
		case PD_FEAT_HOSTNAME:
			pd_buf__cstring(&b, uts.nodename);
			break;
		case PD_FEAT_OSRELEASE:
			pd_buf__cstring(&b, uts.release);
			break;
		case PD_FEAT_VERSION:
			pd_buf__cstring(&b, "memphase " MEMPHASE_VERSION);
			break;
		case PD_FEAT_ARCH:
			pd_buf__cstring(&b, uts.machine);
			break;
		case PD_FEAT_NRCPUS:
			/* perf writes and reads the available count first, then online */
			cpus = sysconf(_SC_NPROCESSORS_CONF);
			pd_buf__u32(&b, cpus > 0 ? cpus : 1);
			cpus = sysconf(_SC_NPROCESSORS_ONLN);
			pd_buf__u32(&b, cpus > 0 ? cpus : 1);
			break;
		case PD_FEAT_CPUDESC:
			pd_feat_cpudesc(&b, uts.machine);
			break;
		case PD_FEAT_CPUID:
			pd_feat_cpuid(&b, uts.machine);
			break;
		case PD_FEAT_CMDLINE:
			perfdata__feat_cmdline(&b);
			break;
		case PD_FEAT_EVENT_DESC:
			/* nr, attr size, then per event: attr, nr_ids, name, ids[] */
			pd_buf__u32(&b, p->nevents);
			pd_buf__u32(&b, PD_ATTR_SIZE);
			for (j = 0; j < p->nevents; j++) {
				id = pd_id(j);
				pd_buf__add(&b, &p->attr, PD_ATTR_SIZE);
				pd_buf__u32(&b, 1);
				pd_buf__cstring(&b, p->names[j]);
				pd_buf__add(&b, &id, sizeof(id));
			}
			break;
		case PD_FEAT_SAMPLE_TIME:
			pd_buf__add(&b, &p->first_time, sizeof(p->first_time));
			pd_buf__add(&b, &p->last_time, sizeof(p->last_time));
			break;
		}
		secs[i].offset = base + start;
		secs[i].size = b.len - start;
	}
	err = b.err;
	if (err)
		goto cleanup;

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, "PERFILE2", 8);
	hdr.size = sizeof(hdr);
	hdr.attr_size = PD_FILE_ATTR_SIZE;
	hdr.attrs.offset = PD_ATTR_OFF;
	hdr.attrs.size = (__u64)p->nevents * PD_FILE_ATTR_SIZE;
	hdr.data.offset = PD_DATA_OFF(p->nevents);
	hdr.data.size = p->data_size;
	for (i = 0; i < nf; i++)
		hdr.features[feats[i] / 64] |= 1ULL << (feats[i] % 64);

	perfdata__write(p, secs, nf * sizeof(secs[0]), false);
	err = perfdata__write(p, b.data, b.len, false);
	if (err)
		goto cleanup;
	if (fseeko(p->f, 0, SEEK_SET)) {
		err = -errno;
		goto cleanup;
	}
	err = perfdata__write(p, &hdr, sizeof(hdr), false);
	if (err)
		goto cleanup;
	if (fseeko(p->f, 0, SEEK_END) || fflush(p->f)) {
		err = -errno;
		goto cleanup;
	}

cleanup:
	free(b.data);
	if (err && !p->err)
		p->err = err;
	return err;
}

void perfdata__free(struct perfdata *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr_bids; i++)
		free(p->bids[i].filename);
	free(p->bids);
	for (i = 0; p->names && i < p->nevents; i++)
		free(p->names[i]);
	free(p->names);
	free(p);
}
