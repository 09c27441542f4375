/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the message and protocol files share: the engine (mrail_engine.c),
 * mrail_msg.c (matching, delivery, the eager protocol), mrail_contact.c
 * (HELLO and credits), mrail_rdv.c (rendezvous and the pull engine),
 * mrail_tagged.c (fi_ops_tagged), mrail_rma.c and mrail_atomic.c.
 */
#ifndef MRAIL_MSG_H
#define MRAIL_MSG_H

#include "mrail.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "deferred.h"

#include <sys/uio.h>

struct mrail_av_peer;

/* A message that arrived, waiting for its receive or being delivered. An
 * eager one carries its data; a rendezvous one says where to read it. */
struct mrail_rx_msg {
	struct mrail_match_item item;
	/* The endpoint it arrived on, whose rails and CQ deliver it: a
	 * receive of a shared receive context may take it (mrail_srx.c). */
	struct mrail_ep *ep;
	bool tagged;
	bool has_data;
	uint64_t data;
	size_t len;		/* the message's length */
	bool rdv;
	bool ack_req;		/* eager: the sender waits for an ACK */
	uint64_t req_id;	/* rendezvous or ack_req: the sender's request */
	struct mrail_wire_rts rts;
	/* A numbered request that is no message (WRITE, READ_REQ, ATOMIC),
	 * held for its turn (mrail_engine.c): it goes to its handler with
	 * this header, from this rail; payload holds its len bytes. */
	bool request;
	struct mrail_wire_hdr hdr;
	size_t rail;
	uint8_t payload[];	/* eager: len bytes */
};

/* A posted receive. */
struct mrail_recv {
	struct mrail_match_item item;
	void *context;
	struct iovec iov[MRAIL_IOV_LIMIT];
	size_t iov_count;
	uint64_t flags;
	bool tagged;
	/* FI_MULTI_RECV. Each message gets a receive of its own (a part)
	 * over the next bytes of the buffer, and the buffer's receive lives
	 * until it is released and its last part has completed. */
	struct mrail_recv *multi;	/* a part: the buffer it belongs to */
	struct mrail_multi_space space;	/* the buffer: bytes claimed so far */
	size_t multi_inflight;		/* the buffer: parts not completed */
	bool multi_released;		/* the buffer: takes no more messages */
};

size_t mrail_iov_total(const struct iovec *iov, size_t count);

/* The completion a receive gets for msg, before its data is placed. */
struct mrail_cq_entry mrail_recv_entry(const struct mrail_recv *recv,
				       const struct mrail_rx_msg *msg);


/* Writes the completion of a receive (flags: how it was posted). A part of
 * a multi-receive buffer (multi != NULL) that is the last to complete after
 * the buffer's release carries FI_MULTI_RECV, is always written, and frees
 * the buffer's receive. */
void mrail_recv_write_completion(struct mrail_ep *ep, struct mrail_recv *multi,
				 uint64_t flags, struct mrail_cq_entry *entry);

/* A part of a multi-receive buffer that will never complete (the endpoint
 * is closing): frees the buffer's receive if it was its last. */
void mrail_multi_recv_drop_part(struct mrail_recv *multi);

/* Delivers msg to recv: copies eager data or starts the rendezvous reads.
 * Frees recv and msg (a rendezvous keeps what it needs). */
void mrail_recv_complete(struct mrail_ep *ep, struct mrail_recv *recv,
			 struct mrail_rx_msg *msg);

/* Drops a message nobody will receive (FI_DISCARD, endpoint close); a
 * rendezvous sender is told so it can complete. Frees msg. */
void mrail_rx_msg_discard(struct mrail_ep *ep, struct mrail_rx_msg *msg);

ssize_t mrail_post_recv(struct mrail_ep *ep, const struct iovec *iov, size_t count,
			fi_addr_t src, uint64_t tag, uint64_t ignore, void *context,
			uint64_t flags, bool tagged);

/* inject: an fi_inject call, which writes no completion (flags' FI_INJECT
 * only limits the size: fi_sendmsg with it completes as usual). dest is
 * the application's fi_addr_t. */
/*
 * What the first send, RMA or atomic of this endpoint to dest needs
 * (core/first_contact.h): 0 when the data may go (an introduction queued
 * ahead of it if the peer does not know us), -FI_EAGAIN while a partial
 * entry waits for the peer's HELLO REPLY, -FI_EINVAL for no peer. dest is
 * canonical; caller holds the lock.
 */
