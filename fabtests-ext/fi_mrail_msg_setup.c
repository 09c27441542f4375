/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_msg's setup: choosing the fi_info, opening the fabric, domain,
 * CQ, AV and endpoint, exchanging addresses (or learning them by -N), and
 * closing it all.
 */
#include "fi_mrail_msg.h"

/* ------------------------------------------------------------------- setup */

/* Without memory registration, a provider that needs local MRs is no use. */
static bool info_usable(const struct fi_info *info)
{
	return !(info->domain_attr->mr_mode & FI_MR_LOCAL) &&
	       !(info->mode & MRAIL_MODE_LOCAL_MR);
}

/*
 * A core provider offers one info per interface; the one carrying the
 * control connection is known to reach the peer. Providers with addresses
 * of their own format (mrail) are taken as they come.
 */
static bool info_on_local_ip(const struct fi_info *info,
			     const struct sockaddr_storage *local)
{
	const struct sockaddr *sa = info->src_addr;

	if (!sa || info->src_addrlen < sizeof(struct sockaddr_in) ||
	    sa->sa_family != local->ss_family)
		return false;
	if (info->addr_format != FI_SOCKADDR && info->addr_format != FI_SOCKADDR_IN &&
	    info->addr_format != FI_SOCKADDR_IN6)
		return false;
	if (sa->sa_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *) sa)->sin_addr,
			       &((const struct sockaddr_in *) local)->sin_addr,
			       sizeof(struct in_addr));
	if (sa->sa_family == AF_INET6 &&
	    info->src_addrlen >= sizeof(struct sockaddr_in6))
		return !memcmp(&((const struct sockaddr_in6 *) sa)->sin6_addr,
			       &((const struct sockaddr_in6 *) local)->sin6_addr,
			       sizeof(struct in6_addr));
	return false;
}

static struct fi_info *choose_info(struct session *s)
{
	struct fi_info *info, *first = NULL;

	for (info = s->info_list; info; info = info->next) {
		if (!info_usable(info)) {
			if (s->opt.verbose)
				printf("note: skipping domain %s: it needs FI_MR_LOCAL\n",
				       info->domain_attr->name);
			continue;
		}
		if (info_on_local_ip(info, &s->local_ip))
			return info;
		if (!first)
			first = info;
	}
	return first;
}

static struct fi_info *make_hints(const struct options *opt)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		fatal("fi_allocinfo: out of memory");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_MULTI_RECV;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = 0;
	/* The ordering test depends on it, so ask for it. */
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	hints->fabric_attr->prov_name = strdup(opt->prov);
	return hints;
}

/* -N: the server binds to the service the client resolves with its node. */
static void by_node_service(const struct options *opt, char *service, size_t len)
{
	snprintf(service, len, "%u", opt->port + 1);
}

int get_info(struct session *s)
{
	struct fi_info *hints = make_hints(&s->opt);
	const char *node = NULL, *service = NULL;
	char detail[200], port[16];
	uint64_t flags = 0;
	int ret;

	if (s->opt.by_node) {
		by_node_service(&s->opt, port, sizeof(port));
		service = port;
		if (s->is_server) {
			flags = FI_SOURCE;
			/* learn_peer_from_source: the client's address comes
			 * with its first message. */
			hints->caps |= FI_SOURCE | FI_SOURCE_ERR;
		} else {
			node = s->opt.server;
		}
	}
	ret = fi_getinfo(FI_VERSION(1, 17), node, service, flags, hints, &s->info_list);
	fi_freeinfo(hints);
	snprintf(detail, sizeof(detail), "%s", ret ? fi_strerror(-ret) : "");
	check_once(ret == 0, !s->opt.by_node ?
		   "fi_getinfo: FI_EP_RDM with FI_MSG|FI_TAGGED" : s->is_server ?
		   "fi_getinfo(NULL, service, FI_SOURCE): FI_EP_RDM bound to the "
		   "service" : "fi_getinfo(node, service): FI_EP_RDM with the "
		   "server as dest_addr", detail);
	if (ret)
		return ret;
	s->info = choose_info(s);
	check_once(s->info != NULL, "an info that needs no memory registration",
		   "every info the provider offers needs FI_MR_LOCAL");
	if (!s->info)
		return -FI_ENODATA;
	if (s->opt.by_node && !s->is_server)
		check_once(s->info->dest_addr && s->info->dest_addrlen,
			   "fi_getinfo(node, service) fills dest_addr", NULL);
	if (s->opt.verbose)
		printf("note: provider %s, fabric %s, domain %s, inject_size %zu, "
		       "cq_data_size %zu\n", s->info->fabric_attr->prov_name,
		       s->info->fabric_attr->name, s->info->domain_attr->name,
		       s->info->tx_attr->inject_size,
		       s->info->domain_attr->cq_data_size);
	return 0;
}

