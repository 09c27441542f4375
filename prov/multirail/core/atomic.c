/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Atomic operations executed by mrail at the target (see atomic.h).
 *
 * Each datatype is described once by a small table entry: its size, the ops
 * it supports and five functions (order, truth, from_truth, sum, prod)
 * generated from one macro per class of type. Every op is then written
 * once, generically, in terms of those: the comparisons and swaps through
 * order(), the logical ops through truth(), the bitwise ones byte by byte
 * (bitwise ops do not care about byte order), reads, writes and swaps as
 * plain byte copies. The generated functions take byte pointers and copy
 * values in and out with memcpy, so no buffer needs any alignment.
 */
#include "atomic.h"

#include <complex.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define OP_BIT(op) (UINT32_C(1) << (op))

/* The ops each kind of call allows (fi_atomic(3), per family of calls). */
#define OPS_COMPUTE (OP_BIT(FI_MIN) | OP_BIT(FI_MAX) | OP_BIT(FI_SUM) |	\
		     OP_BIT(FI_PROD) | OP_BIT(FI_LOR) | OP_BIT(FI_LAND) |	\
		     OP_BIT(FI_BOR) | OP_BIT(FI_BAND) | OP_BIT(FI_LXOR) |	\
		     OP_BIT(FI_BXOR))
#define OPS_SWAP (OP_BIT(FI_CSWAP) | OP_BIT(FI_CSWAP_NE) |		\
		  OP_BIT(FI_CSWAP_LE) | OP_BIT(FI_CSWAP_LT) |		\
		  OP_BIT(FI_CSWAP_GE) | OP_BIT(FI_CSWAP_GT) |		\
		  OP_BIT(FI_MSWAP))

static const uint32_t kind_ops[MRAIL_ATOMIC_KIND_COUNT] = {
	[MRAIL_ATOMIC_PLAIN] = OPS_COMPUTE | OP_BIT(FI_ATOMIC_WRITE),
	[MRAIL_ATOMIC_FETCH] = OPS_COMPUTE | OP_BIT(FI_ATOMIC_WRITE) |
			       OP_BIT(FI_ATOMIC_READ),
	[MRAIL_ATOMIC_COMPARE] = OPS_SWAP,
};

/* The ops each class of datatype allows: complex numbers have equality but
 * no order, and only integers have bits to operate on. */
#define OPS_ANY_TYPE (OP_BIT(FI_SUM) | OP_BIT(FI_PROD) | OP_BIT(FI_LOR) |	\
		      OP_BIT(FI_LAND) | OP_BIT(FI_LXOR) |			\
		      OP_BIT(FI_ATOMIC_READ) | OP_BIT(FI_ATOMIC_WRITE) |	\
		      OP_BIT(FI_CSWAP) | OP_BIT(FI_CSWAP_NE))
#define OPS_ORDERED (OP_BIT(FI_MIN) | OP_BIT(FI_MAX) |			\
		     OP_BIT(FI_CSWAP_LE) | OP_BIT(FI_CSWAP_LT) |		\
		     OP_BIT(FI_CSWAP_GE) | OP_BIT(FI_CSWAP_GT))
#define OPS_BITWISE (OP_BIT(FI_BOR) | OP_BIT(FI_BAND) | OP_BIT(FI_BXOR) |	\
		     OP_BIT(FI_MSWAP))

#define OPS_COMPLEX OPS_ANY_TYPE
#define OPS_REAL (OPS_ANY_TYPE | OPS_ORDERED)
#define OPS_INTEGER (OPS_REAL | OPS_BITWISE)

/* How a value a stands against a value b. */
enum atomic_order {
	ORDER_LESS,
	ORDER_EQUAL,
	ORDER_GREATER,
	ORDER_NONE,	/* a NaN, or complex values that differ */
};

struct atomic_type {
	size_t size;	/* 0: not supported on this host */
	uint32_t ops;
	enum atomic_order (*order)(const void *a, const void *b);
	bool (*truth)(const void *a);
	void (*from_truth)(void *res, bool truth);
	void (*sum)(void *res, const void *a, const void *b);
	void (*prod)(void *res, const void *a, const void *b);
};

/* Declares a and b of type T, copied from the bytes at pa and pb. */
#define LOAD_PAIR(T, a, b, pa, pb)					\
	T a, b;								\
	memcpy(&a, (pa), sizeof(a));					\
	memcpy(&b, (pb), sizeof(b))

/*
 * The order of two values of type T. Written with the three comparisons so
 * that a NaN, for which all three are false, comes out as ORDER_NONE.
 */
