/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail provider: declarations shared by the libfabric objects in src/.
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

#include "mrail_compat.h"

#include "addr_codec.h"
#include "av_alias.h"
#include "av_shm.h"
#include "match.h"
#include "reorder.h"
#include "wire.h"
#include "mrail_limits.h"
#include "policy.h"
#include "rail_config.h"
#include "stripe.h"
#include "stripe_policy.h"
#include "rail_meter.h"
#include "trigger.h"
#include "liveness.h"
#include "idle.h"
#include "ratelimit.h"

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

/* One peer in an AV: its address and where each rail's AV put it. */
struct mrail_av_peer {
	bool in_use;
	struct mrail_addr addr;
	fi_addr_t rail_fi_addr[MRAIL_MAX_RAILS];
	/* The application's fi_addr_t for this slot, or FI_ADDR_NOTAVAIL
	 * for a peer mrail learned by itself (mrail_av.c). */
	fi_addr_t app;
	/* A partial address (addr.flags): our HELLO to it is queued or
	 * sent, its answer completes the entry. */
	bool hello_sent;
	uint64_t key;		/* mrail_addr_key(&addr); 0 while partial */
	/* Entries in the rails' AVs: every rail for a peer's canonical
	 * entry (rail 0 while partial), none for an alias (av_alias.h). */
	size_t rails_held;
};

struct mrail_av_key;

/* AV: one core AV per rail; mrail's fi_addr_t indexes peers. */
struct mrail_eq;

struct mrail_av {
	/* Peers by sender key (uthash), and a count of keys ever added:
	 * endpoints keep messages from unknown keys until it changes. */
	struct mrail_av_key *keys;
	uint64_t key_generation;
	struct fid_av av_fid;
	struct mrail_domain *domain;
	enum fi_av_type type;
	struct fid_av *rail_avs[MRAIL_MAX_RAILS];
	struct mrail_av_peer *peers;
	/* Per entry, which one speaks for its peer (core/av_alias.h). */
	struct mrail_alias *alias;
	size_t peer_count;	/* slots used, including removed ones */
	size_t peer_cap;
	/* The application's fi_addr_t values, in insert order: each one's
	 * slot (FI_ADDR_NOTAVAIL: a named AV's entry not pulled yet). */
	fi_addr_t *app_slots;
	size_t app_count;
	size_t app_cap;
	size_t partial_count;	/* canonical entries still partial */
	bool events;		/* FI_EVENT: inserts reported on eq */
	struct mrail_eq *eq;
	/* A named AV's shared table (mrail_av_shared.c), or NULL. A reader
	 * (FI_READ) keeps indices below the table's capacity for the
	 * writer's entries and adds what it learns itself after them. */
	struct mrail_av_shared *shared;
};

/* One user-level completion, successful or not, before it is formatted. */
struct mrail_cq_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;
	size_t olen;
	int err;		/* 0, or a positive FI_E* value */
	int prov_errno;
	uint64_t key;		/* remote accesses: the region's key */
	/* FI_SOURCE_ERR: the raw address of a sender the AV does not hold
	 * (malloc'd, owned by the entry; err is FI_EADDRNOTAVAIL). */
	void *src_addr;
	size_t src_addrlen;
};

struct mrail_ep;

/*
 * CQ: mrail's own queue of user completions (rail completions never reach
 * the application). Reading it drives progress of the endpoints bound to it.
 */
struct mrail_cq {
	struct fid_cq cq_fid;
	struct mrail_domain *domain;
	enum fi_cq_format format;
	struct mrail_cq_entry *ring;
	size_t cap, head, count;
	struct mrail_ep *eps[16];	/* endpoints to progress on read */
	size_t ep_count;
	struct mrail_cq_entry err_entry;	/* last error handed to readerr */
	/* The source address the last FI_EADDRNOTAVAIL error lent the
	 * application (fi_cq(3): valid until the next fi_cq_readerr). */
	void *err_data;
	size_t poll_refs;		/* poll sets it is in (mrail_poll.c) */
	struct mrail_idle idle;		/* since when reads found nothing */
};

/* FI_MRAIL_SPIN_US (core/idle.h) in ns, or its default; -FI_ENODATA with a
 * warning naming the variable when it is malformed. */
int mrail_idle_env(uint64_t *spin_ns);
int mrail_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		  struct fid_cq **cq, void *context);
/* Queues a completion (caller holds the domain lock). */
/* Malformed or unexpected input from a peer (mrail_cq.c): an error entry
 * on the receive CQ, and a rate-limited warning; the summary at close
 * counts the warnings held back. */
void mrail_cq_report_bad_message(struct mrail_ep *ep, size_t rail, const char *why);
void mrail_cq_bad_message_summary(struct mrail_ep *ep);
int mrail_cq_write(struct mrail_cq *cq, const struct mrail_cq_entry *entry);
int mrail_cq_attach_ep(struct mrail_cq *cq, struct mrail_ep *ep);
/* fi_poll: progresses cq's endpoints when it is empty; true when it holds
 * an entry (caller holds the domain lock). */
