/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel BTF at load time. Parsing the running kernel's BTF (5.5 MB here) is most of
 * libbpf's share of memphase's start-up: its pages are first touched twice, and every first
 * touch is a fault that costs ~10 us on a VM. The build makes, from the kernel BTF it used
 * (VMLINUX_BTF), the minimal BTF the object's CO-RE relocations need (bpftool gen
 * min_core_btf) and the BTF ids of the tp_btf and iter programs' targets. When the running kernel's
 * BTF is that one (same size and content hash), they stand in for it: libbpf never parses
 * the kernel's BTF. Any other kernel loads the usual way.
 */
#ifndef __MP_KBTF_H
#define __MP_KBTF_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/types.h>

struct kbtf {
	int fd;			/* the minimal BTF (a memfd), -1: not in use */
	char path[32];		/* ... as a path for btf_custom_path */
};

/*
 * A program's target, by its section's name, and its id in the build's kernel BTF: the
 * btf_trace_<name> typedef of a tp_btf/<name>, the bpf_iter_<name> function of an
 * iter/<name>.
 */
struct kbtf_attach {
	const char *sec;
	__u32 btf_id;
};

/*
 * If the kernel BTF at vmlinux (the running kernel's) is the build's: the minimal BTF is
 * at kb->path until kbtf__close(), and the tp_btf and iter programs of objects opened from
 * now on take their targets' ids from the build (libbpf section handlers). 0; -ESTALE when it is
 * another BTF, -ENOENT when the build made none, other -errno on failures.
 */
int kbtf__open(struct kbtf *kb, const char *vmlinux);
/*
 * fn(ctx) is called once, from the load of the next tp_btf program of an object opened with
 * the handler (its maps exist then: libbpf creates an object's maps before it loads any of
 * its programs). NULL: none.
 */
void kbtf__on_load(void (*fn)(void *ctx), void *ctx);
/* Closes the minimal BTF (after the load). NULL-safe, idempotent. */
void kbtf__close(struct kbtf *kb);
/*
 * Whether the file at path is the build's kernel BTF: 0, -ESTALE (another), -ENOENT (the
 * build made no minimal BTF) or -errno. The size, then the content hash (~4 ms for 5.5 MB
 * here); for the running kernel's own (KBTF_SYSFS), when the build ran on a kernel with a
 * build id, that id instead of the hash: the kernel's BTF is part of the image the id is
 * computed over, so the same id is the same BTF.
 */
int kbtf__matches(const char *path);

#define KBTF_SYSFS	"/sys/kernel/btf/vmlinux"
#define KBTF_NOTES	"/sys/kernel/notes"	/* the running kernel's ELF notes */
#define KBTF_BUILD_ID_MAX 64

/*
 * The GNU build id among the ELF notes in buf (len bytes, as /sys/kernel/notes reads):
 * its length (and *id where it starts), or -ENOENT when there is none or the notes are
 * malformed.
 */
static inline int kbtf__build_id(const void *buf, size_t len, const unsigned char **id)
{
	const unsigned char *p = buf;
	size_t off = 0, name, desc;
	__u32 w[3];

	while (len - off >= sizeof(w)) {
		memcpy(w, p + off, sizeof(w));
		name = ((size_t)w[0] + 3) & ~(size_t)3;
		desc = ((size_t)w[1] + 3) & ~(size_t)3;
		off += sizeof(w);
		if (name > len - off || desc > len - off - name)
			return -ENOENT;
		/* NT_GNU_BUILD_ID, owner "GNU" */
		if (w[2] == 3 && w[0] == 4 && !memcmp(p + off, "GNU", 4) && w[1] &&
		    w[1] <= KBTF_BUILD_ID_MAX) {
			*id = p + off + name;
			return (int)w[1];
		}
		off += name + desc;
	}
	return -ENOENT;
}

/*
 * The content hash (the build's generator uses it too): four lanes over 32-byte blocks,
 * independent of each other (the CPU overlaps them: one lane's multiply chain alone takes
 * a few ms for 5.5 MB), merged at the end. Feed the data in pieces whose lengths are
 * multiples of 32 but for the last one; kbtf__hash_end(h, total length).
 */
#define KBTF_HASH_SEED	0x6d656d7068617365ULL
#define KBTF_LANES	4

struct kbtf_hash {
	__u64 lane[KBTF_LANES];
};

static inline __u64 kbtf__rotl(__u64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline __u64 kbtf__mix(__u64 h, __u64 w)
{
	w *= 0x87c37b91114253d5ULL;
	w = kbtf__rotl(w, 31);
	w *= 0x4cf5ad432745937fULL;
	h ^= w;
	h = kbtf__rotl(h, 27);
	return h * 5 + 0x52dce729;
}

static inline void kbtf__hash_init(struct kbtf_hash *h)
{
	int i;

	for (i = 0; i < KBTF_LANES; i++)
		h->lane[i] = KBTF_HASH_SEED + i;
}

static inline void kbtf__hash(struct kbtf_hash *h, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	__u64 w[KBTF_LANES];
	int i;

	for (; len >= sizeof(w); len -= sizeof(w), p += sizeof(w)) {
		memcpy(w, p, sizeof(w));
		for (i = 0; i < KBTF_LANES; i++)
			h->lane[i] = kbtf__mix(h->lane[i], w[i]);
	}
	if (len) {
		memset(w, 0, sizeof(w));
		memcpy(w, p, len);
		for (i = 0; i < KBTF_LANES; i++)
			h->lane[i] = kbtf__mix(h->lane[i], w[i]);
	}
}

static inline __u64 kbtf__hash_end(const struct kbtf_hash *h, __u64 total)
{
	__u64 x = KBTF_HASH_SEED ^ total;
	int i;

	for (i = 0; i < KBTF_LANES; i++)
		x = kbtf__mix(x, h->lane[i]);
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/*
 * The size and hash of what fd reads to its end (the build and memphase hash the same
 * bytes): mapped where the file can be (sysfs maps the kernel's BTF from 6.16 on: one call
 * instead of a read per 4 KiB page), else read in 64 KiB pieces. 0 or -errno.
 */
static inline int kbtf__hash_fd(int fd, __u64 *size, __u64 *hash)
{
	static char buf[64 * 1024];
	struct kbtf_hash h;
	__u64 total = 0;
	struct stat st;
	size_t fill;
	ssize_t n;
	void *p;

	kbtf__hash_init(&h);
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			kbtf__hash(&h, p, st.st_size);
			munmap(p, st.st_size);
			*size = st.st_size;
			*hash = kbtf__hash_end(&h, st.st_size);
			return 0;
		}
	}
	for (;;) {
		for (fill = 0; fill < sizeof(buf); fill += n) {
			n = read(fd, buf + fill, sizeof(buf) - fill);
			if (n < 0)
				return -errno;
			if (!n)
				break;
		}
		kbtf__hash(&h, buf, fill);
		total += fill;
		if (fill < sizeof(buf))
			break;
	}
	*size = total;
	*hash = kbtf__hash_end(&h, total);
	return 0;
}

/*
 * The running kernel's build id, read from KBTF_NOTES into notes (size bytes): its length
 * (and *id where it starts in notes), or -ENOENT.
 */
static inline int kbtf__kernel_build_id(unsigned char *notes, size_t size,
					const unsigned char **id)
{
	ssize_t n;
	int fd;

	fd = open(KBTF_NOTES, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, notes, size);
	close(fd);
	return n > 0 ? kbtf__build_id(notes, n, id) : -ENOENT;
}

#endif
