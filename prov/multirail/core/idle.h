/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * When a polling caller that keeps finding nothing gives its core away.
 *
 * MPI and SHMEM runtimes wait for a message by calling fi_cq_read in a
 * loop. On a host with more busy processes than cores (ranks of several
 * jobs, or emulated hosts sharing a machine), a rank that spins there
 * holds its core for a whole time slice while the peer it waits for, or
 * the peer that must serve its rendezvous read, waits for that core: each
 * step of a protocol then costs a time slice (milliseconds) instead of a
 * round trip. Measured with Open MPI over mrail, 4 ranks on 2 cores, 2
 * rails at 1 Gbit/s (one run, on a loaded machine): an MPI_Allreduce of
 * 1 MiB took 166 ms spinning and 28 ms yielding at every empty read.
 *
 * Yielding at every empty read costs latency whenever anything else is
 * runnable: an 8-byte ping-pong's half round trip went from 6 to 12 us on
 * the same loaded machine. So a caller spins first: only once its reads
 * have found nothing for a while (FI_MRAIL_SPIN_US, longer than a round
 * trip on the rails, far shorter than a time slice) does each further
 * empty read end with sched_yield(). A read that finds something starts
 * the spin again.
 */
#ifndef MRAIL_IDLE_H
#define MRAIL_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FI_MRAIL_SPIN_US's default and largest value (microseconds). */
#define MRAIL_IDLE_SPIN_US_DEFAULT 50U
#define MRAIL_IDLE_SPIN_US_MAX 1000000U

struct mrail_idle {
	uint64_t empty_since_ns;	/* first empty read of the run */
	bool empty;			/* the last read found nothing */
};

/*
 * Parses FI_MRAIL_SPIN_US: a whole number of microseconds from 0 (never
 * yield) to MRAIL_IDLE_SPIN_US_MAX. Returns 0, or -EINVAL with a message
 * for the user in err.
 */
int mrail_idle_parse(const char *text, unsigned *spin_us, char *err,
		     size_t err_len);

/*
 * Notes one read at now_ns that found something or not. Returns whether
 * the caller should yield now: when this read and every one before it for
 * at least spin_ns found nothing; never when spin_ns is 0.
 */
bool mrail_idle_note(struct mrail_idle *idle, bool found, uint64_t now_ns,
		     uint64_t spin_ns);

#endif /* MRAIL_IDLE_H */