bool mrail_cq_poll_ready(struct mrail_cq *cq);
void mrail_cq_detach_ep(struct mrail_cq *cq, struct mrail_ep *ep);
/* Drives every rail of ep once (caller holds the domain lock); returns
 * how many rail completions it handled (0: the rails were idle). */
size_t mrail_ep_progress(struct mrail_ep *ep);
/* The endpoint's mrail address (every rail), whatever fi_getname's format:
 * what a HELLO carries. */
int mrail_ep_full_name(struct mrail_ep *ep, void *addr, size_t *addrlen);
/*
 * The one way a user operation completes: the counter bound for its kind
 * (entry->flags: FI_SEND, FI_RECV, FI_READ, FI_WRITE) counts it, success
 * or error, whatever FI_SELECTIVE_COMPLETION says; the CQ gets the entry
 * when report is true or the operation failed. Caller holds the lock.
 */
void mrail_user_complete(struct mrail_ep *ep, const struct mrail_cq_entry *entry,
			 bool report);

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

/* What a rail operation's context is, so a rail completion finds its owner. */
enum mrail_ctx_kind { MRAIL_CTX_RX, MRAIL_CTX_TX, MRAIL_CTX_READ };

/* First member of everything passed to a rail as an operation context. */
struct mrail_rail_ctx {
	struct fi_context2 ctx;
	enum mrail_ctx_kind kind;
	size_t rail;
};

struct mrail_cntr;
struct mrail_rdv_send;
struct mrail_rdv_recv;
struct mrail_deferred;

/* The lanes of the deferred-work queue (mrail_deferred.c), drained in this
 * order: collective signals first, so a barrier's next step never waits
 * behind bulk traffic's answers. */
enum mrail_lane {
	MRAIL_LANE_URGENT,
	MRAIL_LANE_NORMAL,
	MRAIL_LANES
};
struct mrail_hello;
struct mrail_stranger_msg;
struct mrail_rsv_ep;

/* A bounce buffer on a rail. */
struct mrail_rail_buf {
	struct mrail_rail_ctx rc;
	struct mrail_ep *ep;
	bool complete_user;		/* TX: write user on completion */
	struct mrail_cq_entry user;	/* TX: the user completion */
	uint64_t rdv_req_id;		/* TX of an RTS: its rendezvous, or 0 */
	fi_addr_t credit_peer;		/* TX: whose credit it spent, or NOTAVAIL */
	uint8_t *data;
	struct mrail_rail_buf *free_next;	/* TX: the rail's free list */
	/* RX held back (not reposted) because it arrived too far ahead of
	 * its peer's window: what the rail reported, to retry it later. */
	size_t held_len;
	struct mrail_rail_buf *held_next;
};

/* Receive-side state of one peer: its messages in send order. */
struct mrail_peer_rx {
	bool ready;
	struct mrail_reorder reorder;
	/* Credit-spending messages taken off the rails and not yet
	 * returned to the peer in a CREDIT (flow control, mrail_contact.c). */
	uint32_t credits_owed;
};

/*
 * Everything an endpoint keeps about one peer. Endpoints sharing an AV keep
 * their own: each has a key of its own, so a peer knows each apart.
 */
struct mrail_peer {
	uint64_t tx_seq;		/* sequence number of our next message to it */
	/* Messages we may still send it before it returns credits
	 * (MRAIL_TX_CREDITS when nothing is in flight). */
	uint32_t tx_credits;
	/* The peer knows this endpoint's key (our HELLO to it is queued or
	 * sent, or one of its HELLOs reached us), so our sends need no
	 * introduction (core/first_contact.h). */
	bool introduced;
	struct mrail_peer_rx rx;		/* its messages to us */
	struct mrail_live_peer live;	/* liveness (mrail_peer.c) */
};

/*
 * Rail policies and per-rail statistics of one endpoint (mrail_policy.c).
 * Guarded by the domain lock, like the rest of the endpoint.
 */
struct mrail_rail_counts {
	uint64_t tx_bytes, rx_bytes;	/* user data (see fi_mrail(7)) */
	uint64_t tx_ops, rx_ops;
	uint64_t errors;
	uint32_t reads_in_flight;	/* not zeroed by FI_MRAIL_RESET_STATS */
};

struct mrail_policy {
	struct fi_mrail_policy_attr attr;	/* the settings, validated */
	struct mrail_mux mux;
	struct mrail_adaptive adaptive;
	/* Every rail's reads, metered whatever the policy: a read posted
	 * before a switch to adaptive still ends on the meter. */
	struct mrail_meter meter;
	uint8_t select_cursor;		/* local_dynamic striping: next rail */
	uint64_t align;			/* stripe offsets: a power of two */
	/* Bytes of transfers adaptive striping split and that have not
	 * finished yet: the plans it made ahead; and per rail, the bytes of
	 * their stripes not read yet (mrail_adaptive_plan_queued). */
	uint64_t planned_ahead;
	uint64_t queued[MRAIL_MAX_RAILS];
	struct mrail_rail_counts rails[MRAIL_MAX_RAILS];
};

