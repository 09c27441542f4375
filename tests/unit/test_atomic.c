/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/atomic.c: the validity table of every (kind, op,
 * datatype) against a table written out by hand here, the lengths and
 * flags helpers, bad enums, then each op applied on several types with
 * hand-computed results, and a fixed-seed random run of every op on the
 * 8- to 64-bit integers against a reference written independently here.
 *
 * Every apply goes through buffers at odd addresses, each its own heap
 * allocation of exactly the bytes needed (as data off the wire would be),
 * so that UBSan sees any misaligned access and ASan any access past them.
 */
#include <complex.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "atomic.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DATATYPE_COUNT (FI_UINT128 + 1)

#ifdef __SIZEOF_INT128__
#define HAVE_INT128 1
#else
#define HAVE_INT128 0
#endif

/* ---- the validity table, written out ---------------------------------- */

/*
 * Per op: the kinds that allow it (P plain, F fetch, C compare) and the
 * datatypes, one column each in enum order:
 *   i8 u8 i16 u16 i32 u32 i64 u64 flt dbl fcx dcx ldbl ldcx i128 u128
 */
#define ALL_TYPES "yyyyyyyyyyyyyyyy"
#define ORDERED   "yyyyyyyyyy--y-yy"
#define INTEGERS  "yyyyyyyy------yy"

static const struct {
	enum fi_op op;
	const char *kinds;
	const char *types;
} expected_valid[] = {
	{ FI_MIN,		"PF-", ORDERED },
	{ FI_MAX,		"PF-", ORDERED },
	{ FI_SUM,		"PF-", ALL_TYPES },
	{ FI_PROD,		"PF-", ALL_TYPES },
	{ FI_LOR,		"PF-", ALL_TYPES },
	{ FI_LAND,		"PF-", ALL_TYPES },
	{ FI_BOR,		"PF-", INTEGERS },
	{ FI_BAND,		"PF-", INTEGERS },
	{ FI_LXOR,		"PF-", ALL_TYPES },
	{ FI_BXOR,		"PF-", INTEGERS },
	{ FI_ATOMIC_READ,	"-F-", ALL_TYPES },
	{ FI_ATOMIC_WRITE,	"PF-", ALL_TYPES },
	{ FI_CSWAP,		"--C", ALL_TYPES },
	{ FI_CSWAP_NE,		"--C", ALL_TYPES },
	{ FI_CSWAP_LE,		"--C", ORDERED },
	{ FI_CSWAP_LT,		"--C", ORDERED },
	{ FI_CSWAP_GE,		"--C", ORDERED },
	{ FI_CSWAP_GT,		"--C", ORDERED },
	{ FI_MSWAP,		"--C", INTEGERS },
};

static const size_t expected_size[DATATYPE_COUNT] = {
	1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16,
	sizeof(long double), 2 * sizeof(long double), 16, 16,
};

static bool expect_valid(enum mrail_atomic_kind kind, size_t op_row, int dt)
{
	if (dt >= FI_INT128 && !HAVE_INT128)
		return false;
	return expected_valid[op_row].kinds[kind] != '-' &&
	       expected_valid[op_row].types[dt] == 'y';
}

Test(atomic_valid, every_combination_matches_the_table)
{
	size_t row, valid = 0, invalid = 0;
	int kind, dt;

	/* The columns above follow libfabric 1.17's enum order. */
	cr_assert_eq(FI_FLOAT, 8);
	cr_assert_eq(FI_LONG_DOUBLE_COMPLEX, 13);
	cr_assert_eq(FI_UINT128, 15);
	cr_assert_eq(ARRAY_SIZE(expected_valid), FI_ATOMIC_OP_LAST);
	for (row = 0; row < ARRAY_SIZE(expected_valid); row++) {
		cr_assert_eq(expected_valid[row].op, (enum fi_op) row);
		for (kind = 0; kind < MRAIL_ATOMIC_KIND_COUNT; kind++) {
			for (dt = 0; dt < DATATYPE_COUNT; dt++) {
				bool want = expect_valid(kind, row, dt);
				size_t size = 12345;
				int ret = mrail_atomic_valid(kind, row, dt, &size);

				if (want) {
					cr_assert_eq(ret, 0, "kind %d op %zu datatype %d: %d",
						     kind, row, dt, ret);
					cr_assert_eq(size, expected_size[dt],
						     "datatype %d size %zu", dt, size);
					valid++;
				} else {
					cr_assert_eq(ret, -EOPNOTSUPP,
						     "kind %d op %zu datatype %d: %d",
						     kind, row, dt, ret);
					cr_assert_eq(size, 12345, "size written on refusal");
					invalid++;
				}
			}
		}
	}
	/*
	 * Per datatype: integers 11 plain + 12 fetch + 7 compare = 30;
	 * real floating-point 8 + 9 + 6 = 23; complex 6 + 7 + 2 = 15.
	 */
	cr_assert_eq(valid, (HAVE_INT128 ? 10 : 8) * 30 + 3 * 23 + 3 * 15);
	cr_assert_eq(valid + invalid, 3 * 19 * 16);
}

Test(atomic_valid, size_may_be_null)
{
	cr_assert_eq(mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, FI_SUM, FI_INT32, NULL), 0);
	cr_assert_eq(mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, FI_ATOMIC_READ, FI_INT32,
					NULL), -EOPNOTSUPP);
}

Test(atomic_valid, enums_out_of_range_are_einval)
{
	size_t size = 7;

	cr_assert_eq(mrail_atomic_valid(MRAIL_ATOMIC_KIND_COUNT, FI_SUM, FI_INT8, &size),
		     -EINVAL);
	cr_assert_eq(mrail_atomic_valid((enum mrail_atomic_kind) -1, FI_SUM, FI_INT8,
					&size), -EINVAL);
	cr_assert_eq(mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, (enum fi_op) FI_ATOMIC_OP_LAST, FI_INT8,
					&size), -EINVAL);
	cr_assert_eq(mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, FI_NOOP, FI_INT8, &size),
		     -EINVAL);
	cr_assert_eq(mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, (enum fi_op) -1, FI_INT8,
					&size), -EINVAL);
	cr_assert_eq(mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, FI_SUM,
					(enum fi_datatype) (FI_UINT128 + 1), &size),
		     -EINVAL);
	cr_assert_eq(mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, FI_SUM, FI_VOID, &size),
		     -EINVAL);
	cr_assert_eq(mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, FI_SUM,
					(enum fi_datatype) -1, &size), -EINVAL);
	cr_assert_eq(size, 7);
}

/* apply computes exactly the (op, datatype) pairs some kind allows. */
Test(atomic_valid, apply_agrees_with_the_table)
{
	size_t row;
	int dt;

	for (row = 0; row < ARRAY_SIZE(expected_valid); row++) {
		for (dt = 0; dt < DATATYPE_COUNT; dt++) {
			unsigned char t[32] = { 0 }, o[32] = { 0 }, c[32] = { 0 };
			unsigned char f[32];
			bool want = expect_valid(MRAIL_ATOMIC_PLAIN, row, dt) ||
				    expect_valid(MRAIL_ATOMIC_FETCH, row, dt) ||
				    expect_valid(MRAIL_ATOMIC_COMPARE, row, dt);
			int ret = mrail_atomic_apply(row, dt, t, o, c, f, 1);

			cr_assert_eq(ret, want ? 0 : -EOPNOTSUPP,
				     "op %zu datatype %d: %d", row, dt, ret);
		}
	}
}

