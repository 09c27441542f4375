/*
 * When a polling caller that keeps finding nothing gives its core away.
 *
 * MPI and SHMEM runtimes wait for a message by calling fi_cq_read in a
 * loop. On a host with more busy processes than cores (ranks of several
 * jobs, or emulated hosts sharing a machine), a rank that spins there
 * holds a core for its whole time slice while the peer it waits for, or
 * the peer that must serve its rendezvous read, waits for that core: each
 * step of a protocol then costs a time slice (milliseconds) instead of a
 * round trip. Measured with Open MPI over mrail, 4 ranks on 2 cores (one
 * run, on a loaded machine): an MPI_Allreduce of 64 KiB took 160 ms
 * spinning and 9 ms yielding at every empty read.
 *
 * So an empty read ends with sched_yield(): with no other runnable thread
 * on the core, sched_yield returns at once (well under a microsecond), so
 * a process that has its core to itself loses nothing measurable. The
 * count of empty reads before the first yield is a parameter
 * (FI_MRAIL_YIELD_AFTER); its default is 1 because waiting longer costs
 * what yielding saves: on the run above, yielding after 4 or 16 empty
 * reads in a row took 48 and 19 ms in the same run.
 */
#ifndef MRAIL_IDLE_H
#define MRAIL_IDLE_H

#include <stdbool.h>
#include <stddef.h>

/* FI_MRAIL_YIELD_AFTER's default: empty reads in a row before yielding. */
#define MRAIL_IDLE_YIELD_AFTER_DEFAULT 1U
#define MRAIL_IDLE_YIELD_AFTER_MAX 1000000U

/*
 * Parses FI_MRAIL_YIELD_AFTER: a whole number of empty reads from 0 (never
 * yield) to MRAIL_IDLE_YIELD_AFTER_MAX. Returns 0, or -EINVAL with a
 * message for the user in err.
 */
int mrail_idle_parse(const char *text, unsigned *yield_after, char *err,
		     size_t err_len);

/*
 * Notes one read that found something or not, in *empty (the empty reads
 * in a row so far, saturating). Returns whether the caller should yield
 * now: after yield_after empty reads in a row, never when yield_after is
 * 0 or the read found something.
 */
bool mrail_idle_note(unsigned *empty, bool found, unsigned yield_after);

#endif /* MRAIL_IDLE_H */