struct mrail_ep {
	struct fid_ep ep_fid;
	struct mrail_domain *domain;
	struct mrail_av *av;
	struct mrail_cq *tx_cq, *rx_cq;
	bool tx_selective, rx_selective;	/* FI_SELECTIVE_COMPLETION */
	/* Flags of the calls that take none (fi_send, fi_recv...): the
	 * tx/rx attributes' op_flags, changed with FI_SETOPSFLAG. */
	uint64_t tx_op_flags, rx_op_flags;
	uint64_t caps;
	bool enabled;
	size_t aliases;		/* open fi_ep_alias fids (mrail_ep_alias.c),
				 * scalable endpoint contexts included */
	/* Opened by fi_scalable_ep: its fid is FI_CLASS_SEP and its one
	 * transmit and one receive context are aliases (mrail_ep_alias.c). */
	bool scalable;
	/* Opened with tx_ctx_cnt FI_SHARED_CONTEXT; the context bound. */
	bool tx_shared;
	struct mrail_stx *stx;
	size_t rail_count;
	uint64_t rail_mr_mode[MRAIL_MAX_RAILS];
	struct fid_ep *rail_eps[MRAIL_MAX_RAILS];
	struct fid_cq *rail_cqs[MRAIL_MAX_RAILS];
	struct fid_mr *rail_mrs[MRAIL_MAX_RAILS];
	void *rail_desc[MRAIL_MAX_RAILS];
	uint8_t *rail_mem[MRAIL_MAX_RAILS];
	struct mrail_rail_buf rx_bufs[MRAIL_MAX_RAILS][MRAIL_RX_BUFS_PER_RAIL];
	struct mrail_rail_buf tx_bufs[MRAIL_MAX_RAILS][MRAIL_TX_BUFS_PER_RAIL];
	struct mrail_rail_buf *tx_free[MRAIL_MAX_RAILS];
	struct mrail_match_queue msg_queue, tag_queue;
	/* The queues receives are matched in: the endpoint's own, or those
	 * of the shared receive context bound to it (mrail_srx.c). */
	struct mrail_match_queue *msgq, *tagq;
	bool rx_shared;			/* opened with rx_ctx_cnt FI_SHARED_CONTEXT */
	struct mrail_srx *srx;
	struct mrail_ep *srx_next;	/* the context's endpoints */
	size_t min_multi_recv;		/* FI_OPT_MIN_MULTI_RECV */
	struct mrail_addr src;		/* fi_endpoint's info->src_addr */
	/* Per peer, indexed by the peer's canonical fi_addr (mrail_av_canon):
	 * grown by mrail_peer_reserve, peer_cap entries. */
	struct mrail_peer *peers;
	size_t peer_cap;
	struct mrail_wire_limits limits;
	/* Warnings about bad messages from peers (mrail_cq.c). */
	struct mrail_ratelimit bad_msg_warn;
	struct mrail_rail_buf *held;	/* RX buffers waiting for a window */
	bool window_moved;		/* set when a peer's messages were delivered */
	/* Messages from sender keys not in the AV (mrail_engine.c), and the AV
	 * key generation they were last tried against. */
	struct mrail_stranger_msg *strangers;
	size_t stranger_count;
	uint64_t stranger_generation;
	uint64_t self_key;		/* mrail_addr_key of our name, once enabled */
	/* Rendezvous: sends waiting for their ACK (uthash by request id), and
	 * receives with reads to issue or an ACK to send (utlist). */
	struct mrail_rdv_send *rdv_sends;
	uint64_t next_req_id;
	struct mrail_rdv_recv *rdv_recvs;
	/* Of those, the ones the striping policy did not split yet
	 * (mrail_policy_plan_now): they are split in list order. */
	size_t rdv_unplanned;
	/* mrail's own messages waiting for a transmit buffer, per lane
	 * (mrail_deferred.c). */
	struct mrail_deferred *deferred[MRAIL_LANES];
	size_t next_stripe_rail;
	/* fi_ep_bind of counters: each counts completed user operations of
	 * its kind. The remote ones wait for an RMA target path. */
	struct mrail_cntr *send_cntr, *recv_cntr, *read_cntr, *write_cntr;
	struct mrail_cntr *rread_cntr, *rwrite_cntr;
	struct mrail_ep *dom_prev, *dom_next;	/* domain->eps */
	/* FI_PROGRESS_AUTO: rails whose CQ has no fd (ofi_rxd's), polled. */
	bool rail_cq_polled[MRAIL_MAX_RAILS];
	struct mrail_policy policy;	/* mrail_policy.c */
	/* Peer liveness (mrail_peer.c): when to look at the peers next;
	 * timeout 0 turns it off. */
	uint64_t live_timeout_ns;
	uint64_t live_next_check_ns;
	struct mrail_rsv_ep *rsv;	/* rail reservations (mrail_reserve.c), or NULL */
	/* Collectives (mrail_coll.c): the EQ fi_ep_bind gave (where
	 * FI_JOIN_COMPLETE goes), and the groups and their operations. */
	struct mrail_eq *eq;
	struct mrail_coll_ep *coll;
};

int mrail_ep_open(struct fid_domain *domain, struct fi_info *info,
		  struct fid_ep **ep, void *context);
/* Peers (mrail_peer.c). Makes room for per-peer state up to fi_addr, each
 * new peer's zeroed but for its full credits (caller holds the lock). */
