// SPDX-License-Identifier: GPL-2.0
/* The file helper's set-aside and removal (recording rotation): only the file it committed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "harness.h"
#include "lib/creds.h"
#include "lib/userfs.h"

static void put(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool has(const char *dir, const char *name, const char *text)
{
	char p[512], buf[64] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return !text || !strcmp(buf, text);
}

/*
 * Creates dir/name holding text, a file the test's own process put there, and tries to
 * give it inode number ino: a file system reuses a freed number (ext4: at once, for the
 * next file created in the directory, the lowest free one first), so every file that
 * gets another number is kept aside under a name of its own and the next one tried, up
 * to PUT_TRIES. Did it get ino? (dir/name holds text either way.)
 */
#define PUT_TRIES	100

static bool put_on_ino(const char *dir, const char *name, const char *text, ino_t ino)
{
	char p[512], q[512];
	struct stat st;
	int i, fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	for (i = 0; i < PUT_TRIES; i++) {
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			return false;
		if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fstat(fd, &st)) {
			close(fd);
			return false;
		}
		close(fd);
		if (st.st_ino == ino || i == PUT_TRIES - 1)
			break;
		snprintf(q, sizeof(q), "%s/%s.%d", dir, name, i);
		if (rename(p, q))
			return false;
	}
	return st.st_ino == ino;
}

static ino_t ino_of(const char *dir, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) ? 0 : st.st_ino;
}

/* A committed file named path holding text; f stays for it. */
static int committed(struct userfs *u, const char *path, const char *text,
		     struct userfs_file *f)
{
	int err = userfs__open(u, path, f);

	if (err)
		return err;
	if (write(f->fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -EIO;
	err = userfs__commit(u, f);
	userfs__close(f);
	return err;
}

TEST(userfs_set_aside_and_remove_only_what_it_committed)
{
	char dir[] = "/tmp/mp-userfs-XXXXXX", path[256], uid[16];
	struct userfs_file a = { .fd = -1 }, b = { .fd = -1 };
	bool reuses;
	struct creds c;
	struct userfs *u;
	ino_t ino;

	ASSERT_TRUE(mkdtemp(dir) != NULL, "temporary directory");
	/* does this file system reuse a freed inode's number (ext4 does, tmpfs does not)? */
	put(dir, "probe", "");
	ino = ino_of(dir, "probe");
	snprintf(path, sizeof(path), "%s/probe", dir);
	ASSERT_TRUE(ino && !unlink(path), "probe");
	reuses = put_on_ino(dir, "probe", "", ino);
	if (geteuid() == 0) {
		creds__root(&c);
	} else {
		snprintf(uid, sizeof(uid), "%u", (unsigned int)geteuid());
		ASSERT_EQ(creds__lookup(&c, uid), 0, "own creds");
	}
	u = userfs__new(&c);
	ASSERT_TRUE(u != NULL, "helper");
	snprintf(path, sizeof(path), "%s/cur.mprec", dir);
	ASSERT_EQ(committed(u, path, "one", &a), 0, "first segment");
	/* set aside: the name moves, the current name is free again */
	ASSERT_EQ(userfs__set_aside(u, &a, "cur.000001.mprec"), 0, "set aside");
	ASSERT_TRUE(has(dir, "cur.000001.mprec", "one") && !has(dir, "cur.mprec", NULL),
		    "renamed");
	/* never over an existing file, never out of the directory */
	put(dir, "taken", "keep");
	ASSERT_EQ(userfs__set_aside(u, &a, "taken"), -EEXIST, "no replacing");
	ASSERT_TRUE(has(dir, "taken", "keep") && has(dir, "cur.000001.mprec", "one"), "kept");
	ASSERT_EQ(userfs__set_aside(u, &a, "../x"), -EINVAL, "a base name only");
	/* the next segment under the current name */
	ASSERT_EQ(committed(u, path, "two", &b), 0, "second segment");
	ASSERT_TRUE(has(dir, "cur.mprec", "two"), "current");
	/* removal: the set-aside file goes, the entry is freed */
	ASSERT_EQ(userfs__remove(u, &a), 0, "remove");
	ASSERT_TRUE(!has(dir, "cur.000001.mprec", NULL), "removed");
	/*
	 * A file put in its place since the commit is not memphase's: left alone, even with
	 * the inode number of memphase's (where the helper lets it be freed, it gets it).
	 */
	snprintf(path, sizeof(path), "%s/cur.mprec", dir);
	ino = ino_of(dir, "cur.mprec");
	ASSERT_EQ(unlink(path), 0, "replace it");
	put_on_ino(dir, "cur.mprec", "other", ino);
	ASSERT_TRUE(has(dir, "cur.mprec", "other"), "the other file");
	ASSERT_EQ(userfs__set_aside(u, &b, "cur.000002.mprec"), -ESTALE, "not ours to rename");
	ASSERT_EQ(userfs__remove(u, &b), -ESTALE, "not ours to remove");
	ASSERT_TRUE(has(dir, "cur.mprec", "other"), "the other file stays");
	if (!reuses)
		printf("%s: %s does not reuse inode numbers: the other file could not get the "
		       "number of memphase's\n", test__name(), dir);
	userfs__free(u);
	put(dir, "x", "");
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ASSERT_EQ(system(path), 0, "clean up");
}
