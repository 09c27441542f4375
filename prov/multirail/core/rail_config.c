/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FI_MRAIL_RAILS parsing (grammar in rail_config.h).
 *
 * Every refusal names the rail by its 1-based position and by its text as
 * the user wrote it: the message surfaces in a libfabric warning, far from
 * the environment variable that caused it, often on one host out of many.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "mrail_err.h"
#include "rail_config.h"

/* User text quoted in a message is cut here so that the reason still fits. */
#define SHOWN_TEXT_MAX 64
/* Every shown byte may need a four-character escape; then "..." and NUL. */
#define SHOWN_BUF_LEN (SHOWN_TEXT_MAX * 4 + 4)
/* A character shown as 'c' or as 0xNN. */
#define SHOWN_CHAR_LEN 8

struct text_span {
	const char *start;
	size_t len;
};

/* The rail being parsed and where to explain why it is refused. */
struct rail_parse {
	struct text_span text;	/* blanks around the rail already removed */
	size_t pos;		/* 1-based position in the list */
	char *err;
	size_t err_len;
};

static bool char_is_printable(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/*
 * Environment variables can hold anything, including control characters
 * that would garble a log line: those are escaped, and long text is cut.
 * buf must hold SHOWN_BUF_LEN bytes.
 */
static void show_text(struct text_span text, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t shown = text.len > SHOWN_TEXT_MAX ? SHOWN_TEXT_MAX : text.len;
	size_t i, out = 0;

	for (i = 0; i < shown; i++) {
		unsigned char c = (unsigned char) text.start[i];

		if (c == '"' || c == '\\') {
			buf[out++] = '\\';
			buf[out++] = (char) c;
		} else if (!char_is_printable(c)) {
			buf[out++] = '\\';
			buf[out++] = 'x';
			buf[out++] = hex[c >> 4];
			buf[out++] = hex[c & 0xf];
		} else {
			buf[out++] = (char) c;
		}
	}
	if (shown < text.len) {
		memcpy(&buf[out], "...", 3);
		out += 3;
	}
	buf[out] = '\0';
}

/* buf must hold SHOWN_CHAR_LEN bytes. */
static void show_char(char c, char *buf)
{
	unsigned char byte = (unsigned char) c;

	if (char_is_printable(byte))
		snprintf(buf, SHOWN_CHAR_LEN, "'%c'", c);
	else
		snprintf(buf, SHOWN_CHAR_LEN, "0x%02x", byte);
}

static int rail_refuse(const struct rail_parse *rail, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int rail_refuse(const struct rail_parse *rail, const char *fmt, ...)
{
	char shown[SHOWN_BUF_LEN];
	char reason[MRAIL_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);

	show_text(rail->text, shown);
	mrail_write_err(rail->err, rail->err_len, "rail %zu \"%s\": %s", rail->pos,
		  shown, reason);
	return -EINVAL;
}

static bool char_is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static struct text_span trim_blanks(const char *start, size_t len)
{
	struct text_span span = { start, len };

	while (span.len && char_is_blank(span.start[0])) {
		span.start++;
		span.len--;
	}
	while (span.len && char_is_blank(span.start[span.len - 1]))
		span.len--;
	return span;
}

static bool text_is_blank(const char *text, size_t len)
{
	return trim_blanks(text, len).len == 0;
}

static bool char_is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool char_is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool char_in_provider_name(char c)
{
	return char_is_lower_alnum(c) || c == '_';
}

/* Interface names, verbs devices ("mlx5_0") and host-like domain names. */
static bool char_in_attach_name(char c)
{
	return char_is_lower_alnum(c) || char_is_upper(c) || c == '_' ||
	       c == '.' || c == ':' || c == '-';
}

static bool span_parse_ip(struct text_span span, struct mrail_ip *ip)
{
	char text[INET6_ADDRSTRLEN];

	/* Longer text is no numeric address, and would not fit text[]. */
	if (span.len >= sizeof(text))
		return false;
	memcpy(text, span.start, span.len);
	text[span.len] = '\0';
	return mrail_ip_parse(text, ip) == 0;
}

/* ";tcp", "tcp;" and "tcp;;ofi_rxm" name a provider that is not there. */
static bool stack_has_empty_provider(struct text_span stack)
{
	size_t i;

	if (stack.start[0] == ';' || stack.start[stack.len - 1] == ';')
		return true;
	for (i = 1; i < stack.len; i++) {
		if (stack.start[i] == ';' && stack.start[i - 1] == ';')
			return true;
	}
	return false;
}

static int parse_stack(const struct rail_parse *rail, struct text_span stack,
		       char *out)
{
	char shown_char[SHOWN_CHAR_LEN];
	size_t i;

	if (!stack.len)
		return rail_refuse(rail,
			"no provider stack before '@' (expected e.g. "
			"\"tcp;ofi_rxm@mr0\")");
	if (stack.len >= MRAIL_STACK_NAME_MAX)
		return rail_refuse(rail,
			"provider stack is %zu characters long, at most %d fit",
			stack.len, MRAIL_STACK_NAME_MAX - 1);

	for (i = 0; i < stack.len; i++) {
		char c = stack.start[i];

		if (c == ';' || char_in_provider_name(c))
			continue;
		show_char(c, shown_char);
		return rail_refuse(rail,
			"provider stack has %s at position %zu; provider names "
			"use only a-z, 0-9 and '_', joined by ';'%s",
			shown_char, i + 1,
			char_is_upper(c) ? " (names are lower case)" : "");
	}
	if (stack_has_empty_provider(stack))
		return rail_refuse(rail,
			"provider stack \"%.*s\" has an empty provider name "
			"(a leading, trailing or doubled ';')",
			(int) stack.len, stack.start);

	memcpy(out, stack.start, stack.len);
	out[stack.len] = '\0';
	return 0;
}

static const char *family_name(int family)
{
	return mrail_ip_bits(family) == 32 ? "IPv4" : "IPv6";
}

static int refuse_leading_zero(const struct rail_parse *rail,
			       struct text_span text, const char *shown)
{
	struct text_span meant = text;

	while (meant.len > 1 && meant.start[0] == '0') {
		meant.start++;
		meant.len--;
	}
	return rail_refuse(rail,
		"prefix length \"%s\" has a leading zero (write %.*s)",
		shown, (int) meant.len, meant.start);
}

/*
 * Decimal only, without sign or leading zero: "+24", "0x18" or "024" are
 * more likely typing slips than intent, and inet_pton is just as strict
 * with the address before the '/'.
 */
static int parse_prefix_len(const struct rail_parse *rail,
			    struct text_span text, int family,
			    unsigned *prefix_len)
{
	char shown[SHOWN_BUF_LEN];
	unsigned bits = mrail_ip_bits(family);
	unsigned value = 0;
	size_t i;

	show_text(text, shown);
	for (i = 0; i < text.len; i++) {
		if (text.start[i] < '0' || text.start[i] > '9')
			return rail_refuse(rail,
				"prefix length \"%s\" is not a decimal number "
				"(%s allows 0..%u)",
				shown, family_name(family), bits);
	}
	if (text.len > 1 && text.start[0] == '0')
		return refuse_leading_zero(rail, text, shown);

	/* Three digits already exceed 128; more could overflow the sum. */
	if (text.len > 3)
		value = bits + 1;
	for (i = 0; i < text.len && value <= bits; i++)
		value = value * 10 + (unsigned) (text.start[i] - '0');
	if (value > bits)
		return rail_refuse(rail,
			"prefix length %s is out of range for %s (0..%u)",
			shown, family_name(family), bits);

	*prefix_len = value;
	return 0;
}

static int parse_subnet(const struct rail_parse *rail, struct text_span attach,
			struct mrail_rail_spec *spec)
{
	const char *slash = memchr(attach.start, '/', attach.len);
	size_t network_len = (size_t) (slash - attach.start);
	struct text_span network = { attach.start, network_len };
	struct text_span prefix = { slash + 1, attach.len - network_len - 1 };
	char shown[SHOWN_BUF_LEN];
	char address[INET6_ADDRSTRLEN];
	int ret;

	if (!network.len || !prefix.len) {
		show_text(attach, shown);
		return rail_refuse(rail, "subnet \"%s\" has no %s", shown,
			network.len ? "prefix length after '/'" :
				      "address before '/'");
	}
	if (!span_parse_ip(network, &spec->addr)) {
		show_text(network, shown);
		return rail_refuse(rail,
			"subnet address \"%s\" is not a numeric IPv4 or IPv6 "
			"address", shown);
	}
	ret = parse_prefix_len(rail, prefix, spec->addr.family,
			       &spec->prefix_len);
	if (ret)
		return ret;

	/* One subnet has one spelling, so that duplicates are recognised. */
	mrail_ip_mask(&spec->addr, spec->prefix_len);
	mrail_ip_format(&spec->addr, address, sizeof(address));
	snprintf(spec->attach, sizeof(spec->attach), "%s/%u", address,
		 spec->prefix_len);
	spec->kind = MRAIL_ATTACH_SUBNET;
	return 0;
}

static bool text_is_digits_and_dots(struct text_span text)
{
	size_t i;

	for (i = 0; i < text.len; i++) {
		if (text.start[i] != '.' && (text.start[i] < '0' || text.start[i] > '9'))
			return false;
	}
	return memchr(text.start, '.', text.len) != NULL;
}

static int parse_attach_name(const struct rail_parse *rail,
			     struct text_span attach,
			     struct mrail_rail_spec *spec)
{
	char shown_char[SHOWN_CHAR_LEN];
	size_t i;

	if (attach.len >= MRAIL_ATTACH_MAX)
		return rail_refuse(rail,
			"interface or domain name is %zu characters long, "
			"at most %d fit", attach.len, MRAIL_ATTACH_MAX - 1);
	for (i = 0; i < attach.len; i++) {
		if (char_in_attach_name(attach.start[i]))
			continue;
		show_char(attach.start[i], shown_char);
		return rail_refuse(rail,
			"interface or domain name has %s at position %zu; "
			"names use only letters, digits, '_', '.', ':' and '-'",
			shown_char, i + 1);
	}

	/* "198.18.1.300" is a mistyped address, not an interface name: say
	 * so now rather than "no interface named 198.18.1.300" later. */
	if (text_is_digits_and_dots(attach))
		return rail_refuse(rail,
			"\"%.*s\" is not a valid IPv4 address",
			(int) attach.len, attach.start);

	memcpy(spec->attach, attach.start, attach.len);
	spec->attach[attach.len] = '\0';
	spec->kind = MRAIL_ATTACH_NAME;
	return 0;
}

static int parse_attach(const struct rail_parse *rail, struct text_span attach,
			struct mrail_rail_spec *spec)
{
	if (!attach.len)
		return rail_refuse(rail,
			"nothing after '@' (expected an interface, domain, "
			"address or subnet, e.g. \"mr0\" or "
			"\"198.18.0.0/24\")");
	if (memchr(attach.start, '/', attach.len))
		return parse_subnet(rail, attach, spec);

	if (span_parse_ip(attach, &spec->addr)) {
		/* inet_ntop's spelling: "::0:1" and "::1" are one address. */
		mrail_ip_format(&spec->addr, spec->attach,
				sizeof(spec->attach));
		spec->kind = MRAIL_ATTACH_ADDR;
		return 0;
	}
	return parse_attach_name(rail, attach, spec);
}

static int split_rail(const struct rail_parse *rail, struct text_span *stack,
		      struct text_span *attach)
{
	const char *at = memchr(rail->text.start, '@', rail->text.len);

	if (!at)
		return rail_refuse(rail,
			"no '@' between the provider stack and where the rail "
			"attaches (expected stack@attach, e.g. "
			"\"tcp;ofi_rxm@mr0\")");
	stack->start = rail->text.start;
	stack->len = (size_t) (at - rail->text.start);
	attach->start = at + 1;
	attach->len = rail->text.len - stack->len - 1;
	if (memchr(attach->start, '@', attach->len))
		return rail_refuse(rail,
			"more than one '@' (expected stack@attach)");
	return 0;
}

static bool config_find_rail(const struct mrail_rail_config *config,
			     const struct mrail_rail_spec *spec, size_t *index)
{
	size_t i;

	for (i = 0; i < config->count; i++) {
		if (!strcmp(config->rails[i].stack, spec->stack) &&
		    !strcmp(config->rails[i].attach, spec->attach)) {
			*index = i;
			return true;
		}
	}
	return false;
}

static int config_add_rail(struct mrail_rail_config *config,
			   const struct rail_parse *rail)
{
	struct text_span stack = { NULL, 0 }, attach = { NULL, 0 };
	struct mrail_rail_spec *spec;
	size_t same;
	int ret;

	if (!rail->text.len)
		return rail_refuse(rail,
			"empty rail (a stray ',' or nothing between two ',')");
	if (config->count == MRAIL_MAX_RAILS)
		return rail_refuse(rail,
			"more than %d rails; mrail stripes over at most %d",
			MRAIL_MAX_RAILS, MRAIL_MAX_RAILS);

	ret = split_rail(rail, &stack, &attach);
	if (ret)
		return ret;

	spec = &config->rails[config->count];
	memset(spec, 0, sizeof(*spec));
	ret = parse_stack(rail, stack, spec->stack);
	if (ret)
		return ret;
	ret = parse_attach(rail, attach, spec);
	if (ret)
		return ret;

	if (config_find_rail(config, spec, &same))
		return rail_refuse(rail,
			"same rail as rail %zu (both are %s@%s)",
			same + 1, spec->stack, spec->attach);
	config->count++;
	return 0;
}

int mrail_rail_config_parse(const char *text, struct mrail_rail_config *config,
			    char *err, size_t err_len)
{
	struct rail_parse rail = { .err = err, .err_len = err_len };
	const char *cursor, *comma, *end;
	size_t text_len;
	int ret;

	if (!config) {
		mrail_write_err(err, err_len, "no rail configuration to parse into");
		return -EINVAL;
	}
	config->count = 0;
	if (!text)
		text = "";

	/* Bounded, so that a runaway string is never read to its end. */
	text_len = strnlen(text, MRAIL_RAILS_STR_MAX + 1);
	if (text_len > MRAIL_RAILS_STR_MAX) {
		mrail_write_err(err, err_len,
			"FI_MRAIL_RAILS is longer than %d characters",
			MRAIL_RAILS_STR_MAX);
		return -EINVAL;
	}
	if (text_is_blank(text, text_len)) {
		mrail_write_err(err, err_len,
			"FI_MRAIL_RAILS is empty (expected rails as "
			"stack@attach separated by ',', e.g. "
			"\"tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1\")");
		return -EINVAL;
	}

	end = text + text_len;
	for (cursor = text;; cursor = comma + 1) {
		comma = memchr(cursor, ',', (size_t) (end - cursor));
		if (!comma)
			comma = end;
		rail.pos++;
		rail.text = trim_blanks(cursor, (size_t) (comma - cursor));
		ret = config_add_rail(config, &rail);
		if (ret)
			return ret;
		if (comma == end)
			break;
	}
	return 0;
}

/*
 * Returns 0, or -ENOSPC with the text cut to fit (still NUL-terminated,
 * which is what a log line wants).
 */
int mrail_rail_spec_format(const struct mrail_rail_spec *spec, char *buf,
			   size_t len)
{
	int stack_len, attach_len, n;

	if (!spec || !buf)
		return -EINVAL;
	stack_len = (int) strnlen(spec->stack, sizeof(spec->stack));
	attach_len = (int) strnlen(spec->attach, sizeof(spec->attach));
	n = snprintf(buf, len, "%.*s@%.*s", stack_len, spec->stack,
		     attach_len, spec->attach);
	if (n < 0)
		return -EINVAL;
	return (size_t) n < len ? 0 : -ENOSPC;
}
