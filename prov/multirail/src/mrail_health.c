/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rail health per peer: the endpoint's side of core/rail_health.c.
 *
 * The engine reports what each rail does for each peer (mrail_rail_posted,
 * _completed, _heard, _error), and progress judges the records every
 * MRAIL_HEALTH_CHECK_NS. A rail that fails for a peer, because it reported
 * an error or because nothing came back on it for FI_MRAIL_RAIL_TIMEOUT
 * while the peer answered on another rail, is left out of every choice of
 * a rail for that peer: a message the policy put on it moves to another
 * rail (mrail_tx.c), a striped transfer's share goes to the others
 * (mrail_rdv.c). Every probe interval the rail gets a PROBE asking for an
 * echo; the echo, or a read the peer served on the rail, brings it back. The last
 * rail a peer has is never failed: a peer that answers on no rail is the
 * liveness check's business (mrail_peer.c).
 *
 * Operations already in flight on a rail when it fails stay there: they
 * complete if the rail comes back (fi_mrail(7), RAIL FAILURE).
 *
 * Caller holds the domain lock throughout.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_ep.h"
#include "mrail_msg.h"
#include "mrail_reserve.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The public names of the states and reasons are core/rail_health.h's. */
_Static_assert((int) FI_MRAIL_RAIL_UP == (int) MRAIL_HEALTH_UP &&
	       (int) FI_MRAIL_RAIL_FAILED == (int) MRAIL_HEALTH_FAILED &&
	       (int) FI_MRAIL_RAIL_PROBING == (int) MRAIL_HEALTH_PROBING,
	       "fi_ext_mrail.h and rail_health.h disagree on rail states");
_Static_assert((int) FI_MRAIL_FAILURE_NONE == (int) MRAIL_HEALTH_NO_REASON &&
	       (int) FI_MRAIL_FAILURE_ERROR == (int) MRAIL_HEALTH_ERROR &&
	       (int) FI_MRAIL_FAILURE_STALLED == (int) MRAIL_HEALTH_STALLED,
	       "fi_ext_mrail.h and rail_health.h disagree on failure reasons");

/* How often progress judges the rails, at most. */
#define MRAIL_HEALTH_CHECK_NS 10000000ULL

int mrail_health_env(struct mrail_health_config *cfg)
{
	uint64_t timeout_ns = MRAIL_HEALTH_TIMEOUT_DEFAULT_MS * 1000000ULL;
	char err[MRAIL_ERR_MAX];

	if (mrail_env.rail_timeout &&
	    mrail_health_parse_timeout(mrail_env.rail_timeout, &timeout_ns, err,
				       sizeof(err))) {
		MRAIL_WARN(FI_LOG_CORE, "FI_MRAIL_RAIL_TIMEOUT: %s\n", err);
		return -FI_ENODATA;
	}
	cfg->timeout_ns = timeout_ns;
	/* A probe answered within the timeout brings the rail back; one a
	 * timeout after the last keeps a dead rail's cost to one message. */
	cfg->probe_interval_ns = timeout_ns;
	return 0;
}

/* The records of one peer, or NULL for no peer (or no memory). */
static struct mrail_rail_health *rails_of(struct mrail_ep *ep, fi_addr_t peer)
{
	if (peer == FI_ADDR_NOTAVAIL || ep->rail_count < 2 ||
	    mrail_peer_reserve(ep, peer))
		return NULL;
	return ep->peers[peer].rails;
}

static const char *rail_label(const struct mrail_ep *ep, size_t rail,
			      char *buf, size_t len)
{
	const struct mrail_rail *r = &ep->domain->fabric->rails.rails[rail];

	snprintf(buf, len, "rail %zu (%s@%s)", rail + 1, r->spec.stack, r->port);
	return buf;
}

static void warn_failed(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	const struct mrail_rail_health *h = &ep->peers[peer].rails[rail];
	char label[MRAIL_ERR_MAX];

	MRAIL_WARN(FI_LOG_EP_DATA, "%s failed for peer %" PRIu64 ": %s; "
		   "traffic to the peer moves to its other rails, and the rail "
		   "is probed every %" PRIu64 " ms\n",
		   rail_label(ep, rail, label, sizeof(label)), (uint64_t) peer,
		   mrail_health_reason_text((enum mrail_health_reason) h->reason),
		   (uint64_t) (ep->health.probe_interval_ns / 1000000ULL));
}

void mrail_rail_posted(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	struct mrail_rail_health *rails = rails_of(ep, peer);

	if (rails)
		mrail_health_posted(&rails[rail], mrail_now_ns());
}

