/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_sock: a connect with a time limit (see mrail_sock.h).
 */
#include "mrail_sock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

int sock_connect_within(const struct addrinfo *ai, int timeout_ms)
{
	struct pollfd pfd = { .events = POLLOUT };
	socklen_t len = sizeof(int);
	int fd, flags, err = 0;

	fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	if (fd < 0)
		return -1;
	/* Non-blocking only while connecting, so poll can bound the wait. */
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		if (errno != EINPROGRESS)
			goto fail;
		pfd.fd = fd;
		if (poll(&pfd, 1, timeout_ms) != 1) {
			errno = ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
			errno = err ? err : errno;
			goto fail;
		}
	}
	fcntl(fd, F_SETFL, flags);
	return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}
