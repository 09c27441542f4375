/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The libfabric the rails are opened through.
 *
 * libfabric registers only the providers that FI_PROVIDER names, so under
 * FI_PROVIDER=mrail the rails' core providers (tcp, ofi_rxm, ...) do not
 * exist in the application's libfabric at all. mrail therefore loads a
 * second, private copy of libfabric (the same file the application loaded)
 * into a link-map namespace of its own
 * (dlmopen), gives that copy an environment without the application's
 * provider filter, and opens every rail through it. The private copy's
 * provider path leaves out mrail's own directory, so mrail is never loaded
 * there (it cannot recurse into itself, nor drag a second copy of its own
 * dependencies, such as a sanitizer runtime, into that namespace).
 *
 * Only the entry points below are real symbols; every other libfabric call
 * is an inline dispatch through the object's ops table, which works on
 * objects from either copy. What the private copy allocates (fi_info lists)
 * must be released by the private copy.
 *
 * FI_MRAIL_PRIVATE_CORE=0, or a dlmopen that fails, falls back to the
 * application's libfabric; FI_PROVIDER must then also allow the rail stacks.
 */
#include "mrail.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

extern char **environ;

static pthread_once_t corelib_once = PTHREAD_ONCE_INIT;
static struct mrail_corelib corelib;

typedef int (*setenv_fn)(const char *, const char *, int);
typedef int (*unsetenv_fn)(const char *);
typedef int (*clearenv_fn)(void);

#define MRAIL_DSO_NAME "libmrail-fi.so"
/* A provider path no directory can match: the private copy then loads no
 * DSO provider, only those built into libfabric. */
#define MRAIL_NO_PROVIDER_PATH "/dev/null/no-providers"

void mrail_corelib_thread_enter(void)
{
	/* Once per thread. FI_THREAD_SAFE lets any thread call mrail, and a
	 * thread the application started has never set up the private
	 * copy's libc (corelib.thread_init says why). */
	static __thread bool ready;

	if (ready)
		return;
	ready = true;
	if (corelib.thread_init)
		corelib.thread_init();
}

static void corelib_use_application_copy(void)
{
	corelib.getinfo = fi_getinfo;
	corelib.freeinfo = fi_freeinfo;
	corelib.dupinfo = fi_dupinfo;
	corelib.fabric = fi_fabric;
	corelib.thread_init = NULL;
	corelib.is_private = false;
}

static bool dir_has_file(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int) sizeof(path))
		return false;
	return !stat(path, &st);
}

/* Whether dir holds DSO providers (lib*-fi.so) other than mrail. */
static bool dir_has_other_providers(const char *dir)
{
	struct dirent *entry;
	bool found = false;
	size_t len;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (entry = readdir(d))) {
		len = strlen(entry->d_name);
		found = !strncmp(entry->d_name, "lib", 3) && len > 9 &&
			!strcmp(entry->d_name + len - 6, "-fi.so") &&
			strcmp(entry->d_name, MRAIL_DSO_NAME);
	}
	closedir(d);
	return found;
}

/*
 * The application's provider path (FI_PROVIDER_PATH, else libfabric's
 * default) without the directories that hold mrail. Returns false when such
 * a directory also holds other DSO providers: dropping it would hide them.
 */
static bool provider_path_without_mrail(const char *path, char *out, size_t len)
{
	const char *order_mark = "";
	char *copy, *dir, *save = NULL;
	size_t used, kept = 0;
	bool ok = true;

	/* A leading '@' orders providers by discovery; keep the mark. */
	if (path[0] == '@') {
		order_mark = "@";
		path++;
	}
	copy = strdup(path);
	if (!copy)
		return false;
	used = (size_t) snprintf(out, len, "%s", order_mark);
	for (dir = strtok_r(copy, ":", &save); dir && ok;
	     dir = strtok_r(NULL, ":", &save)) {
		if (dir_has_file(dir, MRAIL_DSO_NAME)) {
			ok = !dir_has_other_providers(dir);
			continue;
		}
		used += (size_t) snprintf(out + used, len - used, "%s%s",
					  kept ? ":" : "", dir);
		kept++;
		ok = used < len;
	}
	free(copy);
	if (ok && !kept)
		snprintf(out, len, "%s", MRAIL_NO_PROVIDER_PATH);
	return ok;
}

