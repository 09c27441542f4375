/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_named_av: functional test of named AVs (fi_av_attr.name,
 * FI_SHARED_AV) shared by processes of one host, as fabtests'
 * fi_rdm_shared_av and SHMEM-style runtimes use them.
 *
 *   fi_mrail_named_av -a NODE [-n MESSAGES] [-v]
 *
 * Three processes, forked before any of them touches libfabric:
 *   receiver  opens an endpoint bound to NODE (an address of rail 0) and a
 *             port of its own, and checks that exactly MESSAGES + 2
 *             messages arrive, byte for byte, each completing once;
 *   writer    creates the named AV, inserts the receiver by node and
 *             service (fi_av_insertsvc: entry A) and the
 *             same address again (entry B, an alias), checks that a second
 *             writer of the name is refused (-FI_EBUSY), and after the
 *             reader has opened the AV inserts it once more (entry C);
 *   reader    checks that FI_READ of a name nobody created fails, opens the
 *             AV with FI_READ, checks map_addr (A and B published, the next
 *             index not yet), that fi_av_lookup of A gives the writer's
 *             bytes, that it may not insert (-FI_EPERM), then sends
 *             MESSAGES to map_addr[A] and one each to B and to C, which was
 *             published after it opened the AV, counting one completion
 *             per send.
 * After the writer closes the AV, FI_READ of its name fails again.
 * Each process prints its checks; exits 0 only if every check passed.
 *
 *   fi_mrail_named_av -k NAME    creates the named AV NAME, then dies by
 *                                SIGKILL: a writer that crashed
 *   fi_mrail_named_av -t NAME    checks that a writer of NAME, created by
 *                                a process that is gone, is taken over
 *                                (and then refuses a second writer)
 * The two test that a writer's death frees its name whatever its process
 * id means here: tests/integration/test_shared.sh kills the first in a PID
 * namespace of its own.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mrail_check.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_mrail.h>

#define MSG_LEN 2048
#define MAX_MSGS 64
#define NAME_MAX_LEN 256
#define WAIT_S 30

struct node {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_ep *ep;
	struct fid_cq *cq;
};

/* Pipes between the processes: receiver to writer (its name), writer to
 * reader (go: the AV exists), reader to writer (opened), writer to reader
 * (entry C published), reader to receiver (all sent). */
enum { TO_WRITER, TO_READER, OPENED, LATE, SENT, PIPES };
static int fds[PIPES][2];
static const char *role = "main";
static int messages = 16;
static char av_name[64];
static const char *node;
static char service[16];

static void put(int pipe_idx, const void *buf, size_t len)
{
	if (write(fds[pipe_idx][1], buf, len) != (ssize_t) len) {
		fprintf(stderr, "fi_mrail_named_av[%s]: pipe write: %s\n", role,
			strerror(errno));
		exit(2);
	}
}

static void get(int pipe_idx, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fds[pipe_idx][0], (char *) buf + got, len - got);
		if (n <= 0) {
			fprintf(stderr, "fi_mrail_named_av[%s]: pipe read: %s\n",
				role, n ? strerror(errno) : "the other side is gone");
			exit(2);
		}
		got += (size_t) n;
	}
}

static struct fi_info *getinfo(bool bind)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	hints->caps = FI_MSG | FI_SHARED_AV;
	hints->mode = FI_CONTEXT;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	ret = fi_getinfo(FI_VERSION(1, 17), bind ? node : NULL,
			 bind ? service : NULL, bind ? FI_SOURCE : 0, hints, &info);
	fi_freeinfo(hints);
	check_what(!ret, "fi_getinfo(FI_MSG | FI_SHARED_AV)",
		   ret ? "%s" : NULL, fi_strerror(-ret));
	return ret ? NULL : info;
}

static int open_domain(struct node *n, bool bind)
{
	int ret;

	n->info = getinfo(bind);
	if (!n->info)
		return -1;
	ret = fi_fabric(n->info->fabric_attr, &n->fabric, NULL);
	if (!ret)
		ret = fi_domain(n->fabric, n->info, &n->domain, NULL);
	check_what(!ret, "fabric and domain", ret ? "%s" : NULL, fi_strerror(-ret));
	return ret ? -1 : 0;
}

static int open_av(struct node *n, struct fi_av_attr *attr)
{
	int ret = fi_av_open(n->domain, attr, &n->av, NULL);

	check_what(!ret, "fi_av_open", ret ? "%s%s%s" : NULL,
		   attr->name ? attr->name : "", attr->name ? ": " : "",
		   fi_strerror(-ret));
	return ret ? -1 : 0;
}

