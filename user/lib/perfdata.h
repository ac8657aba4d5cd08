/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A perf.data writer (perf's "PERFILE2" file format, not pipe mode) that perf script and
 * perf report (checked with Debian's linux-perf 6.1) read, resolving symbols themselves
 * from the mmap records and the ELF files they name.
 *
 * File layout (offsets from the start of the file), for N events:
 *	0	struct perf_file_header (104 bytes), written last, by perfdata__close()
 *	104	N attributes: perf_event_attr (128 bytes, PERF_ATTR_SIZE_VER7, the size perf
 *		6.1 knows; a bigger attr.size makes it reject the file) + its ids section
 *		(offset and size of the event's sample ids), 144 bytes each
 *	104+144N	the sample ids, one u64 per event: event i has id i + 1
 *	104+152N	data: the records, streamed as they come, each padded to 8 bytes
 *	...	feature section table, then the feature sections
 *
 * Events: one per name given to perfdata__new() (memphase writes one: its phases are
 * threads, see report/perf.c), all PERF_TYPE_SOFTWARE / PERF_COUNT_SW_PAGE_FAULTS (RSS
 * grows by page faults) with the same attribute: only the sample ids tell them apart.
 * Names come through HEADER_EVENT_DESC, so perf prints "of event 'NAME'". exclude_kernel/
 * exclude_hv are set: there are no kernel frames, and this keeps perf report from warning
 * about missing kernel maps. sample_type = IDENTIFIER | IP | TID | TIME | CPU | PERIOD |
 * CALLCHAIN | WEIGHT: the identifier (the event's id) is the first u64 of a sample and the
 * last of the trailer that sample_id_all = 1 puts after COMM and MMAP2 records (pid, tid,
 * time, cpu, identifier: perf only sorts a file by time when sample_id_all is set; these
 * records carry CPU 0 and the first event's id). A sample's period and weight are both its
 * bytes, so perf report's Overhead and "Event count (approx.)" are in bytes; perf script
 * -F period,weight prints them, perf data convert --to-ctf keeps both (perf_period,
 * perf_weight); --to-json writes neither: its samples have timestamp, pid, tid, cpu, comm
 * and callchain only (6.1; later versions add a tracepoint's fields, nothing else).
 * Samples have misc PERF_RECORD_MISC_USER and the call chain PERF_CONTEXT_USER, ip0 (= the
 * sample ip), ip1, ... (innermost first), as the kernel writes a user-only frame-pointer
 * chain.
 *
 * Records need not be in time order: perf sorts the whole file by time when it reads it
 * (no PERF_RECORD_FINISHED_ROUND is written, so perf holds all records in memory while
 * sorting, as for a file from perf record with one round). Equal times keep file order.
 * perf gives a thread the comm of its last COMM record at or before each sample; a
 * thread with no COMM record of its own (tid != pid included) shows as ":tid".
 *
 * Features written: BUILD_ID (one entry per file and build id passed to perfdata__mmap;
 * pid -1 = host, as perf record writes), HOSTNAME (perf treats a file without it as a
 * pre-2.6.39 one), OSRELEASE, VERSION ("memphase <version>"), ARCH, NRCPUS, CPUDESC
 * (/proc/cpuinfo's "model name", white space squashed, as perf writes it), CPUID (perf's
 * x86 get_cpuid(): "GenuineIntel,6,85,7", vendor,family,model,stepping; the machine name
 * where /proc/cpuinfo has no such lines), CMDLINE (/proc/self/cmdline), EVENT_DESC and,
 * once there are samples, SAMPLE_TIME. perf data convert --to-json (6.1) crashes on a file
 * without CPUID (it prints the string unchecked).
 *
 * perf, run as root, refuses a file owned by another user unless given -f (--force); a
 * file memphase writes as root is owned by root and needs no -f.
 */
#ifndef __MP_PERFDATA_H
#define __MP_PERFDATA_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

/* the event name shown by perf (HEADER_EVENT_DESC) when none is given */
#define PERFDATA_EVENT_NAME "memphase:rss-growth"
/* most events a file holds */
#define PERFDATA_MAX_EVENTS 1024
/* longest build id an MMAP2 record holds */
#define PERFDATA_BUILD_ID_MAX 20

struct perfdata;

/*
 * Starts a perf.data file on f, which must be seekable, positioned at offset 0 and not in
 * append mode (the header is written at close, by seeking back: fopen(path, "w") or "w+").
 * events[0..nevents) name the events samples are counted under (NULL or 0: one event,
 * PERFDATA_EVENT_NAME). Records are streamed to f as they come; only the build ids are
 * kept in memory. Returns NULL + errno: EINVAL (f NULL, not at offset 0, O_APPEND, an
 * empty or NULL name, more than PERFDATA_MAX_EVENTS), ESPIPE (not seekable), ENOMEM, or
 * the write error.
 */
struct perfdata *perfdata__new(FILE *f, const char *const *events, unsigned int nevents);

/*
 * PERF_RECORD_COMM: thread tid of process pid is named comm from time_ns on. exec sets
 * PERF_RECORD_MISC_COMM_EXEC (an exec, rather than a prctl(PR_SET_NAME)-style rename).
 * comm may be longer than the kernel's 15 characters; perf prints it whole.
 * 0, -EINVAL (NULL or empty comm, over 4096 bytes) or a write error.
 */
int perfdata__comm(struct perfdata *p, __u32 pid, __u32 tid, __u64 time_ns, const char *comm,
		   bool exec);

/*
 * PERF_RECORD_MMAP2 of an executable mapping: [start, start + len) of process pid maps
 * filename from file offset pgoff, prot r-x, MAP_PRIVATE. With a build id (1 to 20
 * bytes) the record carries it (PERF_RECORD_MISC_MMAP_BUILD_ID, perf >= 5.12) and the file
 * and build id go to HEADER_BUILD_ID; perf then uses filename only if its build id
 * matches. Without (build_id NULL or build_id_len 0) device and inode are written as 0 and
 * perf reads the build id from the file. 0, -EINVAL (bad arguments, build_id_len > 20,
 * name over 4096 bytes), -ENOMEM or a write error.
 */
int perfdata__mmap(struct perfdata *p, __u32 pid, __u32 tid, __u64 time_ns, __u64 start,
		   __u64 len, __u64 pgoff, const char *filename, const unsigned char *build_id,
		   int build_id_len);

/*
 * PERF_RECORD_SAMPLE of event (an index into perfdata__new()'s events), taken on cpu,
 * standing for weight bytes of growth: ip = callchain[0]; callchain holds n >= 1
 * user-space ips, innermost first and outermost last (perf's order). weight is both the
 * sample period and PERF_SAMPLE_WEIGHT. 0, -EINVAL (no such event, callchain NULL or
 * n < 1), -E2BIG (n over 8000: a record is at most 64 KiB) or a write error.
 */
int perfdata__sample(struct perfdata *p, unsigned int event, __u32 pid, __u32 tid, __u32 cpu,
		     __u64 time_ns, __u64 weight, const __u64 *callchain, int n);

/*
 * Finishes the file: writes the feature sections after the data, then the header
 * (attribute, data size, feature bits) at offset 0, leaves f positioned at the end and
 * flushes it. Does not fclose f. 0, or -errno: the first error of any earlier call (a
 * failed write leaves the file unusable), -EINVAL if already closed. Without a close the
 * file has a zero header and perf rejects it.
 */
int perfdata__close(struct perfdata *p);

/* Frees p (NULL-safe); does not close, flush or fclose its FILE. */
void perfdata__free(struct perfdata *p);

#endif
