/*
 * mrail provider: declarations shared by the libfabric objects in src/.
 */
#ifndef MRAIL_H
#define MRAIL_H

#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
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

/* "mr0+mr1" (ports) or "198.18.1.0/24+198.18.2.0/24" (fabrics) of a railset,
 * the names mrail's offer carries. Caller frees. */
char *mrail_railset_join_names(const struct mrail_railset *set, bool fabric_names);

/* Fabric: the railset it was opened for and one core fabric per rail. */
struct mrail_fabric {
	struct fid_fabric fabric_fid;
	struct mrail_railset rails;
	struct fid_fabric *rail_fabrics[MRAIL_MAX_RAILS];
	char *name;
};

/* Domain: one core domain per rail. */
struct mrail_domain {
	struct fid_domain domain_fid;
	struct mrail_fabric *fabric;
	struct fid_domain *rail_domains[MRAIL_MAX_RAILS];
	struct mrail_addr local_addr;	/* what peers' addresses must match */
	pthread_mutex_t lock;		/* FI_THREAD_SAFE: guards every object */
	size_t refs;			/* AVs and other objects open on it */
};

/* One peer in an AV: its address and where each rail's AV put it. */
struct mrail_av_peer {
	bool in_use;
	struct mrail_addr addr;
	fi_addr_t rail_fi_addr[MRAIL_MAX_RAILS];
};

/* AV: one core AV per rail; mrail's fi_addr_t indexes peers. */
struct mrail_av {
	struct fid_av av_fid;
	struct mrail_domain *domain;
	enum fi_av_type type;
	struct fid_av *rail_avs[MRAIL_MAX_RAILS];
	struct mrail_av_peer *peers;
	size_t peer_count;	/* slots used, including removed ones */
	size_t peer_cap;
};

int mrail_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int mrail_no_control(struct fid *fid, int command, void *arg);
int mrail_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		      void **ops, void *context);

int mrail_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		      void *context);
int mrail_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **domain, void *context);
int mrail_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		  struct fid_av **av, void *context);

#endif /* MRAIL_H */
