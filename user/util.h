/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers shared by the user-space modules. */
#ifndef __MP_UTIL_H
#define __MP_UTIL_H

#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns(). */
__u64 util__now_ns(void);
/* "0 B", "512 B", "4.0 KiB", "1.25 GiB": at most 11 chars; returns buf. */
const char *util__fmt_bytes(char *buf, size_t len, __s64 bytes);
/* Parses "512M", "4GiB", "1.5g", "4096" (bytes; K/M/G/T binary). 0 or -EINVAL. */
int util__parse_size(const char *s, __u64 *out);
/* Parses a duration in seconds: "10", "2.5", "500ms", "3s", "2m". 0 or -EINVAL. */
int util__parse_seconds(const char *s, double *out);
/*
 * Opens path for writing as the invoking user (SUDO_UID/SUDO_GID when started through
 * sudo as root), so permissions are checked for that user and the file is theirs.
 * NULL + errno.
 */
FILE *util__fopen_user(const char *path, const char *mode);
/* The invoking user: SUDO_UID/SUDO_GID when root via sudo, else the real ids.
 * Returns 1 when memphase should drop privileges for the target. */
int util__invoking_user(uid_t *uid, gid_t *gid);

#endif
