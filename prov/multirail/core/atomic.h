/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Atomic operations as mrail executes them itself at the target (the rails,
 * libfabric 1.17's tcp;ofi_rxm, have none): which (kind, op, datatype)
 * combinations are valid, and the computation of fi_atomic(3)'s operations
 * over a run of elements.
 *
 * Nothing here is atomic by itself: the caller makes an operation atomic
 * between all initiators, whatever rail each used, by applying it under one
 * lock that every atomic on that memory takes.
 *
 * Element data is in the host's representation (byte order, and the host's
 * long double), the same at both ends. Buffers may have any alignment
 * (they come off the wire): elements are only ever copied in and out with
 * memcpy.
 *
 * Which datatypes each op accepts (fi_atomic(3) lets a provider choose; its
 * pseudo-code is the C expression each op computes, and these are the types
 * for which that expression is defined):
 *   - every datatype: FI_SUM, FI_PROD, FI_LOR, FI_LAND, FI_LXOR,
 *     FI_ATOMIC_READ, FI_ATOMIC_WRITE, FI_CSWAP, FI_CSWAP_NE;
 *   - every datatype but the complex ones (they have no order): FI_MIN,
 *     FI_MAX, FI_CSWAP_LE, FI_CSWAP_LT, FI_CSWAP_GE, FI_CSWAP_GT;
 *   - integer datatypes only: FI_BOR, FI_BAND, FI_BXOR, FI_MSWAP.
 * FI_INT128 and FI_UINT128 are integer datatypes when the compiler has
 * 128-bit integers (gcc and clang on 64-bit hosts), else unsupported.
 */
#ifndef MRAIL_ATOMIC_H
#define MRAIL_ATOMIC_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>

/* Which family of calls an atomic comes from; each allows its own ops. */
enum mrail_atomic_kind {
	/* fi_atomic and friends: FI_MIN .. FI_BXOR, FI_ATOMIC_WRITE. */
	MRAIL_ATOMIC_PLAIN,
	/* fi_fetch_atomic: the plain ones and FI_ATOMIC_READ; the previous
	 * target values go back to the initiator. */
	MRAIL_ATOMIC_FETCH,
	/* fi_compare_atomic: FI_CSWAP .. FI_CSWAP_GT, FI_MSWAP; the previous
	 * target values go back to the initiator. */
	MRAIL_ATOMIC_COMPARE,
	MRAIL_ATOMIC_KIND_COUNT
};

/* The largest datatype (FI_LONG_DOUBLE_COMPLEX on x86-64: 32 bytes). */
#define MRAIL_ATOMIC_MAX_SIZE 32

/*
 * Whether op on datatype is supported for an atomic of this kind; backs
 * fi_atomicvalid, fi_fetch_atomicvalid, fi_compare_atomicvalid and
 * fi_query_atomic. Returns 0 and, when size is not NULL, the datatype's
 * size in bytes in *size (a count limit is the caller's payload limit
 * divided by it); -EOPNOTSUPP for a combination not supported;
 * -EINVAL for a kind, op or datatype outside its enum (FI_VOID, FI_NOOP
 * and the other collective values included). *size is untouched on error.
 */
int mrail_atomic_valid(enum mrail_atomic_kind kind, enum fi_op op,
		       enum fi_datatype datatype, size_t *size);

/*
 * The kind fi_query_atomic's flags ask about: 0 is plain, FI_FETCH_ATOMIC
 * fetch, FI_COMPARE_ATOMIC compare. Returns 0, -EINVAL when both bits are
 * set (fi_atomic(3) forbids it) or a bit other than these and FI_TAGGED is,
 * -EOPNOTSUPP for FI_TAGGED (mrail has no atomics to tagged buffers).
 */
int mrail_atomic_kind_from_flags(uint64_t flags, enum mrail_atomic_kind *kind);

/*
 * The access an atomic needs of the target region, in FI_REMOTE_READ and
 * FI_REMOTE_WRITE bits (for mrail_rma_check): FI_REMOTE_WRITE for a plain
 * atomic (it returns nothing), FI_REMOTE_READ for FI_ATOMIC_READ,
 * both for the other fetch and the compare atomics (fi_atomic(3): their
 * target "must be enabled for remote read access", and they write it).
 * 0 for a kind or op outside its enum; the combination itself is
 * mrail_atomic_valid's to check.
 */
