/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc/PID/maps, read the one way every part of memphase needs it.
 *
 * A line is "start-end perms offset major:minor inode path". The path is what the kernel's
 * d_path() gives, with two losses this reader undoes: a newline in a file name is printed
 * as the octal escape "\012" (a backslash in a name is printed as it is, so the text alone
 * is ambiguous), and a deleted file gets " (deleted)" appended (as does a file whose name
 * really ends that way). For a file path that contains a backslash or ends in " (deleted)",
 * the exact name is read through readlink("/proc/PID/map_files/START-END") and the file's
 * link count tells whether it is deleted (needs root; memfd, SysV and shared /dev/zero
 * memory count as deleted, as the kernel shows them). When that fails (not root, the
 * mapping is gone), octal escapes "\ooo" are undone and a " (deleted)" suffix is taken to
 * mean deleted. Other paths ([heap], [stack], [vdso], [anon:NAME], "" for anonymous
 * memory) are the line's text.
 */
#ifndef __MP_PROCMAPS_H
#define __MP_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procmaps_entry {
	uint64_t start, end;		/* [start, end) */
	char perms[5];			/* "r-xp" */
	uint64_t offset;		/* file offset of start */
	unsigned int dev_major, dev_minor;
	uint64_t inode;			/* 0: not a file */
	const char *path;		/* exact name, without " (deleted)"; never NULL */
	bool deleted;			/* the file was deleted (or never had a name) */
};

struct procmaps;

/*
 * Parses one line (with or without its newline) into e; e->path points into buf[0..len).
 * pid > 0: a path that needs it is read through /proc/PID/map_files (see above); pid <= 0:
 * from the text only. 0, -EINVAL (not a maps line) or -ENAMETOOLONG (buf too small).
 */
int procmaps__parse(const char *line, pid_t pid, struct procmaps_entry *e, char *buf,
		    size_t len);

struct userfs;

/* Opens /proc/PID/maps. NULL + errno (ENOENT: no such process). */
struct procmaps *procmaps__open(pid_t pid);
/*
 * Opens /proc/PID/maps as the invoking user (userfs__open_proc(): only where they could
 * ptrace the process, and of the address space it has now). NULL + errno (ENOENT: no such
 * process, EACCES/EPERM: not theirs to read). fs NULL: procmaps__open().
 */
struct procmaps *procmaps__open_as(pid_t pid, struct userfs *fs);
/*
 * The next mapping into e (e->path valid until the next call): 1, 0 at the end, or -errno
 * (a read error; lines that do not parse are skipped).
 */
int procmaps__next(struct procmaps *pm, struct procmaps_entry *e);
/* NULL-safe. */
void procmaps__close(struct procmaps *pm);

#endif
