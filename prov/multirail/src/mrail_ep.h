/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Endpoints (mrail_ep.c): the rails' operation contexts and bounce
 * buffers, struct mrail_peer (mrail_peer.c), the rail policies and
 * statistics (mrail_policy.c), struct mrail_ep; the calls between the
 * endpoint and its engine, aliases and scalable endpoints
 * (mrail_ep_alias.c), shared transmit (mrail_stx.c) and receive
 * (mrail_srx.c) contexts, and the ops tables the data path offers.
 */
#ifndef MRAIL_EP_SRC_H
#define MRAIL_EP_SRC_H

#include "mrail.h"
#include "mrail_cq.h"

#include "liveness.h"
#include "match.h"
#include "policy.h"
#include "rail_health.h"
#include "rail_meter.h"
#include "ratelimit.h"
#include "reorder.h"
#include "stripe.h"
#include "stripe_policy.h"

struct mrail_av;
struct mrail_cq;

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
struct mrail_deferred_item;

/* The lanes of the deferred-work queue (mrail_tx.c), drained in this
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
	/* TX: the peer it went to (rail health), or FI_ADDR_NOTAVAIL; and
	 * whether it may go on any rail (the policy picked one) rather
	 * than on this one only (a HELLO, a reservation, a rail's probe). */
	fi_addr_t dest;
	bool any_rail;
	/* TX: posted to its rail and not completed yet, with len bytes; and
	 * superseded: the message was sent again on another rail (the rail
	 * failed for the peer), so its completion does nothing. */
	bool posted;
	bool superseded;
	size_t len;
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
	/* Second copies of its messages dropped (sent again by the peer when
	 * a rail failed, the first copy having arrived after all). */
	uint64_t duplicates;
	/* Credit-spending messages taken off the rails in all: a CREDIT
	 * carries this total, so one lost with a rail is made good by the
	 * next. */
	uint64_t taken;
	/* Messages held behind a gap: the message awaited (reorder.next)
	 * since when, and when we last told the peer (a CREDIT) that we
	 * still wait for it: it sends it again if it was lost. */
	uint64_t gap_seq, gap_since_ns, gap_told_ns;
	/* Numbered messages taken in order (or second copies dropped) since
	 * our last CREDIT, from when: a quiet peer still hears, within half
	 * a rail timeout, that they arrived (mrail_credit_send_overdue). */
	bool ack_due;
	uint64_t ack_due_ns;
};

/*
 * A copy of a numbered message (EAGER, RTS) a rail took for a peer that has
 * not yet said it arrived (a CREDIT's next seq): a send completes once the
 * rail's socket has it, and a link that dies then loses it. If the rail
 * fails for the peer, the copy goes again on another (mrail_replay);
 * the peer takes whichever copy comes first.
 */
struct mrail_unacked {
	struct mrail_unacked *prev, *next;	/* utlist DL, send order */
	uint64_t seq;
	uint64_t sent_ns;	/* when its rail completed it */
	size_t rail;
	size_t len;
	uint8_t data[];
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
	/* The largest "taken" total its CREDITs reported. */
	uint64_t tx_returned;
	/* Our numbered messages its rails took and it has not acknowledged,
	 * and our recent answers to it (kept for MRAIL_ANSWER_KEEP_TIMEOUTS rail
	 * timeouts): kept only with two rails or more. */
	struct mrail_unacked *unacked, *answers;
	/* The peer knows this endpoint's key (our HELLO to it is queued or
	 * sent, or one of its HELLOs reached us), so our sends need no
	 * introduction (core/first_contact.h). */
	bool introduced;
	/* When we last asked it which of our messages it waits for
	 * (mrail_health.c, ask_peer). */
	uint64_t asked_ns;
	struct mrail_peer_rx rx;		/* its messages to us */
	struct mrail_live_peer live;	/* liveness (mrail_peer.c) */
	/* Is each rail still a way to reach it (mrail_health.c)? */
	struct mrail_rail_health rails[MRAIL_MAX_RAILS];
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
	/* Some peer has unacknowledged messages on a failed rail that no
	 * other rail could take yet (mrail_replay retries). */
	bool replay_pending;
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
	/* Receives completed while reads their rail lost were outstanding:
	 * kept until those come back (mrail_rdv.c). */
	struct mrail_rdv_recv *rdv_orphaned;
	/* Of those, the ones the striping policy did not split yet
	 * (mrail_policy_plan_now): they are split in list order. */
	size_t rdv_unplanned;
	/* mrail's own messages waiting for a transmit buffer, per lane
	 * (mrail_tx.c, in the order core/deferred.h keeps). */
	struct mrail_deferred_item *deferred[MRAIL_LANES];
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
	struct mrail_live_links links;	/* this host's rail links */
	/* Rail health (mrail_health.c): FI_MRAIL_RAIL_TIMEOUT and the probe
	 * interval; when to judge the peers' rails next. */
	struct mrail_health_config health;
	uint64_t health_next_check_ns;
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

/* Drives every rail of ep once (caller holds the domain lock); returns
 * how many rail completions it handled (0: the rails were idle). */
size_t mrail_ep_progress(struct mrail_ep *ep);
/* The endpoint's mrail address (every rail), whatever fi_getname's format:
 * what a HELLO carries. */
int mrail_ep_full_name(struct mrail_ep *ep, void *addr, size_t *addrlen);

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
/* bytes of a stripe planned for rail `from` go on rail `to` instead (the
 * rail failed for the peer); ahead: the transfer's, as for read_done. */
void mrail_policy_stripe_moved(struct mrail_ep *ep, size_t from, size_t to,
			       uint64_t bytes, uint64_t ahead);
void mrail_policy_read_done(struct mrail_ep *ep, size_t rail, uint64_t len, int err,
			    uint64_t ahead);
/* A read given up on when its rail failed (mrail_rdv.c): done for the
 * plan and the meter now, as a failed read, but still the rail's (its
 * reads_in_flight) until it comes back: mrail_policy_read_returned. */
void mrail_policy_read_given_up(struct mrail_ep *ep, size_t rail, uint64_t len,
				uint64_t ahead);
void mrail_policy_read_returned(struct mrail_ep *ep, size_t rail);

extern struct fi_ops_msg mrail_msg_ops;
extern struct fi_ops_tagged mrail_tagged_ops;
extern struct fi_ops_rma mrail_rma_ops;
extern struct fi_ops_atomic mrail_atomic_ops;
/* fi_query_atomic (mrail_atomic.c). */
int mrail_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		       enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags);

