/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The mrail endpoint address blob (layout in addr_codec.h).
 *
 * Decoding treats the bytes as hostile: every read is checked against the
 * bytes that remain, every field against its range, and only one encoding
 * of any address is accepted, so that decode followed by encode gives back
 * the very same bytes. The encoder refuses whatever the decoder would, so a
 * bad local address is caught here rather than by every peer.
 *
 * Rails are numbered from 1 in messages, as in FI_MRAIL_RAILS.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "addr_codec.h"
#include "mrail_err.h"

static const uint8_t addr_magic[3] = { 'm', 'r', 'a' };

/* Offsets of the header fields. */
#define HDR_VERSION	3
#define HDR_RAIL_COUNT	4
#define HDR_FLAGS	5

/*
 * Stacks a rail descriptor names by index (1-based), so that the common
 * ones cost no bytes. This table is part of the wire format: entries are
 * only ever appended (up to 31), never reordered or removed, without a new
 * MRAIL_ADDR_VERSION. Any other stack travels inline by name.
 */
static const char *const known_stacks[] = {
	"tcp;ofi_rxm",		/* 1 */
	"udp;ofi_rxd",		/* 2 */
	"verbs;ofi_rxm",	/* 3 */
	"verbs;ofi_rxd",	/* 4 */
	"psm3",			/* 5 */
	"psm2",			/* 6 */
	"opx",			/* 7 */
	"efa",			/* 8 */
	"cxi",			/* 9 */
	"sockets",		/* 10 */
	"net;ofi_rxm",		/* 11 */
	"net",			/* 12 */
	"tcp",			/* 13 */
	"ucx",			/* 14 */
	"shm",			/* 15 */
};

#define KNOWN_STACKS (sizeof(known_stacks) / sizeof(known_stacks[0]))

_Static_assert(KNOWN_STACKS <= MRAIL_ADDR_STACK_MASK,
	       "a stack index must fit the descriptor's low bits");
_Static_assert(MRAIL_RAIL_ADDR_MAX <= UINT8_MAX,
	       "the raw form's length is one byte");

/* What the compact forms write per rail after the descriptor. */
#define IPV4_FORM_LEN	(4 + 2)
#define IPV6_FORM_LEN	(16 + 2)
#define RAW_FORM_FIXED	(4 + 1)

/* Where decode_* explain what is wrong; err may be NULL when nobody asks. */
struct codec_err {
	char *buf;
	size_t len;
};