uint64_t mrail_atomic_access(enum mrail_atomic_kind kind, enum fi_op op);

/* Bytes each part of an atomic of count elements occupies. */
struct mrail_atomic_len {
	size_t operand;	/* the initiator's operand (buf): 0 for FI_ATOMIC_READ */
	size_t compare;	/* its compare data: only for compare atomics */
	size_t result;	/* previous values back to the initiator: fetch and
			 * compare atomics */
};

/*
 * The lengths a request and its reply carry for an atomic of this kind,
 * op and datatype over count elements, for the target to check a peer's
 * request against. Returns 0, the error of mrail_atomic_valid for a
 * combination not valid, -EINVAL for count 0 (fi_atomic(3): at least one
 * element) and -EOVERFLOW when count * size does not fit in size_t.
 * *len is untouched on error.
 */
int mrail_atomic_len(enum mrail_atomic_kind kind, enum fi_op op,
		     enum fi_datatype datatype, size_t count,
		     struct mrail_atomic_len *len);

/*
 * Applies op to count elements of datatype at target, in place, element
 * by element as fi_atomic(3) defines each op, with buf[i] the operand and
 * compare[i] the compare data:
 *   FI_MIN        target = operand if operand < target
 *   FI_MAX        target = operand if operand > target
 *   FI_SUM        target = target + operand
 *   FI_PROD       target = target * operand
 *   FI_LOR        target = target || operand          (1 or 0)
 *   FI_LAND       target = target && operand          (1 or 0)
 *   FI_LXOR       target = !target != !operand        (1 or 0)
 *   FI_BOR, FI_BAND, FI_BXOR   bitwise |, &, ^
 *   FI_ATOMIC_READ             target unchanged
 *   FI_ATOMIC_WRITE            target = operand
 *   FI_CSWAP      target = operand if compare == target
 *   FI_CSWAP_NE   target = operand if compare != target
 *   FI_CSWAP_LE   target = operand if compare <= target
 *   FI_CSWAP_LT   target = operand if compare <  target
 *   FI_CSWAP_GE   target = operand if compare >= target
 *   FI_CSWAP_GT   target = operand if compare >  target
 *   FI_MSWAP      target = (operand & compare) | (target & ~compare)
 * Signed integers compare as signed. FI_SUM and FI_PROD on integers wrap
 * around modulo 2^bits, signed ones included (two's complement, never
 * undefined behaviour). Floating-point ones follow the host's IEEE 754
 * arithmetic: a NaN is neither smaller nor larger than anything, so FI_MIN,
 * FI_MAX and the ordered swaps leave the target as it is when either value
 * is a NaN, FI_CSWAP never swaps a NaN and FI_CSWAP_NE always does; -0 and
 * +0 are equal. Complex values are equal when both parts are, true when
 * either part is non-zero, and multiply as C's complex types do. The
 * logical ops write 1 or 0 (1 + 0i) of the datatype. FI_ATOMIC_WRITE and
 * the swaps copy the operand's bytes as they are.
 *
 * When fetch_out is not NULL it receives each element's value from before
 * the op (the reply of a fetch or compare atomic). operand may be NULL only
 * for FI_ATOMIC_READ, compare must be given for the compare ops only (it
 * is ignored otherwise), fetch_out must be given for FI_ATOMIC_READ.
 * fetch_out may be the very same buffer as operand or compare (a reply
 * built in place of the request's data); no other overlap with target is
 * allowed.
 *
 * Returns 0; -EINVAL for an op or datatype outside its enum or a missing
 * buffer; -EOPNOTSUPP for an op the datatype does not support (see above;
 * the kind is the caller's to check with mrail_atomic_valid). Nothing is
 * written on error. count 0 does nothing.
 */
int mrail_atomic_apply(enum fi_op op, enum fi_datatype datatype, void *target,
		       const void *operand, const void *compare,
		       void *fetch_out, size_t count);

#endif /* MRAIL_ATOMIC_H */
