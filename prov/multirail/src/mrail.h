/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail provider: the base every file in src/ includes first. The
 * provider, its logging and FI_MRAIL_* parameters, the libfabric the rails
 * are opened through and the railset, the fabric and domain objects with
 * the domain lock (and its checked contract, mrail_assert_locked), the
 * limits of a rail message, the progress thread's interface and the ops
 * mrail does not offer. The other objects have headers of their own:
 * mrail_av.h (address vectors), mrail_cq.h (completion queues, counters,
 * event queues, poll sets, wait objects), mrail_mr.h (memory regions),
 * mrail_ep.h (endpoints, their rails and peers, the rail policies),
 * mrail_trigger.h (triggered operations), mrail_coll.h (collectives);
 * mrail_msg.h and mrail_reserve.h hold what the protocols share.
 */
#ifndef MRAIL_H
#define MRAIL_H

#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/fi_ext_mrail.h>

/* uthash must not exit the process when it runs out of memory. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "mrail_compat.h"

#include "addr_codec.h"
#include "wire.h"
#include "mrail_limits.h"
#include "rail_config.h"

/* Declared in the objects' headers; here only pointed to. */
struct mrail_ep;
struct mrail_eq;
struct mrail_mr;
struct mrail_wait;
struct mrail_trig_work;
struct mrail_trig_op;
struct mrail_progress;

#if MRAIL_MAX_RAILS != FI_MRAIL_MAX_RAILS
#error "core/mrail_limits.h and include/rdma/fi_ext_mrail.h disagree on the rail limit"
#endif

/* The libfabric API version mrail implements (mrail_compat.h). */
#define MRAIL_FI_VERSION MRAIL_FI_API_VERSION
#define MRAIL_PROV_VERSION FI_VERSION(0, 1)

extern struct fi_provider mrail_prov;

/* The one symbol libfabric looks up in a DSO provider. */
struct fi_provider *fi_prov_ini(void);

#define MRAIL_WARN(subsys, ...) FI_WARN(&mrail_prov, subsys, __VA_ARGS__)
#define MRAIL_INFO(subsys, ...) FI_INFO(&mrail_prov, subsys, __VA_ARGS__)
#define MRAIL_DBG(subsys, ...) FI_DBG(&mrail_prov, subsys, __VA_ARGS__)

/* FI_MRAIL_* parameters, read once when the provider loads. */
struct mrail_env {
	char *rails;		/* FI_MRAIL_RAILS, NULL: discover */
	int private_core;	/* FI_MRAIL_PRIVATE_CORE */
	int progress_rt;	/* FI_MRAIL_PROGRESS_RT: 0, or a SCHED_FIFO priority */
	/* Rail policies (mrail_policy.c), as given; NULL: unset. Parsed
	 * and checked by fi_getinfo, which fails on a bad value. */
	char *policy;		/* FI_MRAIL_POLICY */
	char *stripe_policy;	/* FI_MRAIL_STRIPE_POLICY */
	char *weights;		/* FI_MRAIL_WEIGHTS */
	char *window;		/* FI_MRAIL_WINDOW */
	char *adaptive_alpha;	/* FI_MRAIL_ADAPTIVE_ALPHA */
	char *adaptive_window;	/* FI_MRAIL_ADAPTIVE_WINDOW */
	char *min_stripe;	/* FI_MRAIL_MIN_STRIPE */
	char *stripe_ratio;	/* FI_MRAIL_STRIPE_RATIO */
	char *peer_timeout;	/* FI_MRAIL_PEER_TIMEOUT, checked by getinfo */
	char *rail_timeout;	/* FI_MRAIL_RAIL_TIMEOUT, checked by getinfo */
	char *hybrid_threshold;	/* FI_MRAIL_HYBRID_THRESHOLD */
	char *barrier;		/* FI_MRAIL_BARRIER, NULL: dissemination */
	char *spin_us;		/* FI_MRAIL_SPIN_US, checked by getinfo */
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
	/* Prepares a thread mrail starts to call into the private copy (its
	 * libc's per-thread state), or NULL when nothing is needed. */
	void (*thread_init)(void);
	bool is_private;
};

const struct mrail_corelib *mrail_corelib_get(void);
/* Prepares the calling thread to call into the rails (once per thread):
 * every entry from the application does it before it reaches a rail. */
void mrail_corelib_thread_enter(void);