#define DEFINE_ORDER(name, T)						\
static enum atomic_order name##_order(const void *pa, const void *pb)	\
{									\
	LOAD_PAIR(T, a, b, pa, pb);					\
									\
	if (a < b)							\
		return ORDER_LESS;					\
	if (a > b)							\
		return ORDER_GREATER;					\
	return a == b ? ORDER_EQUAL : ORDER_NONE;			\
}

/* Complex values are equal or not; the ordered ops are not offered. */
#define DEFINE_EQUALITY(name, T)					\
static enum atomic_order name##_order(const void *pa, const void *pb)	\
{									\
	LOAD_PAIR(T, a, b, pa, pb);					\
									\
	return a == b ? ORDER_EQUAL : ORDER_NONE;			\
}

/* A value is true when it is not zero (C's rule for ||, && and !). */
#define DEFINE_TRUTH(name, T)						\
static bool name##_truth(const void *pa)				\
{									\
	T a;								\
									\
	memcpy(&a, pa, sizeof(a));					\
	return a != 0;							\
}									\
									\
static void name##_from_truth(void *res, bool truth)			\
{									\
	T r = truth ? 1 : 0;						\
									\
	memcpy(res, &r, sizeof(r));					\
}

/*
 * Sum and product computed in type W: for integers the unsigned type of at
 * least their width (at least unsigned int, so that no promotion to int
 * can overflow), which wraps around instead of overflowing; the conversion
 * back to a signed T is modulo 2^bits (gcc and clang define it so). For
 * floating-point and complex types W is T itself.
 */
#define DEFINE_BINARY(fn, T, W, operator)				\
static void fn(void *res, const void *pa, const void *pb)		\
{									\
	LOAD_PAIR(T, a, b, pa, pb);					\
	const T r = (T) ((W) a operator (W) b);				\
									\
	memcpy(res, &r, sizeof(r));					\
}

