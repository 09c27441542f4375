/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_objs -t sockaddr, -t sep, -t enable and -t exit: socket
 * addresses with FI_EVENT AVs, scalable endpoints, fi_enable retried after
 * a rail failed, and exiting with every object open.
 */
#include "fi_mrail_objs.h"

/* ---- socket address format and FI_EVENT AVs ---- */

/*
 * Hints asking for FI_SOCKADDR_IN get an offer in that format: the
 * endpoint's name is its first rail's IPv4 address, which an FI_EVENT AV
 * takes (reported on its EQ, a bad address as an error entry with its
 * index) and a message to it reaches this endpoint, byte for byte, once
 * the HELLO has completed the peer.
 */
void test_sockaddr(struct fid_fabric *fabric)
{
	struct fi_eq_attr eq_attr = { .size = 16, .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .flags = FI_EVENT };
	static const char payload[] = "mrail objs: to a socket address";
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	struct fid_domain *dom = NULL;
	struct fid_eq *eq = NULL;
	struct fid_cq *cq = NULL;
	struct fid_av *av = NULL;
	struct fid_ep *ep = NULL;
	struct sockaddr_in addrs[2], back;
	struct fi_eq_entry entry = { 0 };
	struct fi_eq_err_entry err = { 0 };
	struct fi_cq_msg_entry comp;
	fi_addr_t fa[2] = { FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL };
	char text[64], rbuf[64] = "";
	size_t len = sizeof(addrs[0]), tlen = sizeof(text);
	uint32_t event = 0;
	int ctx, rctx, sctx, ret, got;
	ssize_t n;

	hints->addr_format = FI_SOCKADDR_IN;
	hints->caps = FI_MSG;
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	check(ret == 0 && info->addr_format == FI_SOCKADDR_IN &&
	      info->src_addrlen == sizeof(struct sockaddr_in),
	      "getinfo FI_SOCKADDR_IN: %d, format %u, src_addrlen %zu", ret,
	      ret ? 0 : info->addr_format, ret ? 0 : info->src_addrlen);
	hints->addr_format = FI_SOCKADDR_IB;
	check(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &(struct fi_info *){ 0 }) ==
	      -FI_ENODATA, "getinfo FI_SOCKADDR_IB: -FI_ENODATA");
	fi_freeinfo(hints);
	if (ret)
		return;
	if ((ret = fi_domain(fabric, info, &dom, NULL)) ||
	    (ret = fi_eq_open(fabric, &eq_attr, &eq, NULL)) ||
	    (ret = fi_cq_open(dom, &cq_attr, &cq, NULL)) ||
	    (ret = fi_av_open(dom, &av_attr, &av, NULL)) ||
	    (ret = fi_endpoint(dom, info, &ep, NULL))) {
		check(false, "objects in FI_SOCKADDR_IN format: %d", ret);
		goto out;
	}
	ret = fi_av_insert(av, addrs, 1, fa, 0, &ctx);
	check(ret == -FI_ENOEQ, "FI_EVENT AV without an EQ: %d (want -FI_ENOEQ)", ret);
	if ((ret = fi_av_bind(av, &eq->fid, 0)) ||
	    (ret = fi_ep_bind(ep, &av->fid, 0)) ||
	    (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_enable(ep))) {
		check(false, "bind and enable: %d", ret);
		goto out;
	}
	ret = fi_getname(&ep->fid, &addrs[0], &len);
	check(ret == 0 && len == sizeof(addrs[0]) && addrs[0].sin_family == AF_INET &&
	      addrs[0].sin_port != 0,
	      "fi_getname: an IPv4 socket address (%d, %zu bytes)", ret, len);
	memset(&addrs[1], 0, sizeof(addrs[1]));
	ret = fi_av_insert(av, addrs, 2, fa, 0, &ctx);
	check(ret == 0, "FI_EVENT insert of a good and a bad address: %d", ret);
	n = fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
	check(n == -FI_EAVAIL, "the bad address first: an error entry (%zd)", n);
	n = fi_eq_readerr(eq, &err, 0);
	check(n == sizeof(err) && err.fid == &av->fid && err.context == &ctx &&
	      err.data == 1 && err.err == FI_EINVAL,
	      "error entry: the AV, the context, index 1, FI_EINVAL (%zd, data %" PRIu64
	      ", err %d)", n, err.data, err.err);
	n = fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
	check(n == sizeof(entry) && event == FI_AV_COMPLETE && entry.fid == &av->fid &&
	      entry.context == &ctx && entry.data == 1,
	      "FI_AV_COMPLETE: 1 inserted (%zd, event %u, data %" PRIu64 ")", n, event,
	      entry.data);
	check(fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == -FI_EAGAIN,
	      "nothing more on the EQ");
	check(fa[0] != FI_ADDR_NOTAVAIL && fa[1] == FI_ADDR_NOTAVAIL,
	      "fi_addr: the good one set, the bad one FI_ADDR_NOTAVAIL");
	len = sizeof(back);
	ret = fi_av_lookup(av, fa[0], &back, &len);
	check(ret == 0 && len == sizeof(back) && !memcmp(&back, &addrs[0], sizeof(back)),
	      "fi_av_lookup gives the socket address back (%d, %zu bytes)", ret, len);
	fi_av_straddr(av, &addrs[0], text, &tlen);
	check(!strncmp(text, "fi_sockaddr_in://", 17), "fi_av_straddr: %s", text);

	/* A message to ourselves through the socket address. */
	ret = fi_recv(ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &rctx);
	check(ret == 0, "post a receive: %d", ret);
	got = 0;
	while ((n = fi_send(ep, payload, sizeof(payload), NULL, fa[0], &sctx)) == -FI_EAGAIN)
		fi_cq_read(cq, &comp, 0);
	check(n == 0, "send to our socket address: %zd", n);
	while (got < 2) {
		n = fi_cq_sread(cq, &comp, 1, NULL, 30000);
		if (n != 1)
			break;
		got += comp.op_context == &rctx || comp.op_context == &sctx;
	}
	check(got == 2 && !memcmp(rbuf, payload, sizeof(payload)),
	      "send and receive complete, data byte for byte (%d completions)", got);
