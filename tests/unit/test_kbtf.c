// SPDX-License-Identifier: GPL-2.0
/* kbtf: the content hash, and the check that a kernel BTF is the build's. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "kbtf.h"

#define VMLINUX "/sys/kernel/btf/vmlinux"

TEST(kbtf_hash_in_pieces_equals_hash_at_once)
{
	unsigned char buf[1003];
	__u64 whole, parts;
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	whole = kbtf__hash_end(kbtf__hash(KBTF_HASH_SEED, buf, sizeof(buf)), sizeof(buf));
	parts = kbtf__hash(KBTF_HASH_SEED, buf, 512);
	parts = kbtf__hash(parts, buf + 512, 256);
	parts = kbtf__hash_end(kbtf__hash(parts, buf + 768, sizeof(buf) - 768), sizeof(buf));
	ASSERT_EQ(parts, whole, "pieces");
	buf[500] ^= 1;
	ASSERT_NEQ(kbtf__hash_end(kbtf__hash(KBTF_HASH_SEED, buf, sizeof(buf)), sizeof(buf)),
		   whole, "one bit differs");
	/* trailing zero bytes still count, through the length */
	ASSERT_NEQ(kbtf__hash_end(kbtf__hash(KBTF_HASH_SEED, "ab\0", 3), 3),
		   kbtf__hash_end(kbtf__hash(KBTF_HASH_SEED, "ab", 2), 2), "length");
}

/* copies the kernel's BTF to a temporary file, with one byte changed at off (-1: none),
 * and `extra` bytes more (negative: fewer). The path, or NULL. */
static char *copy_btf(long off, int extra, char *path)
{
	static char buf[1 << 16];
	int in = open(VMLINUX, O_RDONLY), out = mkstemp(path);
	long pos = 0, keep = -1;
	ssize_t n;
	char z = 0;

	if (in < 0 || out < 0)
		goto fail;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (off >= pos && off < pos + n)
			buf[off - pos] ^= 0x40;
		if (write(out, buf, n) != n)
			goto fail;
		pos += n;
	}
	if (extra < 0)
		keep = pos + extra;
	if (keep >= 0 && ftruncate(out, keep))
		goto fail;
	while (extra-- > 0)
		if (write(out, &z, 1) != 1)
			goto fail;
	close(in);
	close(out);
	return path;
fail:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	unlink(path);
	return NULL;
}

TEST(kbtf_matches_only_the_builds_btf)
{
	char p[][32] = { "/tmp/kbtf-test.XXXXXX", "/tmp/kbtf-test.XXXXXX",
			 "/tmp/kbtf-test.XXXXXX", "/tmp/kbtf-test.XXXXXX" };
	struct kbtf kb = { .fd = -1 };
	int err = kbtf__matches(VMLINUX);

	if (err == -ENOENT || err == -ESTALE || err == -EACCES) {
		test__skip("this kernel's BTF is not the build's");
		return;
	}
	if (!ASSERT_OK(err, "the running kernel's"))
		return;
	if (!ASSERT_OK_PTR(copy_btf(-1, 0, p[0]), "copy") ||
	    !ASSERT_OK_PTR(copy_btf(1 << 20, 0, p[1]), "one byte changed") ||
	    !ASSERT_OK_PTR(copy_btf(-1, -1, p[2]), "one byte short") ||
	    !ASSERT_OK_PTR(copy_btf(-1, 1, p[3]), "one byte more"))
		goto cleanup;
	ASSERT_OK(kbtf__matches(p[0]), "a copy");
	ASSERT_EQ(kbtf__matches(p[1]), -ESTALE, "one byte changed");
	ASSERT_EQ(kbtf__matches(p[2]), -ESTALE, "one byte short");
	ASSERT_EQ(kbtf__matches(p[3]), -ESTALE, "one byte more");
	ASSERT_EQ(kbtf__open(&kb, p[1]), -ESTALE, "open: another BTF");
	ASSERT_EQ(kb.fd, -1, "open: nothing kept");
	ASSERT_EQ(kbtf__matches("/nonexistent"), -ENOENT, "no file");
cleanup:
	kbtf__close(&kb);
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (p[i][sizeof("/tmp/kbtf-test.") - 1] != 'X')
			unlink(p[i]);
}