static int open_ep(struct node *n)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	int ret;

	ret = fi_cq_open(n->domain, &cq_attr, &n->cq, NULL);
	if (!ret)
		ret = fi_endpoint(n->domain, n->info, &n->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(n->ep, &n->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(n->ep);
	check_what(!ret, "endpoint", ret ? "%s" : NULL, fi_strerror(-ret));
	return ret ? -1 : 0;
}

static void close_node(struct node *n)
{
	if (n->ep)
		fi_close(&n->ep->fid);
	if (n->cq)
		fi_close(&n->cq->fid);
	if (n->av)
		fi_close(&n->av->fid);
	if (n->domain)
		fi_close(&n->domain->fid);
	if (n->fabric)
		fi_close(&n->fabric->fid);
	fi_freeinfo(n->info);
}

/* Waits up to secs for want completions on n's CQ; returns how many came,
 * counting errors as none. */
static int wait_completions(struct node *n, int want, struct fi_cq_data_entry *out,
			    int secs)
{
	struct fi_cq_data_entry entry;
	struct fi_cq_err_entry err;
	time_t end = time(NULL) + secs;
	int got = 0;
	ssize_t ret;

	while (got < want && time(NULL) < end) {
		ret = fi_cq_read(n->cq, &entry, 1);
		if (ret == 1) {
			if (out)
				out[got] = entry;
			got++;
		} else if (ret == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(n->cq, &err, 0);
			check_what(false, "completion", "error %s",
				   fi_strerror(err.err));
		} else if (ret != -FI_EAGAIN) {
			check_what(false, "fi_cq_read", "%s", fi_strerror((int) -ret));
			break;
		}
	}
	return got;
}

static int finish(void)
{
	printf("fi_mrail_named_av[%s]: %d of %d checks passed\n", role,
	       check_count - check_failures, check_count);
	fflush(stdout);
	return check_failures ? 1 : 0;
}

static int run_receiver(void)
{
	static uint8_t bufs[MAX_MSGS + 2][MSG_LEN];
	static struct fi_context ctx[MAX_MSGS + 2];
	struct fi_cq_data_entry done[MAX_MSGS + 2];
	struct fi_av_attr attr = { .type = FI_AV_TABLE };
	struct node n = { 0 };
	int i, got, ok = 0, want = messages + 2;
	uint8_t sent, ready = 0;

	role = "receiver";
	if (open_domain(&n, true) || open_av(&n, &attr) || open_ep(&n)) {
		put(TO_WRITER, &ready, 1);
		goto out;
	}
	for (i = 0; i < want; i++) {
		if (fi_recv(n.ep, bufs[i], MSG_LEN, NULL, FI_ADDR_UNSPEC, &ctx[i])) {
			check_what(false, "fi_recv", NULL);
			goto out;
		}
	}
	ready = 1;
	put(TO_WRITER, &ready, 1);
	got = wait_completions(&n, want, done, WAIT_S);
	check(got == want, "%d messages from the reader arrive (got %d)", want, got);
	for (i = 0; i < got; i++) {
		struct fi_context *c = done[i].op_context;
		long k = c - ctx;
		uint8_t seed;

		if (k < 0 || k >= want || done[i].len != MSG_LEN)
			continue;
		seed = bufs[k][0];
		if (seed < want && check_pattern_mismatch(bufs[k] + 1, MSG_LEN - 1,
							  seed) == MSG_LEN - 1)
			ok++;
	}
	check(ok == got, "every message byte for byte (%d of %d)", ok, got);
	get(SENT, &sent, 1);
	check(wait_completions(&n, 1, NULL, 1) == 0,
	      "no completion beyond the %d messages", want);
out:
	close_node(&n);
	return finish();
}

static int run_writer(void)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .name = av_name };
	struct fi_av_attr again = { .type = FI_AV_TABLE, .name = av_name };
	struct fi_av_attr late = { .type = FI_AV_TABLE, .name = av_name,
				   .flags = FI_READ };
	uint8_t lookup[NAME_MAX_LEN];
	fi_addr_t addr[3] = { FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL };
	struct fid_av *second = NULL;
	size_t lookup_len = sizeof(lookup);
	struct node n = { 0 };
	uint8_t go = 0, opened, ready;
	int ret;

	role = "writer";
	get(TO_WRITER, &ready, 1);
	if (!ready || open_domain(&n, false) || open_av(&n, &attr)) {
		lookup_len = 0;
		goto tell;
	}
	check(attr.map_addr != NULL, "fi_av_open returns the map_addr it uses");
	check(fi_av_insertsvc(n.av, node, service, &addr[0], 0, NULL) == 1,
	      "insert the receiver (entry A)");
	check(fi_av_insertsvc(n.av, node, service, &addr[1], 0, NULL) == 1,
	      "insert the receiver again (entry B)");
	ret = fi_av_lookup(n.av, addr[0], lookup, &lookup_len);
	check_what(!ret, "fi_av_lookup(A)", ret ? "%s" : NULL, fi_strerror(-ret));
	ret = fi_av_open(n.domain, &again, &second, NULL);
	check(ret == -FI_EBUSY, "a second writer of the name is refused with "
	      "-FI_EBUSY (got %s)", ret ? fi_strerror(-ret) : "success");
	if (!ret)
		fi_close(&second->fid);
	go = 1;