out:
	if (ep)
		check(fi_close(&ep->fid) == 0, "close the endpoint");
	if (av)
		check(fi_close(&av->fid) == 0, "close the FI_EVENT AV");
	if (cq)
		fi_close(&cq->fid);
	if (eq)
		check(fi_close(&eq->fid) == 0, "then its EQ");
	if (dom)
		fi_close(&dom->fid);
	fi_freeinfo(info);
}

/* ---- scalable endpoints ---- */

/* Reads one completion from cq within about 10 s, progressing it. */
static bool sep_read_one(struct fid_cq *cq, struct fi_cq_msg_entry *comp)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (fi_cq_read(cq, comp, 1) == 1)
			return true;
		usleep(1000);
	}
	return false;
}

void test_sep(struct fid_domain *domain, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .rx_ctx_bits = 1 };
	static const char payload[] = "mrail objs: through a scalable endpoint";
	struct fid_ep *sep = NULL, *tx = NULL, *rx = NULL, *extra = NULL;
	struct fid_cq *cq_tx = NULL, *cq_rx = NULL;
	struct fi_cq_msg_entry comp = { 0 };
	struct fi_info *sinfo;
	struct fid_av *av = NULL;
	uint8_t addr[1024];
	size_t len = sizeof(addr);
	char rbuf[64] = "";
	fi_addr_t self = FI_ADDR_NOTAVAIL;
	int ctx_tx, ctx_rx, sep_ctx, tx_ctx, rx_ctx, ret;
	ssize_t sret;

	sinfo = fi_dupinfo(info);
	sinfo->ep_attr->tx_ctx_cnt = 2;
	sinfo->ep_attr->rx_ctx_cnt = 2;
	ret = fi_scalable_ep(domain, sinfo, &sep, &sep_ctx);
	check_what(ret == -FI_EINVAL, "fi_scalable_ep refuses two contexts", "%s",
		   fi_strerror(-ret));
	sinfo->ep_attr->tx_ctx_cnt = 1;
	sinfo->ep_attr->rx_ctx_cnt = 1;
	sep = NULL;
	ret = fi_scalable_ep(domain, sinfo, &sep, &sep_ctx);
	check_what(ret == 0 && sep && sep->fid.fclass == FI_CLASS_SEP,
		   "fi_scalable_ep with one context each way", "%s", fi_strerror(-ret));
	fi_freeinfo(sinfo);
	if (ret)
		return;
	if (fi_cq_open(domain, &cq_attr, &cq_tx, NULL) ||
	    fi_cq_open(domain, &cq_attr, &cq_rx, NULL) ||
	    fi_av_open(domain, &av_attr, &av, NULL)) {
		check_what(false, "open two CQs and an AV with rx_ctx_bits", NULL);
		goto out;
	}
	ret = fi_tx_context(sep, 1, NULL, &extra, NULL);
	check_what(ret == -FI_EINVAL, "fi_tx_context index 1 is refused", "%s",
		   fi_strerror(-ret));
	ret = fi_tx_context(sep, 0, NULL, &tx, &tx_ctx);
	check_what(ret == 0 && tx->fid.fclass == FI_CLASS_TX_CTX &&
		   tx->fid.context == &tx_ctx, "fi_tx_context 0", "%s",
		   fi_strerror(-ret));
	ret = fi_rx_context(sep, 0, NULL, &rx, &rx_ctx);
	check_what(ret == 0 && rx->fid.fclass == FI_CLASS_RX_CTX &&
		   rx->fid.context == &rx_ctx, "fi_rx_context 0", "%s",
		   fi_strerror(-ret));
	if (!tx || !rx)
		goto out;
	ret = fi_ep_bind(tx, &cq_rx->fid, FI_RECV);
	check_what(ret == -FI_EINVAL, "a transmit context refuses a receive CQ", "%s",
		   fi_strerror(-ret));
	ret = fi_ep_bind(tx, &av->fid, 0);
	check_what(ret == -FI_EINVAL, "a context refuses the AV", "%s", fi_strerror(-ret));
	if ((ret = fi_scalable_ep_bind(sep, &av->fid, 0)) ||
	    (ret = fi_ep_bind(tx, &cq_tx->fid, FI_TRANSMIT)) ||
	    (ret = fi_ep_bind(rx, &cq_rx->fid, FI_RECV)) ||
	    (ret = fi_enable(tx)) || (ret = fi_enable(rx)) || (ret = fi_enable(sep)) ||
	    (ret = fi_getname(&sep->fid, addr, &len))) {
		check_what(false, "bind and enable the scalable endpoint", "%s",
			   fi_strerror(-ret));
		goto out;
	}
	ret = fi_av_insert(av, addr, 1, &self, 0, NULL);
	check_what(ret == 1, "insert our own address", "%d", ret);
	ret = fi_recv(rx, rbuf, sizeof(rbuf), NULL, fi_rx_addr(self, 0, 1), &ctx_rx);
	check_what(ret == 0, "fi_recv on the receive context", "%s", fi_strerror(-ret));
	do {
		sret = fi_send(tx, payload, sizeof(payload), NULL, fi_rx_addr(self, 0, 1),
			       &ctx_tx);
		if (sret == -FI_EAGAIN)
			fi_cq_read(cq_tx, NULL, 0);
	} while (sret == -FI_EAGAIN);
	check_what(sret == 0, "fi_send on the transmit context to rx context 0", "%s",
		   fi_strerror((int) -sret));
	check_what(sep_read_one(cq_tx, &comp) && comp.op_context == &ctx_tx &&
		   (comp.flags & FI_SEND), "the send completes on the transmit "
		   "context's CQ", NULL);
	check_what(sep_read_one(cq_rx, &comp) && comp.op_context == &ctx_rx &&
		   (comp.flags & FI_RECV) && comp.len == sizeof(payload) &&
		   !memcmp(rbuf, payload, sizeof(payload)),
		   "the message arrives whole on the receive context's CQ", NULL);
	sret = fi_send(tx, payload, 1, NULL, fi_rx_addr(self, 1, 1), NULL);
	check_what(sret == -FI_EINVAL, "a send to receive context 1 is refused", "%s",
		   fi_strerror((int) -sret));
	ret = fi_close(&sep->fid);
	check_what(ret == -FI_EBUSY, "the scalable endpoint refuses to close with "
		   "contexts open", "%s", fi_strerror(-ret));