#define DEFINE_ARITH(name, T, W)					\
	DEFINE_BINARY(name##_sum, T, W, +)				\
	DEFINE_BINARY(name##_prod, T, W, *)

#define DEFINE_ORDERED_TYPE(name, T, W)					\
	DEFINE_ORDER(name, T)						\
	DEFINE_TRUTH(name, T)						\
	DEFINE_ARITH(name, T, W)

#define DEFINE_COMPLEX_TYPE(name, T)					\
	DEFINE_EQUALITY(name, T)					\
	DEFINE_TRUTH(name, T)						\
	DEFINE_ARITH(name, T, T)

DEFINE_ORDERED_TYPE(int8, int8_t, uint32_t)
DEFINE_ORDERED_TYPE(uint8, uint8_t, uint32_t)
DEFINE_ORDERED_TYPE(int16, int16_t, uint32_t)
DEFINE_ORDERED_TYPE(uint16, uint16_t, uint32_t)
DEFINE_ORDERED_TYPE(int32, int32_t, uint32_t)
DEFINE_ORDERED_TYPE(uint32, uint32_t, uint32_t)
DEFINE_ORDERED_TYPE(int64, int64_t, uint64_t)
DEFINE_ORDERED_TYPE(uint64, uint64_t, uint64_t)
DEFINE_ORDERED_TYPE(flt, float, float)
DEFINE_ORDERED_TYPE(dbl, double, double)
DEFINE_ORDERED_TYPE(ldbl, long double, long double)
DEFINE_COMPLEX_TYPE(cflt, float complex)
DEFINE_COMPLEX_TYPE(cdbl, double complex)
DEFINE_COMPLEX_TYPE(cldbl, long double complex)
#ifdef __SIZEOF_INT128__
DEFINE_ORDERED_TYPE(int128, __int128, unsigned __int128)
DEFINE_ORDERED_TYPE(uint128, unsigned __int128, unsigned __int128)
#endif

#define TYPE_ENTRY(name, T, class_ops)					\
	{ sizeof(T), class_ops, name##_order, name##_truth,		\
	  name##_from_truth, name##_sum, name##_prod }

static const struct atomic_type atomic_types[] = {
	[FI_INT8] = TYPE_ENTRY(int8, int8_t, OPS_INTEGER),
	[FI_UINT8] = TYPE_ENTRY(uint8, uint8_t, OPS_INTEGER),
	[FI_INT16] = TYPE_ENTRY(int16, int16_t, OPS_INTEGER),
	[FI_UINT16] = TYPE_ENTRY(uint16, uint16_t, OPS_INTEGER),
	[FI_INT32] = TYPE_ENTRY(int32, int32_t, OPS_INTEGER),
	[FI_UINT32] = TYPE_ENTRY(uint32, uint32_t, OPS_INTEGER),
	[FI_INT64] = TYPE_ENTRY(int64, int64_t, OPS_INTEGER),
	[FI_UINT64] = TYPE_ENTRY(uint64, uint64_t, OPS_INTEGER),
	[FI_FLOAT] = TYPE_ENTRY(flt, float, OPS_REAL),
	[FI_DOUBLE] = TYPE_ENTRY(dbl, double, OPS_REAL),
	[FI_FLOAT_COMPLEX] = TYPE_ENTRY(cflt, float complex, OPS_COMPLEX),
	[FI_DOUBLE_COMPLEX] = TYPE_ENTRY(cdbl, double complex, OPS_COMPLEX),
	[FI_LONG_DOUBLE] = TYPE_ENTRY(ldbl, long double, OPS_REAL),
	[FI_LONG_DOUBLE_COMPLEX] = TYPE_ENTRY(cldbl, long double complex,
					      OPS_COMPLEX),
#ifdef __SIZEOF_INT128__
	[FI_INT128] = TYPE_ENTRY(int128, __int128, OPS_INTEGER),
	[FI_UINT128] = TYPE_ENTRY(uint128, unsigned __int128, OPS_INTEGER),
#else
	/* Known values, no type to compute them with: -EOPNOTSUPP. */
	[FI_UINT128] = { 0 },
#endif
};

_Static_assert(sizeof(long double complex) <= MRAIL_ATOMIC_MAX_SIZE,
	       "MRAIL_ATOMIC_MAX_SIZE holds every datatype");

/*
 * The type entry for datatype when op on it is computed at all (whatever
 * the kind): -EINVAL outside the enums, -EOPNOTSUPP when not.
 */
static int atomic_lookup(enum fi_op op, enum fi_datatype datatype,
			 const struct atomic_type **type)
{
	const struct atomic_type *t;

	if ((unsigned int) op >= (unsigned int) FI_ATOMIC_OP_LAST ||
	    (unsigned int) datatype >= ARRAY_SIZE(atomic_types))
		return -EINVAL;
	t = &atomic_types[datatype];
	if (!t->size || !(t->ops & OP_BIT(op)))
		return -EOPNOTSUPP;
	*type = t;
	return 0;
}

int mrail_atomic_valid(enum mrail_atomic_kind kind, enum fi_op op,
		       enum fi_datatype datatype, size_t *size)
{
	const struct atomic_type *type;
	int ret;

	if ((unsigned int) kind >= MRAIL_ATOMIC_KIND_COUNT)
		return -EINVAL;
	ret = atomic_lookup(op, datatype, &type);
	if (ret)
		return ret;
	if (!(kind_ops[kind] & OP_BIT(op)))
		return -EOPNOTSUPP;
	if (size)
		*size = type->size;
	return 0;
}

int mrail_atomic_kind_from_flags(uint64_t flags, enum mrail_atomic_kind *kind)
{
	if (flags & ~(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC | FI_TAGGED))
		return -EINVAL;
	if ((flags & FI_FETCH_ATOMIC) && (flags & FI_COMPARE_ATOMIC))
		return -EINVAL;
	if (flags & FI_TAGGED)
		return -EOPNOTSUPP;
	if (flags & FI_FETCH_ATOMIC)
		*kind = MRAIL_ATOMIC_FETCH;
	else if (flags & FI_COMPARE_ATOMIC)
		*kind = MRAIL_ATOMIC_COMPARE;
	else
		*kind = MRAIL_ATOMIC_PLAIN;
	return 0;
}

uint64_t mrail_atomic_access(enum mrail_atomic_kind kind, enum fi_op op)
{
	if ((unsigned int) kind >= MRAIL_ATOMIC_KIND_COUNT ||
	    (unsigned int) op >= (unsigned int) FI_ATOMIC_OP_LAST)
		return 0;
	if (kind == MRAIL_ATOMIC_PLAIN)
		return FI_REMOTE_WRITE;
	if (op == FI_ATOMIC_READ)
		return FI_REMOTE_READ;
	return FI_REMOTE_READ | FI_REMOTE_WRITE;
}

int mrail_atomic_len(enum mrail_atomic_kind kind, enum fi_op op,
		     enum fi_datatype datatype, size_t count,
		     struct mrail_atomic_len *len)
{
	size_t size, bytes;
	int ret;

	ret = mrail_atomic_valid(kind, op, datatype, &size);
	if (ret)
		return ret;
	if (!count)
		return -EINVAL;
	if (count > SIZE_MAX / size)
		return -EOVERFLOW;
	bytes = count * size;
	len->operand = op == FI_ATOMIC_READ ? 0 : bytes;
	len->compare = kind == MRAIL_ATOMIC_COMPARE ? bytes : 0;
	len->result = kind == MRAIL_ATOMIC_PLAIN ? 0 : bytes;
	return 0;
}

/* Whether a conditional swap takes the operand, given how compare stands
 * against the target (fi_atomic(3): "if (compare[i] <= addr[i])" ...). */
static bool swap_condition(enum fi_op op, enum atomic_order cmp_vs_target)
{
	switch (op) {
	case FI_CSWAP:
		return cmp_vs_target == ORDER_EQUAL;
	case FI_CSWAP_NE:
		return cmp_vs_target != ORDER_EQUAL;
	case FI_CSWAP_LE:
		return cmp_vs_target == ORDER_LESS ||
		       cmp_vs_target == ORDER_EQUAL;
	case FI_CSWAP_LT:
		return cmp_vs_target == ORDER_LESS;
	case FI_CSWAP_GE:
		return cmp_vs_target == ORDER_GREATER ||
		       cmp_vs_target == ORDER_EQUAL;
	case FI_CSWAP_GT:
		return cmp_vs_target == ORDER_GREATER;
	default:
		return false;
	}
}

/* The bitwise ops, byte by byte: the same bits whatever the byte order. */
static void apply_bitwise(enum fi_op op, size_t size, unsigned char *res,
			  const unsigned char *t, const unsigned char *o,
			  const unsigned char *c)
{
	size_t k;

	for (k = 0; k < size; k++) {
		switch (op) {
		case FI_BOR:
			res[k] = t[k] | o[k];
			break;
		case FI_BAND:
			res[k] = t[k] & o[k];
			break;
		case FI_BXOR:
			res[k] = t[k] ^ o[k];
			break;
		default: /* FI_MSWAP */
			res[k] = (o[k] & c[k]) | (t[k] & ~c[k]);
			break;
		}
	}
}

/*
 * The new value of one element, into res, from the target's value t, the
 * operand o and the compare data c (o and c are NULL when not needed).
 */
static void apply_element(const struct atomic_type *type, enum fi_op op,
			  unsigned char *res, const unsigned char *t,
			  const unsigned char *o, const unsigned char *c)
{
	bool take_operand;

	switch (op) {
	case FI_SUM:
		type->sum(res, t, o);
		return;
	case FI_PROD:
		type->prod(res, t, o);
		return;
	case FI_LOR:
		type->from_truth(res, type->truth(t) || type->truth(o));
		return;
	case FI_LAND:
		type->from_truth(res, type->truth(t) && type->truth(o));
		return;
	case FI_LXOR:
		type->from_truth(res, type->truth(t) != type->truth(o));
		return;
	case FI_BOR:
	case FI_BAND:
	case FI_BXOR:
	case FI_MSWAP:
		apply_bitwise(op, type->size, res, t, o, c);
		return;
	case FI_MIN:
		take_operand = type->order(o, t) == ORDER_LESS;
		break;
	case FI_MAX:
		take_operand = type->order(o, t) == ORDER_GREATER;
		break;
	case FI_ATOMIC_WRITE:
		take_operand = true;
		break;
	case FI_ATOMIC_READ:
		take_operand = false;
		break;
	default: /* the conditional swaps */
		take_operand = swap_condition(op, type->order(c, t));
		break;
	}
	memcpy(res, take_operand ? o : t, type->size);
}

static bool op_needs_compare(enum fi_op op)
{
	return OP_BIT(op) & OPS_SWAP;
}

int mrail_atomic_apply(enum fi_op op, enum fi_datatype datatype, void *target,
		       const void *operand, const void *compare,
		       void *fetch_out, size_t count)
{
	const struct atomic_type *type;
	unsigned char *tgt = target, *fetch = fetch_out;
	const unsigned char *opd = operand, *cmp = NULL;
	size_t i, off;
	int ret;

	ret = atomic_lookup(op, datatype, &type);
	if (ret)
		return ret;
	if (!count)
		return 0;
	if (op_needs_compare(op))
		cmp = compare;
	if (!tgt || (!opd && op != FI_ATOMIC_READ) ||
	    (!cmp && op_needs_compare(op)) ||
	    (!fetch && op == FI_ATOMIC_READ))
		return -EINVAL;

	for (i = 0; i < count; i++) {
		unsigned char old[MRAIL_ATOMIC_MAX_SIZE];
		unsigned char res[MRAIL_ATOMIC_MAX_SIZE];

		off = i * type->size;
		/* Operand and compare are read before fetch_out is written:
		 * fetch_out may be either of them. */
		memcpy(old, tgt + off, type->size);
		apply_element(type, op, res, old, opd ? opd + off : NULL,
			      cmp ? cmp + off : NULL);
		if (fetch)
			memcpy(fetch + off, old, type->size);
		memcpy(tgt + off, res, type->size);
	}
	return 0;
}