Test(atomic_flags, query_flags_name_the_kind)
{
	enum mrail_atomic_kind kind = MRAIL_ATOMIC_KIND_COUNT;

	cr_assert_eq(mrail_atomic_kind_from_flags(0, &kind), 0);
	cr_assert_eq(kind, MRAIL_ATOMIC_PLAIN);
	cr_assert_eq(mrail_atomic_kind_from_flags(FI_FETCH_ATOMIC, &kind), 0);
	cr_assert_eq(kind, MRAIL_ATOMIC_FETCH);
	cr_assert_eq(mrail_atomic_kind_from_flags(FI_COMPARE_ATOMIC, &kind), 0);
	cr_assert_eq(kind, MRAIL_ATOMIC_COMPARE);

	kind = MRAIL_ATOMIC_KIND_COUNT;
	cr_assert_eq(mrail_atomic_kind_from_flags(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC,
						  &kind), -EINVAL);
	cr_assert_eq(mrail_atomic_kind_from_flags(FI_TAGGED, &kind), -EOPNOTSUPP);
	cr_assert_eq(mrail_atomic_kind_from_flags(FI_TAGGED | FI_FETCH_ATOMIC, &kind),
		     -EOPNOTSUPP);
	cr_assert_eq(mrail_atomic_kind_from_flags(FI_MSG, &kind), -EINVAL);
	cr_assert_eq(mrail_atomic_kind_from_flags(1ULL << 63, &kind), -EINVAL);
	cr_assert_eq(kind, MRAIL_ATOMIC_KIND_COUNT, "kind written on refusal");
}

Test(atomic_access, what_each_kind_needs_of_the_region)
{
	const uint64_t rw = FI_REMOTE_READ | FI_REMOTE_WRITE;

	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_PLAIN, FI_SUM), FI_REMOTE_WRITE);
	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_PLAIN, FI_ATOMIC_WRITE),
		     FI_REMOTE_WRITE);
	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_FETCH, FI_ATOMIC_READ),
		     FI_REMOTE_READ);
	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_FETCH, FI_ATOMIC_WRITE), rw);
	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_FETCH, FI_MIN), rw);
	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_COMPARE, FI_CSWAP), rw);
	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_COMPARE, FI_MSWAP), rw);
	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_KIND_COUNT, FI_SUM), 0);
	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_FETCH, (enum fi_op) FI_ATOMIC_OP_LAST), 0);
	cr_assert_eq(mrail_atomic_access(MRAIL_ATOMIC_FETCH, FI_NOOP), 0);
}

/* ---- lengths ------------------------------------------------------------ */

static void check_len(enum mrail_atomic_kind kind, enum fi_op op,
		      enum fi_datatype dt, size_t count, size_t operand,
		      size_t compare, size_t result)
{
	struct mrail_atomic_len len = { 1, 2, 3 };

	cr_assert_eq(mrail_atomic_len(kind, op, dt, count, &len), 0);
	cr_assert_eq(len.operand, operand, "operand %zu", len.operand);
	cr_assert_eq(len.compare, compare, "compare %zu", len.compare);
	cr_assert_eq(len.result, result, "result %zu", len.result);
}

Test(atomic_len, request_and_reply_lengths)
{
	check_len(MRAIL_ATOMIC_PLAIN, FI_SUM, FI_INT32, 3, 12, 0, 0);
	check_len(MRAIL_ATOMIC_PLAIN, FI_ATOMIC_WRITE, FI_DOUBLE_COMPLEX, 2, 32, 0, 0);
	check_len(MRAIL_ATOMIC_FETCH, FI_SUM, FI_UINT16, 5, 10, 0, 10);
	check_len(MRAIL_ATOMIC_FETCH, FI_ATOMIC_READ, FI_UINT64, 4, 0, 0, 32);
	check_len(MRAIL_ATOMIC_COMPARE, FI_CSWAP, FI_INT8, 9, 9, 9, 9);
	check_len(MRAIL_ATOMIC_COMPARE, FI_MSWAP, FI_UINT64, 2, 16, 16, 16);
	check_len(MRAIL_ATOMIC_COMPARE, FI_CSWAP_NE, FI_LONG_DOUBLE_COMPLEX, 1,
		  2 * sizeof(long double), 2 * sizeof(long double),
		  2 * sizeof(long double));
}

Test(atomic_len, refusals)
{
	struct mrail_atomic_len len = { 1, 2, 3 };

	cr_assert_eq(mrail_atomic_len(MRAIL_ATOMIC_PLAIN, FI_SUM, FI_INT32, 0, &len),
		     -EINVAL);
	cr_assert_eq(mrail_atomic_len(MRAIL_ATOMIC_PLAIN, FI_ATOMIC_READ, FI_INT32, 1,
				      &len), -EOPNOTSUPP);
	cr_assert_eq(mrail_atomic_len(MRAIL_ATOMIC_PLAIN, (enum fi_op) FI_ATOMIC_OP_LAST, FI_INT32, 1,
				      &len), -EINVAL);
	cr_assert_eq(mrail_atomic_len(MRAIL_ATOMIC_KIND_COUNT, FI_SUM, FI_INT32, 1, &len),
		     -EINVAL);
	cr_assert_eq(mrail_atomic_len(MRAIL_ATOMIC_PLAIN, FI_SUM, FI_VOID, 1, &len),
		     -EINVAL);
	cr_assert_eq(len.operand, 1, "len written on refusal");
	cr_assert_eq(mrail_atomic_len(MRAIL_ATOMIC_FETCH, FI_SUM, FI_UINT64,
				      SIZE_MAX / 8 + 1, &len), -EOVERFLOW);
	cr_assert_eq(mrail_atomic_len(MRAIL_ATOMIC_FETCH, FI_SUM, FI_UINT8, SIZE_MAX,
				      &len), 0);
	cr_assert_eq(len.result, SIZE_MAX);
	len = (struct mrail_atomic_len) { 1, 2, 3 };
	cr_assert_eq(mrail_atomic_len(MRAIL_ATOMIC_FETCH, FI_SUM, FI_UINT64,
				      SIZE_MAX / 8, &len), 0);
	cr_assert_eq(len.operand, SIZE_MAX / 8 * 8);
}

/* ---- apply: buffers as they come off the wire ----------------------------- */

/* A heap copy of n bytes at an odd address (n + 1 bytes allocated). */
static unsigned char *odd_copy(const void *src, size_t n)
{
	unsigned char *p = malloc(n + 1);

	cr_assert_not_null(p);
	if (src)
		memcpy(p + 1, src, n);
	else
		memset(p + 1, 0xa5, n);
	return p + 1;
}

static void odd_free(unsigned char *p)
{
	if (p)
		free(p - 1);
}

/*
 * Applies op to count elements of size bytes: target, operand and compare
 * (NULL for none) are copied to odd addresses first; the new target lands
 * in new_target and, when fetch is not NULL, fetch_out in fetch.
 */
static int run_apply(enum fi_op op, enum fi_datatype dt, size_t size, size_t count,
		     const void *target, const void *operand, const void *compare,
		     void *new_target, void *fetch)
{
	size_t n = size * count;
	unsigned char *t = odd_copy(target, n);
	unsigned char *o = operand ? odd_copy(operand, n) : NULL;
	unsigned char *c = compare ? odd_copy(compare, n) : NULL;
	unsigned char *f = fetch ? odd_copy(NULL, n) : NULL;
	int ret = mrail_atomic_apply(op, dt, t, o, c, f, count);

	memcpy(new_target, t, n);
	if (fetch)
		memcpy(fetch, f, n);
	odd_free(t);
	odd_free(o);
	odd_free(c);
	odd_free(f);
	return ret;
}