int mrail_peer_reserve(struct mrail_ep *ep, fi_addr_t fi_addr);
/* Frees every peer's state (the endpoint closes). */
void mrail_peers_free(struct mrail_ep *ep);
/* The mrail fi_addr of the peer whose messages carry this sender key
 * (wire.h), or FI_ADDR_NOTAVAIL. */
fi_addr_t mrail_av_peer_of_key(struct mrail_av *av, uint64_t key);
/*
 * An application may insert a peer more than once (fi_av(3)); each entry
 * then stands for the peer's canonical entry (core/av_alias.h), which owns
 * the peer's sequence stream, credits and waits. Every fi_addr_t an
 * application passes (a send's destination, a directed receive's source,
 * an RMA or atomic target, an AV set member) goes through mrail_av_canon
 * first: the canonical fi_addr_t, or FI_ADDR_NOTAVAIL when it names no
 * entry (never inserted, or removed). Caller holds the domain lock.
 */
fi_addr_t mrail_av_canon(struct mrail_av *av, fi_addr_t fi_addr);
/* The fi_addr_t to report as the source of what canonical entry canon's
 * peer sent: canon, or an alias when the application removed canon. */
fi_addr_t mrail_av_shown(struct mrail_av *av, fi_addr_t canon);
/* How many fi_addr_t values the application has had (removed ones too). */
fi_addr_t mrail_av_app_count(const struct mrail_av *av);
/* A copy (malloc'd) of a slot's address in the domain's address format,
 * for FI_SOURCE_ERR; NULL when there is none. */
void *mrail_av_raw_addr(struct mrail_av *av, fi_addr_t slot, size_t *len);
/* Named AVs (mrail_av_shared.c). */
struct mrail_av_shared;
int mrail_av_shared_open(struct fi_av_attr *attr, struct mrail_av_shared **out);
void mrail_av_shared_close(struct mrail_av_shared *shared);
bool mrail_av_shared_is_reader(const struct mrail_av_shared *shared);
uint64_t mrail_av_shared_capacity(const struct mrail_av_shared *shared);
void mrail_av_shared_publish(struct mrail_av_shared *shared, fi_addr_t fi_addr,
			     const struct mrail_addr *addr);
void mrail_av_shared_withdraw(struct mrail_av_shared *shared, fi_addr_t fi_addr);
/* 1 with *addr decoded, 0 when the writer has not published fi_addr (or
 * removed it), -FI_EINVAL for a corrupt entry. */
int mrail_av_shared_read(const struct mrail_av_shared *shared, fi_addr_t fi_addr,
			 struct mrail_addr *addr);

/* The peer record behind an entry (an alias's is its canonical entry's),
 * or NULL when the entry holds no peer. */
struct mrail_av_peer *mrail_av_get_peer(struct mrail_av *av, fi_addr_t fi_addr);
/*
 * A HELLO brought a peer's full address. Finds the entry that has its key,
 * completes a partial entry for its rail 0, or adds a slot the application
 * cannot see (its messages show FI_ADDR_NOTAVAIL as their source until the
 * application inserts the peer, whose entry then aliases that slot).
 * addr is decoded, full and compatible. Returns 0 with *fi_addr (the
 * peer's canonical entry), or an error after a warning.
 */
int mrail_av_learn_peer(struct mrail_av *av, const struct mrail_addr *addr,
			fi_addr_t *fi_addr);
/* Reposts a receive buffer on its rail. */
int mrail_rx_buf_post(struct mrail_ep *ep, struct mrail_rail_buf *buf);
void mrail_msg_handle_tx(struct mrail_ep *ep, struct mrail_rail_buf *buf, int err);
void mrail_msg_flush(struct mrail_ep *ep);
/* A rendezvous read finished on a rail (err 0 or a positive FI_E*). */
void mrail_rdv_handle_read(struct mrail_ep *ep, struct mrail_rail_ctx *rc, int err);
/* Issues reads and ACKs that had to wait for rail resources. */
void mrail_rdv_progress(struct mrail_ep *ep);
/* fi_cancel of a posted receive. */
ssize_t mrail_msg_cancel(struct mrail_ep *ep, void *context);
/*
 * Rail policies and statistics (mrail_policy.c). Caller holds the domain
 * lock, except for env_check, init and control (which takes it).
 */
/* fi_getinfo: the FI_MRAIL_* policy variables are valid for these rails;
 * else a warning naming the variable and its value, and -FI_ENODATA. */
int mrail_policy_env_check(const struct mrail_railset *set);
/* fi_endpoint: the policies from the variables, statistics zero. */
int mrail_policy_init(struct mrail_ep *ep);
/* fi_close: logs every rail's statistics (FI_LOG_LEVEL=info). */
void mrail_policy_log_stats(struct mrail_ep *ep);
/* FI_MRAIL_GET_POLICY, SET_POLICY, GET_STATS, RESET_STATS; -FI_ENOSYS
 * for other commands. */
int mrail_policy_control(struct mrail_ep *ep, int command, void *arg);
/* The rail the next message sent whole takes (the multiplexing policy),
 * one with a free transmit buffer, or -1 when no rail has one. */
