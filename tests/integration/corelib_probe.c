/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loads the libfabric named on the command line by its path, the way a
 * program built against a libfabric outside the search path does (a 2.x in
 * its own prefix on a host whose /usr has a 1.x, or the other way round),
 * asks it for mrail, and prints every libfabric file the process then has
 * mapped, one "mapped: PATH" line each. mrail's private copy of libfabric
 * must be that same file: a second file in the list is a copy the loader
 * found on the search path instead.
 *
 *   corelib_probe LIBFABRIC_PATH
 *
 * Not linked against libfabric, so that the only one it loads itself is
 * LIBFABRIC_PATH. Exits 0 when mrail offered an endpoint, 2 on usage or
 * loading errors, 1 when mrail offered nothing.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>

typedef int (*getinfo_fn)(uint32_t version, const char *node,
			  const char *service, uint64_t flags,
			  const struct fi_info *hints, struct fi_info **info);
typedef void (*freeinfo_fn)(struct fi_info *info);

/* Prints each distinct mapped file whose name starts with "libfabric". */
static int print_mapped_libfabrics(void)
{
	char line[4096], last[4096] = "";
	FILE *maps = fopen("/proc/self/maps", "r");

	if (!maps) {
		perror("corelib_probe: /proc/self/maps");
		return -1;
	}
	while (fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');
		char *base;

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		base = strrchr(path, '/') + 1;
		if (strncmp(base, "libfabric.so", 12) || !strcmp(path, last))
			continue;
		/* maps lists a file once per segment, segments adjacent. */
		snprintf(last, sizeof(last), "%s", path);
		printf("mapped: %s\n", path);
	}
	fclose(maps);
	return 0;
}

int main(int argc, char **argv)
{
	struct fi_info *info = NULL;
	getinfo_fn getinfo;
	freeinfo_fn freeinfo;
	void *lib;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: corelib_probe LIBFABRIC_PATH\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		fprintf(stderr, "corelib_probe: %s\n", dlerror());
		return 2;
	}
	getinfo = (getinfo_fn) dlsym(lib, "fi_getinfo");
	freeinfo = (freeinfo_fn) dlsym(lib, "fi_freeinfo");
	if (!getinfo || !freeinfo) {
		fprintf(stderr, "corelib_probe: %s has no fi_getinfo/fi_freeinfo\n",
			argv[1]);
		return 2;
	}
	/* The oldest API both supported releases serve; FI_PROVIDER=mrail
	 * in the environment selects mrail. */
	ret = getinfo(FI_VERSION(1, 17), NULL, NULL, 0, NULL, &info);
	printf("fi_getinfo: %d, provider %s\n", ret,
	       info ? info->fabric_attr->prov_name : "none");
	if (print_mapped_libfabrics())
		return 2;
	if (info)
		freeinfo(info);
	return ret || !info ? 1 : 0;
}