/* Equal values, or both NaN (for complex: a NaN in either part). */
#define SAME_VALUE(a, b) ((a) == (b) || ((a) != (a) && (b) != (b)))

/*
 * Applies op on the elements of the array init with operand and compare
 * arrays (or NULL), and checks the new target against want value by
 * value, and fetch_out against init byte for byte; then again without
 * fetch_out, for the same target. Arrays are compound literals in
 * parentheses: (int8_t[]){ 1, 2 }.
 */
#define CHECK_APPLY(op, dt, T, init, operand, compare, want)			\
	do {									\
		const T *init_ = (init), *want_ = (want);			\
		size_t n_ = sizeof(init) / sizeof(T), i_;			\
		T got_[sizeof(init) / sizeof(T)];				\
		T old_[sizeof(init) / sizeof(T)];				\
		int pass_;							\
										\
		cr_assert_eq(sizeof(want), sizeof(init));			\
		for (pass_ = 0; pass_ < 2; pass_++) {				\
			cr_assert_eq(run_apply(op, dt, sizeof(T), n_, init_,	\
					       operand, compare, got_,		\
					       pass_ ? NULL : old_), 0);	\
			if (!pass_)						\
				cr_assert(!memcmp(old_, init_, sizeof(old_)),	\
					  #op " " #T ": fetch_out is not the "	\
					  "old values");			\
			for (i_ = 0; i_ < n_; i_++)				\
				cr_assert(SAME_VALUE(got_[i_], want_[i_]),	\
					  #op " " #T ": element %zu wrong "	\
					  "(fetch %s)", i_,			\
					  pass_ ? "NULL" : "given");		\
		}								\
	} while (0)

/* ---- integers ------------------------------------------------------------- */

Test(atomic_apply_int, min_max_signed_and_unsigned)
{
	CHECK_APPLY(FI_MIN, FI_INT32, int32_t, ((int32_t[]){ 5, -3, 7, INT32_MIN }),
		    ((int32_t[]){ 3, -10, 7, INT32_MAX }), NULL,
		    ((int32_t[]){ 3, -10, 7, INT32_MIN }));
	CHECK_APPLY(FI_MAX, FI_INT32, int32_t, ((int32_t[]){ 5, -3, 7, INT32_MIN }),
		    ((int32_t[]){ 3, -10, 7, INT32_MAX }), NULL,
		    ((int32_t[]){ 5, -3, 7, INT32_MAX }));
	/* -1 is smaller than 1 signed, 0xff larger than 1 unsigned. */
	CHECK_APPLY(FI_MIN, FI_INT8, int8_t, ((int8_t[]){ -1, 1 }),
		    ((int8_t[]){ 1, -1 }), NULL, ((int8_t[]){ -1, -1 }));
	CHECK_APPLY(FI_MIN, FI_UINT8, uint8_t, ((uint8_t[]){ 0xff, 1 }),
		    ((uint8_t[]){ 1, 0xff }), NULL, ((uint8_t[]){ 1, 1 }));
	CHECK_APPLY(FI_MAX, FI_UINT32, uint32_t, ((uint32_t[]){ 5, UINT32_MAX }),
		    ((uint32_t[]){ UINT32_MAX, 5 }), NULL,
		    ((uint32_t[]){ UINT32_MAX, UINT32_MAX }));
	CHECK_APPLY(FI_MAX, FI_INT64, int64_t, ((int64_t[]){ -1, INT64_MIN }),
		    ((int64_t[]){ INT64_MIN, -2 }), NULL, ((int64_t[]){ -1, -2 }));
	CHECK_APPLY(FI_MIN, FI_UINT16, uint16_t, ((uint16_t[]){ 0x8000, 2 }),
		    ((uint16_t[]){ 0x7fff, 3 }), NULL, ((uint16_t[]){ 0x7fff, 2 }));
}

Test(atomic_apply_int, sum_wraps_around)
{
	CHECK_APPLY(FI_SUM, FI_INT8, int8_t, ((int8_t[]){ 127, -128, 5, -100 }),
		    ((int8_t[]){ 1, -1, -7, -100 }), NULL,
		    ((int8_t[]){ -128, 127, -2, 56 }));
	CHECK_APPLY(FI_SUM, FI_UINT8, uint8_t, ((uint8_t[]){ 255, 200 }),
		    ((uint8_t[]){ 1, 100 }), NULL, ((uint8_t[]){ 0, 44 }));
	CHECK_APPLY(FI_SUM, FI_INT16, int16_t, ((int16_t[]){ 32767, 1000 }),
		    ((int16_t[]){ 32767, -3000 }), NULL, ((int16_t[]){ -2, -2000 }));
	CHECK_APPLY(FI_SUM, FI_INT32, int32_t, ((int32_t[]){ INT32_MAX, INT32_MIN }),
		    ((int32_t[]){ 1, -1 }), NULL, ((int32_t[]){ INT32_MIN, INT32_MAX }));
	CHECK_APPLY(FI_SUM, FI_INT64, int64_t, ((int64_t[]){ INT64_MAX, 40 }),
		    ((int64_t[]){ 1, 2 }), NULL, ((int64_t[]){ INT64_MIN, 42 }));
	CHECK_APPLY(FI_SUM, FI_UINT64, uint64_t, ((uint64_t[]){ UINT64_MAX, 1 }),
		    ((uint64_t[]){ 2, UINT64_MAX - 1 }), NULL,
		    ((uint64_t[]){ 1, UINT64_MAX }));
}

Test(atomic_apply_int, prod_wraps_around)
{
	/* 200 * 200 = 40000 = 65536 - 25536. */
	CHECK_APPLY(FI_PROD, FI_INT16, int16_t, ((int16_t[]){ 200, -7, 3 }),
		    ((int16_t[]){ 200, 6, -4 }), NULL,
		    ((int16_t[]){ -25536, -42, -12 }));
	/* 65535 * 65535 = 2^32 - 2^17 + 1, which is 1 modulo 2^16 (and
	 * would overflow an int if the operands were promoted to it). */
	CHECK_APPLY(FI_PROD, FI_UINT16, uint16_t, ((uint16_t[]){ 65535, 256 }),
		    ((uint16_t[]){ 65535, 256 }), NULL, ((uint16_t[]){ 1, 0 }));
	CHECK_APPLY(FI_PROD, FI_INT8, int8_t, ((int8_t[]){ -128, 16, -3 }),
		    ((int8_t[]){ -1, 8, -5 }), NULL, ((int8_t[]){ -128, -128, 15 }));
	CHECK_APPLY(FI_PROD, FI_INT32, int32_t, ((int32_t[]){ INT32_MIN, 65536 }),
		    ((int32_t[]){ -1, 65536 }), NULL, ((int32_t[]){ INT32_MIN, 0 }));
	CHECK_APPLY(FI_PROD, FI_INT64, int64_t, ((int64_t[]){ INT64_MIN, INT64_MAX }),
		    ((int64_t[]){ -1, 2 }), NULL, ((int64_t[]){ INT64_MIN, -2 }));
	CHECK_APPLY(FI_PROD, FI_UINT32, uint32_t, ((uint32_t[]){ 0x10001, 7 }),
		    ((uint32_t[]){ 0x10001, 6 }), NULL, ((uint32_t[]){ 0x20001, 42 }));
}