ssize_t mrail_contact_prepare(struct mrail_ep *ep, fi_addr_t dest);
ssize_t mrail_send_common(struct mrail_ep *ep, const struct iovec *iov, size_t count,
			  fi_addr_t dest, uint64_t tag, uint64_t data, void *context,
			  uint64_t flags, bool tagged, bool inject);

/* A free transmit buffer on the rail the multiplexing policy picks
 * (mrail_policy_tx_rail), or NULL. */
struct mrail_rail_buf *mrail_tx_buf_get(struct mrail_ep *ep);
void mrail_tx_buf_put(struct mrail_ep *ep, struct mrail_rail_buf *buf);
/*
 * Sends buf's message (posted, or failed by its rail) again on another rail
 * that may carry traffic to its peer, when it is one that may go twice
 * (EAGER and RTS, which the peer takes once by sequence number; ACK,
 * CREDIT). The copy takes over what buf's completion would have done; buf
 * completes as nothing. Returns 0, -FI_EINVAL for a message that may not
 * go again, or -FI_EAGAIN when no rail could take it now.
 */
int mrail_tx_resend(struct mrail_ep *ep, struct mrail_rail_buf *buf);
/* Resends the messages posted to peer on rail that have not completed
 * (the rail has failed for the peer); returns whether some found no other
 * rail with a free buffer yet. */
bool mrail_tx_resend_stuck(struct mrail_ep *ep, fi_addr_t peer, size_t rail);
/* Sends len bytes of buf to peer on buf's rail; on failure buf goes back to
 * its free list and the rail's error is returned. */
ssize_t mrail_tx_buf_send(struct mrail_ep *ep, struct mrail_rail_buf *buf,
			  size_t len, const struct mrail_av_peer *peer);

/* Messages a rail may have lost, sent again (mrail_replay.c). Caller holds
 * the domain lock. */
/* buf's rail has just completed it: a copy of a numbered message (EAGER,
 * RTS) is kept until the peer acknowledges it, of an ACK for a while (two
 * rails or more). */
void mrail_replay_keep(struct mrail_ep *ep, const struct mrail_rail_buf *buf);
/* The peer has every numbered message of ours before next_seq. */
void mrail_replay_acked(struct mrail_ep *ep, fi_addr_t peer, uint64_t next_seq);
/* The peer waits for our message seq: if a copy of it is kept and went out
 * a rail timeout ago or more, it goes again (the peer drops a second copy). */
void mrail_replay_awaited(struct mrail_ep *ep, fi_addr_t peer, uint64_t seq);
/* Whether a copy went out MRAIL_REPLAY_OVERDUE_TIMEOUTS rail timeouts ago
 * and the peer has not acknowledged it (now: mrail_now_ns()). The peer is
 * then asked for its totals (mrail_health.c), and sends the copy it waits
 * for again through mrail_replay_awaited: blind copies would pile up in a
 * peer that is only slow to progress. */
bool mrail_replay_overdue(const struct mrail_ep *ep, fi_addr_t peer, uint64_t now);
/* The peer asks again for our answers to its requests req_ids (a PROBE's
 * payload): those we keep go again, flagged as possible second copies. */
void mrail_replay_answers_asked(struct mrail_ep *ep, fi_addr_t peer,
				const uint64_t *req_ids, size_t count);
/* Sends again, on rails that work for the peer, every message to it whose
 * rail has failed for it: those still posted there, and the copies kept of
 * those it completed. Returns whether some found no rail or no buffer yet
 * (ep->replay_pending is then set). */
bool mrail_replay(struct mrail_ep *ep, fi_addr_t peer);
/* Drops the copies kept for the peer (it is gone, or the endpoint is). */
void mrail_replay_free(struct mrail_ep *ep, fi_addr_t peer);

/* The engine (mrail_engine.c). Frees the messages the engine holds for a closing endpoint. */
void mrail_engine_flush(struct mrail_ep *ep);

/* An EAGER or RTS decoded into a message for matching, or NULL with err. */
struct mrail_rx_msg *mrail_msg_from_wire(struct mrail_ep *ep,
					 const struct mrail_wire_hdr *hdr,
					 const uint8_t *payload, fi_addr_t peer,
					 char *err, size_t err_len);
/* A message in its sender's order meets the receives waiting for it. */
void mrail_msg_deliver(struct mrail_ep *ep, struct mrail_rx_msg *msg);