int mrail_policy_tx_rail(struct mrail_ep *ep);
/* A rail message msg of len bytes was posted (ret 0) or not (ret: the
 * error, -FI_EAGAIN is no error) / arrived / a rail reported an error. */
void mrail_policy_tx_posted(struct mrail_ep *ep, size_t rail, const void *msg,
			    size_t len, ssize_t ret);
void mrail_policy_rx(struct mrail_ep *ep, size_t rail, const void *msg, size_t len);
void mrail_policy_error(struct mrail_ep *ep, size_t rail);
/*
 * Whether a pulled transfer may be split now. Adaptive striping splits by
 * what it knows when it splits: a transfer split long before its reads
 * reach the rails carries stale shares. It therefore plans at most
 * MRAIL_ADAPTIVE_AHEAD bytes ahead (any one transfer when nothing is
 * planned); the others wait, in order. Every other policy: always.
 */
bool mrail_policy_plan_now(struct mrail_ep *ep);
/* Splits a pulled transfer of len bytes by the striping policy (stripes as
 * core/stripe.h's); *ahead is what it counts as planned ahead (0: none),
 * until its reads and mrail_policy_xfer_done give it back. Returns the
 * stripe count, 0 for len 0, or a negative error. */
int mrail_policy_stripe(struct mrail_ep *ep, uint64_t len,
			struct mrail_stripe out[MRAIL_MAX_RAILS], uint64_t *ahead);
/* A transfer split by mrail_policy_stripe ended, every read back; unread[]
 * per stripe: the bytes never read (it failed). */
void mrail_policy_xfer_done(struct mrail_ep *ep, uint64_t ahead,
			    const struct mrail_stripe *stripes,
			    const uint64_t *unread, int count);
/* A read of a striped transfer was posted on rail (ret as above) /
 * completed, with len bytes (err 0) or not (a positive FI_E*, already
 * counted as an error): the rail meter's input, and adaptive learns.
 * ahead: the transfer's count from mrail_policy_stripe. */
void mrail_policy_read_posted(struct mrail_ep *ep, size_t rail, ssize_t ret);
void mrail_policy_read_done(struct mrail_ep *ep, size_t rail, uint64_t len, int err,
			    uint64_t ahead);

extern struct fi_ops_msg mrail_msg_ops;
extern struct fi_ops_tagged mrail_tagged_ops;
extern struct fi_ops_rma mrail_rma_ops;
extern struct fi_ops_atomic mrail_atomic_ops;
/* fi_query_atomic (mrail_atomic.c). */
int mrail_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		       enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags);

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
int mrail_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		  struct fid_av **av, void *context);

/*
 * ======================================================================
 * Counters, event queues, memory registration and wait objects
 * (mrail_cntr.c, mrail_eq.c, mrail_mr.c, wait objects in mrail_cq.c).
 * ======================================================================
 */

#include <errno.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* uthash must not exit the process when it runs out of memory. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "mr_range.h"

/* Counters a domain offers (domain_attr->cntr_cnt): mrail's own objects,
 * limited by memory only. */
#define MRAIL_CNTR_CNT 1024
/* Endpoints one counter progresses in fi_cntr_read and fi_cntr_wait. */
#define MRAIL_CNTR_MAX_EPS 16
/* Bytes one EQ event (or an EQ error's err_data) may carry. */
#define MRAIL_EQ_DATA_MAX 4096
/* Events an EQ holds for fi_eq_write when fi_eq_open's size is 0. */
#define MRAIL_EQ_DEFAULT_SIZE 256
/* What a blocking call sleeps between two rounds of endpoint progress. */
#define MRAIL_WAIT_POLL_NS (50 * 1000)
/* The access bits a memory region may grant. */
#define MRAIL_MR_ACCESS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE)

struct mrail_cntr;
struct mrail_eq;
struct mrail_mr;

/*
 * How a CQ, counter or EQ blocks: a condition variable on its owner's lock
 * for mrail's own blocking calls, and for FI_WAIT_FD an eventfd that is
 * readable from a signal until the object drains it (the object decides
 * when: once the application has seen what woke it).
 */
struct mrail_wait {
	enum fi_wait_obj obj;		/* as the application asked */
	pthread_cond_t cond;		/* on CLOCK_MONOTONIC */
	int fd;				/* FI_WAIT_FD: the eventfd, else -1 */
	bool fd_signaled;
	/* Held back by the progress thread (mrail_progress_wake). */
	bool wake_pending;
	struct mrail_wait *wake_prev, *wake_next;
};