static int setup_step(int ret, const char *what)
{
	check_once(ret == 0, what, ret ? fi_strerror(-ret) : NULL);
	return ret;
}

int open_endpoint(struct session *s)
{
	struct fi_cq_attr cq_attr = {
		.size = CQ_SIZE,
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = FI_WAIT_NONE,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .count = 2 };
	int ret;

	ret = setup_step(fi_fabric(s->info->fabric_attr, &s->fabric, NULL), "fi_fabric");
	if (!ret)
		ret = setup_step(fi_domain(s->fabric, s->info, &s->domain, NULL),
				 "fi_domain");
	if (!ret)
		ret = setup_step(fi_av_open(s->domain, &av_attr, &s->av, NULL),
				 "fi_av_open (table)");
	if (!ret)
		ret = setup_step(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL),
				 "fi_cq_open (tagged format)");
	if (!ret)
		ret = setup_step(fi_endpoint(s->domain, s->info, &s->ep, NULL),
				 "fi_endpoint");
	if (!ret)
		ret = setup_step(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV),
				 "bind the CQ for transmit and receive");
	if (!ret)
		ret = setup_step(fi_ep_bind(s->ep, &s->av->fid, 0), "bind the AV");
	if (!ret)
		ret = setup_step(fi_enable(s->ep), "fi_enable");
	return ret;
}

/* The AV entry of fi_addr, for comparing two entries byte for byte. */
static size_t av_entry(struct fid_av *av, fi_addr_t fi_addr, uint8_t *buf,
		       size_t cap)
{
	size_t len = cap;

	if (fi_addr == FI_ADDR_NOTAVAIL || fi_av_lookup(av, fi_addr, buf, &len) ||
	    len > cap)
		return 0;
	return len;
}

/*
 * -N -A: fi_av_insertsym over two nodes and two services must give the
 * entries four fi_av_insertsvc calls give, in fi_av(3)'s order (every
 * service of a node before the next node). In an AV of its own, so the
 * session's AV holds the server once.
 */