/*
 * The private copy sees every provider (the application's FI_PROVIDER was
 * about the application's choice: mrail) but never mrail itself.
 */
static int corelib_private_provider_env(setenv_fn priv_setenv,
					unsetenv_fn priv_unsetenv)
{
	const char *path = getenv("FI_PROVIDER_PATH");
	char private_path[4096];

	if (!path || !*path)
		path = MRAIL_FABRIC_PROVDIR;

	if (provider_path_without_mrail(path, private_path, sizeof(private_path))) {
		priv_setenv("FI_PROVIDER_PATH", private_path, 1);
		priv_unsetenv("FI_PROVIDER");
	} else {
		/* mrail shares a directory with other DSO providers: load them
		 * all and filter mrail out instead. */
		priv_setenv("FI_PROVIDER", "^" FI_MRAIL_PROV_NAME, 1);
	}
	return 0;
}

/*
 * Core provider settings mrail changes in the private copy unless the
 * application set them itself (its value wins).
 *
 * FI_OFI_RXM_MSG_RX_SIZE=1024: over tcp, ofi_rxm gives every endpoint a
 * shared receive queue, by default 4096 bounce buffers posted when the
 * endpoint is enabled: 70 MiB per endpoint with libfabric 1.17, 134 MiB
 * with 2.6, and mrail has one such endpoint per rail under every endpoint
 * of its own. A SHMEM runtime opens an endpoint per context: Sandia
 * OpenSHMEM's many-ctx test (32 contexts) made each PE touch 4.6 GB and
 * took 20 s where sockets took 1 s. 1024 buffers fill the one chunk rxm
 * allocates its buffers in anyway (18 MiB per rail endpoint with 1.17).
 * Turning the shared queue off (FI_OFI_RXM_USE_SRX=0) would cost less
 * still (2 MiB per endpoint), but see the next one.
 *
 * FI_OFI_RXM_CM_PROGRESS_INTERVAL=1000: ofi_rxm 1.17 reads its connection
 * events at most every 10 ms of CQ polling, on both sides, even while a
 * connection is being set up (2.x reads them at every poll then). A rail's
 * connection, started by the first send over it, then took long enough
 * that sends meant for the second rail were still pushed back, and went on
 * the first, many messages later: fi_mrail_policy's window pair saw the
 * second rail carry none of 20 messages in about half its runs with
 * FI_OFI_RXM_USE_SRX=0, and once in many runs with the defaults. At 1 ms
 * it passed every run; one event read per millisecond of polling costs
 * nothing measurable.
 */
static const struct {
	const char *name;
	const char *value;
} corelib_rail_defaults[] = {
	{ "FI_OFI_RXM_MSG_RX_SIZE", "1024" },
	{ "FI_OFI_RXM_CM_PROGRESS_INTERVAL", "1000" },
};
#define RAIL_DEFAULT_COUNT \
	(sizeof(corelib_rail_defaults) / sizeof(corelib_rail_defaults[0]))

/*
 * The private libc starts out sharing the application's environ array, so a
 * setenv through it would edit the application's environment in place. Give
 * it an array of its own first, then change only what the rails need.
 */
