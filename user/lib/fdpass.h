/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A message with a file descriptor over a Unix socket (SCM_RIGHTS): what the helpers that
 * become the invoking user (lib/userfs, lib/asuser) hand back to root.
 */
#ifndef __MP_FDPASS_H
#define __MP_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* Sends buf, with fd when fd >= 0. 0 or -errno (no SIGPIPE). */
int fdpass__send(int sock, const void *buf, size_t len, int fd);
/*
 * One message into buf: its length (0: the other end is gone), *fd the descriptor it
 * carried (-1: none; more than one: the rest closed; close-on-exec), or -errno.
 */
ssize_t fdpass__recv(int sock, void *buf, size_t len, int *fd);

#endif
