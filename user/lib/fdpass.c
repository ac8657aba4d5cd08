// SPDX-License-Identifier: GPL-2.0
/* A message with a file descriptor over a Unix socket (see fdpass.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "lib/fdpass.h"

int fdpass__send(int sock, const void *buf, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (fd >= 0) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

ssize_t fdpass__recv(int sock, void *buf, size_t len, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;
	int got;

	*fd = -1;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		memcpy(&got, CMSG_DATA(cm), sizeof(int));
		if (*fd < 0)
			*fd = got;
		else
			close(got);
	}
	return n;
}
