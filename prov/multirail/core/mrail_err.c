/* SPDX-License-Identifier: BSD-2-Clause */
#include "mrail_err.h"

#include <stdio.h>

void mrail_vwrite_err(char *err, size_t err_len, const char *fmt, va_list ap)
{
	if (err && err_len)
		vsnprintf(err, err_len, fmt, ap);
}

void mrail_write_err(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mrail_vwrite_err(err, err_len, fmt, ap);
	va_end(ap);
}
