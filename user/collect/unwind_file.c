// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinder's files (see collect/unwind.c): one per distinct executable file, as
 * /proc/PID/maps names it (device + inode), shared by all processes. Its Elf is libelf's
 * ELF_C_READ_MMAP of the file with the descriptor closed at once, so a snapshot costs no
 * descriptor and survives the file's deletion; opened as the user, through the mapping
 * when the path no longer leads to it; [vdso] from the process's memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "lib/util.h"
#include "lib/elfsym.h"
#include "lib/userfs.h"
#include "collect/unwind_int.h"

void uw_file_put(struct unwinder *u, struct uw_file *f)
{
	struct uw_file **pp;

	if (!f || --f->refs)
		return;
	for (pp = &u->files; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	elfsym_table__free(f->syms);
	if (f->elf)
		elf_end(f->elf);
	free(f->image);
	free(f->loads);
	free(f->path);
	free(f);
}

/* Reads the ELF headers we need; f->elf stays NULL for non-ELF files (not an error). */
static int uw_file_read_elf(struct uw_file *f, Elf *elf)
{
	const void *id;
	GElf_Phdr ph;
	size_t phnum, i;
	ssize_t len;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum)) {
		elf_end(elf);
		return 0;
	}
	f->loads = calloc(phnum ? phnum : 1, sizeof(*f->loads));
	if (!f->loads) {
		elf_end(elf);
		return -ENOMEM;
	}
	for (i = 0; i < phnum; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			f->loads[f->nloads++] = ph;
	if (!f->nloads) {
		elf_end(elf);
		return 0;
	}
	len = dwelf_elf_gnu_build_id(elf, &id);
	if (len > 0 && len <= UW_BUILD_ID_MAX) {
		memcpy(f->build_id, id, len);
		f->build_id_len = len;
	}
	f->elf = elf;
	return 0;
}

/* opens path if it is a regular file (never a device or a FIFO: opening has effects) */
static int uw_open_regular(const char *path, struct stat *st)
{
	int fd;

	if (stat(path, st) || !S_ISREG(st->st_mode))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, st) || !S_ISREG(st->st_mode))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Opens the file of a mapping: by path if it is the same file (device and inode match),
 * else through /proc/PID/map_files (deleted, or another mount namespace). As a last resort
 * a path whose inode matches is accepted (overlayfs and btrfs report other devices).
 */
static int uw_open_mapped(pid_t pid, const struct uw_map *m, const char *path)
{
	bool same_ino = false;
	struct stat st;
	char mf[96];
	int fd, fd2;

	fd = uw_open_regular(path, &st);
	if (fd >= 0 && st.st_ino == m->ino) {
		if (makedev(major(st.st_dev), minor(st.st_dev)) == m->dev)
			return fd;
		same_ino = true;
	}
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd2 = uw_open_regular(mf, &st);
	if (fd2 >= 0 || !same_ino) {
		if (fd >= 0)
			close(fd);
		return fd2 >= 0 ? fd2 : -ENOENT;
	}
	return fd;
}

/* [vdso] is not a file: copy it out of the process. */
static int uw_read_vdso(pid_t pid, const struct uw_map *m, void **image, size_t *size)
{
	size_t len = m->end - m->start;
	struct iovec local, remote;
	char mem[64];
	void *buf;
	ssize_t n;
	int fd;

	if (!len || len > (1UL << 20))
		return -EINVAL;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)(unsigned long)m->start;
	remote.iov_len = len;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n != (ssize_t)len) {
		snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
		fd = open(mem, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? pread(fd, buf, len, (off_t)m->start) : -1;
		if (fd >= 0)
			close(fd);
	}
	if (n != (ssize_t)len) {
		free(buf);
		return -EIO;
	}
	*image = buf;
	*size = len;
	return 0;
}

/* The shared file of a mapping, with a reference taken; NULL if there is none. */
struct uw_file *uw_file_get(struct unwinder *u, pid_t pid, const struct uw_map *m)
{
	bool vdso = !strcmp(m->path, "[vdso]");
	struct uw_file *f;
	size_t size;
	Elf *elf = NULL;
	int fd = -1;

	if (m->path[0] != '/' && !vdso)
		return NULL;
	for (f = u->files; f; f = f->next) {
		if (vdso ? !f->dev && !f->ino && !strcmp(f->path, "[vdso]")
			 : f->ino == m->ino && f->dev == m->dev && (f->dev || f->ino)) {
			f->refs++;
			return f;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->refs = 1;
	f->fs = u->fs;
	f->path = strdup(m->path);
	if (!f->path)
		goto err;
	f->base = uw_basename(f->path);
	if (vdso) {
		if (uw_read_vdso(pid, m, &f->image, &size))
			goto err;
		elf = elf_memory(f->image, size);
	} else {
		f->dev = m->dev;
		f->ino = m->ino;
		fd = uw_open_mapped(pid, m, f->path);
		if (fd < 0)
			goto err;
		/* the kernel gave root the file: the user only what they may read */
		if (userfs__may_read(u->fs, fd)) {
			close(fd);
			goto err;
		}
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		/* read what is not mapped yet, so that the descriptor can go */
		if (elf && elf_cntl(elf, ELF_C_FDREAD)) {
			elf_end(elf);
			elf = NULL;
		}
		close(fd);
	}
	if (elf && uw_file_read_elf(f, elf))
		goto err;
	f->next = u->files;
	u->files = f;
	return f;
err:
	free(f->image);
	free(f->path);
	free(f);
	return NULL;
}

/*
 * Load bias of a mapping: the PT_LOAD holding file offset pgoff (executable ones first)
 * maps it at start, so bias = start - (p_vaddr + pgoff - p_offset).
 */
bool uw_map_bias(const struct uw_file *f, const struct uw_map *m, long page_size,
			__u64 *bias)
{
	const GElf_Phdr *ph;
	int pass;
	size_t i;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < f->nloads; i++) {
			ph = &f->loads[i];
			if (!pass && !(ph->p_flags & PF_X))
				continue;
			if (m->pgoff < (ph->p_offset & ~(__u64)(page_size - 1)) ||
			    m->pgoff >= ph->p_offset + (ph->p_filesz ? ph->p_filesz : 1))
				continue;
			*bias = m->start - (ph->p_vaddr + m->pgoff - ph->p_offset);
			return true;
		}
	}
	return false;
}

/* The address range libdwfl expects for an image at bias (see its open_elf()). */
void uw_file_range(const struct uw_file *f, __u64 bias, __u64 *lo, __u64 *hi)
{
	const GElf_Phdr *first = &f->loads[0];
	__u64 end = 0;
	size_t i;

	for (i = 0; i < f->nloads; i++)
		if (f->loads[i].p_vaddr + f->loads[i].p_memsz > end)
			end = f->loads[i].p_vaddr + f->loads[i].p_memsz;
	*lo = bias + (first->p_vaddr & -first->p_align);
	*hi = bias + end;
}

