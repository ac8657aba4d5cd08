// SPDX-License-Identifier: GPL-2.0
/*
 * The file helper's set-aside and removal (recording rotation) and its removal at the end
 * (the metrics textfile): only the file it committed.
 */
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

/* Reads dir/name whole (as a textfile collector does). */
static void read_all(const char *dir, const char *name)
{
	char p[512], buf[64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (!f)
		return;
	while (fread(buf, 1, sizeof(buf), f) > 0)
		;
	fclose(f);
}

/*
 * A file that lives as long as the run (the metrics textfile): the helper's end removes
 * what the last commit put there, and only that: a file never committed leaves the one
 * already there as it was, one put in its place since is left alone. Whether it was read
 * since its commit is the file system's access time (relatime's first read after a write).
 */
TEST(userfs_remove_at_end_only_what_it_committed)
{
	char dir[] = "/tmp/mp-userfs-XXXXXX", path[256], uid[16];
	struct userfs_file a = { .fd = -1 }, b = { .fd = -1 }, c = { .fd = -1 };
	struct creds cr;
	struct userfs *u;
	struct stat st;
	int r;

	ASSERT_TRUE(mkdtemp(dir) != NULL, "temporary directory");
	if (geteuid() == 0) {
		creds__root(&cr);
	} else {
		snprintf(uid, sizeof(uid), "%u", (unsigned int)geteuid());
		ASSERT_EQ(creds__lookup(&cr, uid), 0, "own creds");
	}
	u = userfs__new(&cr);
	if (!ASSERT_TRUE(u != NULL, "helper"))
		goto out;
	/* a: committed twice, read after the second, removed at the end */
	snprintf(path, sizeof(path), "%s/a.prom", dir);
	ASSERT_EQ(committed(u, path, "one", &a), 0, "a written");
	ASSERT_EQ(userfs__remove_at_end(u, &a), 0, "a lives as long as the run");
	ASSERT_EQ(userfs__read_since(u, &a), 0, "a not read yet");
	read_all(dir, "a.prom");
	r = userfs__read_since(u, &a);
	snprintf(path, sizeof(path), "%s/a.prom", dir);
	if (!stat(path, &st) && st.st_atim.tv_sec == st.st_mtim.tv_sec &&
	    st.st_atim.tv_nsec <= st.st_mtim.tv_nsec)
		printf("%s: %s keeps no access time (noatime?): read_since() cannot tell\n",
		       test__name(), dir);
	else
		ASSERT_EQ(r, 1, "a read since its commit");
	ASSERT_EQ(userfs__renew(u, &a), 0, "a again");
	ASSERT_TRUE(write(a.fd, "two", 3) == 3, "a written again");
	ASSERT_EQ(userfs__commit(u, &a), 0, "a committed again");
	userfs__close(&a);
	ASSERT_EQ(userfs__read_since(u, &a), 0, "the new a not read yet");
	/* b: marked, never committed: the file already there is not memphase's to remove */
	put(dir, "b.prom", "before");
	snprintf(path, sizeof(path), "%s/b.prom", dir);
	ASSERT_EQ(userfs__open(u, path, &b), 0, "b opened");
	ASSERT_EQ(userfs__remove_at_end(u, &b), 0, "b marked");
	ASSERT_EQ(userfs__read_since(u, &b), -EBADF, "b: nothing committed");
	/* c: committed, then another file put in its place */
	snprintf(path, sizeof(path), "%s/c.prom", dir);
	ASSERT_EQ(committed(u, path, "mine", &c), 0, "c written");
	ASSERT_EQ(userfs__remove_at_end(u, &c), 0, "c marked");
	ASSERT_EQ(unlink(path), 0, "c replaced");
	put(dir, "c.prom", "other");
	ASSERT_EQ(userfs__read_since(u, &c), -ESTALE, "c: not ours now");
	ASSERT_TRUE(has(dir, "a.prom", "two"), "a there while the helper runs");
	userfs__free(u);
	ASSERT_FALSE(has(dir, "a.prom", NULL), "a removed at the end");
	ASSERT_TRUE(has(dir, "b.prom", "before"), "b as it was");
	ASSERT_TRUE(has(dir, "c.prom", "other"), "c's replacement stays");
	snprintf(path, sizeof(path), "test $(ls -A '%s' | wc -l) -eq 2", dir);
	ASSERT_EQ(system(path), 0, "no temporary file left");
out:
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ASSERT_EQ(system(path), 0, "clean up");
}