/*
 * Handlers of the engine's opcode table (rx_ops, mrail_engine.c): one
 * message from peer on rail, header checked, payload hdr->payload_len bytes.
 */
/* First contact and credits (mrail_contact.c); peer is FI_ADDR_NOTAVAIL
 * for a HELLO, which may come from a stranger. */
void mrail_hello_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t unknown,
			   const struct mrail_wire_hdr *hdr, const uint8_t *payload);
void mrail_credit_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			    const struct mrail_wire_hdr *hdr, const uint8_t *payload);
/* One credit-spending message from peer is off our rails: a CREDIT goes
 * back once a batch has gathered. */
void mrail_credit_owe(struct mrail_ep *ep, fi_addr_t peer);
/* Sends peer our running totals now: a rail to it failed, and a CREDIT may
 * have been lost with it. */
void mrail_credit_refresh(struct mrail_ep *ep, fi_addr_t peer);
/* Numbered messages of the peer arrived (in order, or as second copies):
 * a CREDIT is due, sent with the next batch or by mrail_credit_send_overdue. */
void mrail_credit_ack_due(struct mrail_ep *ep, fi_addr_t peer);
/* Holding the peer's later messages behind a missing one for half a rail
 * timeout, or owing it word of arrived ones that long: a CREDIT tells it
 * which one we wait for (now: mrail_now_ns()). */
void mrail_credit_send_overdue(struct mrail_ep *ep, fi_addr_t peer,
			       uint64_t now);

/* Rendezvous (mrail_rdv.c). Caller holds the domain lock. */
/* Calls fn for each operation of ours waiting for a peer's answer (an
 * ACK, READ_RESP or ATOMIC_RESP) since since_ns or earlier. */
void mrail_rdv_each_wait_since(struct mrail_ep *ep, uint64_t since_ns,
			       void (*fn)(struct mrail_ep *ep, fi_addr_t peer,
					  uint64_t req_id, void *arg),
			       void *arg);
ssize_t mrail_rdv_send(struct mrail_ep *ep, const struct iovec *iov, size_t count,
		       fi_addr_t dest, const struct mrail_wire_hdr *hdr,
		       const struct mrail_cq_entry *user, bool complete_user);
void mrail_rdv_recv_start(struct mrail_ep *ep, struct mrail_recv *recv,
			  struct mrail_rx_msg *msg);
/* An ACK arrived from peer for one of our rendezvous sends. */
void mrail_rdv_handle_ack(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			  const struct mrail_wire_hdr *hdr, const uint8_t *payload);
/* Tells a rendezvous sender its message is done with (status 0 or -errno). */
void mrail_rdv_ack_sender(struct mrail_ep *ep, fi_addr_t peer, uint64_t req_id,
			  int32_t status);
/* A rendezvous send failed before its ACK (its RTS could not be sent). */
void mrail_rdv_send_failed(struct mrail_ep *ep, uint64_t req_id, int err);
/* An eager send whose completion waits for the receiver's ACK
 * (FI_DELIVERY_COMPLETE): its request id, or 0 when out of memory. Cancel
 * drops it again when the send could not be posted. */
uint64_t mrail_ack_wait_add(struct mrail_ep *ep, fi_addr_t dest,
			    const struct mrail_cq_entry *user, bool complete_user);
void mrail_ack_wait_cancel(struct mrail_ep *ep, uint64_t req_id);
/*
 * A request: a message whose operation completes on the peer's answer (an
 * ACK, READ_RESP or ATOMIC_RESP under req_id) or on a failed send. Its
 * buffer comes from mrail_request_buf (NULL: none free, after a progress
 * round, so the caller's -FI_EAGAIN retry may find one), and
 * mrail_request_send sends len bytes of it to dest on behalf of user's
 * operation, cancelling req_id's wait (0: none) when it fails; -FI_EAGAIN
 * after a progress round. complete_user: the operation completes as the
 * buffer goes (an eager send nobody answers).
 */
struct mrail_rail_buf *mrail_request_buf(struct mrail_ep *ep);
ssize_t mrail_request_send(struct mrail_ep *ep, struct mrail_rail_buf *buf,
			   size_t len, fi_addr_t dest, uint64_t req_id,
			   const struct mrail_cq_entry *user, bool complete_user);
void mrail_rdv_flush(struct mrail_ep *ep);
/* Sets waited[p] for every peer p this endpoint waits on for an ACK or a
 * response (waited has ep->peer_cap entries). */
