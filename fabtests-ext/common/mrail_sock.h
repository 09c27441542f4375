/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_sock: the one TCP connect the fabtests-ext programs that meet over
 * a control connection of their own (the benchmarks, fi_mrail_msg) share.
 */
#ifndef MRAIL_SOCK_H
#define MRAIL_SOCK_H

#include <netdb.h>

/*
 * One connect attempt to ai, bounded by timeout_ms: a blocking connect to
 * an address that drops SYNs would retry them for minutes. Returns the
 * connected (blocking) socket, or -1 with errno.
 */
int sock_connect_within(const struct addrinfo *ai, int timeout_ms);

#endif /* MRAIL_SOCK_H */