Test(atomic_apply_int, logical_ops_give_one_or_zero)
{
	CHECK_APPLY(FI_LOR, FI_INT32, int32_t, ((int32_t[]){ 0, 0, 7, -2 }),
		    ((int32_t[]){ 0, 5, 0, 3 }), NULL, ((int32_t[]){ 0, 1, 1, 1 }));
	CHECK_APPLY(FI_LAND, FI_INT32, int32_t, ((int32_t[]){ 0, 0, 7, -2 }),
		    ((int32_t[]){ 0, 5, 0, 3 }), NULL, ((int32_t[]){ 0, 0, 0, 1 }));
	CHECK_APPLY(FI_LXOR, FI_INT32, int32_t, ((int32_t[]){ 0, 0, 7, -2 }),
		    ((int32_t[]){ 0, 5, 0, 3 }), NULL, ((int32_t[]){ 0, 1, 1, 0 }));
	CHECK_APPLY(FI_LOR, FI_UINT8, uint8_t, ((uint8_t[]){ 0x80, 0 }),
		    ((uint8_t[]){ 0, 0 }), NULL, ((uint8_t[]){ 1, 0 }));
	CHECK_APPLY(FI_LAND, FI_UINT64, uint64_t,
		    ((uint64_t[]){ 1ULL << 63, 1ULL << 40 }),
		    ((uint64_t[]){ 1ULL << 32, 0 }), NULL, ((uint64_t[]){ 1, 0 }));
	CHECK_APPLY(FI_LXOR, FI_INT16, int16_t, ((int16_t[]){ -1, -1 }),
		    ((int16_t[]){ 0, 256 }), NULL, ((int16_t[]){ 1, 0 }));
}

Test(atomic_apply_int, bitwise_ops)
{
	CHECK_APPLY(FI_BOR, FI_UINT16, uint16_t, ((uint16_t[]){ 0xf0f0, 0 }),
		    ((uint16_t[]){ 0x0ff0, 0x8001 }), NULL,
		    ((uint16_t[]){ 0xfff0, 0x8001 }));
	CHECK_APPLY(FI_BAND, FI_UINT16, uint16_t, ((uint16_t[]){ 0xf0f0, 0xffff }),
		    ((uint16_t[]){ 0x0ff0, 0x8001 }), NULL,
		    ((uint16_t[]){ 0x00f0, 0x8001 }));
	CHECK_APPLY(FI_BXOR, FI_UINT16, uint16_t, ((uint16_t[]){ 0xf0f0, 0xffff }),
		    ((uint16_t[]){ 0x0ff0, 0x8001 }), NULL,
		    ((uint16_t[]){ 0xff00, 0x7ffe }));
	CHECK_APPLY(FI_BXOR, FI_INT64, int64_t, ((int64_t[]){ -1, 0x0123456789abcdefLL }),
		    ((int64_t[]){ INT64_MAX, 0x0123456789abcdefLL }), NULL,
		    ((int64_t[]){ INT64_MIN, 0 }));
	CHECK_APPLY(FI_BAND, FI_INT8, int8_t, ((int8_t[]){ -1 }), ((int8_t[]){ 0x5a }),
		    NULL, ((int8_t[]){ 0x5a }));
}

Test(atomic_apply_int, read_leaves_target_and_fetches_it)
{
	uint32_t init[3] = { 1, 0xdeadbeef, 3 }, got[3], old[3];

	cr_assert_eq(run_apply(FI_ATOMIC_READ, FI_UINT32, 4, 3, init, NULL, NULL, got,
			       old), 0);
	cr_assert_arr_eq(got, init, sizeof(init));
	cr_assert_arr_eq(old, init, sizeof(init));
}

Test(atomic_apply_int, write_replaces_target)
{
	CHECK_APPLY(FI_ATOMIC_WRITE, FI_INT16, int16_t, ((int16_t[]){ 1, 2, 3 }),
		    ((int16_t[]){ -1, 0, 32767 }), NULL, ((int16_t[]){ -1, 0, 32767 }));
}

/*
 * Every conditional swap over targets 5, 5, 5 with compare 4, 5, 6: the
 * operand (100, 200, 300) is taken where "compare OP target" holds.
 */
Test(atomic_apply_int, conditional_swaps_hold_and_fail)
{
	static const struct {
		enum fi_op op;
		int32_t want[3];
	} swaps[] = {
		{ FI_CSWAP,	{ 5, 200, 5 } },
		{ FI_CSWAP_NE,	{ 100, 5, 300 } },
		{ FI_CSWAP_LE,	{ 100, 200, 5 } },
		{ FI_CSWAP_LT,	{ 100, 5, 5 } },
		{ FI_CSWAP_GE,	{ 5, 200, 300 } },
		{ FI_CSWAP_GT,	{ 5, 5, 300 } },
	};
	size_t k;

	for (k = 0; k < ARRAY_SIZE(swaps); k++)
		CHECK_APPLY(swaps[k].op, FI_INT32, int32_t, ((int32_t[]){ 5, 5, 5 }),
			    ((int32_t[]){ 100, 200, 300 }), ((int32_t[]){ 4, 5, 6 }),
			    swaps[k].want);
}

/* Signed and unsigned order differ where the top bit is set. */
Test(atomic_apply_int, conditional_swaps_compare_with_the_sign)
{
	/* compare 1 < target -1 is false signed ... */
	CHECK_APPLY(FI_CSWAP_LT, FI_INT8, int8_t, ((int8_t[]){ -1, -1 }),
		    ((int8_t[]){ 9, 9 }), ((int8_t[]){ 1, -2 }), ((int8_t[]){ -1, 9 }));
	/* ... and 1 < 0xff true unsigned. */
	CHECK_APPLY(FI_CSWAP_LT, FI_UINT8, uint8_t, ((uint8_t[]){ 0xff, 0xff }),
		    ((uint8_t[]){ 9, 9 }), ((uint8_t[]){ 1, 0xff }),
		    ((uint8_t[]){ 9, 0xff }));
	CHECK_APPLY(FI_CSWAP_GT, FI_INT64, int64_t, ((int64_t[]){ INT64_MIN, 0 }),
		    ((int64_t[]){ 1, 2 }), ((int64_t[]){ -1, -1 }), ((int64_t[]){ 1, 0 }));
	CHECK_APPLY(FI_CSWAP_GE, FI_UINT64, uint64_t, ((uint64_t[]){ 1ULL << 63, 7 }),
		    ((uint64_t[]){ 1, 2 }), ((uint64_t[]){ 1, 7 }), ((uint64_t[]){ 1ULL << 63, 2 }));
	CHECK_APPLY(FI_CSWAP_LE, FI_INT16, int16_t, ((int16_t[]){ -5, -5 }),
		    ((int16_t[]){ 1, 2 }), ((int16_t[]){ -6, -4 }), ((int16_t[]){ 1, -5 }));
}