out:
	if (tx)
		fi_close(&tx->fid);
	if (rx)
		fi_close(&rx->fid);
	if (cq_tx)
		check_what(fi_close(&cq_tx->fid) == 0, "a closed context's CQ closes "
			   "before the scalable endpoint", NULL);
	if (cq_rx)
		fi_close(&cq_rx->fid);
	check_what(fi_close(&sep->fid) == 0, "close the scalable endpoint", NULL);
	if (av)
		fi_close(&av->fid);
}


/* Waits for a line on standard input: the script's go-ahead. */
static bool wait_for_script(const char *said)
{
	char line[64];

	printf("enable: %s\n", said);
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) != NULL;
}

/*
 * -t enable, run by a script that takes a rail's address away and gives it
 * back (not in "all"): an endpoint whose fi_enable fails because one rail
 * cannot open must be left as it was, every rail opened so far closed
 * again, so that fi_enable can be called once more and then work: a
 * message to itself arrives byte for byte, with one send and one receive
 * completion. Standard output says "enable: ready", "enable: refused" and
 * "enable: enabled" at the three points where it waits for a line.
 */
/* Reads one completion from cq, progressing meanwhile: 0, or an error. */
static int read_one(struct fid_cq *cq, struct fi_cq_msg_entry *comp)
{
	ssize_t n;

	while ((n = fi_cq_read(cq, comp, 1)) == -FI_EAGAIN)
		;
	return n == 1 ? 0 : (int) n;
}

