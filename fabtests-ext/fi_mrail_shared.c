/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_shared: functional test of shared transmit and receive contexts
 * (fi_stx_context, fi_srx_context) in one process: four endpoints of one
 * domain and one AV, all bound to one shared transmit context; two of them
 * send, the two others receive through one shared receive context, sender
 * k to receiver k.
 *
 *   fi_mrail_shared [-n MESSAGES] [-v]
 *
 * Checks the offer (tx_ctx_cnt and rx_ctx_cnt FI_SHARED_CONTEXT given when
 * asked, more than one context refused with -FI_ENODATA), that an endpoint
 * opened for shared contexts is not enabled without them, the binding rules
 * (one context of each kind per endpoint, none after fi_enable, one AV for
 * a receive context's endpoints, contexts and domain refuse to close while
 * in use, no FI_MULTI_RECV on a receive context), and that half the
 * messages, sent before any receive is posted (unexpected), and the other
 * half, sent to receives posted on the shared context, arrive intact, byte
 * for byte, in each sender's order, from the sender's address (FI_SOURCE),
 * each completing once on the CQ of the endpoint it was sent to, with one
 * send completion each on the sender's own CQ. Exits 0 only if every check
 * passed.
 */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mrail_check.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_mrail.h>

#define MSG_LEN 4096
#define MAX_MSGS 64
#define SENDERS 2
#define NODES (2 * SENDERS)	/* senders, then their receivers */
#define WATCHDOG_S 120

struct node {
	struct fid_ep *ep;
	struct fid_cq *cq;	/* transmit and receive */
	fi_addr_t addr;		/* in the shared AV */
};

static uint8_t sbuf[SENDERS][MAX_MSGS][MSG_LEN];
static uint8_t rbuf[SENDERS * MAX_MSGS][MSG_LEN];
static struct fi_context sctx[SENDERS][MAX_MSGS], rctx[SENDERS * MAX_MSGS];
static int sent_done[SENDERS][MAX_MSGS], recv_done[SENDERS * MAX_MSGS];
static int other_completions;
static int next_index[SENDERS];
static int wrong_cq;
static bool order_ok = true, data_ok = true, src_ok = true;
static int received;

static void on_watchdog(int sig)
{
	static const char msg[] = "FAILED: watchdog: no progress after 120 s\n";

	(void) sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

static uint64_t seed(int sender, int i)
{
	return 0x5100 + (uint64_t) sender * 0x1000 + (uint64_t) i;
}

static struct fi_info *get_info(size_t tx_ctx_cnt, size_t rx_ctx_cnt, int *ret)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_SOURCE;
	hints->ep_attr->tx_ctx_cnt = tx_ctx_cnt;
	hints->ep_attr->rx_ctx_cnt = rx_ctx_cnt;
	*ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	return info;
}

/* Reads every CQ once, recording what completed. */
static void drain(struct node *nodes, const fi_addr_t *sender_addr)
{
	struct fi_cq_data_entry e;
	fi_addr_t src;
	int n, s, i, k;

	for (n = 0; n < SENDERS; n++) {
		while (fi_cq_read(nodes[n].cq, &e, 1) == 1) {
			for (i = 0; i < MAX_MSGS; i++)
				if (e.op_context == &sctx[n][i])
					break;
			if (i < MAX_MSGS && (e.flags & FI_SEND))
				sent_done[n][i]++;
			else
				other_completions++;
		}
	}
	for (n = SENDERS; n < NODES; n++) {
		while (fi_cq_readfrom(nodes[n].cq, &e, 1, &src) == 1) {
			k = (int) ((struct fi_context *) e.op_context - rctx);
			if (k < 0 || k >= SENDERS * MAX_MSGS || !(e.flags & FI_RECV) ||
			    e.len != MSG_LEN) {
				other_completions++;
				continue;
			}
			recv_done[k]++;
			received++;
			for (s = 0; s < SENDERS; s++)
				if (src == sender_addr[s])
					break;
			if (s == SENDERS) {
				src_ok = false;
				continue;
			}
			/* Sender s sends to receiver s only: the completion
			 * belongs on the CQ of the endpoint it arrived on. */
			if (n != SENDERS + s)
				wrong_cq++;
			/* The receives are taken in post order, each sender's
			 * messages in send order. */
			i = next_index[s]++;
			if (check_pattern_mismatch(rbuf[k], MSG_LEN, seed(s, i)) !=
			    MSG_LEN) {
				data_ok = false;
				for (i = 0; i < MAX_MSGS; i++)
					if (check_pattern_mismatch(rbuf[k], MSG_LEN,
								   seed(s, i)) == MSG_LEN)
						order_ok = false;
			}
		}
	}
}