tell:
	put(TO_READER, &go, 1);
	put(TO_READER, addr, 2 * sizeof(addr[0]));
	put(TO_READER, &lookup_len, sizeof(lookup_len));
	put(TO_READER, lookup, lookup_len);
	if (!go)
		goto out;
	/* Entry C goes in after the reader opened the AV. */
	get(OPENED, &opened, 1);
	check(fi_av_insertsvc(n.av, node, service, &addr[2], 0, NULL) == 1,
	      "insert the receiver a third time (entry C), after the reader "
	      "opened the AV");
	put(LATE, &addr[2], sizeof(addr[2]));
	get(OPENED, &opened, 1);	/* the reader is done with the AV */
	check(fi_close(&n.av->fid) == 0, "close the named AV");
	n.av = NULL;
	second = NULL;
	ret = fi_av_open(n.domain, &late, &second, NULL);
	check(ret < 0, "FI_READ of the name fails once its writer closed it "
	      "(got %s)", ret ? fi_strerror(-ret) : "success");
	if (!ret)
		fi_close(&second->fid);
out:
	close_node(&n);
	return finish();
}

static void send_one(struct node *n, fi_addr_t dest, uint8_t seed,
		     uint8_t *buf, struct fi_context *ctx)
{
	ssize_t ret;

	buf[0] = seed;
	check_pattern_fill(buf + 1, MSG_LEN - 1, seed);
	do {
		ret = fi_send(n->ep, buf, MSG_LEN, NULL, dest, ctx);
		if (ret == -FI_EAGAIN)
			fi_cq_read(n->cq, NULL, 0);
	} while (ret == -FI_EAGAIN);
	check_what(!ret, "fi_send", ret ? "message %u: %s" : NULL, seed,
		   fi_strerror((int) -ret));
}

static int run_reader(void)
{
	static uint8_t bufs[MAX_MSGS + 2][MSG_LEN];
	static struct fi_context ctx[MAX_MSGS + 2];
	char missing[80];
	struct fi_av_attr nobody = { .type = FI_AV_TABLE, .name = missing,
				     .flags = FI_READ };
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .name = av_name,
				   .flags = FI_READ };
	uint8_t theirs[NAME_MAX_LEN], ours[NAME_MAX_LEN], go, one = 1;
	size_t theirs_len, ours_len = sizeof(ours);
	fi_addr_t writer_addr[2], late, *map, dummy;
	struct fid_av *none = NULL;
	struct node n = { 0 };
	int i, ret, sends = 0;

	role = "reader";
	snprintf(missing, sizeof(missing), "%s_nobody", av_name);
	if (open_domain(&n, false))
		goto wait_writer;
	ret = fi_av_open(n.domain, &nobody, &none, NULL);
	check(ret < 0, "FI_READ of a name nobody created fails (got %s)",
	      ret ? fi_strerror(-ret) : "success");
	if (!ret)
		fi_close(&none->fid);
