/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_check: how the functional tests (fi_mrail_objs, fi_mrail_progress,
 * fi_mrail_opflags, fi_mrail_rma) count and report their checks. Every
 * check counts; a failed one prints a line starting with "FAILED: ", and
 * with check_verbose a passed one prints "ok: ". The programs print a
 * summary from check_count and check_failures, their own or check_summary's.
 */
#ifndef MRAIL_CHECK_H
#define MRAIL_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

extern int check_count;
extern int check_failures;
extern bool check_verbose;

/* A check described by a printf format. */
void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A check with a fixed name and, where fmt is not NULL, a detail: printed
 * as "what: detail". */
void check_what(bool ok, const char *what, const char *fmt, ...);

/* Closes fid as a check named what; nothing when fid is NULL. */
void check_close(struct fid *fid, const char *what);

/* Prints "PROG: N of M checks passed" (or "failed") and returns the exit
 * status of main: 0 when no check failed, else 1. */
int check_summary(const char *prog);

/*
 * Test data: byte i of the pattern of seed, so that every buffer of a test
 * can hold bytes no other buffer holds. check_pattern_fill writes it,
 * check_pattern_mismatch returns the first index where p differs from it
 * (len when none does).
 */
uint8_t check_pattern_byte(uint64_t seed, size_t i);
void check_pattern_fill(uint8_t *p, size_t len, uint64_t seed);
size_t check_pattern_mismatch(const uint8_t *p, size_t len, uint64_t seed);

/*
 * Checks of libfabric objects more than one program makes. check_counter:
 * cntr (the name counter, "FI_WRITE") counted want completions and
 * want_err errors. check_no_completion: cq holds no completion beyond the
 * operations the program counted.
 */
void check_counter(const char *what, const char *name, struct fid_cntr *cntr,
		   uint64_t want, uint64_t want_err);
void check_no_completion(const char *what, struct fid_cq *cq);

/* peer inserted into av a second time, by the name fi_av_lookup gives:
 * the second fi_addr, or FI_ADDR_NOTAVAIL after a failed check. */
fi_addr_t check_alias(struct fid_av *av, fi_addr_t peer);

#endif /* MRAIL_CHECK_H */
