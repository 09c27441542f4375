/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_msg's private header: the session every test runs in, the
 * operations it posts, and the functions its source files share. The
 * program is one binary; the files only divide it where a reader looks for
 * a test group (fi_mrail_msg_<group>.c) or for the plumbing under them.
 */
#ifndef FI_MRAIL_MSG_H
#define FI_MRAIL_MSG_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include "mrail_compat.h"
#include "common/mrail_sock.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define DEFAULT_PROV		"mrail"
#define DEFAULT_PORT		47592
#define DEFAULT_ITERS		10
#define MAX_NAME_LEN		4096
#define HELLO_LEN		160

/* Nothing in these tests legitimately takes this long: past it the peer is
 * gone or stuck, and waiting longer only hides that. */
#define WAIT_LIMIT_MS		20000
/* Long enough for a late duplicate to surface, short enough to run often. */
#define DRAIN_MS		100
/* Gives unexpected messages time to reach the receiver before it posts. */
#define ORDER_SETTLE_MS		2

#define CQ_SIZE			1024
#define CQ_BATCH		16
#define MAX_PENDING		256
#define GUARD_LEN		32
#define ORDER_BURST		64
/* run_late_insert: a burst alternating eager and rendezvous sizes, and how
 * long the server progresses before it inserts the client. */
#define LATE_BURST		16
#define LATE_EAGER_SIZE		1000
#define LATE_RDV_SIZE		100003
#define LATE_WAIT_MS		300
/* run_first_burst: sends posted right after the first contact (-N). */
#define FIRST_BURST		5
/* run_alias: sends alternating between a peer's two AV entries. */
#define ALIAS_BURST		12
/* A truncation case: the receive posted, the message sent. */
struct trunc_case {
	size_t posted, sent;
};

/*
 * Tags stay below bit 48 in case a provider keeps the top bits for itself.
 * Receive A ignores its low 16 bits, receive B bits 24..31; the sent tags set
 * bits in those ranges, and neither sent tag matches the other receive.
 */
#define TAG_A			0x00000000a1a10000ULL
#define TAG_A_IGNORE		0x000000000000ffffULL
#define TAG_B			0x00000b2b00000005ULL
#define TAG_B_IGNORE		0x00000000ff000000ULL
#define TAG_DATA		0x00000000dada0000ULL
#define TAG_ORDER		0x0000000000c0de00ULL
#define TAG_ORDER_IGNORE	0x00000000000000ffULL
#define TAG_TRUNC		0x0000000000007700ULL

/* The message sizes the tests run at (fi_mrail_msg.c), smallest first. */
extern const size_t test_sizes[];
extern const size_t test_sizes_count;

enum direction {
	CLIENT_TO_SERVER,
	SERVER_TO_CLIENT,
};

/* Distinct payloads per test, so a message that lands in the wrong buffer
 * does not look right there. */
enum pattern {
	PAT_PING = 1,
	PAT_PONG,
	PAT_TAG_A,
	PAT_TAG_B,
	PAT_DATA_MSG,
	PAT_DATA_TAGGED,
	PAT_INJECT,
	PAT_ORDER,
	PAT_TRUNC,
	PAT_MULTI,
};

/* Bytes on the control connection; the peer checks it got the same one. */
enum sync_code {
	SYNC_START = 'A',
	SYNC_BOUND,
	SYNC_PING_PONG,
	SYNC_TAGGED,
	SYNC_CQ_DATA,
	SYNC_INJECT,
	SYNC_ORDER,
	SYNC_TRUNC,
	SYNC_OPTS,
	SYNC_MULTI,
	SYNC_LATE,
	SYNC_FIRST_BURST,
	SYNC_ALIAS,
	SYNC_ALIAS_REMOVED,
	SYNC_PAUSED,
	SYNC_END,
	SIG_POSTED = 'p',
	SIG_SENT = 's',
};

enum op_kind {
	OP_SEND,
	OP_SENDDATA,
	OP_TSEND,
	OP_TSENDDATA,
	OP_RECV,
	OP_TRECV,
	OP_MRECV,	/* fi_recvmsg with FI_MULTI_RECV */
	OP_SENDMSG_INJECT,	/* fi_sendmsg with FI_INJECT: completes */
};

struct options {
	const char *prov;
	const char *server;
	unsigned port;
	size_t max_size;
	unsigned iters;
	bool verbose;
	bool by_node;	/* -N: the peer from fi_getinfo(node, service) */
	bool by_svc;	/* -A (with -N): from fi_av_insertsvc instead */
	bool health;	/* -H: print the rails' health towards the peer */
	unsigned pause;	/* -P: seconds of silence after the ping-pong */
};

/* Messages one multi-receive buffer takes in these tests, at most. */
#define MULTI_MAX_PARTS		8

/* Every completion a multi-receive buffer got, in CQ order. */
struct multi_log {
	size_t count;
	struct fi_cq_tagged_entry entries[MULTI_MAX_PARTS + 2];
	int errs[MULTI_MAX_PARTS + 2];
	size_t olens[MULTI_MAX_PARTS + 2];
};

/* One posted operation and what the CQ said about it. */
struct op {
	struct fi_context fi_ctx;	/* FI_CONTEXT mode: ours until completion */
	enum op_kind kind;
	void *buf;
	size_t len;
	uint64_t tag;
	uint64_t ignore;
	uint64_t data;
	/* OP_TSEND: to this entry instead of the session's peer, and with
	 * FI_DELIVERY_COMPLETE (fi_tsendmsg). */
	bool has_dest;
	fi_addr_t dest;
	bool delivery_complete;
	int completions;
	struct fi_cq_tagged_entry entry;
	int err;			/* positive FI_E* of an error completion */
	size_t olen;
	char err_text[160];
	struct multi_log *multi;	/* OP_MRECV: its per-message completions */
};