static int corelib_private_environment(void *handle)
{
	clearenv_fn priv_clearenv = (clearenv_fn) dlsym(handle, "clearenv");
	setenv_fn priv_setenv = (setenv_fn) dlsym(handle, "setenv");
	unsetenv_fn priv_unsetenv = (unsetenv_fn) dlsym(handle, "unsetenv");
	char name[256];
	char **entry;
	size_t name_len;
	const char *eq;

	if (!priv_clearenv || !priv_setenv || !priv_unsetenv)
		return -FI_ENOSYS;

	/* Drops only the private libc's pointer to the shared array; the
	 * application's environ, read below, is untouched. */
	priv_clearenv();
	for (entry = environ; entry && *entry; entry++) {
		eq = strchr(*entry, '=');
		if (!eq || eq == *entry)
			continue;
		name_len = (size_t) (eq - *entry);
		if (name_len >= sizeof(name))
			continue;
		memcpy(name, *entry, name_len);
		name[name_len] = '\0';
		priv_setenv(name, eq + 1, 1);
	}
	for (size_t i = 0; i < RAIL_DEFAULT_COUNT; i++)
		priv_setenv(corelib_rail_defaults[i].name,
			    corelib_rail_defaults[i].value, 0);

	return corelib_private_provider_env(priv_setenv, priv_unsetenv);
}

/*
 * The file of the libfabric that loaded mrail: the one fi_getinfo resolves
 * to in the application's namespace. The private copy must be that same
 * file: the search path may find another libfabric.so.1 first (a 1.x in
 * /usr under an application built with a 2.x from its own prefix, or the
 * other way round), whose providers and ABI the application never asked
 * for. NULL when the loader cannot say (then the soname is searched).
 */
static const char *corelib_application_path(void)
{
	Dl_info where;

	if (!dladdr((void *) fi_getinfo, &where) || !where.dli_fname ||
	    where.dli_fname[0] != '/')
		return NULL;
	return where.dli_fname;
}

static int corelib_load_private_copy(void)
{
	const char *path = corelib_application_path();
	void *handle;
	int ret;

	if (!path) {
		MRAIL_WARN(FI_LOG_CORE, "cannot tell which file the application's "
			   "libfabric was loaded from; the private copy is the "
			   "first %s on the library search path, which must be the "
			   "same libfabric\n", MRAIL_FABRIC_SONAME);
		path = MRAIL_FABRIC_SONAME;
	}
	handle = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		MRAIL_WARN(FI_LOG_CORE,
			   "cannot load a private copy of %s (%s); opening rails "
			   "through the application's libfabric, so FI_PROVIDER "
			   "must allow the rail providers\n", path, dlerror());
		return -FI_ENOSYS;
	}

	ret = corelib_private_environment(handle);
	if (ret)
		goto err;

	corelib.getinfo = (__typeof__(corelib.getinfo)) dlsym(handle, "fi_getinfo");
	corelib.freeinfo = (__typeof__(corelib.freeinfo)) dlsym(handle, "fi_freeinfo");
	corelib.dupinfo = (__typeof__(corelib.dupinfo)) dlsym(handle, "fi_dupinfo");
	corelib.fabric = (__typeof__(corelib.fabric)) dlsym(handle, "fi_fabric");
	if (!corelib.getinfo || !corelib.freeinfo || !corelib.dupinfo ||
	    !corelib.fabric) {
		ret = -FI_ENOSYS;
		goto err;
	}
	/* A thread the application's libc started has not set up the private
	 * libc's per-thread locale tables, which the rails' string functions
	 * read (strcasestr crashes without them): mrail's own threads call
	 * this first. Optional: a libc without it needs no such setup. */
	corelib.thread_init = (__typeof__(corelib.thread_init))
			      dlsym(handle, "__ctype_init");
	/* The handle is never dlclosed: rail providers may leave threads and
	 * handlers behind that live as long as the process. */
	corelib.is_private = true;
	MRAIL_INFO(FI_LOG_CORE, "rails open through a private copy of %s\n",
		   path);
	return 0;
err:
	MRAIL_WARN(FI_LOG_CORE, "private copy of %s is unusable (%s); falling "
		   "back to the application's libfabric\n", path,
		   fi_strerror(-ret));
	dlclose(handle);
	return ret;
}

static void corelib_init(void)
{
	if (mrail_env.private_core && !corelib_load_private_copy())
		return;
	corelib_use_application_copy();
}

const struct mrail_corelib *mrail_corelib_get(void)
{
	pthread_once(&corelib_once, corelib_init);
	return &corelib;
}
