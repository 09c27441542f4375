/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_msg: functional test of send/receive and tagged messaging over an
 * FI_EP_RDM endpoint of any provider, between two processes.
 *
 *   fi_mrail_msg [-p PROVIDER] [-E PORT] [-S MAXSIZE] [-I ITERS] [-v]
 *                [SERVER_ADDR]
 *
 * The server runs without an address, the client with the server's IP. Both
 * meet on a TCP control connection (port -E), swap fi_getname addresses
 * over it and use it for the few synchronisations the tests need. The
 * tests: send/recv ping-pong, tags and ignore masks, remote CQ data,
 * fi_inject and fi_sendmsg(FI_INJECT), ordering of unexpected messages,
 * truncation, multi-receive buffers, the same peer inserted twice (both
 * entries in turn, FI_DELIVERY_COMPLETE, then the first removed), with -N a
 * burst right after first contact, and an exact count of completions after
 * each test. Every receive buffer has guard bytes on
 * both sides. Prints failed checks (every check with -v) and exits 0 only if
 * every check passed.
 *
 * This file holds the command line and the order the tests run in; the
 * tests and their plumbing are in fi_mrail_msg_*.c (see fi_mrail_msg.h).
 */
#include "fi_mrail_msg.h"

#include <inttypes.h>

#include <rdma/fi_ext_mrail.h>

/* Around 16 KiB: mrail's eager limit (16336) and rxm's; larger sizes go by
 * rendezvous in mrail and are striped over its rails. */
const size_t test_sizes[] = { 0, 1, 7, 64, 1000, 4096, 8192, 16336, 16337,
			      16384, 65539, 1048583 };
const size_t test_sizes_count = ARRAY_SIZE(test_sizes);

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-p PROVIDER] [-E PORT] [-S MAXSIZE] [-I ITERS] "
		"[-N [-A]] [-H] [-P SECONDS] [-v] [SERVER_ADDR]\n"
		"  -p  provider (default %s), e.g. \"tcp;ofi_rxm\"\n"
		"  -E  TCP port of the control connection (default %d)\n"
		"  -S  largest message size tested (default %zu)\n"
		"  -I  iterations per size (default %d)\n"
		"  -N  no address exchange: the client reaches the server with\n"
		"      fi_getinfo(SERVER_ADDR, PORT + 1) alone, the server binds\n"
		"      to PORT + 1 with FI_SOURCE and learns the client's address\n"
		"      from its first message (FI_SOURCE_ERR)\n"
		"  -A  with -N: the client inserts the server with fi_av_insertsvc\n"
		"      (and checks fi_av_insertsym) instead of fi_getinfo's dest_addr\n"
		"  -H  mrail: after the tests, print each rail's health towards\n"
		"      the peer (fi_control FI_MRAIL_GET_PEER_RAILS), one line per\n"
		"      rail: \"rail health: K STATE failures N recoveries N\n"
		"      reissued N\"\n"
		"  -P  after the ping-pong, both sides pass SECONDS without a\n"
		"      libfabric call, then go on (a rail may fail meanwhile)\n"
		"  -v  print every check\n"
		"The server runs without SERVER_ADDR, the client with it.\n",
		prog, DEFAULT_PROV, DEFAULT_PORT,
		test_sizes[test_sizes_count - 1], DEFAULT_ITERS);
}