/* One rail: where it attaches and the core offer it opens. */
struct mrail_rail {
	struct mrail_rail_spec spec;
	char port[MRAIL_ATTACH_MAX];	/* interface or domain it resolved to */
	/* Its interface was down when resolved: the rail starts failed for
	 * every peer, and is probed until its link comes up. */
	bool link_down;
	bool is_iface;		/* port names a network interface */
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

/* Whether some rail of the set may carry traffic as far as this host can
 * tell: false only when every rail is an interface whose link is down. */
bool mrail_railset_any_link_up(const struct mrail_railset *set);

/* fi_getinfo(node, FI_SOURCE): the rail node names (its interface, domain
 * or address), or -1 when node is none of this set's rails. */
int mrail_railset_match_source(const struct mrail_railset *set, const char *node);

/* The local mrail address of a railset: every rail's source address. */
int mrail_railset_local_addr(const struct mrail_railset *set, struct mrail_addr *addr);

/*
 * fi_getinfo(node, service) without FI_SOURCE: the peer's rail 0, resolved
 * by rail 0's stack, as a partial mrail address (the peer sends the rest on
 * first contact). Returns 0 or -FI_ENODATA after a warning.
 */
int mrail_railset_peer_addr(const struct mrail_railset *set, uint32_t version,
			    const char *node, const char *service,
			    struct mrail_addr *peer);

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
	uint64_t next_internal_key;	/* see MRAIL_INTERNAL_KEY_BIT */
	struct fid_domain domain_fid;
	struct mrail_fabric *fabric;
	struct fid_domain *rail_domains[MRAIL_MAX_RAILS];
	struct mrail_addr local_addr;	/* what peers' addresses must match */
	/* FI_ADDR_MRAIL, or the first rail's socket address format
	 * (fi_getinfo offered it): addresses name a peer's first rail. */
	uint32_t addr_format;
	pthread_mutex_t lock;		/* FI_THREAD_SAFE: guards every object */
	size_t refs;			/* AVs and other objects open on it */
	/* FI_PROGRESS_AUTO: a thread (mrail_progress.c) drives the enabled
	 * endpoints, and the rails' CQs have fds it sleeps on. */
	bool progress_auto;
	struct mrail_progress *progress;	/* the thread, or NULL */
	/* How long CQ reads may find nothing before each further empty one
	 * yields the core (FI_MRAIL_SPIN_US, core/idle.h); 0: never. */
	uint64_t spin_ns;
	struct mrail_ep *eps;		/* enabled endpoints (dom_prev/next) */
	/* Triggered operations and deferred work (mrail_trigger.c): every
	 * one not completed yet, by its address and by the application's
	 * context; those whose counter reached the threshold, in the order
	 * to issue them; and whether a thread is issuing them now. */
	struct mrail_trig_work *trig_live, *trig_by_context;
	struct mrail_trig_op *trig_ready;
	bool trig_firing;
};

/* How the application's calls take the domain lock: the calling thread is
 * made ready for the rails first (mrail_corelib_thread_enter). */
static inline void mrail_domain_lock(struct mrail_domain *domain)
{
	mrail_corelib_thread_enter();
	pthread_mutex_lock(&domain->lock);
}

/*
 * The lock contract, checked. A function whose caller must hold the domain
 * lock starts with mrail_assert_locked. In a debug build (--enable-debug)
 * the lock is an error-checking mutex (mrail_domain_lock_init), which its
 * owner cannot take twice: taking it again answers EDEADLK when this thread
 * holds it, and anything else (taking it, or waiting for another thread to
 * let go) means the contract was broken, which aborts with the function's
 * name. A release build compiles the check away.
 */
#ifdef ENABLE_DEBUG
static inline void mrail_lock_check(pthread_mutex_t *lock, const char *func)
{
	if (pthread_mutex_lock(lock) != EDEADLK) {
		fprintf(stderr, "mrail: %s was called without the domain lock\n",
			func);
		abort();
	}
}
#define mrail_assert_locked(domain) mrail_lock_check(&(domain)->lock, __func__)
#else
#define mrail_assert_locked(domain) ((void) (domain))
#endif

/* The domain lock: error-checking in a debug build (mrail_assert_locked). */
static inline int mrail_domain_lock_init(pthread_mutex_t *lock)
{
#ifdef ENABLE_DEBUG
	pthread_mutexattr_t attr;
	int ret;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
	ret = pthread_mutex_init(lock, &attr);
	pthread_mutexattr_destroy(&attr);
	return ret;
#else
	return pthread_mutex_init(lock, NULL);
#endif
}

/* The monotonic clock in nanoseconds: what the policy's rail meter, the
 * reservation timeouts and the CQs' idle spin measure with. */
static inline uint64_t mrail_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/*
 * FI_PROGRESS_AUTO (mrail_progress.c). Caller holds the domain lock, except
 * for start and stop. add_ep and remove_ep keep the domain's list of
 * enabled endpoints in every mode; kick wakes a sleeping thread after the
 * application posted work (a no-op in manual mode or when it is awake).
 */
int mrail_progress_start(struct mrail_domain *domain);
void mrail_progress_stop(struct mrail_domain *domain);
void mrail_progress_stop_all(void);
int mrail_progress_add_ep(struct mrail_domain *domain, struct mrail_ep *ep);
void mrail_progress_remove_ep(struct mrail_domain *domain, struct mrail_ep *ep);
void mrail_progress_kick(struct mrail_domain *domain);
struct mrail_wait;
/* Wakes the sleepers of a CQ's or counter's wait (lock held): at once, or,
 * from the progress thread's round, when the round lets go of the lock.
 * forget, before such a wait is destroyed (lock held), drops a held-back
 * wake-up and waits for one being delivered. */
void mrail_progress_wake(struct mrail_domain *domain, struct mrail_wait *wait);
void mrail_progress_forget(struct mrail_domain *domain, struct mrail_wait *wait);

