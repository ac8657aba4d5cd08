// SPDX-License-Identifier: GPL-2.0
/* The /proc/PID/maps parser: fields, escapes, " (deleted)", and exact names of live mappings. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "lib/procmaps.h"

TEST(procmaps_parse_fields)
{
	struct procmaps_entry e;
	char buf[256];

	if (!ASSERT_OK(procmaps__parse("7f12a0000000-7f12a0021000 r-xp 00002000 fd:01 1234567   "
				       "       /usr/lib/libllama.so\n", 0, &e, buf, sizeof(buf)),
		       "parse"))
		return;
	ASSERT_EQ(e.start, 0x7f12a0000000ULL, "start");
	ASSERT_EQ(e.end, 0x7f12a0021000ULL, "end");
	ASSERT_STREQ(e.perms, "r-xp", "perms");
	ASSERT_EQ(e.offset, 0x2000ULL, "offset");
	ASSERT_EQ(e.dev_major, 0xfdU, "major");
	ASSERT_EQ(e.dev_minor, 1U, "minor");
	ASSERT_EQ(e.inode, 1234567ULL, "inode");
	ASSERT_STREQ(e.path, "/usr/lib/libllama.so", "path");
	ASSERT_FALSE(e.deleted, "deleted");

	ASSERT_OK(procmaps__parse("55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0   [heap]", 0,
				  &e, buf, sizeof(buf)), "heap");
	ASSERT_STREQ(e.path, "[heap]", "heap path");
	ASSERT_OK(procmaps__parse("7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n", 0, &e, buf,
				  sizeof(buf)), "anon");
	ASSERT_STREQ(e.path, "", "anon path");
	ASSERT_EQ(e.inode, 0ULL, "anon inode");
	ASSERT_EQ(procmaps__parse("garbage", 0, &e, buf, sizeof(buf)), -EINVAL, "garbage");
	ASSERT_EQ(procmaps__parse("1000-2000 r-xp 0 08:01 5 /a/long/name", 0, &e, buf, 8),
		  -ENAMETOOLONG, "buffer too small");
}

TEST(procmaps_parse_text_escapes_and_deleted)
{
	struct procmaps_entry e;
	char buf[256];

	/* pid 0: the text only */
	ASSERT_OK(procmaps__parse("1000-2000 r--s 0 08:01 5 /tmp/a\\012b c\n", 0, &e, buf,
				  sizeof(buf)), "newline");
	ASSERT_STREQ(e.path, "/tmp/a\nb c", "\\012 undone");
	ASSERT_OK(procmaps__parse("1000-2000 r--s 0 08:01 5 /tmp/model.gguf (deleted)\n", 0, &e,
				  buf, sizeof(buf)), "deleted");
	ASSERT_STREQ(e.path, "/tmp/model.gguf", "suffix split off");
	ASSERT_TRUE(e.deleted, "deleted");
	ASSERT_OK(procmaps__parse("1000-2000 r--s 0 00:01 5 /memfd:kv\\012 (deleted)", 0, &e, buf,
				  sizeof(buf)), "memfd");
	ASSERT_STREQ(e.path, "/memfd:kv\n", "memfd name");
	ASSERT_TRUE(e.deleted, "memfd deleted");
	ASSERT_OK(procmaps__parse("1000-2000 r--s 0 08:01 5 /tmp/x\\y\\0123", 0, &e, buf,
				  sizeof(buf)), "not escapes");
	ASSERT_STREQ(e.path, "/tmp/x\\y\n3", "a lone backslash stays");
}

/* maps name (created in dir) read-only and returns the mapping, or NULL */
static void *map_file(const char *dir, const char *name, char *path, size_t len)
{
	void *p;
	int fd;

	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	if (write(fd, "memphase", 8) != 8) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* the entry of our own mapping at addr, its path copied to out */
static int find_own(void *addr, struct procmaps_entry *e, char *out, size_t len)
{
	struct procmaps *pm = procmaps__open(getpid());
	int r, err = -ENOENT;

	if (!pm)
		return -errno;
	while ((r = procmaps__next(pm, e)) > 0) {
		if (e->start == (uintptr_t)addr) {
			snprintf(out, len, "%s", e->path);
			e->path = out;
			err = 0;
			break;
		}
	}
	procmaps__close(pm);
	return r < 0 ? r : err;
}

TEST(procmaps_live_names_are_exact)
{
	static const char *const names[] = {
		"new\nline", "space and \xc3\xa9t\xc3\xa9", "ends (deleted)", "back\\012slash",
	};
	char dir[] = "/tmp/memphase-procmaps-XXXXXX", path[512], got[512];
	void *maps[4] = {};
	struct procmaps_entry e;
	bool root = geteuid() == 0;
	size_t i;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	for (i = 0; i < 4; i++) {
		maps[i] = map_file(dir, names[i], path, sizeof(path));
		if (!ASSERT_OK_PTR(maps[i], names[i]))
			goto cleanup;
		/* without map_files (not root) the last two are ambiguous in the text */
		if (i >= 2 && !root)
			continue;
		if (!ASSERT_OK(find_own(maps[i], &e, got, sizeof(got)), names[i]))
			goto cleanup;
		ASSERT_STREQ(e.path, path, "exact path");
		ASSERT_FALSE(e.deleted, "not deleted");
	}
	/* deleted while mapped: the name without the suffix, and the flag */
	snprintf(path, sizeof(path), "%s/%s", dir, names[0]);
	unlink(path);
	if (ASSERT_OK(find_own(maps[0], &e, got, sizeof(got)), "deleted"))
		ASSERT_STREQ(e.path, path, "deleted: exact path");
	ASSERT_TRUE(e.deleted, "deleted");
	if (!root)
		printf("  (not root: names with a backslash or a \" (deleted)\" end untested)\n");
cleanup:
	for (i = 0; i < 4; i++) {
		if (maps[i])
			munmap(maps[i], 4096);
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}