void test_enable_retry(struct fid_domain *domain, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fid_cq *cq_tx = NULL, *cq_rx = NULL;
	struct fi_cq_msg_entry rx = { 0 }, tx = { 0 };
	char sbuf[200], rbuf[sizeof(sbuf)];
	struct self_ep s = { 0 };
	bool got_rx = false, data_ok;
	size_t i;
	int ret;

	ret = fi_cq_open(domain, &cq_attr, &cq_tx, NULL);
	if (!ret)
		ret = fi_cq_open(domain, &cq_attr, &cq_rx, NULL);
	if (!ret)
		ret = self_ep_bind(domain, info, cq_tx, cq_rx, &s);
	check_what(ret == 0, "open and bind an endpoint", "%s", ret ? fi_strerror(-ret) : "");
	if (ret || !wait_for_script("ready"))
		goto out;

	ret = fi_enable(s.ep);
	check_what(ret != 0, "fi_enable fails while a rail's address is gone",
		   "it returned %d", ret);
	if (!ret || !wait_for_script("refused"))
		goto out;

	ret = fi_enable(s.ep);
	check_what(ret == 0, "fi_enable again, the address back, succeeds", "%s",
		   ret ? fi_strerror(-ret) : "");
	if (ret)
		goto out;
	for (i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (char) (i * 7 + 3);
	memset(rbuf, 0, sizeof(rbuf));
	ret = self_ep_address(&s);
	if (!ret)
		ret = (int) fi_recv(s.ep, rbuf, sizeof(rbuf), NULL, s.self, rbuf);
	if (!ret)
		ret = self_send(&s, cq_rx, sbuf, sizeof(sbuf), sbuf, &rx, &got_rx);
	check_what(ret == 0, "post a receive and a send to itself", "%s",
		   ret ? fi_strerror(-ret) : "");
	step = "enable: the message to itself";
	if (!ret && !got_rx)
		ret = read_one(cq_rx, &rx);
	if (!ret)
		ret = read_one(cq_tx, &tx);
	data_ok = !memcmp(sbuf, rbuf, sizeof(sbuf));
	check_what(ret == 0 && rx.op_context == rbuf && tx.op_context == sbuf && data_ok &&
		   fi_cq_read(cq_rx, &rx, 1) == -FI_EAGAIN &&
		   fi_cq_read(cq_tx, &tx, 1) == -FI_EAGAIN,
		   "after the retried fi_enable a message arrives byte for byte, with "
		   "one send and one receive completion", "%s, data %s",
		   ret ? fi_strerror(-ret) : "completions read",
		   data_ok ? "equal" : "differs");
	/* The script counts the rails' listening sockets now: one per tcp
	 * rail, none left over from the failed attempt. */
	(void) wait_for_script("enabled");
out:
	if (s.ep)
		check_what(fi_close(&s.ep->fid) == 0, "close the endpoint", NULL);
	if (s.av)
		fi_close(&s.av->fid);
	if (cq_rx)
		fi_close(&cq_rx->fid);
	if (cq_tx)
		fi_close(&cq_tx->fid);
}

#define EXIT_BUSY_MSGS 32
static uint8_t busy[EXIT_BUSY_MSGS][1 << 20];

/* Exits from inside: see the top of fi_mrail_objs.c. */
void test_exit_open(struct fid_fabric *fabric, struct fi_info *info)
{
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	static const char payload[] = "mrail objs: exit with objects open";
	struct fi_cq_msg_entry comp;
	struct fi_info *auto_info;
	struct fid_domain *domain;
	struct self_ep s = { 0 };
	struct fid_cq *cq;
	char rbuf[sizeof(payload)] = { 0 };
	int ctx_rx, ctx_tx, n_rx = 0, n_tx = 0, n_other = 0, i;
	bool got_rx = false;
	ssize_t ret;

	auto_info = fi_dupinfo(info);
	auto_info->domain_attr->data_progress = FI_PROGRESS_AUTO;
	auto_info->domain_attr->control_progress = FI_PROGRESS_AUTO;
	if ((ret = fi_domain(fabric, auto_info, &domain, NULL)) ||
	    (ret = fi_cq_open(domain, &attr, &cq, NULL)) ||
	    (ret = self_ep_open(domain, auto_info, cq, cq, &s)) ||
	    (ret = fi_recv(s.ep, rbuf, sizeof(rbuf), NULL, s.self, &ctx_rx)) ||
	    (ret = self_send(&s, cq, payload, sizeof(payload), &ctx_tx,
			     &comp, &got_rx))) {
		check_what(false, "an FI_PROGRESS_AUTO endpoint sending to itself",
			   "%s", fi_strerror((int) -ret));
		goto out;
	}
	/* Nothing but sleeps in fi_cq_sread: the progress thread does the
	 * rest. After both, 100 ms more must bring no other completion. */
	for (;;) {
		if (got_rx) {
			n_rx += comp.op_context == &ctx_rx;
			n_tx += comp.op_context == &ctx_tx;
			n_other += comp.op_context != &ctx_rx && comp.op_context != &ctx_tx;
		}
		got_rx = fi_cq_sread(cq, &comp, 1, NULL,
				     n_rx && n_tx ? 100 : 10000) == 1;
		if (!got_rx)
			break;
	}
	check_what(n_rx == 1 && n_tx == 1 && !n_other,
		   "the send and the receive complete, once each",
		   "receives %d, sends %d, others %d", n_rx, n_tx, n_other);
	check_what(!memcmp(rbuf, payload, sizeof(payload)), "the message arrived intact",
		   NULL);
	/* Leave the thread busy: transfers to ourselves still in flight. */
	for (i = 0; i < EXIT_BUSY_MSGS; i++) {
		if (fi_recv(s.ep, busy[i], sizeof(busy[i]), NULL, s.self, NULL) ||
		    fi_send(s.ep, busy[i], sizeof(busy[i]), NULL, s.self, NULL))
			break;
	}
out:
	printf("fi_mrail_objs: %d of %d checks passed\n", check_count - check_failures,
	       check_count);
	fflush(stdout);
	exit(check_failures ? 1 : 0);
}
