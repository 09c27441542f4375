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
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "addr_codec.h"
#include "mrail_err.h"

static const uint8_t addr_magic[3] = { 'm', 'r', 'a' };

/* Offsets of the header fields. */
#define HDR_VERSION	3
#define HDR_RAIL_COUNT	4
#define HDR_FLAGS	5
#define HDR_RESERVED	6

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

/* ---- encoding ---- */

/* Names filled in by a caller are not trusted to be terminated either. */
static size_t stack_len(const struct mrail_rail_addr *rail)
{
	return strnlen(rail->stack, sizeof(rail->stack));
}

static bool addr_is_encodable(const struct mrail_addr *addr)
{
	const struct mrail_rail_addr *rail;
	unsigned i;

	if (check_rail_count(NULL, addr->rail_count) ||
	    check_flags(NULL, addr->flags, addr->rail_count))
		return false;
	for (i = 0; i < addr->rail_count; i++) {
		rail = &addr->rails[i];
		if (check_stack_name(NULL, i + 1, (const uint8_t *) rail->stack,
				     stack_len(rail)) ||
		    check_core_addr_len(NULL, i + 1, rail->len))
			return false;
	}
	return true;
}

/* Returns 0 when addr breaks a rule, as no buffer could hold it then. */
size_t mrail_addr_encoded_len(const struct mrail_addr *addr)
{
	size_t len = MRAIL_ADDR_HEADER_LEN;
	unsigned i;

	if (!addr || !addr_is_encodable(addr))
		return 0;
	for (i = 0; i < addr->rail_count; i++)
		len += MRAIL_ADDR_RAIL_OVERHEAD + stack_len(&addr->rails[i]) +
		       addr->rails[i].len;
	return len;
}

static uint8_t *put_u8(uint8_t *p, uint8_t value)
{
	*p = value;
	return p + 1;
}

static uint8_t *put_le16(uint8_t *p, uint16_t value)
{
	p[0] = (uint8_t) value;
	p[1] = (uint8_t) (value >> 8);
	return p + 2;
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
	size_t name_len = stack_len(rail);

	p = put_u8(p, (uint8_t) name_len);
	p = put_bytes(p, rail->stack, name_len);
	p = put_le32(p, rail->format);
	p = put_le16(p, rail->len);
	return put_bytes(p, rail->bytes, rail->len);
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
	p = put_le16(p, 0);
	for (i = 0; i < addr->rail_count; i++)
		p = encode_rail(p, &addr->rails[i]);
	return p - start;
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

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t) (p[0] | p[1] << 8);
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
	uint16_t reserved;
	int ret;

	if (magic_len && memcmp(hdr, addr_magic, magic_len))
		return codec_refuse(&r->err,
			"not an mrail address: it does not start with \"mra\"");
	if (r->len < MRAIL_ADDR_HEADER_LEN)
		return codec_refuse(&r->err,
			"mrail address is truncated: %zu bytes, the header "
			"alone is %d", r->len, MRAIL_ADDR_HEADER_LEN);
	if (hdr[HDR_VERSION] != MRAIL_ADDR_VERSION)
		return codec_refuse(&r->err,
			"mrail address version %u is not supported (this mrail "
			"speaks version %d)", hdr[HDR_VERSION],
			MRAIL_ADDR_VERSION);

	ret = check_rail_count(&r->err, hdr[HDR_RAIL_COUNT]);
	if (ret)
		return ret;
	ret = check_flags(&r->err, hdr[HDR_FLAGS], hdr[HDR_RAIL_COUNT]);
	if (ret)
		return ret;
	reserved = get_le16(&hdr[HDR_RESERVED]);
	if (reserved)
		return codec_refuse(&r->err,
			"mrail address reserved field is 0x%04x, must be zero",
			reserved);

	addr->rail_count = hdr[HDR_RAIL_COUNT];
	addr->flags = hdr[HDR_FLAGS];
	r->off = MRAIL_ADDR_HEADER_LEN;
	return 0;
}

static int decode_rail(struct addr_reader *r, unsigned rail,
		       struct mrail_rail_addr *out)
{
	const uint8_t *p;
	uint8_t stack_len;
	int ret;

	p = reader_take(r, 1, rail, "stack name length");
	if (!p)
		return -EINVAL;
	stack_len = *p;
	/* Checked before the name is read, so that a length of 0 or 255 is
	 * reported as what it is rather than as truncation. */
	ret = check_stack_name_len(&r->err, rail, stack_len);
	if (ret)
		return ret;

	p = reader_take(r, stack_len, rail, "stack name");
	if (!p)
		return -EINVAL;
	ret = check_stack_name(&r->err, rail, p, stack_len);
	if (ret)
		return ret;
	memcpy(out->stack, p, stack_len);
	out->stack[stack_len] = '\0';

	p = reader_take(r, 4, rail, "core address format");
	if (!p)
		return -EINVAL;
	out->format = get_le32(p);

	p = reader_take(r, 2, rail, "core address length");
	if (!p)
		return -EINVAL;
	out->len = get_le16(p);
	ret = check_core_addr_len(&r->err, rail, out->len);
	if (ret)
		return ret;

	p = reader_take(r, out->len, rail, "core address");
	if (!p)
		return -EINVAL;
	memcpy(out->bytes, p, out->len);
	return 0;
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