void mrail_rdv_mark_waited(struct mrail_ep *ep, bool *waited);
/* Fails every operation waiting on peer with err, and drops the control
 * messages queued for it. */
void mrail_rdv_fail_peer(struct mrail_ep *ep, fi_addr_t peer, int err);
/* The rail failed for the peer: its staged reads go on other rails. */
void mrail_rdv_rail_failed(struct mrail_ep *ep, fi_addr_t peer, size_t rail);

/*
 * Peer liveness (mrail_peer.c, decisions in core/liveness.c). Caller
 * holds the lock. sent: a rail send to dest returned ret. heard: a message
 * from peer arrived. unreachable: sends to it must fail. progress: probes
 * and judges the peers now and then.
 */
void mrail_liveness_sent(struct mrail_ep *ep, fi_addr_t dest, ssize_t ret);
void mrail_liveness_heard(struct mrail_ep *ep, fi_addr_t peer);
bool mrail_liveness_unreachable(const struct mrail_ep *ep, fi_addr_t dest);
void mrail_liveness_progress(struct mrail_ep *ep);

/*
 * The deferred-work queue (mrail_tx.c): mrail's own messages to peers,
 * sent at once when a transmit buffer is free and nothing waits before them
 * in their lane, else queued and sent by the progress engine in order.
 */
/* "Whichever rail the multiplexing policy picks", where a rail is asked. */
#define MRAIL_ANY_RAIL MRAIL_DEFERRED_ANY_RAIL
/* A free transmit buffer of that rail, or NULL. */
struct mrail_rail_buf *mrail_tx_buf_on_rail(struct mrail_ep *ep, size_t rail);
/* Sends a control message of at most one rail buffer now, on rail or
 * MRAIL_ANY_RAIL: 0, -FI_EAGAIN when no transmit buffer is free or the rail
 * pushes back, or an error. Nothing is queued. */
int mrail_ctrl_send_now(struct mrail_ep *ep, fi_addr_t dest, size_t rail,
			const void *msg, size_t len);
/* Sends it now or queues it in lane: 0, or an error for a message that can
 * never go (the caller says so). */
int mrail_ctrl_post(struct mrail_ep *ep, enum mrail_lane lane, fi_addr_t dest,
		    size_t rail, const void *msg, size_t len);
/* An answer (ACK, READ_RESP, ATOMIC_RESP, CREDIT) on any rail, normal lane;
 * one that can never go is warned about. */
void mrail_ctrl_send(struct mrail_ep *ep, fi_addr_t dest, const void *msg,
		     size_t len);
/* A message made only when it goes (a HELLO: it carries our name). */
typedef int (*mrail_deferred_send_fn)(struct mrail_ep *ep, fi_addr_t peer,
				      uint32_t arg);
typedef void (*mrail_deferred_failed_fn)(struct mrail_ep *ep, fi_addr_t peer,
					 uint32_t arg, int err);
/* send(ep, dest, arg) now or when its turn comes, on rail; failed() is
 * told if it never can go. The same call already waiting is not queued
 * again. */
void mrail_deferred_call(struct mrail_ep *ep, enum mrail_lane lane,
			 fi_addr_t dest, size_t rail, mrail_deferred_send_fn send,
			 mrail_deferred_failed_fn failed, uint32_t arg);
/* Sends what waits, urgent lane first: the start of every progress round. */
void mrail_deferred_progress(struct mrail_ep *ep);
/* Whether anything waits (a closing endpoint lingers for it). */
bool mrail_deferred_pending(const struct mrail_ep *ep);
/* Drops what waits for a peer given up on, and everything at close. */
void mrail_deferred_drop_peer(struct mrail_ep *ep, fi_addr_t peer);
void mrail_deferred_flush(struct mrail_ep *ep);

/* ---- RMA (mrail_rma.c) on the rendezvous machinery (mrail_rdv.c) ---- */

/* Who a striped pull (rails' fi_read into local memory) works for. */
enum mrail_pull_kind {
	MRAIL_PULL_RECV,	/* a matched rendezvous receive */
	MRAIL_PULL_RMA_WRITE,	/* the target of a large RMA write */
	MRAIL_PULL_RMA_READ,	/* the initiator of an RMA read */
};

