/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers shared by the user-space modules. */
#ifndef __MP_UTIL_H
#define __MP_UTIL_H

#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns(). */
__u64 util__now_ns(void);
/* CLOCK_REALTIME in ns (the wall clock: for formats that carry a date). */
__u64 util__wall_ns(void);
/* "0 B", "512 B", "4.0 KiB", "1.25 GiB": at most 11 chars; returns buf. */
const char *util__fmt_bytes(char *buf, size_t len, __s64 bytes);
/* Parses "512M", "4GiB", "1.5g", "4096" (bytes; K/M/G/T binary); the result must be a
 * whole number of bytes. 0 or -EINVAL. */
int util__parse_size(const char *s, __u64 *out);
/* Parses a duration in seconds: "10", "2.5", "500ms", "3s", "2m", "1h", "1d". 0 or
 * -EINVAL. */
int util__parse_seconds(const char *s, double *out);
/* This process's CPU time (user + system, seconds) and resident memory (bytes). 0 or
 * -errno. */
int util__self_usage(double *cpu_s, __u64 *rss_bytes);
/* Grows the array *v (*cap elements of sz bytes) to hold at least need, doubling from 256
 * elements. 0 or -ENOMEM (*v untouched). */
int util__reserve(void **v, size_t *cap, size_t need, size_t sz);
/* ... to hold one more than n. */
int util__grow(void **v, size_t *cap, size_t n, size_t sz);
#endif
