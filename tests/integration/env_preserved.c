/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail opens its rails through a private libfabric with an environment of
 * its own. This checks that doing so leaves the application's environment
 * exactly as it was: every variable, in number, name and value.
 *
 * Exits 0 when mrail offered an endpoint and the environment is unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

extern char **environ;

static char **copy_environment(size_t *count)
{
	char **copy;
	size_t i, n = 0;

	while (environ[n])
		n++;
	copy = calloc(n + 1, sizeof(*copy));
	for (i = 0; copy && i < n; i++)
		copy[i] = strdup(environ[i]);
	*count = n;
	return copy;
}

int main(void)
{
	struct fi_info *hints, *info = NULL;
	size_t before_count, after_count, i;
	char **before, **after;
	int ret, changed = 0;

	before = copy_environment(&before_count);
	hints = fi_allocinfo();
	if (!before || !hints)
		return 2;
	hints->fabric_attr->prov_name = strdup("mrail");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	fi_freeinfo(info);
	if (ret) {
		fprintf(stderr, "fi_getinfo(mrail): %s\n", fi_strerror(-ret));
		return 1;
	}

	after = copy_environment(&after_count);
	if (!after)
		return 2;
	if (before_count != after_count) {
		fprintf(stderr, "environment had %zu variables, now %zu\n",
			before_count, after_count);
		changed = 1;
	}
	for (i = 0; i < before_count && i < after_count; i++) {
		if (strcmp(before[i], after[i])) {
			fprintf(stderr, "was \"%s\", now \"%s\"\n", before[i], after[i]);
			changed = 1;
		}
	}
	printf("%zu variables %s\n", before_count, changed ? "CHANGED" : "unchanged");
	return changed;
}