Test(atomic_apply_int, mswap_takes_operand_bits_under_the_mask)
{
	CHECK_APPLY(FI_MSWAP, FI_UINT32, uint32_t, ((uint32_t[]){ 0xaaaaaaaa, 0x12345678 }),
		    ((uint32_t[]){ 0x12345678, 0xffffffff }),
		    ((uint32_t[]){ 0xffff0000, 0 }),
		    ((uint32_t[]){ 0x1234aaaa, 0x12345678 }));
	CHECK_APPLY(FI_MSWAP, FI_INT8, int8_t, ((int8_t[]){ 0x0f, -1 }),
		    ((int8_t[]){ -16, 0 }), ((int8_t[]){ -1, 0x3c }),
		    ((int8_t[]){ -16, (int8_t) 0xc3 }));
	CHECK_APPLY(FI_MSWAP, FI_UINT64, uint64_t, ((uint64_t[]){ 0 }),
		    ((uint64_t[]){ UINT64_MAX }), ((uint64_t[]){ 0x8000000000000001ULL }),
		    ((uint64_t[]){ 0x8000000000000001ULL }));
}

#ifdef __SIZEOF_INT128__
typedef __int128 i128;
typedef unsigned __int128 u128;

Test(atomic_apply_int, int128_carries_and_signs)
{
	const u128 low_ones = UINT64_MAX;
	const i128 i128_min = (i128) ((u128) 1 << 127);

	CHECK_APPLY(FI_SUM, FI_UINT128, u128, ((u128[]){ low_ones, ~(u128) 0 }),
		    ((u128[]){ 1, 1 }), NULL, ((u128[]){ (u128) 1 << 64, 0 }));
	CHECK_APPLY(FI_SUM, FI_INT128, i128, ((i128[]){ -1, i128_min }),
		    ((i128[]){ 1, -1 }), NULL, ((i128[]){ 0, ~i128_min }));
	CHECK_APPLY(FI_PROD, FI_INT128, i128, ((i128[]){ (i128) 1 << 64, -3 }),
		    ((i128[]){ (i128) 1 << 63, 5 }), NULL, ((i128[]){ i128_min, -15 }));
	CHECK_APPLY(FI_MIN, FI_INT128, i128, ((i128[]){ 1, i128_min }),
		    ((i128[]){ -1, 0 }), NULL, ((i128[]){ -1, i128_min }));
	CHECK_APPLY(FI_CSWAP_LT, FI_UINT128, u128, ((u128[]){ (u128) 1 << 100 }),
		    ((u128[]){ 3 }), ((u128[]){ (u128) 1 << 99 }), ((u128[]){ 3 }));
	CHECK_APPLY(FI_MSWAP, FI_UINT128, u128, ((u128[]){ 0 }),
		    ((u128[]){ ~(u128) 0 }), ((u128[]){ (u128) 1 << 127 | 1 }),
		    ((u128[]){ (u128) 1 << 127 | 1 }));
}
#endif

/* ---- floating point --------------------------------------------------------- */

Test(atomic_apply_float, min_max)
{
	CHECK_APPLY(FI_MIN, FI_FLOAT, float, ((float[]){ 1.5f, -2.0f, 3.0f }),
		    ((float[]){ -0.5f, 4.0f, 3.0f }), NULL,
		    ((float[]){ -0.5f, -2.0f, 3.0f }));
	CHECK_APPLY(FI_MAX, FI_DOUBLE, double, ((double[]){ 1.5, -2.0, -1e300 }),
		    ((double[]){ -0.5, 4.0, -1e301 }), NULL,
		    ((double[]){ 1.5, 4.0, -1e300 }));
	CHECK_APPLY(FI_MAX, FI_LONG_DOUBLE, long double, ((long double[]){ 1.25L, 2.0L }),
		    ((long double[]){ 1.5L, -2.0L }), NULL,
		    ((long double[]){ 1.5L, 2.0L }));
	CHECK_APPLY(FI_MIN, FI_LONG_DOUBLE, long double, ((long double[]){ 1.25L }),
		    ((long double[]){ 1.0L + 0x1p-60L }), NULL, ((long double[]){ 1.0L + 0x1p-60L }));
}

/* A NaN is neither smaller nor larger: the target stays as it is. */
Test(atomic_apply_float, min_max_with_nan_keep_the_target)
{
	CHECK_APPLY(FI_MIN, FI_DOUBLE, double, ((double[]){ NAN, 1.0 }),
		    ((double[]){ 0.0, NAN }), NULL, ((double[]){ NAN, 1.0 }));
	CHECK_APPLY(FI_MAX, FI_FLOAT, float, ((float[]){ NAN, 1.0f }),
		    ((float[]){ 0.0f, NAN }), NULL, ((float[]){ NAN, 1.0f }));
}

Test(atomic_apply_float, zero_signs_are_equal)
{
	float init[1] = { 0.0f }, got[1];

	/* -0 < +0 is false: FI_MIN keeps +0. */
	cr_assert_eq(run_apply(FI_MIN, FI_FLOAT, 4, 1, init, (float[]){ -0.0f }, NULL,
			       got, NULL), 0);
	cr_assert(!signbit(got[0]));
	/* -0 == +0: FI_CSWAP swaps. */
	cr_assert_eq(run_apply(FI_CSWAP, FI_FLOAT, 4, 1, init, (float[]){ 7.0f },
			       (float[]){ -0.0f }, got, NULL), 0);
	cr_assert_eq(got[0], 7.0f);
}

Test(atomic_apply_float, sum_prod)
{
	CHECK_APPLY(FI_SUM, FI_FLOAT, float, ((float[]){ 1.5f, -1.0f }),
		    ((float[]){ 2.25f, 0.125f }), NULL, ((float[]){ 3.75f, -0.875f }));
	CHECK_APPLY(FI_PROD, FI_FLOAT, float, ((float[]){ 1.5f, 3.0f }),
		    ((float[]){ -4.0f, 0.5f }), NULL, ((float[]){ -6.0f, 1.5f }));
	CHECK_APPLY(FI_SUM, FI_DOUBLE, double, ((double[]){ 1e308, 0.1 }),
		    ((double[]){ 1e308, 0.2 }), NULL, ((double[]){ INFINITY, 0.1 + 0.2 }));
	CHECK_APPLY(FI_PROD, FI_DOUBLE, double, ((double[]){ 0.0 }),
		    ((double[]){ INFINITY }), NULL, ((double[]){ NAN }));
	/* 1 + 2^-60 exists in x87's 64-bit mantissa, not in a double. */
	CHECK_APPLY(FI_SUM, FI_LONG_DOUBLE, long double, ((long double[]){ 1.0L, 1.5L }),
		    ((long double[]){ 0x1p-60L, 0.25L }), NULL,
		    ((long double[]){ 1.0L + 0x1p-60L, 1.75L }));
	CHECK_APPLY(FI_PROD, FI_LONG_DOUBLE, long double, ((long double[]){ -2.5L }),
		    ((long double[]){ 4.0L }), NULL, ((long double[]){ -10.0L }));
}

Test(atomic_apply_float, logical_ops)
{
	CHECK_APPLY(FI_LOR, FI_DOUBLE, double, ((double[]){ 0.0, 0.0, -0.0, 2.5 }),
		    ((double[]){ 0.0, 0.5, 0.0, 0.0 }), NULL,
		    ((double[]){ 0.0, 1.0, 0.0, 1.0 }));
	CHECK_APPLY(FI_LAND, FI_FLOAT, float, ((float[]){ 0.0f, 3.0f, NAN }),
		    ((float[]){ 1.0f, -3.0f, 1.0f }), NULL, ((float[]){ 0.0f, 1.0f, 1.0f }));
	CHECK_APPLY(FI_LXOR, FI_LONG_DOUBLE, long double,
		    ((long double[]){ 0.0L, 1.0L, 1.0L }),
		    ((long double[]){ 0.0L, 0.0L, 0.5L }), NULL,
		    ((long double[]){ 0.0L, 1.0L, 0.0L }));
}

