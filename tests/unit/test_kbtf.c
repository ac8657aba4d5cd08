// SPDX-License-Identifier: GPL-2.0
/* kbtf: the content hash, and the check that a kernel BTF is the build's. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "harness.h"
#include "kbtf.h"

#define VMLINUX "/sys/kernel/btf/vmlinux"

/* the hash of len bytes at buf, at once */
static __u64 hash_of(const void *buf, size_t len)
{
	struct kbtf_hash h;

	kbtf__hash_init(&h);
	kbtf__hash(&h, buf, len);
	return kbtf__hash_end(&h, len);
}

TEST(kbtf_hash_in_pieces_equals_hash_at_once)
{
	static const size_t flips[] = { 0, 8, 16, 24, 500, 995, 1002 };
	unsigned char buf[1003];
	struct kbtf_hash h;
	__u64 whole;
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	whole = hash_of(buf, sizeof(buf));
	kbtf__hash_init(&h);
	kbtf__hash(&h, buf, 512);
	kbtf__hash(&h, buf + 512, 256);
	kbtf__hash(&h, buf + 768, sizeof(buf) - 768);
	ASSERT_EQ(kbtf__hash_end(&h, sizeof(buf)), whole, "pieces");
	/* a one-bit change: in each lane's first word, in the middle, in the partial block */
	for (i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		buf[flips[i]] ^= 1;
		ASSERT_NEQ(hash_of(buf, sizeof(buf)), whole, "one bit differs");
		buf[flips[i]] ^= 1;
	}
	/* two words that trade places (lanes): another hash */
	memcpy(buf + 8, buf, 8);
	buf[0] ^= 1;
	whole = hash_of(buf, 16);
	for (i = 0; i < 8; i++) {
		unsigned char t = buf[i];

		buf[i] = buf[i + 8];
		buf[i + 8] = t;
	}
	ASSERT_NEQ(hash_of(buf, 16), whole, "words swapped");
	/* trailing zero bytes still count, through the length */
	ASSERT_NEQ(hash_of("ab\0", 3), hash_of("ab", 2), "length");
}

/* A file's hash is the same mapped (a regular file) and read (a pipe). */
TEST(kbtf_hash_fd_mapped_equals_read)
{
	static unsigned char buf[200003];
	char path[] = "/tmp/kbtf-test.XXXXXX";
	__u64 size[2] = {}, hash[2] = {};
	int fd = mkstemp(path), pfd[2] = { -1, -1 };
	size_t i;

	if (!ASSERT_GE(fd, 0, "mkstemp"))
		return;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 13 + i / 251);
	if (!ASSERT_EQ(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf), "write"))
		goto cleanup;
	lseek(fd, 0, SEEK_SET);
	ASSERT_OK(kbtf__hash_fd(fd, &size[0], &hash[0]), "mapped");
	/* a pipe holds 64 KiB: a child writes it all */
	if (!ASSERT_OK(pipe(pfd), "pipe"))
		goto cleanup;
	if (!fork()) {
		close(pfd[0]);
		_exit(write(pfd[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf));
	}
	close(pfd[1]);
	pfd[1] = -1;
	ASSERT_OK(kbtf__hash_fd(pfd[0], &size[1], &hash[1]), "read");
	wait(NULL);
	ASSERT_EQ(size[0], (__u64)sizeof(buf), "mapped size");
	ASSERT_EQ(size[1], (__u64)sizeof(buf), "read size");
	ASSERT_EQ(hash[0], hash_of(buf, sizeof(buf)), "mapped hash");
	ASSERT_EQ(hash[1], hash[0], "read hash");
cleanup:
	if (pfd[0] >= 0)
		close(pfd[0]);
	close(fd);
	unlink(path);
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

/* one ELF note (4-byte aligned) at p: its length */
static size_t note_put(unsigned char *p, const char *owner, __u32 type, const void *desc,
		       __u32 descsz)
{
	__u32 w[3] = { (__u32)strlen(owner) + 1, descsz, type };
	size_t name = (w[0] + 3) & ~3U, d = (descsz + 3) & ~3U;

	memcpy(p, w, sizeof(w));
	memset(p + sizeof(w), 0, name + d);
	memcpy(p + sizeof(w), owner, w[0]);
	memcpy(p + sizeof(w) + name, desc, descsz);
	return sizeof(w) + name + d;
}

/* The GNU build id is found among the kernel's other notes, and only a whole one. */
TEST(kbtf_build_id_from_the_notes)
{
	static const unsigned char id[20] = { 0x85, 0xc7, 0xe4, 0xe2, 0xed, 0x76, 0xf4, 0x41,
					      0x7e, 0x8a, 0xaa, 0xd7, 0xc6, 0xb0, 0x40, 0xd2,
					      0xbb, 0x89, 0x7a, 0x26 };
	unsigned char buf[256], other[20];
	const unsigned char *got = NULL;
	size_t n = 0, at;

	memset(other, 0x5a, sizeof(other));
	/* Xen's and Linux's notes first, and a GNU note of another type */
	n += note_put(buf + n, "Xen", 18, "\0\0\0\0\0\0\0\0", 8);
	n += note_put(buf + n, "Linux", 0x100, "6.18.44", 8);
	n += note_put(buf + n, "GNU", 5, other, sizeof(other));
	at = n;
	n += note_put(buf + n, "GNU", 3, id, sizeof(id));
	ASSERT_EQ(kbtf__build_id(buf, n, &got), 20, "found");
	ASSERT_TRUE(got == buf + at + 16, "where");
	ASSERT_TRUE(got && !memcmp(got, id, sizeof(id)), "the id");
	ASSERT_EQ(kbtf__build_id(buf, n - 1, &got), -ENOENT, "cut short");
	ASSERT_EQ(kbtf__build_id(buf, at, &got), -ENOENT, "none");
	ASSERT_EQ(kbtf__build_id(buf, 0, &got), -ENOENT, "empty");
	/* a size past the end */
	n = note_put(buf, "GNU", 3, id, sizeof(id));
	((__u32 *)buf)[1] = 0xfffffff0;
	ASSERT_EQ(kbtf__build_id(buf, n, &got), -ENOENT, "descsz past the end");
}