/* A data area with guard bytes on both sides, to catch overruns. */
struct buf {
	uint8_t *mem;
	uint8_t *data;
	size_t cap;
};

struct session {
	struct options opt;
	struct trunc_case trunc;	/* the truncation case running */
	bool is_server;
	int sock;
	struct sockaddr_storage local_ip;	/* our end of the control link */
	struct fi_info *info_list;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
	/* The server inserts the client only after its first messages have
	 * arrived (run_late_insert): its name waits here until then. */
	uint8_t late_name[MAX_NAME_LEN];
	size_t late_len;

	struct op *pending[MAX_PENDING];
	size_t pending_count;
	unsigned tx_posted, rx_posted, tx_done, rx_done, stray;
	char stray_note[200];
	char stuck[200];	/* why a wait gave up; ends the run soon */
};

/*
 * A check covers one scenario (a test at one size and direction, over all
 * iterations); it fails with the first reason found and counts the rest, so
 * the output stays readable however many iterations run.
 */
struct checks {
	bool verbose;
	bool open;
	int total;
	int failed;
	int reasons;
	char name[160];
	char why[400];
};
extern struct checks chk;

/* fi_mrail_msg_session.c: checks, payloads, buffers, control connection */
void __attribute__((noreturn, format(printf, 1, 2))) fatal(const char *fmt, ...);
void check_begin(const char *fmt, ...);
void check_fail(const char *fmt, ...);
void check_end(void);
void check_once(bool ok, const char *name, const char *detail);
void note_skip(const char *what, const char *why);
void print_summary(void);
uint64_t now_ms(void);
bool is_sender(const struct session *s, enum direction dir);
const char *dir_name(const struct session *s, enum direction dir);
uint8_t pattern_byte(enum pattern pat, size_t size, uint32_t iter, size_t idx);
void fill_pattern(uint8_t *p, size_t len, enum pattern pat, size_t size,
		  uint32_t iter);
void poison_for(uint8_t *p, size_t len, enum pattern pat, size_t size,
		uint32_t iter);
size_t first_mismatch(const uint8_t *p, size_t from, size_t len,
		      enum pattern pat, size_t size, uint32_t iter);
void buf_alloc(struct buf *b, size_t cap);
void buf_free(struct buf *b);
void bufs_alloc(struct buf *bufs, size_t n, size_t cap);
void bufs_free(struct buf *bufs, size_t n);
bool expect_guards(const struct buf *b, const char *where);
bool expect_payload(const struct buf *b, size_t len, enum pattern pat,
		    size_t size, uint32_t iter, const char *where);
void oob_open(struct session *s);
void stop_if_stuck(const struct session *s);
void oob_signal(struct session *s, enum sync_code code);
void oob_wait_signal(struct session *s, enum sync_code code, const char *what);
void oob_sync(struct session *s, enum sync_code code, const char *what);
void oob_hello(struct session *s);
void oob_exchange_names(struct session *s, const uint8_t *ours,
			size_t our_len, uint8_t *theirs, size_t *their_len);

/* fi_mrail_msg_ops.c: operations, completions, posting, expectations */
void flags_str(uint64_t flags, char *out, size_t len);
void op_init(struct op *op, enum op_kind kind, void *buf, size_t len);
void pending_add(struct session *s, struct op *op);
void progress(struct session *s);
void wait_ops(struct session *s, const struct op *ops, size_t n, const char *what);
void drain(struct session *s, unsigned ms);
ssize_t post_once(struct session *s, struct op *op);
void post_op(struct session *s, struct op *op);
void post_inject(struct session *s, const void *buf, size_t len);
bool expect_completed(const struct op *op, uint64_t flags, const char *where);
bool expect_received(const struct op *op, uint64_t flags, size_t len,
		     const char *where);
bool expect_tag(const struct op *op, uint64_t tag, const char *where);
void end_test(struct session *s, const char *test, enum sync_code code);

/* fi_mrail_msg_basic.c: ping-pong, tags, CQ data, inject, ordering,
 * truncation, endpoint options */
void test_ping_pong(struct session *s, size_t size);
void order_fill(uint8_t *p, size_t size, uint32_t iter, unsigned k);
void order_poison(uint8_t *p, size_t size, uint32_t iter, unsigned k);
void order_check_one(const struct op *op, const struct buf *b, size_t size,
		     uint32_t iter, unsigned k, bool tagged);
bool prov_is_mrail(const struct session *s);
void check_opt_ret(int ret, int want, const char *name);
void run_options(struct session *s);
void run_ping_pong(struct session *s);
void run_tagged(struct session *s);
void run_cq_data(struct session *s);
void run_inject(struct session *s);
void run_ordering(struct session *s);
void run_truncation(struct session *s);

/* fi_mrail_msg_multi.c: FI_MULTI_RECV */
void run_multi_recv(struct session *s);

/* fi_mrail_msg_setup.c: fi_getinfo, endpoint, address exchange, teardown */
int get_info(struct session *s);
int open_endpoint(struct session *s);
int insert_peer(struct session *s);
void close_all(struct session *s);

/* fi_mrail_msg_peers.c: late insert, first burst, aliases */
void run_late_insert(struct session *s);
void run_first_burst(struct session *s);
void run_alias(struct session *s);

#endif /* FI_MRAIL_MSG_H */