Test(atomic_apply_float, conditional_swaps)
{
	CHECK_APPLY(FI_CSWAP, FI_DOUBLE, double, ((double[]){ 1.5, 1.5 }),
		    ((double[]){ 9.0, 9.0 }), ((double[]){ 1.5, 1.25 }),
		    ((double[]){ 9.0, 1.5 }));
	CHECK_APPLY(FI_CSWAP_LE, FI_FLOAT, float, ((float[]){ 2.0f, 2.0f, 2.0f }),
		    ((float[]){ 7.0f, 8.0f, 9.0f }), ((float[]){ 1.0f, 2.0f, 3.0f }),
		    ((float[]){ 7.0f, 8.0f, 2.0f }));
	CHECK_APPLY(FI_CSWAP_GT, FI_LONG_DOUBLE, long double,
		    ((long double[]){ 2.0L, 2.0L, 2.0L }),
		    ((long double[]){ 7.0L, 8.0L, 9.0L }),
		    ((long double[]){ 1.0L, 2.0L, 3.0L }),
		    ((long double[]){ 2.0L, 2.0L, 9.0L }));
	CHECK_APPLY(FI_CSWAP_LT, FI_DOUBLE, double, ((double[]){ -1.0, -1.0 }),
		    ((double[]){ 7.0, 8.0 }), ((double[]){ -2.0, -1.0 }),
		    ((double[]){ 7.0, -1.0 }));
	CHECK_APPLY(FI_CSWAP_GE, FI_FLOAT, float, ((float[]){ -1.0f, -1.0f }),
		    ((float[]){ 7.0f, 8.0f }), ((float[]){ -2.0f, -1.0f }),
		    ((float[]){ -1.0f, 8.0f }));
}

/* A NaN equals nothing, itself included, and stands in no order. */
Test(atomic_apply_float, conditional_swaps_with_nan)
{
	CHECK_APPLY(FI_CSWAP, FI_DOUBLE, double, ((double[]){ NAN, 1.0 }),
		    ((double[]){ 9.0, 9.0 }), ((double[]){ NAN, NAN }),
		    ((double[]){ NAN, 1.0 }));
	CHECK_APPLY(FI_CSWAP_NE, FI_DOUBLE, double, ((double[]){ NAN, 1.0 }),
		    ((double[]){ 9.0, 9.0 }), ((double[]){ NAN, 1.0 }),
		    ((double[]){ 9.0, 1.0 }));
	CHECK_APPLY(FI_CSWAP_LE, FI_FLOAT, float, ((float[]){ NAN, 1.0f }),
		    ((float[]){ 9.0f, 9.0f }), ((float[]){ 0.0f, NAN }),
		    ((float[]){ NAN, 1.0f }));
	CHECK_APPLY(FI_CSWAP_GE, FI_FLOAT, float, ((float[]){ NAN, 1.0f }),
		    ((float[]){ 9.0f, 9.0f }), ((float[]){ 0.0f, NAN }),
		    ((float[]){ NAN, 1.0f }));
}

/* FI_ATOMIC_WRITE and swaps copy bytes: NaN payloads and long double
 * padding arrive as they were sent. */
Test(atomic_apply_float, write_and_swap_copy_bytes)
{
	unsigned char init[2 * sizeof(long double)], operand[sizeof(init)];
	unsigned char cmp[sizeof(init)], got[sizeof(init)];
	long double one = 1.0L;
	size_t i;

	for (i = 0; i < sizeof(init); i++) {
		init[i] = (unsigned char) i;
		operand[i] = (unsigned char) (0xf0 ^ i);
	}
	cr_assert_eq(run_apply(FI_ATOMIC_WRITE, FI_LONG_DOUBLE, sizeof(long double), 2,
			       init, operand, NULL, got, NULL), 0);
	cr_assert_arr_eq(got, operand, sizeof(got));

	memcpy(init, &one, sizeof(one));
	memcpy(cmp, &one, sizeof(one));
	memcpy(cmp + sizeof(one), &one, sizeof(one));
	cr_assert_eq(run_apply(FI_CSWAP, FI_LONG_DOUBLE, sizeof(long double), 1, init,
			       operand, cmp, got, NULL), 0);
	cr_assert_arr_eq(got, operand, sizeof(long double));
}

/* ---- complex ------------------------------------------------------------------ */

Test(atomic_apply_complex, sum_prod)
{
	/* (1 + 2i)(3 + 4i) = 3 + 4i + 6i - 8 = -5 + 10i */
	CHECK_APPLY(FI_SUM, FI_FLOAT_COMPLEX, float complex,
		    ((float complex[]){ 1.0f + 2.0f * I, -1.5f }),
		    ((float complex[]){ 3.0f - 1.0f * I, 0.5f * I }), NULL,
		    ((float complex[]){ 4.0f + 1.0f * I, -1.5f + 0.5f * I }));
	CHECK_APPLY(FI_PROD, FI_FLOAT_COMPLEX, float complex,
		    ((float complex[]){ 1.0f + 2.0f * I, 2.0f }),
		    ((float complex[]){ 3.0f + 4.0f * I, 0.5f }), NULL,
		    ((float complex[]){ -5.0f + 10.0f * I, 1.0f }));
	/* (2 - i) i = 2i + 1 */
	CHECK_APPLY(FI_PROD, FI_DOUBLE_COMPLEX, double complex,
		    ((double complex[]){ 2.0 - 1.0 * I, 1.0 * I }),
		    ((double complex[]){ 1.0 * I, 1.0 * I }), NULL,
		    ((double complex[]){ 1.0 + 2.0 * I, -1.0 }));
	CHECK_APPLY(FI_SUM, FI_DOUBLE_COMPLEX, double complex,
		    ((double complex[]){ 0.25 + 0.5 * I }),
		    ((double complex[]){ -0.25 + 0.5 * I }), NULL,
		    ((double complex[]){ 1.0 * I }));
	CHECK_APPLY(FI_PROD, FI_LONG_DOUBLE_COMPLEX, long double complex,
		    ((long double complex[]){ 1.0L + 1.0L * I }),
		    ((long double complex[]){ 1.0L - 1.0L * I }), NULL,
		    ((long double complex[]){ 2.0L }));
	CHECK_APPLY(FI_SUM, FI_LONG_DOUBLE_COMPLEX, long double complex,
		    ((long double complex[]){ 1.0L + 0x1p-60L * I }),
		    ((long double complex[]){ 0x1p-60L + 1.0L * I }), NULL,
		    ((long double complex[]){ (1.0L + 0x1p-60L) + (1.0L + 0x1p-60L) * I }));
}

/* Equal when both parts are; differing in the imaginary part alone is
 * enough to differ. */
