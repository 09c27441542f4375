/*
 * mrail_check: how the functional tests (fi_mrail_objs, fi_mrail_progress,
 * fi_mrail_opflags, fi_mrail_rma) count and report their checks. Every
 * check counts; a failed one prints a line starting with "FAILED: ", and
 * with check_verbose a passed one prints "ok: ". The programs print their
 * own summary from check_count and check_failures.
 */
#ifndef MRAIL_CHECK_H
#define MRAIL_CHECK_H

#include <stdbool.h>

extern int check_count;
extern int check_failures;
extern bool check_verbose;

/* A check described by a printf format. */
void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A check with a fixed name and, where fmt is not NULL, a detail: printed
 * as "what: detail". */
void check_what(bool ok, const char *what, const char *fmt, ...);

#endif /* MRAIL_CHECK_H */
