/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rate limit for warnings a peer can cause: a hostile or broken peer must not
 * be able to flood the log with one line per message it sends. At most
 * `burst` events are let through per `interval_ns`; the first one let through
 * after a quiet spell says how many were held back.
 */
#ifndef MRAIL_RATELIMIT_H
#define MRAIL_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

struct mrail_ratelimit {
	uint64_t window_start_ns;
	uint32_t allowed;	/* let through since window_start_ns */
	uint64_t suppressed;	/* held back since the last one let through */
};

/*
 * One event at now_ns (a monotonic clock). True: log it, and *suppressed is
 * how many were held back before it (then forgotten). False: hold it back.
 * A zero-initialised struct is ready; burst 0 holds every event back.
 */
bool mrail_ratelimit_allow(struct mrail_ratelimit *rl, uint64_t now_ns,
			   uint64_t interval_ns, uint32_t burst,
			   uint64_t *suppressed);

#endif /* MRAIL_RATELIMIT_H */