Test(atomic_apply_complex, cswap_and_cswap_ne)
{
	CHECK_APPLY(FI_CSWAP, FI_DOUBLE_COMPLEX, double complex,
		    ((double complex[]){ 1.0 + 2.0 * I, 1.0 + 2.0 * I }),
		    ((double complex[]){ 9.0, 9.0 }),
		    ((double complex[]){ 1.0 + 2.0 * I, 1.0 + 3.0 * I }),
		    ((double complex[]){ 9.0, 1.0 + 2.0 * I }));
	CHECK_APPLY(FI_CSWAP_NE, FI_FLOAT_COMPLEX, float complex,
		    ((float complex[]){ 1.0f + 2.0f * I, 1.0f + 2.0f * I }),
		    ((float complex[]){ 9.0f, 9.0f }),
		    ((float complex[]){ 1.0f + 2.0f * I, 1.0f + 3.0f * I }),
		    ((float complex[]){ 1.0f + 2.0f * I, 9.0f }));
	CHECK_APPLY(FI_CSWAP, FI_LONG_DOUBLE_COMPLEX, long double complex,
		    ((long double complex[]){ 2.0L * I }),
		    ((long double complex[]){ 5.0L }),
		    ((long double complex[]){ 2.0L * I }),
		    ((long double complex[]){ 5.0L }));
}

Test(atomic_apply_complex, logical_ops_and_read_write)
{
	CHECK_APPLY(FI_LOR, FI_FLOAT_COMPLEX, float complex,
		    ((float complex[]){ 0.0f, 0.0f, 1.0f * I }),
		    ((float complex[]){ 0.0f, 1.0f * I, 0.0f }), NULL,
		    ((float complex[]){ 0.0f, 1.0f, 1.0f }));
	CHECK_APPLY(FI_LAND, FI_DOUBLE_COMPLEX, double complex,
		    ((double complex[]){ 1.0 * I, 1.0 * I }),
		    ((double complex[]){ 2.0, 0.0 }), NULL,
		    ((double complex[]){ 1.0, 0.0 }));
	CHECK_APPLY(FI_LXOR, FI_LONG_DOUBLE_COMPLEX, long double complex,
		    ((long double complex[]){ 1.0L * I, 0.0L }),
		    ((long double complex[]){ 2.0L, 3.0L * I }), NULL,
		    ((long double complex[]){ 0.0L, 1.0L }));
	CHECK_APPLY(FI_ATOMIC_WRITE, FI_DOUBLE_COMPLEX, double complex,
		    ((double complex[]){ 1.0 }), ((double complex[]){ -3.0 + 4.0 * I }),
		    NULL, ((double complex[]){ -3.0 + 4.0 * I }));
}

/* ---- buffers, aliasing, refusals -------------------------------------------- */

/* Several odd offsets, more elements: each lands in its own place. */
Test(atomic_apply, unaligned_offsets_and_counts)
{
	size_t shift, count, i;

	for (shift = 1; shift < 8; shift++) {
		for (count = 1; count <= 9; count++) {
			unsigned char tbuf[8 * 9 + 8], obuf[8 * 9 + 8], fbuf[8 * 9 + 8];
			int64_t v;

			for (i = 0; i < count; i++) {
				v = (int64_t) (i * 1000) - 3;
				memcpy(tbuf + shift + 8 * i, &v, 8);
				v = (int64_t) i - 4;
				memcpy(obuf + shift + 8 * i, &v, 8);
			}
			cr_assert_eq(mrail_atomic_apply(FI_SUM, FI_INT64, tbuf + shift,
							obuf + shift, NULL, fbuf + shift,
							count), 0);
			for (i = 0; i < count; i++) {
				memcpy(&v, tbuf + shift + 8 * i, 8);
				cr_assert_eq(v, (int64_t) (i * 1000) - 3 + (int64_t) i - 4);
				memcpy(&v, fbuf + shift + 8 * i, 8);
				cr_assert_eq(v, (int64_t) (i * 1000) - 3);
			}
		}
	}
}

/* The reply may be built in place of the request's operand or compare. */
Test(atomic_apply, fetch_out_may_be_the_operand_or_compare)
{
	uint32_t t[3] = { 10, 20, 30 }, o[3] = { 1, 2, 3 };
	uint32_t t2[3] = { 5, 6, 7 }, o2[3] = { 50, 60, 70 }, c2[3] = { 5, 0, 7 };

	cr_assert_eq(mrail_atomic_apply(FI_SUM, FI_UINT32, t, o, NULL, o, 3), 0);
	cr_assert_arr_eq(t, ((uint32_t[]){ 11, 22, 33 }), sizeof(t));
	cr_assert_arr_eq(o, ((uint32_t[]){ 10, 20, 30 }), sizeof(o));

	cr_assert_eq(mrail_atomic_apply(FI_CSWAP, FI_UINT32, t2, o2, c2, c2, 3), 0);
	cr_assert_arr_eq(t2, ((uint32_t[]){ 50, 6, 70 }), sizeof(t2));
	cr_assert_arr_eq(c2, ((uint32_t[]){ 5, 6, 7 }), sizeof(c2));
}

Test(atomic_apply, refusals_write_nothing)
{
	uint32_t t[2] = { 1, 2 }, o[2] = { 3, 4 }, c[2] = { 5, 6 }, f[2] = { 7, 8 };

	cr_assert_eq(mrail_atomic_apply((enum fi_op) FI_ATOMIC_OP_LAST, FI_UINT32, t, o, c, f, 2),
		     -EINVAL);
	cr_assert_eq(mrail_atomic_apply(FI_NOOP, FI_UINT32, t, o, c, f, 2), -EINVAL);
	cr_assert_eq(mrail_atomic_apply(FI_SUM, FI_VOID, t, o, c, f, 2), -EINVAL);
	cr_assert_eq(mrail_atomic_apply(FI_SUM, (enum fi_datatype) -1, t, o, c, f, 2),
		     -EINVAL);
	cr_assert_eq(mrail_atomic_apply(FI_BOR, FI_FLOAT, t, o, c, f, 2), -EOPNOTSUPP);
	cr_assert_eq(mrail_atomic_apply(FI_MIN, FI_FLOAT_COMPLEX, t, o, c, f, 1),
		     -EOPNOTSUPP);
	/* missing buffers */
	cr_assert_eq(mrail_atomic_apply(FI_SUM, FI_UINT32, NULL, o, c, f, 2), -EINVAL);
	cr_assert_eq(mrail_atomic_apply(FI_SUM, FI_UINT32, t, NULL, c, f, 2), -EINVAL);
	cr_assert_eq(mrail_atomic_apply(FI_CSWAP, FI_UINT32, t, o, NULL, f, 2), -EINVAL);
	cr_assert_eq(mrail_atomic_apply(FI_MSWAP, FI_UINT32, t, o, NULL, f, 2), -EINVAL);
	cr_assert_eq(mrail_atomic_apply(FI_ATOMIC_READ, FI_UINT32, t, o, c, NULL, 2),
		     -EINVAL);
	cr_assert_arr_eq(t, ((uint32_t[]){ 1, 2 }), sizeof(t));
	cr_assert_arr_eq(o, ((uint32_t[]){ 3, 4 }), sizeof(o));
	cr_assert_arr_eq(c, ((uint32_t[]){ 5, 6 }), sizeof(c));
	cr_assert_arr_eq(f, ((uint32_t[]){ 7, 8 }), sizeof(f));
}

