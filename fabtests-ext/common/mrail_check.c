/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_check: counted checks for the functional tests (see mrail_check.h).
 */
#include "mrail_check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

int check_count;
int check_failures;
bool check_verbose;

static bool check_count_one(bool ok)
{
	check_count++;
	if (!ok)
		check_failures++;
	return !ok || check_verbose;
}

void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (!check_count_one(ok))
		return;
	printf("%s: ", ok ? "ok" : "FAILED");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void check_what(bool ok, const char *what, const char *fmt, ...)
{
	char detail[512] = "";
	va_list ap;

	if (!check_count_one(ok))
		return;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	printf("%s: %s%s%s\n", ok ? "ok" : "FAILED", what, *detail ? ": " : "",
	       detail);
	fflush(stdout);
}

uint8_t check_pattern_byte(uint64_t seed, size_t i)
{
	return (uint8_t) (seed * 131 + i * 7 + (i >> 8) + 1);
}

void check_pattern_fill(uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = check_pattern_byte(seed, i);
}

size_t check_pattern_mismatch(const uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != check_pattern_byte(seed, i))
			return i;
	}
	return len;
}

void check_close(struct fid *fid, const char *what)
{
	if (fid)
		check_what(fi_close(fid) == 0, what, NULL);
}

int check_summary(const char *prog)
{
	if (check_failures) {
		printf("%s: %d of %d checks failed\n", prog, check_failures, check_count);
		return 1;
	}
	printf("%s: %d of %d checks passed\n", prog, check_count, check_count);
	return 0;
}

void check_counter(const char *what, const char *name, struct fid_cntr *cntr,
		   uint64_t want, uint64_t want_err)
{
	uint64_t got = fi_cntr_read(cntr), got_err = fi_cntr_readerr(cntr);

	check(got == want && got_err == want_err,
	      "%s: %s counter %" PRIu64 " (errors %" PRIu64 "), expected %"
	      PRIu64 " (%" PRIu64 ")", what, name, got, got_err, want, want_err);
}

void check_no_completion(const char *what, struct fid_cq *cq)
{
	/* The largest entry a CQ format asks for. */
	struct fi_cq_tagged_entry entry;

	check(fi_cq_read(cq, &entry, 1) == -FI_EAGAIN,
	      "%s: a completion more than operations", what);
}

fi_addr_t check_alias(struct fid_av *av, fi_addr_t peer)
{
	uint8_t name[256];
	size_t len = sizeof(name);
	fi_addr_t alias = FI_ADDR_NOTAVAIL;
	int ret;

	ret = fi_av_lookup(av, peer, name, &len);
	check(!ret && len <= sizeof(name), "fi_av_lookup of the target: %s",
	      fi_strerror(-ret));
	if (ret || len > sizeof(name))
		return FI_ADDR_NOTAVAIL;
	ret = fi_av_insert(av, name, 1, &alias, 0, NULL);
	check(ret == 1 && alias != FI_ADDR_NOTAVAIL, "inserting the target a "
	      "second time: %d", ret);
	return ret == 1 ? alias : FI_ADDR_NOTAVAIL;
}