/* An RMA write larger than inline: an RTS-like WRITE carrying rma. */
ssize_t mrail_rdv_send_rma(struct mrail_ep *ep, const struct iovec *iov,
			   size_t count, fi_addr_t dest,
			   const struct mrail_wire_hdr *hdr,
			   const struct mrail_wire_rma *rma, bool bounce,
			   const struct mrail_cq_entry *user, bool complete_user);
/* Reads [remote_off, + rts->total_len) of the region rts describes into
 * iov, striped over the rails, then completes (by kind) and ACKs ack_id
 * to peer with the outcome. */
void mrail_rdv_pull_start(struct mrail_ep *ep, enum mrail_pull_kind kind,
			  fi_addr_t peer, uint64_t ack_id,
			  const struct mrail_wire_rts *rts, uint64_t remote_off,
			  const struct iovec *iov, size_t count,
			  const struct mrail_cq_entry *user, bool report);
/* An RMA read waiting for its READ_RESP (or an error ACK): request id,
 * or 0 when out of memory (mrail_ack_wait_cancel drops it). */
uint64_t mrail_rdv_read_wait_add(struct mrail_ep *ep, fi_addr_t dest,
				 const struct iovec *iov, size_t count,
				 const struct mrail_cq_entry *user,
				 bool complete_user);
/* A READ_RESP arrived: start reading, or report it as bad. */
void mrail_rdv_read_granted(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			    uint64_t req_id, uint64_t grant_id,
			    uint64_t offset, const struct mrail_wire_rts *rts);
/* A malformed READ_RESP from peer answered our read req_id: the read
 * fails with err (positive FI_E*), if it is one of ours to that peer. */
void mrail_rdv_read_refused(struct mrail_ep *ep, fi_addr_t peer, uint64_t req_id,
			    int err);
/* The target lets reader read len bytes: the grant's id (its ACK counts
 * one remote read), or 0 when out of memory. */
uint64_t mrail_rdv_grant_add(struct mrail_ep *ep, fi_addr_t reader, uint64_t len,
			     uint64_t key);
/* Whether operations this endpoint started still wait for a peer
 * (FI_FENCE waits for them). */
bool mrail_rdv_own_ops_pending(struct mrail_ep *ep);
/* One remote RMA operation ended at the target (status 0 or -errno):
 * the remote counter counts it; a successful write with CQ data reports
 * it once on the receive CQ; a failure is a warning. */
void mrail_rma_target_complete(struct mrail_ep *ep,
			       const struct mrail_cq_entry *entry, int32_t status);
/* The same, where the access does to the region more than entry's flags
 * say: region_access (FI_REMOTE_WRITE and/or FI_REMOTE_READ) picks the
 * region's counter (fi_mr(3)), entry->flags the endpoint's (fi_endpoint(3)).
 * A fetching atomic that writes is a remote read to the endpoint's
 * counters but modifies the region, which its FI_REMOTE_WRITE counter
 * counts (SOS's counter of received puts and atomics). */
void mrail_rma_target_count(struct mrail_ep *ep, const struct mrail_cq_entry *entry,
			    int32_t status, uint64_t region_access);
/* A WRITE, READ_REQ or READ_RESP arrived from peer (header validated). */
/* Why mrail_rma_check refused (ret) a peer the access it asked of a region
 * (have_mr false: no region has the key), for the target's warning. */
const char *mrail_rma_refusal(bool have_mr, int ret, uint64_t access);
void mrail_rma_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			 const struct mrail_wire_hdr *hdr, const uint8_t *payload);

/* ---- atomics (mrail_atomic.c) ---- */

/* An atomic waiting for its ATOMIC_RESP: its request id, or 0 when out of
 * memory (mrail_ack_wait_cancel drops it). result (count entries, may be
 * 0) receives the fetched values; their total is the length expected. */
uint64_t mrail_atomic_wait_add(struct mrail_ep *ep, fi_addr_t dest,
			       const struct iovec *result, size_t count,
			       const struct mrail_cq_entry *user,
			       bool complete_user);
/* The ATOMIC_RESP to req_id arrived from peer (status 0 or -errno): copies
 * result into the atomic's result buffers and completes it, or reports the
 * response as bad (not ours, or a result of the wrong length). */
void mrail_atomic_wait_done(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			    uint64_t req_id, int32_t status,
			    const uint8_t *result, size_t result_len);
/* An ATOMIC or ATOMIC_RESP arrived from peer (header validated). */
void mrail_atomic_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			    const struct mrail_wire_hdr *hdr,
			    const uint8_t *payload);

#endif /* MRAIL_MSG_H */