static void check_insertsym(struct session *s, const char *service)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .count = 8 };
	fi_addr_t sym[4], svc[4];
	uint8_t a[MAX_NAME_LEN], b[MAX_NAME_LEN];
	char nodes[2][INET_ADDRSTRLEN], services[2][16], detail[160];
	struct in_addr ip;
	struct fid_av *av;
	size_t k, la, lb;
	int ret;

	if (inet_pton(AF_INET, s->opt.server, &ip) != 1) {
		note_skip("fi_av_insertsym over 2 nodes", "the server address is "
			  "not numeric IPv4");
		return;
	}
	snprintf(nodes[0], sizeof(nodes[0]), "%s", s->opt.server);
	ip.s_addr = htonl(ntohl(ip.s_addr) + 1);
	inet_ntop(AF_INET, &ip, nodes[1], sizeof(nodes[1]));
	snprintf(services[0], sizeof(services[0]), "%s", service);
	snprintf(services[1], sizeof(services[1]), "%u", s->opt.port + 2);
	if (fi_av_open(s->domain, &attr, &av, NULL)) {
		check_once(false, "fi_av_open for the fi_av_insertsym check", NULL);
		return;
	}
	ret = fi_av_insertsym(av, nodes[0], 2, services[0], 2, sym, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %d", ret);
	check_once(ret == 4, "fi_av_insertsym(2 nodes, 2 services) inserts 4",
		   detail);
	for (k = 0; k < 4; k++) {
		ret = fi_av_insertsvc(av, nodes[k / 2], services[k % 2], &svc[k], 0,
				      NULL);
		la = ret == 1 ? av_entry(av, sym[k], a, sizeof(a)) : 0;
		lb = ret == 1 ? av_entry(av, svc[k], b, sizeof(b)) : 0;
		snprintf(detail, sizeof(detail), "%s:%s: insertsvc returned %d, "
			 "entries of %zu and %zu bytes", nodes[k / 2],
			 services[k % 2], ret, la, lb);
		check_once(la && la == lb && !memcmp(a, b, la),
			   "fi_av_insertsym's entry equals fi_av_insertsvc's, in "
			   "order", detail);
	}
	/* Every service of a node before the next node: 0 and 1 differ. */
	la = av_entry(av, sym[0], a, sizeof(a));
	lb = av_entry(av, sym[1], b, sizeof(b));
	check_once(la && lb && (la != lb || memcmp(a, b, la)),
		   "fi_av_insertsym's first two entries differ (two services)",
		   NULL);
	ret = fi_av_insertsym(av, "not-numbered", 2, services[0], 1, sym, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %d", ret);
	check_once(ret == -FI_EINVAL, "fi_av_insertsym refuses 2 nodes from a "
		   "name without a numeric suffix", detail);
	fi_close(&av->fid);
}

/*
 * -N, client: the only address of the server it has is dest_addr from
 * fi_getinfo(node, service), or with -A what fi_av_insertsvc makes of the
 * same node and service. Its first message makes the provider introduce us
 * (mrail: HELLO over its first rail).
 */
static int insert_dest_addr(struct session *s)
{
	char detail[64], service[16];
	uint8_t first = 0x42;
	struct op op;
	int ret;

	if (s->opt.by_svc) {
		by_node_service(&s->opt, service, sizeof(service));
		check_insertsym(s, service);
		ret = fi_av_insertsvc(s->av, s->opt.server, service, &s->peer, 0,
				      NULL);
		snprintf(detail, sizeof(detail), "returned %d", ret);
		check_once(ret == 1, "fi_av_insertsvc(server, PORT + 1)", detail);
	} else {
		if (!s->info->dest_addr)
			return -FI_EINVAL;
		ret = fi_av_insert(s->av, s->info->dest_addr, 1, &s->peer, 0, NULL);
		snprintf(detail, sizeof(detail), "returned %d", ret);
		check_once(ret == 1, "fi_av_insert of dest_addr from "
			   "fi_getinfo(node, service)", detail);
	}
	if (ret != 1)
		return -FI_EINVAL;
	op_init(&op, OP_SEND, &first, 1);
	post_op(s, &op);
	wait_ops(s, &op, 1, "the first message to the server");
	check_begin("the first message to a peer known by dest_addr alone");
	expect_completed(&op, FI_SEND | FI_MSG, "first message");
	check_end();
	return op.completions == 1 && !op.err ? 0 : -FI_EIO;
}

/*
 * -N, server: no address from the client at all. Its first message comes
 * from a sender the AV does not hold, so with FI_SOURCE_ERR it completes as
 * an FI_EADDRNOTAVAIL error whose err_data is the client's address
 * (fi_cq(3)); inserting that address is how the client is reached from
 * then on, and it must be the AV's first fi_addr_t (FI_AV_TABLE counts the
 * application's inserts, whatever mrail learned by itself before).
 */
static int learn_peer_from_source(struct session *s)
{
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry comp;
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;
	uint8_t first = 0, name[MAX_NAME_LEN], raw[MAX_NAME_LEN];
	struct fi_context ctx;
	size_t name_len = sizeof(name);
	char text[512], detail[200];
	size_t text_len = sizeof(text);
	fi_addr_t src = FI_ADDR_UNSPEC;
	ssize_t n;
	int ret;

	do {
		ret = (int) fi_recv(s->ep, &first, 1, NULL, FI_ADDR_UNSPEC, &ctx);
	} while (ret == -FI_EAGAIN && now_ms() < deadline);
	if (ret)
		fatal("fi_recv of the client's first message: %s", fi_strerror(-ret));
	while ((n = fi_cq_readfrom(s->cq, &comp, 1, &src)) == -FI_EAGAIN) {
		if (now_ms() > deadline)
			fatal("no first message from the client within %d s",
			      WAIT_LIMIT_MS / 1000);
	}
	if (n == -FI_EAVAIL) {
		err.err_data = raw;
		err.err_data_size = sizeof(raw);
		n = fi_cq_readerr(s->cq, &err, 0);
	}
	snprintf(detail, sizeof(detail), "fi_cq_readfrom gave %s, err %d (%s), "
		 "flags %#llx, len %zu, byte %#x, %zu bytes of address",
		 n == 1 ? "an error entry" : "no error entry", err.err,
		 fi_strerror(err.err), (unsigned long long) err.flags, err.len,
		 first, err.err_data_size);
	check_once(n == 1 && err.err == FI_EADDRNOTAVAIL &&
		   err.op_context == &ctx && err.flags == (FI_RECV | FI_MSG) &&
		   err.len == 1 && first == 0x42 && err.err_data_size > 0,
		   "the client's first message, from a sender not in the AV: "
		   "FI_EADDRNOTAVAIL with its address (FI_SOURCE_ERR)", detail);
	if (n != 1 || err.err != FI_EADDRNOTAVAIL || !err.err_data_size)
		return -FI_EINVAL;
	ret = fi_av_insert(s->av, raw, 1, &src, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %d, fi_addr %llu", ret,
		 (unsigned long long) src);
	check_once(ret == 1 && src == 0, "fi_av_insert of that address gives the "
		   "AV's first fi_addr_t, 0", detail);
	if (ret != 1)
		return -FI_EINVAL;
	s->peer = src;
	ret = fi_av_lookup(s->av, src, name, &name_len);
	snprintf(detail, sizeof(detail), "returned %d, %zu bytes", ret, name_len);
	check_once(!ret && name_len == err.err_data_size &&
		   !memcmp(name, raw, name_len),
		   "fi_av_lookup of the client gives the address FI_SOURCE_ERR did",
		   detail);
	if (s->opt.verbose && !ret) {
		fi_av_straddr(s->av, name, text, &text_len);
		printf("note: learned the client as %s\n", text);
	}
	return 0;
}

int insert_peer(struct session *s)
{
	uint8_t ours[MAX_NAME_LEN], theirs[MAX_NAME_LEN];
	size_t our_len = sizeof(ours), their_len;
	char detail[64];
	int ret;

	if (s->opt.by_node)
		return s->is_server ? learn_peer_from_source(s) : insert_dest_addr(s);

	ret = setup_step(fi_getname(&s->ep->fid, ours, &our_len), "fi_getname");
	if (ret)
		return ret;
	oob_exchange_names(s, ours, our_len, theirs, &their_len);
	if (s->is_server) {
		memcpy(s->late_name, theirs, their_len);
		s->late_len = their_len;
		return 0;
	}
	ret = fi_av_insert(s->av, theirs, 1, &s->peer, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %d", ret);
	check_once(ret == 1, "fi_av_insert of the peer's address", detail);
	return ret == 1 ? 0 : -FI_EINVAL;
}

static void close_fid(struct fid *fid, const char *what)
{
	int ret;

	if (!fid)
		return;
	ret = fi_close(fid);
	if (ret)
		check_once(false, what, fi_strerror(-ret));
}

void close_all(struct session *s)
{
	close_fid(s->ep ? &s->ep->fid : NULL, "close the endpoint");
	close_fid(s->av ? &s->av->fid : NULL, "close the AV");
	close_fid(s->cq ? &s->cq->fid : NULL, "close the CQ");
	close_fid(s->domain ? &s->domain->fid : NULL, "close the domain");
	close_fid(s->fabric ? &s->fabric->fid : NULL, "close the fabric");
	fi_freeinfo(s->info_list);
	if (s->sock >= 0)
		close(s->sock);
}