static inline int mrail_wait_init(struct mrail_wait *wait, enum fi_wait_obj obj)
{
	pthread_condattr_t attr;
	int ret;

	wait->obj = obj;
	wait->fd_signaled = false;
	wait->fd = -1;
	wait->wake_pending = false;
	wait->wake_prev = wait->wake_next = NULL;
	if (obj == FI_WAIT_FD) {
		wait->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (wait->fd < 0)
			return -errno;
	}
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	ret = pthread_cond_init(&wait->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (ret) {
		if (wait->fd >= 0)
			close(wait->fd);
		return -ret;
	}
	return 0;
}

static inline void mrail_wait_fini(struct mrail_wait *wait)
{
	pthread_cond_destroy(&wait->cond);
	if (wait->fd >= 0)
		close(wait->fd);
	wait->fd = -1;
}

/* Makes the fd readable (owner's lock held). */
static inline void mrail_wait_signal_fd(struct mrail_wait *wait)
{
	if (wait->fd >= 0 && !wait->fd_signaled)
		wait->fd_signaled = !eventfd_write(wait->fd, 1);
}

/* Wakes mrail's waiters and makes the fd readable (owner's lock held). */
static inline void mrail_wait_signal(struct mrail_wait *wait)
{
	pthread_cond_broadcast(&wait->cond);
	mrail_wait_signal_fd(wait);
}

/* The fd is no longer readable (owner's lock held). */
static inline void mrail_wait_drain(struct mrail_wait *wait)
{
	eventfd_t value;

	if (wait->fd >= 0 && wait->fd_signaled) {
		(void) eventfd_read(wait->fd, &value);
		wait->fd_signaled = false;
	}
}

/* Sleeps on lock until signaled or deadline (NULL: none); may wake early. */
static inline void mrail_wait_sleep(struct mrail_wait *wait, pthread_mutex_t *lock,
				    const struct timespec *deadline)
{
	if (deadline)
		pthread_cond_timedwait(&wait->cond, lock, deadline);
	else
		pthread_cond_wait(&wait->cond, lock);
}

/* fi_control FI_GETWAIT and FI_GETWAITOBJ; -FI_ENOSYS for other commands. */
static inline int mrail_wait_control(const struct mrail_wait *wait, int command,
				     void *arg)
{
	switch (command) {
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		if (wait->fd < 0)
			return -FI_ENODATA;
		*(int *) arg = wait->fd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *) arg = wait->obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* The strerror of CQs and EQs: prov_errno is a FI_E* code (mrail reports
 * rails' errors as such); copied into buf when the caller gives one. */
static inline const char *mrail_strerror(int prov_errno, char *buf, size_t len)
{
	const char *text = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	if (buf && len) {
		strncpy(buf, text, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return text;
}

/* The CLOCK_MONOTONIC time timeout ms from now; NULL for a negative
 * timeout (no deadline), else deadline. */
static inline const struct timespec *mrail_deadline(struct timespec *deadline,
						    int timeout)
{
	if (timeout < 0)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_sec += timeout / 1000;
	deadline->tv_nsec += (long) (timeout % 1000) * 1000000;
	if (deadline->tv_nsec >= 1000000000) {
		deadline->tv_sec++;
		deadline->tv_nsec -= 1000000000;
	}
	return deadline;
}

static inline bool mrail_deadline_passed(const struct timespec *deadline)
{
	struct timespec now;

	if (!deadline)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* The pause between two progress rounds of a blocking call: short, but a
 * sleep, so waiting never spins a core. */
static inline void mrail_wait_nap(void)
{
	struct timespec nap = { .tv_nsec = MRAIL_WAIT_POLL_NS };

	nanosleep(&nap, NULL);
}

/*
 * What a domain keeps for these objects. struct mrail_domain is shared with
 * the data path, so mrail_domain_open allocates this around it: every
 * mrail_domain is the first member of one. Guarded by domain.lock.
 */
struct mrail_domain_objs {
	struct mrail_domain domain;
	struct mrail_mr *mr_by_key;	/* uthash on mrail_mr.key */
	struct mrail_eq *eq;		/* fi_domain_bind: default EQ or NULL */
	bool reg_mr_async;		/* bound with FI_REG_MR */
};

static inline struct mrail_domain_objs *mrail_domain_objs(struct mrail_domain *domain)
{
	return container_of(domain, struct mrail_domain_objs, domain);
}

/* Counters. Caller holds the domain lock for inc, inc_err, attach, detach. */
int mrail_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		    struct fid_cntr **cntr, void *context);
/* The mrail counter behind fid, or NULL (not a counter, or not mrail's). */
struct mrail_cntr *mrail_cntr_from_fid(struct fid *fid);
/* fi_poll: progresses what moves the counter, then its count and error
 * count (caller holds the domain lock). */
void mrail_cntr_poll_values(struct mrail_cntr *cntr, uint64_t *value, uint64_t *err);
/* A poll set takes (+1) or lets go of (-1) the counter, which refuses to
 * close while any holds it. */
void mrail_cntr_poll_ref(struct mrail_cntr *cntr, int delta);
int mrail_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		    struct fid_poll **pollset);
/* One operation completed successfully / in error: wakes waiters. */
void mrail_cntr_inc(struct mrail_cntr *cntr);
void mrail_cntr_inc_err(struct mrail_cntr *cntr);
/* A memory region counts its remote accesses on the counter
 * (fi_mr_bind): a counter held by regions refuses to close (-FI_EBUSY). */
void mrail_cntr_hold(struct mrail_cntr *cntr);
void mrail_cntr_release(struct mrail_cntr *cntr);
/* fi_cntr_read and fi_cntr_wait progress the endpoints attached; a counter
 * with endpoints attached refuses to close (-FI_EBUSY). -FI_ENOSPC beyond
 * MRAIL_CNTR_MAX_EPS. Attaching twice is attaching once. */
int mrail_cntr_attach_ep(struct mrail_cntr *cntr, struct mrail_ep *ep);
void mrail_cntr_detach_ep(struct mrail_cntr *cntr, struct mrail_ep *ep);
/* fi_trywait on one counter: 0 or -FI_EAGAIN (or -FI_EINVAL). */
int mrail_cntr_trywait(struct fid *fid);
struct mrail_domain *mrail_cntr_domain(const struct mrail_cntr *cntr);
/*
 * Triggers (lock held). Arms op on the counter's FI_TRIGGER queue (the
 * count) or, with_errors, its deferred-work queue (count + error count).
 * Returns 0 when it waits, 1 when the threshold is already reached (op is
 * then on domain->trig_ready), or a negative error. Whenever the counter
 * moves, ops that reach their threshold move to domain->trig_ready.
 * disarm takes a waiting op off again: 0, or -FI_ENOENT.
 */
int mrail_cntr_arm(struct mrail_cntr *cntr, struct mrail_trig_op *op,
		   uint64_t threshold, bool with_errors);
int mrail_cntr_disarm(struct mrail_cntr *cntr, struct mrail_trig_op *op,
		      bool with_errors);

/*
 * Triggered operations and deferred work (mrail_trigger.c).
 */
struct mrail_trig_work;
/* fi_*msg with FI_TRIGGER: copies the operation (msg is the fi_msg,
 * fi_msg_tagged, fi_msg_rma or fi_msg_atomic of type; fetch and compare
 * for the fetch and compare atomics) and arms it. Lock not held. */
ssize_t mrail_trigger_post(struct mrail_ep *ep, enum fi_op_type type,
			   const void *msg, const struct fi_msg_fetch *fetch,
			   const struct fi_msg_compare *compare, uint64_t flags);
/* Issues the operations whose threshold was reached, in order. Caller
 * holds the lock, which is released while each one is issued. */
void mrail_trigger_fire(struct mrail_domain *domain);
/* A completion of an issued triggered operation becomes the application's
 * (returns true), or is not one (false). Lock held. */
bool mrail_trigger_complete(struct mrail_ep *ep, const struct mrail_cq_entry *entry,
			    bool report);
/* fi_cancel of a triggered operation (lock held): 0 or -FI_ENOENT. */
ssize_t mrail_trigger_cancel(struct mrail_ep *ep, void *context);
/* Triggered operations and deferred work not completed yet that arm on,
 * count on or set cntr (lock held). */
size_t mrail_trigger_cntr_users(struct mrail_domain *domain, struct mrail_cntr *cntr);
/* The endpoint closes: its triggered work is dropped (lock held). */
void mrail_trigger_ep_close(struct mrail_ep *ep);
/* fi_control FI_QUEUE_WORK, FI_CANCEL_WORK, FI_FLUSH_WORK on the domain
 * (takes the lock); -FI_ENOSYS for other commands. */
int mrail_trigger_domain_control(struct mrail_domain *domain, int command, void *arg);
/* FI_MRAIL_PEER_TIMEOUT in ns (default when unset); else a warning naming
 * it and -FI_ENODATA. */
int mrail_liveness_env(uint64_t *timeout_ns);
/* The mrail endpoint behind fid, or NULL. */
struct mrail_ep *mrail_ep_from_fid(struct fid *fid);
/* fi_ep_alias (FI_ALIAS on the endpoint): an alias with its own default
 * operation flags; the endpoint refuses to close until it is closed. */
int mrail_ep_alias(struct mrail_ep *ep, struct fi_alias *req);
/* fi_tx_context/fi_rx_context of a scalable endpoint (side FI_TRANSMIT or
 * FI_RECV): an alias of it with op_flags as that side's defaults, which
 * takes the CQs and counters of its side. */
int mrail_ep_context_open(struct mrail_ep *ep, uint64_t side, uint64_t op_flags,
			  struct fid_ep **ctx, void *context);
void mrail_ep_context_closed(struct mrail_ep *ep, uint64_t side);
int mrail_sep_open(struct fid_domain *domain, struct fi_info *info,
		   struct fid_ep **sep, void *context);
/* The mrail endpoint of fid, an endpoint or an alias of one; or NULL. */
struct mrail_ep *mrail_ep_or_alias(struct fid *fid);

/* Shared transmit contexts (mrail_stx.c): fi_stx_context, and fi_ep_bind
 * of one (domain lock held; the endpoint not enabled). */
#define MRAIL_STX_MAX_EPS 256
struct mrail_stx;
int mrail_stx_open(struct fid_domain *domain, struct fi_tx_attr *attr,
		   struct fid_stx **stx, void *context);
int mrail_stx_attach_ep(struct mrail_ep *ep, struct fid *fid);
void mrail_stx_detach_ep(struct mrail_ep *ep);

/* Shared receive contexts (mrail_srx.c): fi_srx_context, and fi_ep_bind of
 * one (domain lock held; the endpoint not enabled): the endpoint then
 * matches its messages in the context's queues. Detach after the
 * endpoint's messages are flushed. */
#define MRAIL_SRX_MAX_EPS 256
struct mrail_srx;
int mrail_srx_open(struct fid_domain *domain, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context);
int mrail_srx_attach_ep(struct mrail_ep *ep, struct fid *fid);
/* At fi_enable: the endpoint's AV must be the context's other endpoints'. */
int mrail_srx_check_enable(struct mrail_ep *ep);
void mrail_srx_detach_ep(struct mrail_ep *ep);

/* CQ wait objects (the rest of the CQ is declared above). */
struct mrail_cq *mrail_cq_from_fid(struct fid *fid);
int mrail_cq_trywait(struct fid *fid);

/*
 * Event queues belong to the fabric and have a lock of their own, which
 * nests inside a domain lock: the write functions may be called with a
 * domain lock held. They never fail for lack of room (provider events are
 * not dropped); they return 0, -FI_EINVAL (more than MRAIL_EQ_DATA_MAX
 * bytes, flags other than 0) or -FI_ENOMEM.
 */
int mrail_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		  struct fid_eq **eq, void *context);
struct mrail_eq *mrail_eq_from_fid(struct fid *fid);
/* An object binds the EQ: fi_close(eq) returns -FI_EBUSY until detached. */
void mrail_eq_attach(struct mrail_eq *eq);
void mrail_eq_detach(struct mrail_eq *eq);
/* A successful asynchronous event (FI_AV_COMPLETE, FI_MR_COMPLETE,
 * FI_JOIN_COMPLETE...); buf starts with a struct fi_eq_entry. */
int mrail_eq_write_event(struct mrail_eq *eq, uint32_t event, const void *buf,
			 size_t len, uint64_t flags);
/* A failed one, for fi_eq_readerr: err is a positive FI_E* value;
 * err_data (may be NULL) is copied. */
int mrail_eq_write_error(struct mrail_eq *eq, fid_t fid, void *context,
			 uint64_t data, int err, int prov_errno,
			 const void *err_data, size_t err_data_size);
int mrail_eq_trywait(struct fid *fid);

/*
 * Memory region: the application's key, registered on every rail. A rail
 * that chooses its own keys (FI_MR_PROV_KEY) has a different key there,
 * in rail_keys; the data path translates. Domain lock for lookup.
 */
struct mrail_mr {
	struct fid_mr mr_fid;		/* mem_desc points back to this */
	struct mrail_domain *domain;
	uint64_t key;			/* requested_key, unique per domain */
	void *base;
	size_t len;
	uint64_t access;
	size_t rail_count;
	struct fid_mr *rail_mrs[MRAIL_MAX_RAILS];
	void *rail_desc[MRAIL_MAX_RAILS];
	uint64_t rail_keys[MRAIL_MAX_RAILS];	/* fi_mr_key on each rail */
	/* fi_mr_bind: the counter of remote accesses of the kinds in
	 * cntr_flags (FI_REMOTE_WRITE, FI_REMOTE_READ), or NULL. */
	struct mrail_cntr *cntr;
	uint64_t cntr_flags;
	UT_hash_handle hh;
};

int mrail_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		 uint64_t offset, uint64_t requested_key, uint64_t flags,
		 struct fid_mr **mr, void *context);
int mrail_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		  uint64_t access, uint64_t offset, uint64_t requested_key,
		  uint64_t flags, struct fid_mr **mr, void *context);
int mrail_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		     uint64_t flags, struct fid_mr **mr);
/* The region registered under key in domain, or NULL. */
struct mrail_mr *mrail_mr_lookup(struct mrail_domain *domain, uint64_t key);