/*
 * A rail message is one bounce buffer: the header and at most
 * MRAIL_EAGER_MAX bytes of data. 16 KiB is ofi_rxm's default eager buffer,
 * so an mrail eager message is one eager rxm message (a larger one would
 * take rxm's slower segmentation path). Larger messages go by rendezvous.
 */
#define MRAIL_RAIL_BUF_LEN 16384
#define MRAIL_EAGER_MAX (MRAIL_RAIL_BUF_LEN - MRAIL_WIRE_HDR_LEN)
/* How long a send to a partial AV entry waits for the peer's HELLO REPLY
 * before it says -FI_EAGAIN (mrail_contact.c, first_contact). */
#define MRAIL_FIRST_CONTACT_MS 2000
/* The largest message: a rendezvous length a receiver accepts (1 TiB). */
#define MRAIL_MAX_MSG ((uint64_t) 1 << 40)
#define MRAIL_RX_BUFS_PER_RAIL 64
#define MRAIL_TX_BUFS_PER_RAIL 64
/* How long fi_close of an endpoint keeps progressing while mrail's own
 * answers (ACKs, HELLOs) still wait for a transmit buffer, so that a peer
 * waiting for them is not left hanging by an application that closes
 * right after its last completion. */
#define MRAIL_CLOSE_LINGER_MS 1000
#define MRAIL_REORDER_WINDOW 1024
/* A sequence number this far ahead cannot come from an honest sender (it
 * would need that many messages in flight): dropped, not held. */
#define MRAIL_SEQ_HOSTILE_DISTANCE ((uint64_t) 1 << 20)
/* Messages from senders not in the AV yet that an endpoint keeps (each at
 * most a rail buffer) until the AV learns them; more are dropped. */
#define MRAIL_STRANGER_MAX 1024
/*
 * Flow control: a sender has at most MRAIL_TX_CREDITS credit-spending
 * messages (wire.h: EAGER, RTS, WRITE, READ_REQ) on their way to one peer,
 * which returns credits in CREDIT messages once it has taken
 * MRAIL_CREDIT_BATCH of them off its rails. Without it a fast sender fills
 * a slow receiver's core provider (which buffers without bound).
 */
#define MRAIL_TX_CREDITS 128
#define MRAIL_CREDIT_BATCH 32
#define MRAIL_IOV_LIMIT 4
/* FI_OPT_MIN_MULTI_RECV's default: the largest eager message, so a
 * multi-receive buffer still posted always has room for one whole. */
#define MRAIL_MIN_MULTI_RECV_DEFAULT ((size_t) MRAIL_EAGER_MAX)
/* Rendezvous: stripes are read in chunks of at most this many bytes, with
 * up to MRAIL_RDV_READS_PER_RAIL reads of one message in flight per rail. */
#define MRAIL_RDV_CHUNK ((uint64_t) 1 << 20)
#define MRAIL_RDV_READS_PER_RAIL 4
/* Adaptive striping plans at most this many bytes ahead of the rails
 * (mrail_policy_plan_now): 48 ms of a 1.4 Gbit/s pair of rails, enough
 * reads in flight on each to keep it busy, few enough that a change of
 * rate is in the plans within a few tens of milliseconds. */
#define MRAIL_ADAPTIVE_AHEAD ((uint64_t) 8 << 20)
/* No rail is handed less than this much of a rendezvous message. */
#define MRAIL_RDV_MIN_STRIPE ((uint64_t) 16384)
/* Stripe offsets fall on page boundaries, friendlier to registration. */
#define MRAIL_STRIPE_ALIGN ((uint64_t) 4096)
/* Keys mrail registers rendezvous buffers with on rails that let the user
 * choose keys: the top bit keeps them apart from application keys. */
#define MRAIL_INTERNAL_KEY_BIT ((uint64_t) 1 << 63)
/* The operation flags an endpoint's defaults may hold (FI_SETOPSFLAG,
 * tx_attr/rx_attr op_flags); others are refused or left out of offers. */
#define MRAIL_TX_OP_FLAGS (FI_COMPLETION | FI_INJECT_COMPLETE | \
			   FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)
#define MRAIL_RX_OP_FLAGS (FI_COMPLETION | FI_MULTI_RECV)

int mrail_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int mrail_no_control(struct fid *fid, int command, void *arg);
int mrail_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		      void **ops, void *context);
int mrail_no_tostr(const struct fid *fid, char *buf, size_t len);
int mrail_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		     void *ops, void *context);
int mrail_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		    struct fid_ep **tx_ep, void *context);
int mrail_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context);
ssize_t mrail_no_size_left(struct fid_ep *ep);
int mrail_no_setname(fid_t fid, void *addr, size_t addrlen);
int mrail_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int mrail_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		     size_t paramlen);
int mrail_no_listen(struct fid_pep *pep);
int mrail_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int mrail_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		    size_t paramlen);
int mrail_no_shutdown(struct fid_ep *ep, uint64_t flags);

int mrail_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		      void *context);
int mrail_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **domain, void *context);

#endif /* MRAIL_H */