Test(atomic_apply, what_needs_no_buffer)
{
	uint32_t t[1] = { 1 }, f[1] = { 0 };

	cr_assert_eq(mrail_atomic_apply(FI_ATOMIC_READ, FI_UINT32, t, NULL, NULL, f, 1), 0);
	cr_assert_eq(f[0], 1);
	/* compare is ignored by the ops that have none */
	cr_assert_eq(mrail_atomic_apply(FI_SUM, FI_UINT32, t, (uint32_t[]){ 2 }, NULL,
					NULL, 1), 0);
	cr_assert_eq(t[0], 3);
	/* count 0 touches nothing, whatever the buffers */
	cr_assert_eq(mrail_atomic_apply(FI_SUM, FI_UINT32, NULL, NULL, NULL, NULL, 0), 0);
	cr_assert_eq(mrail_atomic_apply(FI_SUM, FI_VOID, NULL, NULL, NULL, NULL, 0),
		     -EINVAL);
}

/* ---- random run of every op on the integers against a reference ------------ */

/*
 * The reference keeps an element as the low bits of a uint64_t and computes
 * every op on that, from fi_atomic(3)'s pseudo-code: orders on the values
 * sign-extended to int64_t for signed types, sums and products modulo 2^64
 * then truncated to the width (the same residue modulo 2^bits).
 */
struct int_type {
	enum fi_datatype dt;
	unsigned int bits;
	bool is_signed;
};

static const struct int_type int_types[] = {
	{ FI_INT8, 8, true }, { FI_UINT8, 8, false },
	{ FI_INT16, 16, true }, { FI_UINT16, 16, false },
	{ FI_INT32, 32, true }, { FI_UINT32, 32, false },
	{ FI_INT64, 64, true }, { FI_UINT64, 64, false },
};

static uint64_t width_mask(unsigned int bits)
{
	return bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

static int64_t as_signed(const struct int_type *it, uint64_t v)
{
	uint64_t sign = UINT64_C(1) << (it->bits - 1);

	v &= width_mask(it->bits);
	/* two's complement by hand: v - 2^bits when the sign bit is set */
	return (v & sign) ? -(int64_t) (~v & width_mask(it->bits)) - 1 : (int64_t) v;
}

/* -1, 0 or 1 as a stands before, with or after b. */
static int ref_cmp(const struct int_type *it, uint64_t a, uint64_t b)
{
	if (it->is_signed) {
		int64_t x = as_signed(it, a), y = as_signed(it, b);

		return x < y ? -1 : x > y;
	}
	return a < b ? -1 : a > b;
}

static uint64_t ref_int(const struct int_type *it, enum fi_op op, uint64_t t,
			uint64_t o, uint64_t c)
{
	uint64_t m = width_mask(it->bits);

	switch (op) {
	case FI_MIN: return ref_cmp(it, o, t) < 0 ? o : t;
	case FI_MAX: return ref_cmp(it, o, t) > 0 ? o : t;
	case FI_SUM: return (t + o) & m;
	case FI_PROD: return (t * o) & m;
	case FI_LOR: return t || o;
	case FI_LAND: return t && o;
	case FI_BOR: return t | o;
	case FI_BAND: return t & o;
	case FI_LXOR: return (t && !o) || (!t && o);
	case FI_BXOR: return t ^ o;
	case FI_ATOMIC_READ: return t;
	case FI_ATOMIC_WRITE: return o;
	case FI_CSWAP: return ref_cmp(it, c, t) == 0 ? o : t;
	case FI_CSWAP_NE: return ref_cmp(it, c, t) != 0 ? o : t;
	case FI_CSWAP_LE: return ref_cmp(it, c, t) <= 0 ? o : t;
	case FI_CSWAP_LT: return ref_cmp(it, c, t) < 0 ? o : t;
	case FI_CSWAP_GE: return ref_cmp(it, c, t) >= 0 ? o : t;
	case FI_CSWAP_GT: return ref_cmp(it, c, t) > 0 ? o : t;
	default: return (o & c) | (t & ~c); /* FI_MSWAP */
	}
}

/* An element's bytes in the host's order, through the C type of its width. */
static void put_int(unsigned char *p, unsigned int bits, uint64_t v)
{
	uint8_t v8 = (uint8_t) v;
	uint16_t v16 = (uint16_t) v;
	uint32_t v32 = (uint32_t) v;

	switch (bits) {
	case 8: memcpy(p, &v8, 1); break;
	case 16: memcpy(p, &v16, 2); break;
	case 32: memcpy(p, &v32, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

static uint64_t get_int(const unsigned char *p, unsigned int bits)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (bits) {
	case 8: memcpy(&v8, p, 1); return v8;
	case 16: memcpy(&v16, p, 2); return v16;
	case 32: memcpy(&v32, p, 4); return v32;
	default: memcpy(&v64, p, 8); return v64;
	}
}

/* Mostly the values at the edges, where wrong code shows. */
static uint64_t random_int(uint64_t *rng, unsigned int bits)
{
	static const uint64_t edges[] = { 0, 1, 2, 3, UINT64_MAX, UINT64_MAX - 1 };
	uint64_t m = width_mask(bits), sign = UINT64_C(1) << (bits - 1);

	switch (test_rng_below(rng, 5)) {
	case 0:
		return edges[test_rng_below(rng, ARRAY_SIZE(edges))] & m;
	case 1:
		return (sign + test_rng_below(rng, 3) - 1) & m; /* around the sign bit */
	case 2:
		return test_rng_below(rng, 8);
	default:
		return test_rng_next(rng) & m;
	}
}

Test(atomic_apply_int, random_run_matches_the_reference)
{
	enum { COUNT = 7, ROUNDS = 300 };
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	size_t ti, round, i;
	unsigned int checked = 0;
	int op;

	for (ti = 0; ti < ARRAY_SIZE(int_types); ti++) {
		const struct int_type *it = &int_types[ti];
		size_t size = it->bits / 8;

		for (op = 0; op < FI_ATOMIC_OP_LAST; op++) {
			for (round = 0; round < ROUNDS; round++) {
				uint64_t t[COUNT], o[COUNT], c[COUNT];
				unsigned char tb[COUNT * 8], ob[COUNT * 8], cb[COUNT * 8];
				unsigned char got[COUNT * 8], old[COUNT * 8];

				for (i = 0; i < COUNT; i++) {
					t[i] = random_int(&rng, it->bits);
					o[i] = random_int(&rng, it->bits);
					/* compare often equal to the target */
					c[i] = test_rng_below(&rng, 3) ? t[i] + test_rng_below(&rng, 3) - 1 :
						random_int(&rng, it->bits);
					c[i] &= width_mask(it->bits);
					put_int(tb + i * size, it->bits, t[i]);
					put_int(ob + i * size, it->bits, o[i]);
					put_int(cb + i * size, it->bits, c[i]);
				}
				cr_assert_eq(run_apply(op, it->dt, size, COUNT, tb, ob, cb, got,
						       old), 0);
				for (i = 0; i < COUNT; i++) {
					uint64_t want = ref_int(it, op, t[i], o[i], c[i]);

					cr_assert_eq(get_int(got + i * size, it->bits), want,
						     "op %d datatype %d: t %#llx o %#llx c %#llx "
						     "gave %#llx, want %#llx", op, it->dt,
						     (unsigned long long) t[i],
						     (unsigned long long) o[i],
						     (unsigned long long) c[i],
						     (unsigned long long) get_int(got + i * size,
										   it->bits),
						     (unsigned long long) want);
					cr_assert_eq(get_int(old + i * size, it->bits), t[i]);
					checked++;
				}
			}
		}
	}
	cr_assert_eq(checked, ARRAY_SIZE(int_types) * FI_ATOMIC_OP_LAST * ROUNDS * COUNT);
}
