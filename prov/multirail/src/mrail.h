/*
 * mrail provider: declarations shared by the libfabric objects in src/.
 */
#ifndef MRAIL_H
#define MRAIL_H

#include "config.h"

#include <stdbool.h>
#include <stddef.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/fi_ext_mrail.h>

#include "addr_codec.h"
#include "mrail_limits.h"
#include "rail_config.h"

#if MRAIL_MAX_RAILS != FI_MRAIL_MAX_RAILS
#error "core/mrail_limits.h and include/rdma/fi_ext_mrail.h disagree on the rail limit"
#endif

/* The libfabric API version mrail implements. */
#define MRAIL_FI_VERSION FI_VERSION(1, 17)
#define MRAIL_PROV_VERSION FI_VERSION(0, 1)

extern struct fi_provider mrail_prov;

/* The one symbol libfabric looks up in a DSO provider. */
struct fi_provider *fi_prov_ini(void);

#define MRAIL_WARN(subsys, ...) FI_WARN(&mrail_prov, subsys, __VA_ARGS__)
#define MRAIL_INFO(subsys, ...) FI_INFO(&mrail_prov, subsys, __VA_ARGS__)

/* FI_MRAIL_* parameters, read once when the provider loads. */
struct mrail_env {
	char *rails;		/* FI_MRAIL_RAILS, NULL: discover */
	int private_core;	/* FI_MRAIL_PRIVATE_CORE */
};
extern struct mrail_env mrail_env;

/*
 * The libfabric the rails are opened through. Normally a private copy loaded
 * with dlmopen (see mrail_corelib.c); objects and fi_info lists it returns
 * must be released through it, never through the application's libfabric.
 */
struct mrail_corelib {
	int (*getinfo)(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       struct fi_info **info);
	void (*freeinfo)(struct fi_info *info);
	struct fi_info *(*dupinfo)(const struct fi_info *info);
	int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		      void *context);
	bool is_private;
};

const struct mrail_corelib *mrail_corelib_get(void);

/* One rail: where it attaches and the core offer it opens. */
struct mrail_rail {
	struct mrail_rail_spec spec;
	char port[MRAIL_ATTACH_MAX];	/* interface or domain it resolved to */
	struct fi_info *info;		/* owned by the corelib */
};

struct mrail_railset {
	const struct mrail_corelib *lib;
	size_t count;
	struct mrail_rail rails[MRAIL_MAX_RAILS];
};

/*
 * Resolves FI_MRAIL_RAILS (or discovers rails) into core offers on this host.
 * service and flags are fi_getinfo's (FI_SOURCE binds every rail to service).
 * Returns 0, or -FI_ENODATA after a warning saying what is wrong.
 */
int mrail_railset_resolve(uint32_t version, const char *service, uint64_t flags,
			  struct mrail_railset *set);
void mrail_railset_release(struct mrail_railset *set);

/* The local mrail address of a railset: every rail's source address. */
int mrail_railset_local_addr(const struct mrail_railset *set, struct mrail_addr *addr);

int mrail_getinfo(uint32_t version, const char *node, const char *service,
		  uint64_t flags, const struct fi_info *hints, struct fi_info **info);

#endif /* MRAIL_H */