static bool parse_uint(const char *text, unsigned long long max,
		       unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(text, &end, 10);
	return !errno && end != text && !*end && *text != '-' && *out <= max;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
	unsigned long long v;
	int c;

	*opt = (struct options) {
		.prov = DEFAULT_PROV,
		.port = DEFAULT_PORT,
		.max_size = test_sizes[test_sizes_count - 1],
		.iters = DEFAULT_ITERS,
	};
	while ((c = getopt(argc, argv, "p:E:S:I:NAHP:vh")) != -1) {
		switch (c) {
		case 'p':
			opt->prov = optarg;
			break;
		case 'E':
			/* -N uses the next port too. */
			if (!parse_uint(optarg, 65534, &v) || !v)
				goto bad;
			opt->port = (unsigned) v;
			break;
		case 'S':
			if (!parse_uint(optarg, SIZE_MAX, &v))
				goto bad;
			opt->max_size = (size_t) v;
			break;
		case 'I':
			if (!parse_uint(optarg, 1000000, &v) || !v)
				goto bad;
			opt->iters = (unsigned) v;
			break;
		case 'v':
			opt->verbose = true;
			break;
		case 'N':
			opt->by_node = true;
			break;
		case 'A':
			opt->by_svc = true;
			break;
		case 'H':
			opt->health = true;
			break;
		case 'P':
			if (!parse_uint(optarg, 3600, &v))
				goto bad;
			opt->pause = (unsigned) v;
			break;
		default:
			usage(argv[0]);
			return c == 'h' ? 1 : 2;
		}
	}
	if (optind < argc - 1) {
		fprintf(stderr, "fi_mrail_msg: one server address at most\n");
		usage(argv[0]);
		return 2;
	}
	if (opt->by_svc && !opt->by_node) {
		fprintf(stderr, "fi_mrail_msg: -A goes with -N\n");
		usage(argv[0]);
		return 2;
	}
	opt->server = optind < argc ? argv[optind] : NULL;
	return 0;
bad:
	fprintf(stderr, "fi_mrail_msg: bad value \"%s\" for -%c\n", optarg, c);
	usage(argv[0]);
	return 2;
}

/* -H: what mrail says of each rail towards the peer; a check that the
 * provider answers. */
static void print_rail_health(struct session *s)
{
	static const char *const states[] = { "up", "failed", "probing" };
	struct fi_mrail_peer_rails rails = {
		.size = sizeof(rails),
		.peer = s->peer,
	};
	uint32_t i;
	int ret;

	ret = fi_control(&s->ep->fid, FI_MRAIL_GET_PEER_RAILS, &rails);
	check_once(ret == 0, "fi_control(FI_MRAIL_GET_PEER_RAILS)",
		   fi_strerror(-ret));
	if (ret)
		return;
	for (i = 0; i < rails.rail_count && i < FI_MRAIL_MAX_RAILS; i++)
		printf("rail health: %u %s failures %" PRIu64 " recoveries %"
		       PRIu64 " reissued %" PRIu64 "\n", i + 1,
		       rails.rail[i].health < 3 ? states[rails.rail[i].health] :
						 "unknown",
		       rails.rail[i].failures, rails.rail[i].recoveries,
		       rails.rail[i].reissued_ops);
}

int main(int argc, char **argv)
{
	struct session s = { .sock = -1, .peer = FI_ADDR_NOTAVAIL };
	int ret;

	ret = parse_options(argc, argv, &s.opt);
	if (ret)
		return ret == 1 ? 0 : 2;
	chk.verbose = s.opt.verbose;
	s.is_server = !s.opt.server;

	oob_open(&s);
	oob_hello(&s);
	if (get_info(&s) || open_endpoint(&s))
		goto out;
	/* -N: the client's first message needs the server's rails bound. */
	if (s.opt.by_node)
		oob_sync(&s, SYNC_BOUND, "bind its endpoint");
	if (insert_peer(&s))
		goto out;
	oob_sync(&s, SYNC_START, "open its endpoint");

	if (!s.opt.by_node)
		run_late_insert(&s);
	else
		run_first_burst(&s);
	run_ping_pong(&s);
	/* -P: no traffic at all for a while, the rails' connections up. */
	if (s.opt.pause) {
		sleep(s.opt.pause);
		oob_sync(&s, SYNC_PAUSED, "end its pause");
	}
	run_tagged(&s);
	run_cq_data(&s);
	run_inject(&s);
	run_ordering(&s);
	run_truncation(&s);
	run_options(&s);
	run_multi_recv(&s);
	if (s.opt.health)
		print_rail_health(&s);
	run_alias(&s);
	oob_sync(&s, SYNC_END, "finish");
out:
	close_all(&s);
	print_summary();
	return chk.failed ? 1 : 0;
}