/* FI_MRAIL_PEER_TIMEOUT in ns (default when unset); else a warning naming
 * it and -FI_ENODATA. */
int mrail_liveness_env(uint64_t *timeout_ns);

/*
 * Rail health per peer (mrail_health.c). The engine reports what each rail
 * does for a peer: an operation posted, one completed locally (a send), the
 * peer heard (a message from it, or a read it served), an error. Progress
 * judges the records now and then: a rail that fails for a peer leaves
 * every choice of a rail for that peer until a probe on it is answered.
 */
/* FI_MRAIL_RAIL_TIMEOUT (default when unset) into cfg; else a warning
 * naming it and -FI_ENODATA. */
int mrail_health_env(struct mrail_health_config *cfg);
void mrail_rail_posted(struct mrail_ep *ep, fi_addr_t peer, size_t rail);
/* A send to the peer completed on the rail; probe: it was one of our probes,
 * which wants no answer of its own kind (its echo is awaited apart). */
void mrail_rail_completed(struct mrail_ep *ep, fi_addr_t peer, size_t rail,
			  bool probe);
/* The rail answered -FI_EAGAIN to an operation to the peer. */
void mrail_rail_refused(struct mrail_ep *ep, fi_addr_t peer, size_t rail);
void mrail_rail_heard(struct mrail_ep *ep, fi_addr_t peer, size_t rail,
		      enum mrail_health_heard_kind kind);
void mrail_rail_error(struct mrail_ep *ep, fi_addr_t peer, size_t rail);
/* May the rail carry traffic to the peer now? */
bool mrail_rail_usable(const struct mrail_ep *ep, fi_addr_t peer, size_t rail);
/* The first rail after `after` (in turn, `after` itself last) that may
 * carry traffic to the peer, or -1 when none may. */
int mrail_rail_usable_after(const struct mrail_ep *ep, fi_addr_t peer,
			    size_t after);
/* A new peer's records: rails whose link was down here at fi_getinfo start
 * failed, probed at once. */
void mrail_health_peer_init(struct mrail_ep *ep, struct mrail_peer *peer);
/* A PROBE arrived on the rail: answered on that rail when it asks. */
void mrail_probe_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			   const struct mrail_wire_hdr *hdr,
			   const uint8_t *payload);
/* Judges the rails of every peer, at most every few milliseconds. */
void mrail_health_progress(struct mrail_ep *ep);
/* Bytes of an operation on a failed rail that went again on another. */
void mrail_rail_reissued(struct mrail_ep *ep, fi_addr_t peer, size_t rail,
			 uint64_t bytes);
/* FI_MRAIL_GET_PEER_RAILS. */
int mrail_health_control(struct mrail_ep *ep, struct fi_mrail_peer_rails *arg);
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

#endif /* MRAIL_EP_SRC_H */