static bool sends_done(int from, int to)
{
	int n, i;

	for (n = 0; n < SENDERS; n++)
		for (i = from; i < to; i++)
			if (!sent_done[n][i])
				return false;
	return true;
}

/* Sends messages [from, to) of every sender to its receiver. */
static int send_range(struct node *nodes, const fi_addr_t *sender_addr, int from, int to)
{
	ssize_t ret;
	int n, i;

	for (i = from; i < to; i++) {
		for (n = 0; n < SENDERS; n++) {
			check_pattern_fill(sbuf[n][i], MSG_LEN, seed(n, i));
			while ((ret = fi_send(nodes[n].ep, sbuf[n][i], MSG_LEN, NULL,
					      nodes[SENDERS + n].addr,
					      &sctx[n][i])) == -FI_EAGAIN)
				drain(nodes, sender_addr);
			if (ret)
				return (int) ret;
		}
	}
	return 0;
}

static int post_range(struct fid_ep *srx, int from, int to)
{
	int i, ret;

	for (i = from; i < to; i++) {
		ret = (int) fi_recv(srx, rbuf[i], MSG_LEN, NULL, FI_ADDR_UNSPEC,
				    &rctx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int open_node(struct fid_domain *domain, struct fi_info *info,
		     struct fid_av *av, struct fid_stx *stx, struct fid_ep *srx,
		     struct node *node)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	uint8_t addr[1024];
	size_t len = sizeof(addr);
	int ret;

	if ((ret = fi_cq_open(domain, &cq_attr, &node->cq, NULL)) ||
	    (ret = fi_endpoint(domain, info, &node->ep, NULL)) ||
	    (ret = fi_ep_bind(node->ep, &av->fid, 0)) ||
	    (ret = fi_ep_bind(node->ep, &node->cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_ep_bind(node->ep, &stx->fid, 0)) ||
	    (ret = fi_ep_bind(node->ep, &srx->fid, 0)) ||
	    (ret = fi_enable(node->ep)) ||
	    (ret = fi_getname(&node->ep->fid, addr, &len)))
		return ret;
	return fi_av_insert(av, addr, 1, &node->addr, 0, NULL) == 1 ? 0 : -FI_EINVAL;
}

int main(int argc, char **argv)
{
	struct fid_fabric *fabric = NULL;
	struct fid_domain *domain = NULL;
	struct fid_av *av = NULL, *av2 = NULL;
	struct fid_stx *stx = NULL, *stx2 = NULL;
	struct fid_ep *srx = NULL, *srx2 = NULL, *odd = NULL;
	struct fid_cq *odd_cq = NULL;
	struct fi_info *info = NULL, *refused;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct node nodes[NODES];
	fi_addr_t sender_addr[SENDERS];
	struct iovec iov;
	struct fi_msg msg;
	int msgs = 16, half, opt, ret, n, i, all;

	while ((opt = getopt(argc, argv, "n:vh")) != -1) {
		switch (opt) {
		case 'n':
			msgs = atoi(optarg);
			break;
		case 'v':
			check_verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-n MESSAGES] [-v]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (msgs < 2 || msgs > MAX_MSGS) {
		fprintf(stderr, "fi_mrail_shared: -n takes 2 to %d\n", MAX_MSGS);
		return 2;
	}
	half = msgs / 2;
	signal(SIGALRM, on_watchdog);
	alarm(WATCHDOG_S);
	memset(nodes, 0, sizeof(nodes));

	/* The offer. */
	refused = get_info(0, 2, &ret);
	check_what(ret == -FI_ENODATA && !refused, "two receive contexts are not "
		   "offered", "%d", ret);
	fi_freeinfo(refused);
	refused = get_info(2, 0, &ret);
	check_what(ret == -FI_ENODATA && !refused, "two transmit contexts are not "
		   "offered", "%d", ret);
	fi_freeinfo(refused);
	info = get_info(FI_SHARED_CONTEXT, FI_SHARED_CONTEXT, &ret);
	check_what(!ret && info, "fi_getinfo with tx_ctx_cnt and rx_ctx_cnt "
		   "FI_SHARED_CONTEXT", "%s", fi_strerror(-ret));
	if (ret)
		goto out;
	check_what(info->ep_attr->tx_ctx_cnt == FI_SHARED_CONTEXT &&
		   info->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT &&
		   info->domain_attr->max_ep_stx_ctx >= NODES &&
		   info->domain_attr->max_ep_srx_ctx >= SENDERS &&
		   info->domain_attr->max_ep_tx_ctx == 1 &&
		   info->domain_attr->max_ep_rx_ctx == 1,
		   "the offer: shared transmit and receive contexts",
		   "tx_ctx_cnt %zu rx_ctx_cnt %zu max_ep_stx_ctx %zu max_ep_srx_ctx %zu",
		   info->ep_attr->tx_ctx_cnt, info->ep_attr->rx_ctx_cnt,
		   info->domain_attr->max_ep_stx_ctx, info->domain_attr->max_ep_srx_ctx);

	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)) ||
	    (ret = fi_domain(fabric, info, &domain, NULL)) ||
	    (ret = fi_av_open(domain, &av_attr, &av, NULL)) ||
	    (ret = fi_av_open(domain, &av_attr, &av2, NULL)) ||
	    (ret = fi_stx_context(domain, info->tx_attr, &stx, NULL)) ||
	    (ret = fi_stx_context(domain, info->tx_attr, &stx2, NULL)) ||
	    (ret = fi_srx_context(domain, info->rx_attr, &srx, NULL)) ||
	    (ret = fi_srx_context(domain, info->rx_attr, &srx2, NULL)) ||
	    (ret = fi_cq_open(domain, &cq_attr, &odd_cq, NULL))) {
		check_what(false, "fabric, domain, AVs, CQ and two contexts of each kind",
			   "%s", fi_strerror(-ret));
		goto out;
	}
	check_what(true, "fi_stx_context and fi_srx_context", NULL);

	/* An endpoint opened for shared contexts needs them to be enabled. */
	ret = fi_endpoint(domain, info, &odd, NULL);
	check_what(!ret, "open an endpoint for shared contexts", "%d", ret);
	if (ret)
		goto out;
	fi_ep_bind(odd, &av->fid, 0);
	fi_ep_bind(odd, &odd_cq->fid, FI_TRANSMIT | FI_RECV);
	check_what(fi_enable(odd) == -FI_EINVAL, "fi_enable without a shared "
		   "transmit context bound is refused", NULL);
	fi_ep_bind(odd, &stx->fid, 0);
	check_what(fi_enable(odd) == -FI_EINVAL, "fi_enable without a shared "
		   "receive context bound is refused", NULL);
	check_what(fi_ep_bind(odd, &stx2->fid, 0) == -FI_EINVAL,
		   "a second shared transmit context is refused", NULL);
	check_what(fi_close(&odd->fid) == 0, "close it", NULL);
	odd = NULL;

	for (n = 0; n < NODES; n++) {
		ret = open_node(domain, info, av, stx, srx, &nodes[n]);
		if (ret) {
			check_what(false, "open, bind and enable an endpoint", "%s",
				   fi_strerror(-ret));
			goto out;
		}
	}
	check_what(fi_ep_bind(nodes[0].ep, &srx2->fid, 0) == -FI_EOPBADSTATE,
		   "binding after fi_enable is refused", NULL);
	/* One AV for a receive context's endpoints. */
	if (!fi_endpoint(domain, info, &odd, NULL)) {
		fi_ep_bind(odd, &av2->fid, 0);
		fi_ep_bind(odd, &odd_cq->fid, FI_TRANSMIT | FI_RECV);
		fi_ep_bind(odd, &stx->fid, 0);
		check_what(fi_ep_bind(odd, &srx2->fid, 0) == 0 &&
			   fi_ep_bind(odd, &srx->fid, 0) == -FI_EINVAL,
			   "a second shared receive context is refused", NULL);
		fi_close(&odd->fid);
		odd = NULL;
	}
	if (!fi_endpoint(domain, info, &odd, NULL)) {
		fi_ep_bind(odd, &av2->fid, 0);
		fi_ep_bind(odd, &odd_cq->fid, FI_TRANSMIT | FI_RECV);
		fi_ep_bind(odd, &stx->fid, 0);
		fi_ep_bind(odd, &srx->fid, 0);
		check_what(fi_enable(odd) == -FI_EINVAL, "an endpoint with another "
			   "AV than the receive context's others is not enabled", NULL);
		fi_close(&odd->fid);
		odd = NULL;
	}
	check_what(fi_close(&stx->fid) == -FI_EBUSY && fi_close(&srx->fid) == -FI_EBUSY,
		   "the contexts refuse to close while endpoints are bound", NULL);
	check_what(fi_close(&stx2->fid) == 0 && fi_close(&srx2->fid) == 0,
		   "unused contexts close", NULL);
	stx2 = NULL;
	srx2 = NULL;
	check_what(fi_close(&domain->fid) == -FI_EBUSY,
		   "the domain refuses to close while contexts are open", NULL);
	iov = (struct iovec) { .iov_base = rbuf[0], .iov_len = MSG_LEN };
	msg = (struct fi_msg) { .msg_iov = &iov, .iov_count = 1,
				.addr = FI_ADDR_UNSPEC, .context = &rctx[0] };
	check_what(fi_recvmsg(srx, &msg, FI_MULTI_RECV) == -FI_EINVAL,
		   "FI_MULTI_RECV on a shared receive context is refused", NULL);
	for (n = 0; n < SENDERS; n++)
		sender_addr[n] = nodes[n].addr;

	/* Unexpected: the first half is sent before any receive is posted. */
	ret = send_range(nodes, sender_addr, 0, half);
	while (!ret && !sends_done(0, half))
		drain(nodes, sender_addr);
	for (i = 0; !ret && i < 10; i++) {
		usleep(10 * 1000);
		drain(nodes, sender_addr);
	}
	check_what(!ret && !received, "the first half is sent, nothing received yet",
		   "%s, %d received", fi_strerror(-ret), received);
	if (ret)
		goto out;
	ret = post_range(srx, 0, SENDERS * half);
	/* Expected: the second half's receives are posted first. */
	if (!ret)
		ret = post_range(srx, SENDERS * half, SENDERS * msgs);
	if (!ret)
		ret = send_range(nodes, sender_addr, half, msgs);
	check_what(!ret, "receives posted on the shared receive context, the "
		   "second half sent", "%s", fi_strerror(-ret));
	if (ret)
		goto out;
	do
		drain(nodes, sender_addr);
	while (received < SENDERS * msgs || !sends_done(0, msgs));
	usleep(100 * 1000);
	drain(nodes, sender_addr);
	all = 1;
	for (n = 0; n < SENDERS; n++)
		for (i = 0; i < msgs; i++)
			all = all && sent_done[n][i] == 1;
	check_what(all, "one send completion per message, on its sender's CQ", NULL);
	all = 1;
	for (i = 0; i < SENDERS * msgs; i++)
		all = all && recv_done[i] == 1;
	check_what(all && received == SENDERS * msgs, "one receive completion per "
		   "message", "%d received", received);
	check_what(!wrong_cq, "each receive completed on the CQ of the endpoint "
		   "its message was sent to", "%d elsewhere", wrong_cq);
	check_what(!other_completions, "no other completion", "%d", other_completions);
	check_what(src_ok, "every message came from its sender's address "
		   "(FI_SOURCE)", NULL);
	check_what(order_ok, "each sender's messages arrived in its send order", NULL);
	check_what(data_ok, "every message arrived intact, byte for byte", NULL);
	for (n = 0; n < SENDERS; n++)
		check_what(next_index[n] == msgs, "every message of each sender",
			   "sender %d: %d of %d", n, next_index[n], msgs);

out:
	if (odd)
		fi_close(&odd->fid);
	for (n = 0; n < NODES; n++) {
		if (nodes[n].ep)
			fi_close(&nodes[n].ep->fid);
		if (nodes[n].cq)
			fi_close(&nodes[n].cq->fid);
	}
	if (odd_cq)
		fi_close(&odd_cq->fid);
	if (stx)
		check_what(fi_close(&stx->fid) == 0, "the transmit context closes once "
			   "its endpoints are closed", NULL);
	if (srx)
		check_what(fi_close(&srx->fid) == 0, "the receive context closes once "
			   "its endpoints are closed", NULL);
	if (stx2)
		fi_close(&stx2->fid);
	if (srx2)
		fi_close(&srx2->fid);
	if (av)
		fi_close(&av->fid);
	if (av2)
		fi_close(&av2->fid);
	if (domain)
		check_what(fi_close(&domain->fid) == 0, "close the domain", NULL);
	if (fabric)
		fi_close(&fabric->fid);
	fi_freeinfo(info);
	printf("fi_mrail_shared: %d of %d checks passed\n",
	       check_count - check_failures, check_count);
	return check_failures ? 1 : 0;
}