void mrail_rail_refused(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	struct mrail_rail_health *rails = rails_of(ep, peer);

	if (rails)
		mrail_health_refused(&rails[rail], mrail_now_ns());
}

void mrail_rail_completed(struct mrail_ep *ep, fi_addr_t peer, size_t rail,
			  bool probe)
{
	struct mrail_rail_health *rails = rails_of(ep, peer);

	if (!rails)
		return;
	if (probe)
		mrail_health_probe_completed(&rails[rail]);
	else
		mrail_health_completed(&rails[rail], mrail_now_ns(), &ep->health);
}

void mrail_rail_heard(struct mrail_ep *ep, fi_addr_t peer, size_t rail,
		      enum mrail_health_heard_kind kind)
{
	struct mrail_rail_health *rails = rails_of(ep, peer);
	char label[MRAIL_ERR_MAX];

	if (!rails || !mrail_health_heard(&rails[rail], kind, mrail_now_ns()))
		return;
	MRAIL_WARN(FI_LOG_EP_DATA, "%s is back for peer %" PRIu64 ": it carries "
		   "traffic to the peer again\n",
		   rail_label(ep, rail, label, sizeof(label)), (uint64_t) peer);
}

/* The rail has just failed for the peer. */
static void rail_failed(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	warn_failed(ep, peer, rail);
	/* What it had not sent yet, what it sent and the peer has not
	 * acknowledged, and our own running totals go on the other rails. */
	mrail_replay(ep, peer);
	mrail_credit_refresh(ep, peer);
	/* Its reservations with the peer (dynamic striping) are let go, and
	 * the reads it holds for us are read again elsewhere. */
	mrail_rsv_rail_failed(ep, peer, rail);
	mrail_rdv_rail_failed(ep, peer, rail);
}

void mrail_rail_error(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	struct mrail_rail_health *rails = rails_of(ep, peer);

	/* The last rail stays: with none left, nothing could be sent. */
	if (!rails || !mrail_health_usable(&rails[rail]) ||
	    mrail_health_usable_count(rails, ep->rail_count) < 2)
		return;
	if (mrail_health_error(&rails[rail], mrail_now_ns()))
		rail_failed(ep, peer, rail);
}

void mrail_rail_reissued(struct mrail_ep *ep, fi_addr_t peer, size_t rail,
			 uint64_t bytes)
{
	struct mrail_rail_health *rails = rails_of(ep, peer);

	if (!rails)
		return;
	rails[rail].reissued_ops++;
	rails[rail].reissued_bytes += bytes;
}

bool mrail_rail_usable(const struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	if (peer >= ep->peer_cap || ep->rail_count < 2)
		return true;
	return mrail_health_usable(&ep->peers[peer].rails[rail]);
}

/* The first rail after `after` (in turn, `after` itself last) that fit
 * says may carry traffic to the peer, or -1. */
static int rail_after(const struct mrail_ep *ep, fi_addr_t peer, size_t after,
		      bool (*fit)(const struct mrail_ep *, fi_addr_t, size_t))
{
	size_t n, rail;

	for (n = 1; n <= ep->rail_count; n++) {
		rail = (after + n) % ep->rail_count;
		if (fit(ep, peer, rail))
			return (int) rail;
	}
	return -1;
}

int mrail_rail_usable_after(const struct mrail_ep *ep, fi_addr_t peer,
			    size_t after)
{
	return rail_after(ep, peer, after, mrail_rail_usable);
}

void mrail_health_peer_init(struct mrail_ep *ep, struct mrail_peer *peer)
{
	const struct mrail_railset *rails = &ep->domain->fabric->rails;
	size_t rail;

	for (rail = 0; rail < ep->rail_count && rail < rails->count; rail++) {
		if (rails->rails[rail].link_down)
			mrail_health_start_failed(&peer->rails[rail]);
	}
}

/* Whether the AV holds the peer on that rail (a partial peer, whose HELLO
 * answer has not come, has rail 1 only). */
static bool peer_on_rail(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	const struct mrail_av_peer *p = mrail_av_get_peer(ep->av, peer);

	return p && rail < p->rails_held;
}

/* A PROBE on one rail that asks the peer to answer on it, and to send
 * again its answers to our requests req_ids (count of them, may be 0). */
static void probe_rail_asking(struct mrail_ep *ep, fi_addr_t peer, size_t rail,
			      const uint64_t *req_ids, size_t count)
{
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_PROBE,
		.flags = MRAIL_WIRE_F_ECHO,
		.payload_len = (uint32_t) (count * 8),
	};
	uint8_t msg[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_PROBE_ASK_MAX * 8];

	if (!peer_on_rail(ep, peer, rail))
		return;
	mrail_wire_hdr_encode(&hdr, msg, MRAIL_WIRE_HDR_LEN);
	mrail_wire_probe_ask_encode(req_ids, count, msg + MRAIL_WIRE_HDR_LEN,
				    sizeof(msg) - MRAIL_WIRE_HDR_LEN);
	/* No free buffer on the rail: the next probe comes an interval on. */
	(void) mrail_ctrl_send_now(ep, peer, rail, msg,
				   MRAIL_WIRE_HDR_LEN + count * 8);
}

