/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Error sentences for the caller-provided buffers of core/ functions.
 */
#ifndef MRAIL_ERR_H
#define MRAIL_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* Formats into err (always NUL-terminated); does nothing when err is NULL
 * or err_len is 0, for callers that do not want the explanation. */
void mrail_write_err(char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void mrail_vwrite_err(char *err, size_t err_len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif /* MRAIL_ERR_H */
