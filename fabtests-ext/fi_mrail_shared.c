/*
 * fi_mrail_shared: functional test of shared transmit contexts
 * (fi_stx_context) in one process: two sending endpoints bound to one
 * context, a third receiving, all in one domain and one AV.
 *
 *   fi_mrail_shared [-n MESSAGES] [-v]
 *
 * Checks the offer (tx_ctx_cnt FI_SHARED_CONTEXT given when asked, more
 * than one context or a shared receive context refused with -FI_ENODATA),
 * that an endpoint opened for a shared context is not enabled without one,
 * the binding rules (one context per endpoint, none after fi_enable, the
 * context and the domain refuse to close while in use), and that each
 * sender's messages arrive intact, byte for byte, in its send order, from
 * its own address (FI_SOURCE), with exactly one send completion each on
 * the sender's own CQ and one receive completion each. Exits 0 only if
 * every check passed.
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
static void drain(struct node *nodes, struct node *rx, const fi_addr_t *sender_addr)
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
	while (fi_cq_readfrom(rx->cq, &e, 1, &src) == 1) {
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
		/* Receives are matched in post order: the message this
		 * sender sent next must be the one that arrived. */
		i = next_index[s]++;
		if (check_pattern_mismatch(rbuf[k], MSG_LEN, seed(s, i)) != MSG_LEN) {
			data_ok = false;
			for (i = 0; i < MAX_MSGS; i++)
				if (check_pattern_mismatch(rbuf[k], MSG_LEN, seed(s, i)) ==
				    MSG_LEN)
					order_ok = false;
		}
	}
}