/* ================ end of counters, EQs, MRs, wait objects ================ */

/*
 * ======================================================================
 * Collectives (mrail_av_set.c, mrail_coll.c). Caller holds the domain
 * lock for handle_rx, progress and ep_close.
 * ======================================================================
 */
#include <rdma/fi_collective.h>

/* fi_addr_t values naming an AV set (fi_av_set_addr) and a joined group
 * (fi_mc_addr): far above any AV index. */
#define MRAIL_COLL_SET_ADDR_BIT ((uint64_t) 1 << 61)
#define MRAIL_COLL_GROUP_ADDR_BIT ((uint64_t) 1 << 62)

struct mrail_coll_ep;

int mrail_av_set_open(struct fid_av *av, struct fi_av_set_attr *attr,
		      struct fid_av_set **set, void *context);
/* The AV, members (fi_addr_t in set order) and address of an AV set mrail
 * opened; -FI_EINVAL for anything else. */
int mrail_av_set_members(const struct fid_av_set *set, struct mrail_av **av,
			 const uint64_t **addrs, size_t *n, fi_addr_t *coll_addr);
extern struct fi_ops_collective mrail_coll_ops;
/* fi_join (fi_join_collective) on an endpoint. */
int mrail_coll_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		    struct fid_mc **mc, void *context);
int mrail_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			   struct fi_collective_attr *attr, uint64_t flags);
/* A COLL message from a peer the AV knows. */
void mrail_coll_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			  const struct mrail_wire_hdr *hdr, const uint8_t *payload);
/* The endpoint closes: its groups' operations are dropped. */
void mrail_coll_ep_close(struct mrail_ep *ep);

#endif /* MRAIL_H */
