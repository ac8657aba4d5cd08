// SPDX-License-Identifier: GPL-2.0
/* The file helper's set-aside and removal (recording rotation): only the file it committed. */
#include <errno.h>
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
	struct creds c;
	struct userfs *u;

	ASSERT_TRUE(mkdtemp(dir) != NULL, "temporary directory");
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
	/* a file put in its place since the commit is not memphase's: left alone */
	snprintf(path, sizeof(path), "%s/cur.mprec", dir);
	ASSERT_EQ(unlink(path), 0, "replace it");
	put(dir, "cur.mprec", "other");
	ASSERT_EQ(userfs__set_aside(u, &b, "cur.000002.mprec"), -ESTALE, "not ours to rename");
	ASSERT_EQ(userfs__remove(u, &b), -ESTALE, "not ours to remove");
	ASSERT_TRUE(has(dir, "cur.mprec", "other"), "the other file stays");
	userfs__free(u);
	put(dir, "x", "");
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ASSERT_EQ(system(path), 0, "clean up");
}
