// SPDX-License-Identifier: GPL-2.0
/* The path the BPF side reads of a mapped file (names leaf first) joined into one. */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "collect/mappings.h"
#include "lib/strmap.h"

/* fp from names given leaf first; whole as the walk ended */
static void fpath_set(struct mp_fpath *fp, const char *const *names, int n, int whole)
{
	int i;

	memset(fp, 0, sizeof(*fp));
	for (i = 0; i < n; i++) {
		size_t len = strlen(names[i]) + 1;

		memcpy(fp->path + fp->len, names[i], len);
		fp->len += len;
	}
	fp->whole = whole;
	fp->nlink = 1;
}

TEST(fpath_join_leaf_first)
{
	static const char *const names[] = { "model.gguf", "models", "home" };
	struct mp_fpath fp;
	char buf[64];

	fpath_set(&fp, names, 3, 1);
	ASSERT_EQ(mappings__fpath_join(&fp, buf, sizeof(buf)), 0, "join");
	ASSERT_STREQ(buf, "/home/models/model.gguf", "root first");
	fpath_set(&fp, names, 1, 1);
	ASSERT_EQ(mappings__fpath_join(&fp, buf, sizeof(buf)), 0, "one name");
	ASSERT_STREQ(buf, "/model.gguf", "a file in the root");
}

TEST(fpath_join_refuses_what_is_not_a_path)
{
	static const char *const names[] = { "a", "b" }, *const empty[] = { "a", "", "b" };
	static const char *const slash[] = { "a/b" };
	struct mp_fpath fp;
	char buf[64];

	fpath_set(&fp, names, 2, 0);
	ASSERT_EQ(mappings__fpath_join(&fp, buf, sizeof(buf)), -ENOENT, "cut short");
	fpath_set(&fp, names, 0, 1);
	ASSERT_EQ(mappings__fpath_join(&fp, buf, sizeof(buf)), -ENOENT, "no name");
	fpath_set(&fp, empty, 3, 1);
	ASSERT_EQ(mappings__fpath_join(&fp, buf, sizeof(buf)), -ENOENT, "an empty name");
	fpath_set(&fp, slash, 1, 1);
	ASSERT_EQ(mappings__fpath_join(&fp, buf, sizeof(buf)), -ENOENT, "a name with a slash");
	fpath_set(&fp, names, 2, 1);
	fp.path[fp.len - 1] = 'x';
	ASSERT_EQ(mappings__fpath_join(&fp, buf, sizeof(buf)), -ENOENT, "no final NUL");
	fpath_set(&fp, names, 2, 1);
	fp.len = 1u << 30;
	memset(fp.path, 'x', sizeof(fp.path));
	fp.path[sizeof(fp.path) - 1] = '\0';
	ASSERT_EQ(mappings__fpath_join(&fp, buf, sizeof(buf)), -ENAMETOOLONG,
		  "a length past the buffer is cut to it");
	fpath_set(&fp, names, 2, 1);
	ASSERT_EQ(mappings__fpath_join(&fp, buf, 4), -ENAMETOOLONG, "too long for buf");
	ASSERT_EQ(mappings__fpath_join(&fp, buf, 5), 0, "just fits");
	ASSERT_STREQ(buf, "/b/a", "just fits");
}

/* what /proc/PID/maps named first stays; the BPF path names what it did not */
TEST(fpath_learn_after_proc)
{
	static const char *const names[] = { "late.bin", "tmp" };
	struct strmap paths;
	struct mp_fpath fp;
	char buf[64];

	strmap__init(&paths, strmap__free_ptr);
	fpath_set(&fp, names, 2, 1);
	fp.nlink = 0;
	mappings__learn_fpath(&paths, (254ULL << 20) | 1, 77, &fp);
	ASSERT_EQ(mappings__file_name(&paths, (254ULL << 20) | 1, 77, buf, sizeof(buf)), 0,
		  "learned");
	ASSERT_STREQ(buf, "/tmp/late.bin", "its path");
	fpath_set(&fp, names + 1, 1, 1);
	mappings__learn_fpath(&paths, (254ULL << 20) | 1, 77, &fp);
	ASSERT_EQ(mappings__file_name(&paths, (254ULL << 20) | 1, 77, buf, sizeof(buf)), 0,
		  "learned before");
	ASSERT_STREQ(buf, "/tmp/late.bin", "a name learned first stays");
	mappings__learn_fpath(&paths, 5, 0, &fp);
	ASSERT_EQ(mappings__file_name(&paths, 5, 0, buf, sizeof(buf)), -ENOENT,
		  "no inode: not learned");
	strmap__free(&paths);
}