wait_writer:
	get(TO_READER, &go, 1);
	get(TO_READER, writer_addr, sizeof(writer_addr));
	get(TO_READER, &theirs_len, sizeof(theirs_len));
	if (theirs_len > sizeof(theirs))
		theirs_len = 0;
	get(TO_READER, theirs, theirs_len);
	if (!go || !n.domain || open_av(&n, &attr)) {
		put(OPENED, &one, 1);
		put(OPENED, &one, 1);
		goto out;
	}
	map = (fi_addr_t *) attr.map_addr;
	check(map != NULL, "FI_READ open returns map_addr");
	put(OPENED, &one, 1);
	if (!map) {
		put(OPENED, &one, 1);
		goto out;
	}
	check(map[writer_addr[0]] == writer_addr[0] &&
	      map[writer_addr[1]] == writer_addr[1],
	      "map_addr holds the writer's entries A and B (%llu, %llu)",
	      (unsigned long long) writer_addr[0],
	      (unsigned long long) writer_addr[1]);
	ret = fi_av_lookup(n.av, map[writer_addr[0]], ours, &ours_len);
	check(!ret && ours_len == theirs_len && !memcmp(ours, theirs, ours_len),
	      "fi_av_lookup(A) gives the writer's address byte for byte");
	ret = fi_av_insert(n.av, theirs, 1, &dummy, 0, NULL);
	check(ret == -FI_EPERM, "a reader may not insert (-FI_EPERM, got %d)", ret);
	if (open_ep(&n)) {
		put(OPENED, &one, 1);
		goto out;
	}
	for (i = 0; i < messages; i++, sends++)
		send_one(&n, map[writer_addr[0]], (uint8_t) i, bufs[i], &ctx[i]);
	send_one(&n, map[writer_addr[1]], (uint8_t) sends, bufs[sends],
		 &ctx[sends]);
	sends++;
	get(LATE, &late, sizeof(late));
	check(late != FI_ADDR_NOTAVAIL && map[late] == late,
	      "entry C, inserted after this process opened the AV, is in map_addr");
	send_one(&n, map[late], (uint8_t) sends, bufs[sends], &ctx[sends]);
	sends++;
	ret = wait_completions(&n, sends, NULL, WAIT_S);
	check(ret == sends, "one send completion per message (%d of %d)", ret,
	      sends);
	put(OPENED, &one, 1);
out:
	put(SENT, &one, 1);
	close_node(&n);
	return finish();
}

/* -k: a writer of name that crashes with the AV open. */
static int run_crashing_writer(const char *name)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .name = (char *) name };
	struct node n = { 0 };

	role = "crashing writer";
	if (open_domain(&n, false) || open_av(&n, &attr))
		return finish();
	printf("fi_mrail_named_av[%s]: created '%s', now dying\n", role, name);
	fflush(stdout);
	raise(SIGKILL);
	return 1;
}

/* -t: the name of a writer that is gone is free, and then ours. */
static int run_takeover(const char *name)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .name = (char *) name };
	struct fi_av_attr again = attr;
	struct fid_av *second = NULL;
	struct node n = { 0 };
	int ret;

	role = "takeover";
	if (open_domain(&n, false))
		return finish();
	ret = fi_av_open(n.domain, &attr, &n.av, NULL);
	check(!ret, "the named AV of a writer that is gone opens as writer "
	      "(got %s)", ret ? fi_strerror(-ret) : "success");
	if (!ret) {
		ret = fi_av_open(n.domain, &again, &second, NULL);
		check(ret == -FI_EBUSY, "then a second writer of the name is "
		      "refused with -FI_EBUSY (got %s)",
		      ret ? fi_strerror(-ret) : "success");
		if (!ret)
			fi_close(&second->fid);
	}
	close_node(&n);
	return finish();
}

int main(int argc, char **argv)
{
	pid_t pids[2];
	int opt, i, status, failed = 0;

	while ((opt = getopt(argc, argv, "a:n:k:t:vh")) != -1) {
		switch (opt) {
		case 'k':
			return run_crashing_writer(optarg);
		case 't':
			return run_takeover(optarg);
		case 'a':
			node = optarg;
			break;
		case 'n':
			messages = atoi(optarg);
			break;
		case 'v':
			check_verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s -a NODE [-n MESSAGES] [-v] | "
				"-k NAME | -t NAME\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!node) {
		fprintf(stderr, "fi_mrail_named_av: -a names an address of "
			"rail 0 for the receiver\n");
		return 2;
	}
	if (messages < 1 || messages > MAX_MSGS) {
		fprintf(stderr, "fi_mrail_named_av: -n takes 1 to %d\n", MAX_MSGS);
		return 2;
	}
	snprintf(av_name, sizeof(av_name), "fi_mrail_named_av.%d", (int) getpid());
	snprintf(service, sizeof(service), "%d", 20000 + (int) getpid() % 20000);
	for (i = 0; i < PIPES; i++) {
		if (pipe(fds[i])) {
			perror("fi_mrail_named_av: pipe");
			return 2;
		}
	}
	alarm(3 * WAIT_S);
	fflush(stdout);
	pids[0] = fork();
	if (!pids[0])
		return run_receiver();
	pids[1] = fork();
	if (!pids[1])
		return run_reader();
	if (pids[0] < 0 || pids[1] < 0) {
		perror("fi_mrail_named_av: fork");
		return 2;
	}
	status = run_writer();
	failed |= status;
	for (i = 0; i < 2; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "fi_mrail_named_av: the %s ended with "
				"status 0x%x\n", i ? "reader" : "receiver", status);
			failed = 1;
		}
	}
	printf("fi_mrail_named_av: %s\n", failed ? "FAILED" : "all processes passed");
	return failed;
}
