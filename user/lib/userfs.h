/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files as the invoking user. memphase runs as root on shared machines; every file it
 * writes or removes goes through a small helper process that has dropped to the
 * invoking user's uid, gid and supplementary groups for good (struct creds), so the
 * kernel checks that user's rights, not root's. The helper:
 *
 * - resolves a path component by component from a directory fd, following a symbolic
 *   link only when it belongs to the invoking user or to root (another user's link,
 *   planted in /tmp or anywhere else, is refused, in the directories as well as at the
 *   end), so no path is checked and then used;
 * - for a regular file (or a name that does not exist yet) creates a temporary file
 *   beside it, ".NAME.memphase-XXXXXX", that the caller writes, then renames it over NAME
 *   (commit) or removes it (discard): a reader never sees a half-written file and a
 *   failed run leaves the previous file as it was. Under root, a file owned by another
 *   user is not replaced; for anyone else, a file they could not write is not either;
 * - for a pipe, a character device or a socket ("-" is stdout) hands out that file
 *   itself, opened for writing without truncation: nothing is created or renamed;
 * - renames or removes a committed file later (recording rotation) only while its name
 *   still holds that very file: the helper keeps it open (O_PATH) from its creation on,
 *   so a file put there since cannot have its inode number. A committed file someone
 *   else deletes meanwhile keeps its space until the helper lets it go (the next commit
 *   of that output, its removal, or the end);
 * - when memphase goes away without a word (SIGKILL, a crash, a kill of its whole
 *   process group: the helper has a session of its own), removes every temporary file it
 *   created that was not committed, then exits; a file marked to live only as long as
 *   the run (the metrics textfile) it removes then too, as at memphase's own end, if its
 *   name still holds the file the last commit put there;
 * - answers for the user what memphase reads on their behalf from the kernel's side: may
 *   they read a file the observed process maps (root opened it; the helper reopens it),
 *   may they read a process's memory map (the ptrace rule of /proc/PID/maps)? A path the
 *   user names is opened as the user instead (lib/asuser.h).
 */
#ifndef __MP_USERFS_H
#define __MP_USERFS_H

#include <stdbool.h>
#include <linux/types.h>
#include "lib/creds.h"

struct userfs;

enum userfs_kind {
	USERFS_FILE = 1,	/* written to a temporary file, renamed into place */
	USERFS_STREAM = 2,	/* a pipe, character device or socket, written in place */
};

struct userfs_file {
	int id;			/* the helper's handle */
	int kind;		/* enum userfs_kind */
	int fd;			/* the temporary file or the stream; -1 */
	bool seekable;
	__u64 dev, ino;		/* the file if it exists, else its directory ... */
	char name[256];		/* ... and this name in it ("" when the file exists) */
	__u32 rdev_major, rdev_minor;	/* streams: character device numbers */
	char why[160];		/* after a failure: what went wrong, if more than errno */
};

/* Starts the helper as c. NULL + errno. */
struct userfs *userfs__new(const struct creds *c);
/* Ends the helper: it removes any temporary file not committed. NULL-safe. */
void userfs__free(struct userfs *u);

/*
 * Resolves path and opens it for writing: f->fd is a fresh temporary file (USERFS_FILE)
 * or the stream. 0, or -errno with f->why set when errno alone does not say it.
 */
int userfs__open(struct userfs *u, const char *path, struct userfs_file *f);
/* A new temporary file for another write of the same file (f->fd, the old one closed). */
int userfs__renew(struct userfs *u, struct userfs_file *f);
/* Syncs and renames the temporary file over the file (f->fd stays open). Streams: 0. */
int userfs__commit(struct userfs *u, struct userfs_file *f);
/* Removes the temporary file, if it is still there, and closes f->fd. */
void userfs__discard(struct userfs *u, struct userfs_file *f);
/*
 * After a commit: the file takes another name in the same directory (a base name; an
 * existing file of that name is not replaced: -EEXIST), as long as it is still the file
 * the commit put there (-ESTALE otherwise). f then stands for it under its new name.
 */
int userfs__set_aside(struct userfs *u, struct userfs_file *f, const char *name);
/*
 * Removes the file a commit put there, if that name still holds it (-ESTALE: left alone),
 * and lets go of f (closed; the helper's handle freed).
 */
int userfs__remove(struct userfs *u, struct userfs_file *f);
/*
 * The file the last commit of f puts there is removed when the helper ends (userfs__free,
 * or memphase gone), if that name still holds it; none committed: nothing is. Streams: 0.
 */
int userfs__remove_at_end(struct userfs *u, struct userfs_file *f);
/*
 * Has the file the last commit put there been read since (its access time past its
 * modification time: relatime's first read after a write; never on a noatime mount)?
 * 1, 0, or -errno (-ESTALE: its name holds another file; -EBADF: a stream).
 */
int userfs__read_since(struct userfs *u, const struct userfs_file *f);
/* Closes f->fd (after a commit: the file stays). */
void userfs__close(struct userfs_file *f);
/* Do a and b name the same file? */
bool userfs__same(const struct userfs_file *a, const struct userfs_file *b);
/*
 * May the user open the file open as fd (a regular file root opened) for reading? 0, or
 * -errno (-EACCES: root reads nothing of it for them). NULL u, or a root helper: 0.
 */
int userfs__may_read(struct userfs *u, int fd);
/*
 * The memory map ("maps") or environment ("environ") of the process whose /proc/PID
 * directory is open as proc_dirfd, opened as the user: the kernel lets them only where
 * ptrace(2) would (PTRACE_MODE_READ_FSCREDS), and the file reads the address space the
 * process had then, not one an exec gives it later. Its fd, or -ESRCH (it is gone),
 * -EACCES/-EPERM (not theirs to read), -EINVAL (another name). NULL u, or a root helper:
 * opened as memphase.
 */
int userfs__open_proc(struct userfs *u, int proc_dirfd, const char *name);

#endif