static void probe_rail(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	probe_rail_asking(ep, peer, rail, NULL, 0);
}

void mrail_probe_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			   const struct mrail_wire_hdr *hdr,
			   const uint8_t *payload)
{
	struct mrail_wire_hdr echo = { .sender = ep->self_key,
				       .op = MRAIL_OP_PROBE,
				       .flags = MRAIL_WIRE_F_REPLY };
	uint8_t msg[MRAIL_WIRE_HDR_LEN];
	uint64_t asked[MRAIL_WIRE_PROBE_ASK_MAX];
	char err[MRAIL_ERR_MAX];
	size_t count;

	/* The echo of our probe: our way to the peer on this rail works too
	 * (the arrival alone proved only the peer's, mrail_rail_heard). */
	if (hdr->flags & MRAIL_WIRE_F_REPLY) {
		mrail_rail_heard(ep, peer, rail, MRAIL_HEARD_ECHO);
		return;
	}
	if (mrail_wire_probe_ask_decode(payload, hdr->payload_len, asked,
					&count, err, sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		return;
	}
	mrail_replay_answers_asked(ep, peer, asked, count);
	/* An echo tells the prober its rail works. A liveness probe
	 * (mrail_peer.c) asks for nothing back. */
	if (!(hdr->flags & MRAIL_WIRE_F_ECHO) || !peer_on_rail(ep, peer, rail))
		return;
	mrail_wire_hdr_encode(&echo, msg, sizeof(msg));
	(void) mrail_ctrl_send_now(ep, peer, rail, msg, sizeof(msg));
	/* The prober may be asking which of its messages we wait for
	 * (ask_peer); a rail it doubts may also have lost our last
	 * CREDIT. Our totals answer both. */
	mrail_credit_refresh(ep, peer);
}

/* Probes every other rail that works for the peer. */
static void probe_siblings(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	size_t other;

	for (other = 0; other < ep->rail_count; other++) {
		if (other != rail && mrail_health_usable(&ep->peers[peer].rails[other]))
			probe_rail(ep, peer, other);
	}
}

static void judge_peer(struct mrail_ep *ep, fi_addr_t peer, uint64_t now)
{
	struct mrail_rail_health *rails = ep->peers[peer].rails;
	size_t rail;

	for (rail = 0; rail < ep->rail_count; rail++) {
		switch (mrail_health_judge(rails, ep->rail_count, rail, now,
					   &ep->health)) {
		case MRAIL_HEALTH_FAIL:
			rail_failed(ep, peer, rail);
			break;
		case MRAIL_HEALTH_PROBE:
			MRAIL_DBG(FI_LOG_EP_DATA, "rail %zu: probing it for peer %"
				  PRIu64 "\n", rail + 1, (uint64_t) peer);
			probe_rail(ep, peer, rail);
			/* A working rail gone quiet: the siblings' echoes
			 * tell a silent rail from a silent peer. */
			if (rails[rail].echo_wait_ns == now)
				probe_siblings(ep, peer, rail);
			break;
		case MRAIL_HEALTH_NOTHING:
			break;
		}
	}
}

/* Waits for an answer this many rail timeouts old ask for it again: past
 * any rail's failover, inside the four the answer is kept for. */
#define MRAIL_ASK_AFTER_TIMEOUTS 2

/* Peers to ask again for answers, gathered in one pass over our waits. */
#define ASK_PEERS 8

struct ask_table {
	struct {
		fi_addr_t peer;
		size_t count;
		uint64_t req_ids[MRAIL_WIRE_PROBE_ASK_MAX];
	} peers[ASK_PEERS];
	size_t count;
	uint64_t now;
};

/* The peer's row of the table, or table->count when it has none. */
static size_t ask_find(const struct ask_table *table, fi_addr_t peer)
{
	size_t i;

	for (i = 0; i < table->count && table->peers[i].peer != peer; i++)
		;
	return i;
}

static void ask_gather(struct mrail_ep *ep, fi_addr_t peer, uint64_t req_id,
		       void *arg)
{
	struct ask_table *table = arg;
	size_t i;

	if (peer >= ep->peer_cap ||
	    table->now - ep->peers[peer].asked_ns < ep->health.timeout_ns)
		return;
	i = ask_find(table, peer);
	if (i == table->count) {
		/* More peers than a round asks: the rest wait a round. */
		if (table->count == ASK_PEERS)
			return;
		table->peers[i].peer = peer;
		table->peers[i].count = 0;
		table->count++;
	}
	if (table->peers[i].count < MRAIL_WIRE_PROBE_ASK_MAX)
		table->peers[i].req_ids[table->peers[i].count++] = req_id;
}

/*
 * What a rail connection that broke after taking it lost leaves no trace
 * the sender sees, when the rail comes back before it is failed: our
 * numbered messages the peer has not acknowledged for long (the last of a
 * burst leave no gap the peer could name, mrail_replay_overdue), and its
 * answers to our requests that we have waited for long. A PROBE on a
 * working rail, at most once a rail timeout, asks the peer for its totals
 * (its CREDIT names the message it waits for, which goes again,
 * mrail_replay_awaited) and for those answers again: it sends those it
 * gave and keeps; one not given yet (a receive not posted) costs nothing.
 * A peer that makes no progress answers nothing and gets nothing more.
 */
static void ask_peer(struct mrail_ep *ep, fi_addr_t peer,
		     const struct ask_table *table)
{
	struct mrail_peer *p = &ep->peers[peer];
	const uint64_t *req_ids = NULL;
	size_t i, count = 0, rail;

	if (table->now - p->asked_ns < ep->health.timeout_ns)
		return;
	i = ask_find(table, peer);
	if (i < table->count) {
		req_ids = table->peers[i].req_ids;
		count = table->peers[i].count;
	}
	if (!count && !mrail_replay_overdue(ep, peer, table->now))
		return;
	for (rail = 0; rail < ep->rail_count; rail++) {
		if (!mrail_health_usable(&p->rails[rail]))
			continue;
		MRAIL_DBG(FI_LOG_EP_DATA, "rail %zu: asking peer %" PRIu64
			  " what it waits for, and for %zu answers again\n",
			  rail + 1, (uint64_t) peer, count);
		probe_rail_asking(ep, peer, rail, req_ids, count);
		p->asked_ns = table->now;
		return;
	}
}

void mrail_health_progress(struct mrail_ep *ep)
{
	struct ask_table asks;
	uint64_t now;
	size_t peer;
	bool replay;

	if (ep->rail_count < 2 || !ep->peer_cap)
		return;
	now = mrail_now_ns();
	if (now < ep->health_next_check_ns)
		return;
	ep->health_next_check_ns = now + MRAIL_HEALTH_CHECK_NS;
	replay = ep->replay_pending;
	ep->replay_pending = false;
	asks.count = 0;
	asks.now = now;
	mrail_rdv_each_wait_since(ep, now - MRAIL_ASK_AFTER_TIMEOUTS *
				  ep->health.timeout_ns, ask_gather, &asks);
	for (peer = 0; peer < ep->peer_cap; peer++) {
		if (!mrail_av_get_peer(ep->av, (fi_addr_t) peer))
			continue;
		judge_peer(ep, (fi_addr_t) peer, now);
		mrail_credit_send_overdue(ep, (fi_addr_t) peer, now);
		ask_peer(ep, (fi_addr_t) peer, &asks);
		if (replay)
			mrail_replay(ep, (fi_addr_t) peer);
	}
}

int mrail_health_control(struct mrail_ep *ep, struct fi_mrail_peer_rails *arg)
{
	const struct mrail_rail_health *h;
	fi_addr_t peer;
	size_t rail;

	if (!arg || arg->size < sizeof(*arg) || !ep->av)
		return -FI_EINVAL;
	/* An alias's records are its canonical entry's. */
	peer = mrail_av_canon(ep->av, (fi_addr_t) arg->peer);
	if (peer == FI_ADDR_NOTAVAIL)
		return -FI_EINVAL;
	arg->rail_count = (uint32_t) ep->rail_count;
	arg->duplicates = 0;
	memset(arg->rail, 0, sizeof(arg->rail));
	if (peer >= ep->peer_cap)
		return 0;
	arg->duplicates = ep->peers[peer].rx.duplicates;
	for (rail = 0; rail < ep->rail_count; rail++) {
		h = &ep->peers[peer].rails[rail];
		arg->rail[rail].health = h->state;
		arg->rail[rail].failure = h->reason;
		arg->rail[rail].failures = h->failures;
		arg->rail[rail].recoveries = h->recoveries;
		arg->rail[rail].in_flight = h->in_flight;
		arg->rail[rail].reissued_ops = h->reissued_ops;
		arg->rail[rail].reissued_bytes = h->reissued_bytes;
	}
	return 0;
}