int main(int argc, char **argv)
{
	struct fid_fabric *fabric = NULL;
	struct fid_domain *domain = NULL;
	struct fid_av *av = NULL;
	struct fid_stx *stx = NULL, *stx2 = NULL;
	struct fid_ep *unbound = NULL;
	struct fi_info *info = NULL, *refused;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct node nodes[SENDERS + 1];
	struct node *rx = &nodes[SENDERS];
	fi_addr_t sender_addr[SENDERS];
	uint8_t addr[1024];
	size_t len;
	int msgs = 16, opt, ret, n, i, all;
	ssize_t sret;

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
	if (msgs < 1 || msgs > MAX_MSGS) {
		fprintf(stderr, "fi_mrail_shared: -n takes 1 to %d\n", MAX_MSGS);
		return 2;
	}
	signal(SIGALRM, on_watchdog);
	alarm(WATCHDOG_S);
	memset(nodes, 0, sizeof(nodes));

	/* The offer. */
	refused = get_info(0, FI_SHARED_CONTEXT, &ret);
	check_what(ret == -FI_ENODATA && !refused, "a shared receive context is "
		   "not offered", "%d", ret);
	fi_freeinfo(refused);
	refused = get_info(2, 0, &ret);
	check_what(ret == -FI_ENODATA && !refused, "two transmit contexts are not "
		   "offered", "%d", ret);
	fi_freeinfo(refused);
	info = get_info(FI_SHARED_CONTEXT, 0, &ret);
	check_what(!ret && info, "fi_getinfo with tx_ctx_cnt FI_SHARED_CONTEXT",
		   "%s", fi_strerror(-ret));
	if (ret)
		goto out;
	check_what(info->ep_attr->tx_ctx_cnt == FI_SHARED_CONTEXT &&
		   info->ep_attr->rx_ctx_cnt == 1 &&
		   info->domain_attr->max_ep_stx_ctx >= SENDERS + 1 &&
		   info->domain_attr->max_ep_srx_ctx == 0 &&
		   info->domain_attr->max_ep_tx_ctx == 1 &&
		   info->domain_attr->max_ep_rx_ctx == 1,
		   "the offer: a shared transmit context, one receive context",
		   "tx_ctx_cnt %zu rx_ctx_cnt %zu max_ep_stx_ctx %zu max_ep_srx_ctx %zu",
		   info->ep_attr->tx_ctx_cnt, info->ep_attr->rx_ctx_cnt,
		   info->domain_attr->max_ep_stx_ctx, info->domain_attr->max_ep_srx_ctx);

	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)) ||
	    (ret = fi_domain(fabric, info, &domain, NULL)) ||
	    (ret = fi_av_open(domain, &av_attr, &av, NULL)) ||
	    (ret = fi_stx_context(domain, info->tx_attr, &stx, NULL)) ||
	    (ret = fi_stx_context(domain, info->tx_attr, &stx2, NULL))) {
		check_what(false, "fabric, domain, AV and two shared transmit contexts",
			   "%s", fi_strerror(-ret));
		goto out;
	}
	check_what(true, "fi_stx_context", NULL);

	/* An endpoint opened for a shared context needs one to be enabled. */
	ret = fi_endpoint(domain, info, &unbound, NULL);
	if (!ret) {
		fi_cq_open(domain, &cq_attr, &rx->cq, NULL);
		fi_ep_bind(unbound, &av->fid, 0);
		fi_ep_bind(unbound, &rx->cq->fid, FI_TRANSMIT | FI_RECV);
		check_what(fi_enable(unbound) == -FI_EINVAL, "fi_enable without a "
			   "shared transmit context bound is refused", NULL);
		check_what(fi_close(&unbound->fid) == 0, "close it", NULL);
		fi_close(&rx->cq->fid);
		rx->cq = NULL;
	}

	for (n = 0; n <= SENDERS; n++) {
		if ((ret = fi_cq_open(domain, &cq_attr, &nodes[n].cq, NULL)) ||
		    (ret = fi_endpoint(domain, info, &nodes[n].ep, NULL)) ||
		    (ret = fi_ep_bind(nodes[n].ep, &av->fid, 0)) ||
		    (ret = fi_ep_bind(nodes[n].ep, &nodes[n].cq->fid,
				      FI_TRANSMIT | FI_RECV)) ||
		    (ret = fi_ep_bind(nodes[n].ep, &stx->fid, 0))) {
			check_what(false, "open and bind an endpoint", "%s",
				   fi_strerror(-ret));
			goto out;
		}
		check_what(fi_ep_bind(nodes[n].ep, &stx2->fid, 0) == -FI_EINVAL,
			   "a second shared transmit context is refused", NULL);
		if ((ret = fi_enable(nodes[n].ep))) {
			check_what(false, "fi_enable", "%s", fi_strerror(-ret));
			goto out;
		}
		len = sizeof(addr);
		ret = fi_getname(&nodes[n].ep->fid, addr, &len);
		if (!ret)
			ret = fi_av_insert(av, addr, 1, &nodes[n].addr, 0, NULL) == 1 ?
			      0 : -FI_EINVAL;
		if (ret) {
			check_what(false, "the endpoint's address in the AV", "%s",
				   fi_strerror(-ret));
			goto out;
		}
	}
	check_what(fi_ep_bind(nodes[0].ep, &stx->fid, 0) == -FI_EOPBADSTATE,
		   "binding after fi_enable is refused", NULL);
	check_what(fi_close(&stx->fid) == -FI_EBUSY,
		   "the context refuses to close while endpoints are bound", NULL);
	check_what(fi_close(&stx2->fid) == 0, "an unused context closes", NULL);
	stx2 = NULL;
	check_what(fi_close(&domain->fid) == -FI_EBUSY,
		   "the domain refuses to close while a context is open", NULL);
	for (n = 0; n < SENDERS; n++)
		sender_addr[n] = nodes[n].addr;

	/* Each sender's messages through its endpoint on the shared context. */
	for (i = 0; i < SENDERS * msgs; i++) {
		ret = (int) fi_recv(rx->ep, rbuf[i], MSG_LEN, NULL, FI_ADDR_UNSPEC,
				    &rctx[i]);
		if (ret) {
			check_what(false, "post the receives", "%s", fi_strerror(-ret));
			goto out;
		}
	}
	for (i = 0; i < msgs; i++) {
		for (n = 0; n < SENDERS; n++) {
			check_pattern_fill(sbuf[n][i], MSG_LEN, seed(n, i));
			while ((sret = fi_send(nodes[n].ep, sbuf[n][i], MSG_LEN, NULL,
					       rx->addr, &sctx[n][i])) == -FI_EAGAIN)
				drain(nodes, rx, sender_addr);
			if (sret) {
				check_what(false, "fi_send", "%s", fi_strerror((int) -sret));
				goto out;
			}
		}
	}
	do {
		drain(nodes, rx, sender_addr);
		all = received == SENDERS * msgs;
		for (n = 0; all && n < SENDERS; n++)
			for (i = 0; all && i < msgs; i++)
				all = sent_done[n][i] >= 1;
	} while (!all);
	usleep(100 * 1000);
	drain(nodes, rx, sender_addr);
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
	check_what(!other_completions, "no other completion", "%d", other_completions);
	check_what(src_ok, "every message came from its sender's address "
		   "(FI_SOURCE)", NULL);
	check_what(order_ok, "each sender's messages arrived in its send order", NULL);
	check_what(data_ok, "every message arrived intact, byte for byte", NULL);
	for (n = 0; n < SENDERS; n++)
		check_what(next_index[n] == msgs, "every message of each sender",
			   "sender %d: %d of %d", n, next_index[n], msgs);

out:
	for (n = 0; n <= SENDERS; n++) {
		if (nodes[n].ep)
			fi_close(&nodes[n].ep->fid);
		if (nodes[n].cq)
			fi_close(&nodes[n].cq->fid);
	}
	if (stx)
		check_what(fi_close(&stx->fid) == 0,
			   "the context closes once its endpoints are closed", NULL);
	if (stx2)
		fi_close(&stx2->fid);
	if (av)
		fi_close(&av->fid);
	if (domain)
		check_what(fi_close(&domain->fid) == 0, "close the domain", NULL);
	if (fabric)
		fi_close(&fabric->fid);
	fi_freeinfo(info);
	printf("fi_mrail_shared: %d of %d checks passed\n",
	       check_count - check_failures, check_count);
	return check_failures ? 1 : 0;
}