static int codec_refuse(const struct codec_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int codec_refuse(const struct codec_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		mrail_vwrite_err(err->buf, err->len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---- rules shared by the encoder and the decoder ---- */

static int check_rail_count(const struct codec_err *err, unsigned count)
{
	if (count < 1 || count > MRAIL_MAX_RAILS)
		return codec_refuse(err,
			"mrail address has %u rails, must have 1..%d",
			count, MRAIL_MAX_RAILS);
	return 0;
}

static int check_flags(const struct codec_err *err, unsigned flags,
		       unsigned count)
{
	unsigned unknown = flags & ~(unsigned) MRAIL_ADDR_KNOWN_FLAGS;

	if (unknown)
		return codec_refuse(err,
			"mrail address has unknown flag bits 0x%02x (flags 0x%02x)",
			unknown, flags);
	if ((flags & MRAIL_ADDR_FLAG_PARTIAL) && count != 1)
		return codec_refuse(err,
			"partial mrail address has %u rails, must have exactly 1",
			count);
	return 0;
}

static bool stack_char_is_valid(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == ';';
}

static int check_stack_name_len(const struct codec_err *err, unsigned rail,
				size_t len)
{
	if (len < 1 || len > MRAIL_STACK_NAME_MAX - 1)
		return codec_refuse(err,
			"rail %u stack name length %zu is out of range (1..%d)",
			rail, len, MRAIL_STACK_NAME_MAX - 1);
	return 0;
}

static int check_stack_name(const struct codec_err *err, unsigned rail,
			    const uint8_t *name, size_t len)
{
	size_t i;
	int ret;

	ret = check_stack_name_len(err, rail, len);
	if (ret)
		return ret;
	for (i = 0; i < len; i++) {
		if (!stack_char_is_valid(name[i]))
			return codec_refuse(err,
				"rail %u stack name has byte 0x%02x at "
				"position %zu; only a-z, 0-9, '_' and ';' "
				"are allowed",
				rail, name[i], i + 1);
	}
	/* Only now is the name safe to print. */
	for (i = 0; i < len; i++) {
		if (name[i] == ';' &&
		    (i == 0 || i == len - 1 || name[i - 1] == ';'))
			return codec_refuse(err,
				"rail %u stack name \"%.*s\" has an empty "
				"provider name (a leading, trailing or "
				"doubled ';')",
				rail, (int) len, (const char *) name);
	}
	return 0;
}

static int check_core_addr_len(const struct codec_err *err, unsigned rail,
			       unsigned len)
{
	if (len < 1 || len > MRAIL_RAIL_ADDR_MAX)
		return codec_refuse(err,
			"rail %u core address length %u is out of range (1..%d)",
			rail, len, MRAIL_RAIL_ADDR_MAX);
	return 0;
}

/* ---- the stack table and the address forms ---- */

unsigned mrail_addr_stack_count(void)
{
	return KNOWN_STACKS;
}

const char *mrail_addr_stack_name(unsigned index)
{
	if (index < 1 || index > KNOWN_STACKS)
		return NULL;
	return known_stacks[index - 1];
}

static unsigned stack_index_of(const char *name, size_t len)
{
	unsigned i;

	for (i = 0; i < KNOWN_STACKS; i++) {
		if (strlen(known_stacks[i]) == len &&
		    !memcmp(known_stacks[i], name, len))
			return i + 1;
	}
	return MRAIL_ADDR_STACK_INLINE;
}

unsigned mrail_addr_stack_index(const char *stack)
{
	if (!stack)
		return MRAIL_ADDR_STACK_INLINE;
	return stack_index_of(stack, strnlen(stack, MRAIL_STACK_NAME_MAX));
}

static const char *form_name(unsigned form)
{
	switch (form) {
	case MRAIL_ADDR_FORM_IPV4:
		return "IPv4";
	case MRAIL_ADDR_FORM_IPV6:
		return "IPv6";
	case MRAIL_ADDR_FORM_RAW:
		return "raw";
	default:
		return "unknown";
	}
}

/* The only sockaddr_in the IPv4 form stands for: family, address and port
 * set, everything else zero. */
static void ipv4_canonical(struct mrail_rail_addr *rail, const uint8_t ip[4],
			   const uint8_t port[2])
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	memcpy(&sin.sin_addr, ip, 4);
	memcpy(&sin.sin_port, port, 2);
	rail->format = MRAIL_ADDR_FORMAT_SOCKADDR_IN;
	rail->len = sizeof(sin);
	memcpy(rail->bytes, &sin, sizeof(sin));
}

static void ipv6_canonical(struct mrail_rail_addr *rail, const uint8_t ip[16],
			   const uint8_t port[2])
{
	struct sockaddr_in6 sin6;

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	memcpy(&sin6.sin6_addr, ip, 16);
	memcpy(&sin6.sin6_port, port, 2);
	rail->format = MRAIL_ADDR_FORMAT_SOCKADDR_IN6;
	rail->len = sizeof(sin6);
	memcpy(rail->bytes, &sin6, sizeof(sin6));
}

/* Whether the canonical address built from rail's own fields is rail: a
 * core address with a flow label, a scope, a stray family or stray padding
 * is not what a compact form would give back, so it goes raw. */
static bool rail_is_ipv4(const struct mrail_rail_addr *rail)
{
	struct mrail_rail_addr canon;
	struct sockaddr_in sin;

	if (rail->format != MRAIL_ADDR_FORMAT_SOCKADDR_IN ||
	    rail->len != sizeof(sin))
		return false;
	memcpy(&sin, rail->bytes, sizeof(sin));
	ipv4_canonical(&canon, (const uint8_t *) &sin.sin_addr,
		       (const uint8_t *) &sin.sin_port);
	return !memcmp(canon.bytes, rail->bytes, sizeof(sin));
}

static bool rail_is_ipv6(const struct mrail_rail_addr *rail)
{
	struct mrail_rail_addr canon;
	struct sockaddr_in6 sin6;

	if (rail->format != MRAIL_ADDR_FORMAT_SOCKADDR_IN6 ||
	    rail->len != sizeof(sin6))
		return false;
	memcpy(&sin6, rail->bytes, sizeof(sin6));
	ipv6_canonical(&canon, (const uint8_t *) &sin6.sin6_addr,
		       (const uint8_t *) &sin6.sin6_port);
	return !memcmp(canon.bytes, rail->bytes, sizeof(sin6));
}

enum mrail_addr_form mrail_addr_rail_form(const struct mrail_rail_addr *rail)
{
	if (rail_is_ipv4(rail))
		return MRAIL_ADDR_FORM_IPV4;
	if (rail_is_ipv6(rail))
		return MRAIL_ADDR_FORM_IPV6;
	return MRAIL_ADDR_FORM_RAW;
}

/* ---- encoding ---- */

/* Names filled in by a caller are not trusted to be terminated either. */
static size_t stack_len(const struct mrail_rail_addr *rail)
{
	return strnlen(rail->stack, sizeof(rail->stack));
}

static bool rail_is_encodable(const struct mrail_rail_addr *rail, unsigned n)
{
	return !check_stack_name(NULL, n, (const uint8_t *) rail->stack,
				 stack_len(rail)) &&
	       !check_core_addr_len(NULL, n, rail->len);
}

static bool addr_is_encodable(const struct mrail_addr *addr)
{
	unsigned i;

	if (check_rail_count(NULL, addr->rail_count) ||
	    check_flags(NULL, addr->flags, addr->rail_count))
		return false;
	for (i = 0; i < addr->rail_count; i++) {
		if (!rail_is_encodable(&addr->rails[i], i + 1))
			return false;
	}
	return true;
}

/* For a rail already known to be encodable. */
static size_t rail_len(const struct mrail_rail_addr *rail)
{
	size_t len = 1;

	if (mrail_addr_stack_index(rail->stack) == MRAIL_ADDR_STACK_INLINE)
		len += 1 + stack_len(rail);
	switch (mrail_addr_rail_form(rail)) {
	case MRAIL_ADDR_FORM_IPV4:
		return len + IPV4_FORM_LEN;
	case MRAIL_ADDR_FORM_IPV6:
		return len + IPV6_FORM_LEN;
	default:
		return len + RAW_FORM_FIXED + rail->len;
	}
}

size_t mrail_addr_rail_encoded_len(const struct mrail_rail_addr *rail)
{
	if (!rail || !rail_is_encodable(rail, 1))
		return 0;
	return rail_len(rail);
}

/* Returns 0 when addr breaks a rule, as no buffer could hold it then. */
size_t mrail_addr_encoded_len(const struct mrail_addr *addr)
{
	size_t len = MRAIL_ADDR_HEADER_LEN;
	unsigned i;

	if (!addr || !addr_is_encodable(addr))
		return 0;
	for (i = 0; i < addr->rail_count; i++)
		len += rail_len(&addr->rails[i]);
	return len;
}

static uint8_t *put_u8(uint8_t *p, uint8_t value)
{
	*p = value;
	return p + 1;
}

static uint8_t *put_le32(uint8_t *p, uint32_t value)
{
	p[0] = (uint8_t) value;
	p[1] = (uint8_t) (value >> 8);
	p[2] = (uint8_t) (value >> 16);
	p[3] = (uint8_t) (value >> 24);
	return p + 4;
}

static uint8_t *put_bytes(uint8_t *p, const void *bytes, size_t len)
{
	memcpy(p, bytes, len);
	return p + len;
}

static uint8_t *encode_rail(uint8_t *p, const struct mrail_rail_addr *rail)
{
	unsigned stack = mrail_addr_stack_index(rail->stack);
	enum mrail_addr_form form = mrail_addr_rail_form(rail);
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;
	size_t name_len;

	p = put_u8(p, (uint8_t) (form << MRAIL_ADDR_FORM_SHIFT | stack));
	if (stack == MRAIL_ADDR_STACK_INLINE) {
		name_len = stack_len(rail);
		p = put_u8(p, (uint8_t) name_len);
		p = put_bytes(p, rail->stack, name_len);
	}
	switch (form) {
	case MRAIL_ADDR_FORM_IPV4:
		memcpy(&sin, rail->bytes, sizeof(sin));
		p = put_bytes(p, &sin.sin_addr, 4);
		return put_bytes(p, &sin.sin_port, 2);
	case MRAIL_ADDR_FORM_IPV6:
		memcpy(&sin6, rail->bytes, sizeof(sin6));
		p = put_bytes(p, &sin6.sin6_addr, 16);
		return put_bytes(p, &sin6.sin6_port, 2);
	default:
		p = put_le32(p, rail->format);
		p = put_u8(p, (uint8_t) rail->len);
		return put_bytes(p, rail->bytes, rail->len);
	}
}

ssize_t mrail_addr_encode(const struct mrail_addr *addr, void *buf, size_t len)
{
	uint8_t *start = buf, *p = buf;
	size_t need;
	unsigned i;

	need = mrail_addr_encoded_len(addr);
	if (!need)
		return -EINVAL;
	if (len < need)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;

	p = put_bytes(p, addr_magic, sizeof(addr_magic));
	p = put_u8(p, MRAIL_ADDR_VERSION);
	p = put_u8(p, addr->rail_count);
	p = put_u8(p, addr->flags);
	for (i = 0; i < addr->rail_count; i++)
		p = encode_rail(p, &addr->rails[i]);
	return p - start;
}

uint64_t mrail_addr_key(const struct mrail_addr *addr)
{
	uint8_t encoded[MRAIL_ADDR_MAX_LEN];
	uint64_t hash = 0xcbf29ce484222325ULL;	/* FNV-1a 64 offset basis */
	ssize_t len, i;

	len = mrail_addr_encode(addr, encoded, sizeof(encoded));
	if (len <= 0)
		return 0;
	for (i = 0; i < len; i++) {
		hash ^= encoded[i];
		hash *= 0x100000001b3ULL;	/* FNV-1a 64 prime */
	}
	/* 0 means "no key" to callers. */
	return hash ? hash : 1;
}

/* ---- decoding ---- */

struct addr_reader {
	const uint8_t *buf;
	size_t len;
	size_t off;
	struct codec_err err;
};

static size_t reader_left(const struct addr_reader *r)
{
	return r->len - r->off;
}

/* The next n bytes, or NULL after refusing with what was cut off. */
static const uint8_t *reader_take(struct addr_reader *r, size_t n,
				  unsigned rail, const char *field)
{
	const uint8_t *bytes;

	if (reader_left(r) < n) {
		codec_refuse(&r->err,
			"mrail address is truncated: rail %u %s needs %zu "
			"bytes at offset %zu, %zu remain of %zu",
			rail, field, n, r->off, reader_left(r), r->len);
		return NULL;
	}
	bytes = r->buf + r->off;
	r->off += n;
	return bytes;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
	       (uint32_t) p[3] << 24;
}

/* A blob that is not ours at all is told apart from one that is cut short. */
static int decode_header(struct addr_reader *r, struct mrail_addr *addr)
{
	const uint8_t *hdr = r->buf;
	size_t magic_len = r->len < sizeof(addr_magic) ?
			   r->len : sizeof(addr_magic);
	int ret;

	if (magic_len && memcmp(hdr, addr_magic, magic_len))
		return codec_refuse(&r->err,
			"not an mrail address: it does not start with \"mra\"");
	/* The version comes first: an older mrail's blob is named as such
	 * even when it is shorter than this header. */
	if (r->len > HDR_VERSION && hdr[HDR_VERSION] != MRAIL_ADDR_VERSION)
		return codec_refuse(&r->err,
			"mrail address version %u is not supported (this mrail "
			"speaks version %d; every process must run the same "
			"mrail)", hdr[HDR_VERSION], MRAIL_ADDR_VERSION);
	if (r->len < MRAIL_ADDR_HEADER_LEN)
		return codec_refuse(&r->err,
			"mrail address is truncated: %zu bytes, the header "
			"alone is %d", r->len, MRAIL_ADDR_HEADER_LEN);

	ret = check_rail_count(&r->err, hdr[HDR_RAIL_COUNT]);
	if (ret)
		return ret;
	ret = check_flags(&r->err, hdr[HDR_FLAGS], hdr[HDR_RAIL_COUNT]);
	if (ret)
		return ret;

	addr->rail_count = hdr[HDR_RAIL_COUNT];
	addr->flags = hdr[HDR_FLAGS];
	r->off = MRAIL_ADDR_HEADER_LEN;
	return 0;
}

static int decode_inline_stack(struct addr_reader *r, unsigned rail,
			       struct mrail_rail_addr *out)
{
	const uint8_t *p;
	unsigned index;
	uint8_t len;
	int ret;

	p = reader_take(r, 1, rail, "stack name length");
	if (!p)
		return -EINVAL;
	len = *p;
	/* Checked before the name is read, so that a length of 0 or 255 is
	 * reported as what it is rather than as truncation. */
	ret = check_stack_name_len(&r->err, rail, len);
	if (ret)
		return ret;

	p = reader_take(r, len, rail, "stack name");
	if (!p)
		return -EINVAL;
	ret = check_stack_name(&r->err, rail, p, len);
	if (ret)
		return ret;
	index = stack_index_of((const char *) p, len);
	if (index != MRAIL_ADDR_STACK_INLINE)
		return codec_refuse(&r->err,
			"rail %u stack name \"%.*s\" is written inline, but "
			"it is known stack %u and must be written as that",
			rail, (int) len, (const char *) p, index);
	memcpy(out->stack, p, len);
	out->stack[len] = '\0';
	return 0;
}

static int decode_stack(struct addr_reader *r, unsigned rail, unsigned index,
			struct mrail_rail_addr *out)
{
	if (index == MRAIL_ADDR_STACK_INLINE)
		return decode_inline_stack(r, rail, out);
	if (index > KNOWN_STACKS)
		return codec_refuse(&r->err,
			"rail %u names stack %u, this mrail knows stacks "
			"1..%zu (a newer peer should write it inline)",
			rail, index, KNOWN_STACKS);
	/* The table's names are shorter than the array (checked by tests). */
	strcpy(out->stack, known_stacks[index - 1]);
	return 0;
}

static int decode_raw(struct addr_reader *r, unsigned rail,
		      struct mrail_rail_addr *out)
{
	const uint8_t *p;
	int ret;

	p = reader_take(r, 4, rail, "core address format");
	if (!p)
		return -EINVAL;
	out->format = get_le32(p);

	p = reader_take(r, 1, rail, "core address length");
	if (!p)
		return -EINVAL;
	out->len = *p;
	ret = check_core_addr_len(&r->err, rail, out->len);
	if (ret)
		return ret;

	p = reader_take(r, out->len, rail, "core address");
	if (!p)
		return -EINVAL;
	memcpy(out->bytes, p, out->len);

	/* One encoding per address: what a compact form carries must use it. */
	if (mrail_addr_rail_form(out) != MRAIL_ADDR_FORM_RAW)
		return codec_refuse(&r->err,
			"rail %u core address is in the raw form but is a "
			"plain %s socket address, which must use the %s form",
			rail, form_name(mrail_addr_rail_form(out)),
			form_name(mrail_addr_rail_form(out)));
	return 0;
}

static int decode_core_addr(struct addr_reader *r, unsigned rail,
			    unsigned form, struct mrail_rail_addr *out)
{
	const uint8_t *p;

	switch (form) {
	case MRAIL_ADDR_FORM_IPV4:
		p = reader_take(r, IPV4_FORM_LEN, rail, "IPv4 address and port");
		if (!p)
			return -EINVAL;
		ipv4_canonical(out, p, p + 4);
		return 0;
	case MRAIL_ADDR_FORM_IPV6:
		p = reader_take(r, IPV6_FORM_LEN, rail, "IPv6 address and port");
		if (!p)
			return -EINVAL;
		ipv6_canonical(out, p, p + 16);
		return 0;
	default:
		return decode_raw(r, rail, out);
	}
}

static int decode_rail(struct addr_reader *r, unsigned rail,
		       struct mrail_rail_addr *out)
{
	const uint8_t *p;
	unsigned form;
	int ret;

	p = reader_take(r, 1, rail, "descriptor");
	if (!p)
		return -EINVAL;
	form = *p >> MRAIL_ADDR_FORM_SHIFT;
	if (form != MRAIL_ADDR_FORM_IPV4 && form != MRAIL_ADDR_FORM_IPV6 &&
	    form != MRAIL_ADDR_FORM_RAW)
		return codec_refuse(&r->err,
			"rail %u descriptor 0x%02x has address form %u, "
			"must be 1 (IPv4), 2 (IPv6) or 3 (raw)",
			rail, *p, form);

	ret = decode_stack(r, rail, *p & MRAIL_ADDR_STACK_MASK, out);
	if (ret)
		return ret;
	return decode_core_addr(r, rail, form, out);
}

/* exact: the address must end where the buffer does. */
static int decode_rails(struct addr_reader *r, struct mrail_addr *addr, bool exact)
{
	unsigned i;
	int ret;

	for (i = 0; i < addr->rail_count; i++) {
		ret = decode_rail(r, i + 1, &addr->rails[i]);
		if (ret)
			return ret;
	}
	if (exact && reader_left(r))
		return codec_refuse(&r->err,
			"mrail address has %zu stray byte%s after its last "
			"rail (rail %u ends at offset %zu of %zu)",
			reader_left(r), reader_left(r) == 1 ? "" : "s",
			addr->rail_count, r->off, r->len);
	return 0;
}

static int decode_addr(struct addr_reader *r, struct mrail_addr *addr, bool exact)
{
	int ret;

	if (!addr || (!r->buf && r->len))
		return codec_refuse(&r->err, "no mrail address to decode");

	/* Untouched fields (past a name or an address) are then zero, and a
	 * caller that ignores the return value finds no half-decoded rail. */
	memset(addr, 0, sizeof(*addr));
	ret = decode_header(r, addr);
	if (!ret)
		ret = decode_rails(r, addr, exact);
	if (ret)
		memset(addr, 0, sizeof(*addr));
	return ret;
}

int mrail_addr_decode(const void *buf, size_t len, struct mrail_addr *addr,
		      char *err, size_t err_len)
{
	struct addr_reader r = {
		.buf = buf, .len = len, .err = { .buf = err, .len = err_len },
	};

	return decode_addr(&r, addr, true);
}

int mrail_addr_decode_prefix(const void *buf, size_t len, struct mrail_addr *addr,
			     size_t *consumed, char *err, size_t err_len)
{
	struct addr_reader r = {
		.buf = buf, .len = len, .err = { .buf = err, .len = err_len },
	};
	int ret;

	ret = decode_addr(&r, addr, false);
	*consumed = ret ? 0 : r.off;
	return ret;
}

/* ---- compatibility ---- */

static int addr_shape_is_valid(const struct codec_err *err, const char *whose,
			       const struct mrail_addr *addr)
{
	if (addr->rail_count < 1 || addr->rail_count > MRAIL_MAX_RAILS)
		return codec_refuse(err,
			"%s address has %u rails, must have 1..%d",
			whose, addr->rail_count, MRAIL_MAX_RAILS);
	return 0;
}

static bool addr_is_partial(const struct mrail_addr *addr)
{
	return addr->flags & MRAIL_ADDR_FLAG_PARTIAL;
}

int mrail_addr_check_compatible(const struct mrail_addr *local,
				const struct mrail_addr *peer,
				char *err, size_t err_len)
{
	const struct codec_err cerr = { .buf = err, .len = err_len };
	const struct mrail_rail_addr *ours, *theirs;
	unsigned i, rails;
	int ret;

	if (!local || !peer)
		return codec_refuse(&cerr, "no address to compare");
	ret = addr_shape_is_valid(&cerr, "local", local);
	if (!ret)
		ret = addr_shape_is_valid(&cerr, "peer", peer);
	if (ret)
		return ret;

	/* A partial address only knows rail 1; the rest is learned later. */
	if (addr_is_partial(local) || addr_is_partial(peer)) {
		rails = 1;
	} else if (local->rail_count != peer->rail_count) {
		return codec_refuse(&cerr,
			"peer has %u rails, this endpoint has %u: every "
			"process must use the same rails (FI_MRAIL_RAILS)",
			peer->rail_count, local->rail_count);
	} else {
		rails = local->rail_count;
	}

	for (i = 0; i < rails; i++) {
		ours = &local->rails[i];
		theirs = &peer->rails[i];
		if (!strncmp(ours->stack, theirs->stack, sizeof(ours->stack)))
			continue;
		return codec_refuse(&cerr,
			"rail %u: peer uses \"%.*s\", this endpoint uses \"%.*s\"",
			i + 1, (int) stack_len(theirs), theirs->stack,
			(int) stack_len(ours), ours->stack);
	}
	return 0;
}

bool mrail_addr_same_rail(const struct mrail_addr *a, const struct mrail_addr *b,
			  unsigned rail)
{
	const struct mrail_rail_addr *x, *y;

	if (rail >= a->rail_count || rail >= b->rail_count ||
	    rail >= MRAIL_MAX_RAILS)
		return false;
	x = &a->rails[rail];
	y = &b->rails[rail];
	return !strncmp(x->stack, y->stack, sizeof(x->stack)) &&
	       x->format == y->format && x->len == y->len &&
	       x->len <= sizeof(x->bytes) && !memcmp(x->bytes, y->bytes, x->len);
}

int mrail_addr_make_partial(const char *stack, uint32_t format, const void *bytes,
			    size_t len, struct mrail_addr *addr)
{
	struct mrail_rail_addr *rail = &addr->rails[0];
	size_t name_len = strnlen(stack, MRAIL_STACK_NAME_MAX);

	memset(addr, 0, sizeof(*addr));
	if (!name_len || name_len >= MRAIL_STACK_NAME_MAX || !len ||
	    len > MRAIL_RAIL_ADDR_MAX)
		return -EINVAL;
	memcpy(rail->stack, stack, name_len);
	rail->format = format;
	rail->len = (uint16_t) len;
	memcpy(rail->bytes, bytes, len);
	addr->rail_count = 1;
	addr->flags = MRAIL_ADDR_FLAG_PARTIAL;
	/* Whatever the encoder would refuse is refused here already. */
	return mrail_addr_encoded_len(addr) ? 0 : -EINVAL;
}
