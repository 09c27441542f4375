/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_bench: the harness the libfabric-level benchmarks share
 * (fi_mrail_bw, fi_mrail_pingpong).
 *
 * Two processes meet over a TCP control connection: the server listens on
 * a port, the client connects to the server's address. Over it they check
 * that they run with the same options, swap fi_getname addresses, agree on
 * the largest message both providers accept, and synchronise between
 * measurements. The harness opens one FI_EP_RDM endpoint of the provider
 * asked for (no memory registration, FI_CONTEXT), counts completions as it
 * reads them, and retries -FI_EAGAIN while reading the CQ, so the provider
 * progresses and the completions read meanwhile are not lost.
 *
 * Functions returning int return 0 or a negative fi_errno value, after
 * printing what failed on stderr.
 */
#ifndef MRAIL_BENCH_H
#define MRAIL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#define BENCH_MAX_SIZES		64
/* -R: at most this many endpoints striped by hand. */
#define BENCH_MAX_RAILS		8
/* Options every benchmark takes; a tool appends its own to this. */
#define BENCH_COMMON_OPTS	"p:E:S:n:To:R:"

enum bench_format {
	BENCH_FORMAT_TEXT,	/* one human-readable line per size */
	BENCH_FORMAT_CSV,	/* a header line, then one row per size */
	BENCH_FORMAT_KV,	/* one "RESULT key=value ..." line per size */
};

struct bench_opts {
	const char *prov;
	const char *server;	/* NULL: this process is the server */
	unsigned port;
	bool tagged;
	enum bench_format format;
	size_t sizes[BENCH_MAX_SIZES];
	size_t nsizes;
	size_t iters;		/* 0: the tool chooses per size */
	/*
	 * Set by a tool that does RMA (fi_mrail_bw -r): the endpoint is asked
	 * for FI_RMA too, and the registration modes FI_MR_VIRT_ADDR,
	 * FI_MR_ALLOCATED and FI_MR_PROV_KEY are accepted (bench_mr_reg
	 * handles them); FI_MR_LOCAL is not, so no local buffer needs one.
	 */
	bool rma;
	/*
	 * -R N: the baseline a naive multirail layer would be over a bare
	 * provider. The harness opens N endpoints of the provider (each with
	 * its own fabric, domain, AV and CQ, as mrail opens its rails), reads
	 * every CQ on each progress call, and sends and receives the messages
	 * tagged striped_tag on them in turn, k-th on endpoint k mod N; every
	 * other message goes on the first. 1 (the default): one endpoint.
	 * Messages only: a tool that does RMA refuses N > 1.
	 */
	size_t rails;
	uint64_t striped_tag;	/* set by the tool: its data messages' tag */
};

/*
 * The context of one posted operation. FI_CONTEXT lends the provider its
 * fi_context until the operation completes; busy says whether it still
 * has it, so a tool reuses a context only once it is back.
 */
struct bench_ctx {
	struct fi_context fi_ctx;	/* first: its address is the context's */
	bool busy;
};

/* One endpoint of the provider and what it needs of its own. */
struct bench_rail {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;		/* the peer's endpoint of the same index */
};

struct bench {
	const char *prog;	/* prefixes every message */
	bool is_server;
	int sock;
	struct fi_info *info;
	struct bench_rail rails[BENCH_MAX_RAILS];
	size_t nrails;		/* opened so far */
	/* The first rail's, for tools that drive the endpoint themselves. */
	struct fid_ep *ep;
	fi_addr_t peer;
	/* -R: the data messages posted so far, to pick the next rail. */
	uint64_t striped_tag;
	uint64_t striped_sends;
	uint64_t striped_recvs;
	/* The smaller of the two sides' ep_attr->max_msg_size. */
	size_t max_msg_size;
	/* Completions read so far, by direction. */
	uint64_t tx_done;
	uint64_t rx_done;
	/*
	 * When set, called after every CQ read, completions counted, also
	 * when there were none: a tool's periodic report (fi_mrail_bw -i)
	 * sees time pass while the harness busy-polls.
	 */
	void (*progress_hook)(struct bench *b, void *arg);
	void *progress_arg;
};

/* ---- command line ---- */

/* Sets the defaults of the common options. */
void bench_opts_init(struct bench_opts *o, const char *default_sizes,
		     unsigned default_port);

/*
 * Handles one option of BENCH_COMMON_OPTS: returns 0 if it was one and was
 * valid, 1 if it is not a common option, -FI_EINVAL (after saying why) if
 * its argument is wrong.
 */
int bench_parse_opt(struct bench_opts *o, int opt, const char *arg);

/*
 * getopt over optstring (BENCH_COMMON_OPTS and the program's own letters),
 * taking the common options into o: the next option the program handles
 * itself, -1 at the end, or BENCH_OPT_BAD (after saying why) when a common
 * option's argument is wrong.
 */
#define BENCH_OPT_BAD	(-2)
int bench_getopt(struct bench_opts *o, int argc, char **argv, const char *optstring);

/*
 * Round counts for a size: bench_iters, o->iters when -n gave it, else
 * auto_bytes' worth of messages (max_iters of empty ones), within
 * [min_iters, max_iters]; bench_warmup, iters / divisor but at most cap and
 * at least 1.
 */
size_t bench_iters(const struct bench_opts *o, size_t size, size_t auto_bytes,
		   size_t min_iters, size_t max_iters);
size_t bench_warmup(size_t iters, size_t divisor, size_t cap);

/* -w COUNT, the warm-up rounds: 0, or 2 (after saying why) if COUNT is
 * not a count. */
int bench_parse_warmup(const char *arg, size_t *warmup, bool *given);

/*
 * The end of a benchmark's option parsing. bench_bad_opt: for an option
 * the program does not know, or -h: prints usage and returns main's exit
 * status plus one (1 for -h, 2 otherwise), as the parsers return.
 * bench_parse_operands: the one operand, the server's address, into
 * o->server; 2 after usage if there are more.
 */
int bench_bad_opt(int opt, void (*usage)(const char *), const char *argv0);
int bench_parse_operands(struct bench_opts *o, int argc, char **argv,
			 void (*usage)(const char *));

/*
 * A byte count: decimal, with an optional binary suffix k, m or g
 * (64k = 65536).
 */
int bench_parse_size(const char *text, size_t *size);

/*
 * A list of sizes: "all" (powers of two from 1 B to 4 MiB), or
 * comma-separated items that are sizes or LOW:HIGH ranges (the powers of
 * two between them, both ends included).
 */
int bench_parse_sizes(const char *spec, size_t *sizes, size_t *nsizes);

/* Text of the usage lines every tool shares, for its own usage(). */
extern const char bench_common_usage[];

/* ---- setup and teardown ---- */

/*
 * Connects the control connection, opens the endpoint, checks that the peer
 * was started with the same option text (tool_options describes the options
 * that must match), swaps addresses and agrees on max_msg_size. On failure
 * everything opened so far is closed again.
 */
int bench_open(struct bench *b, const struct bench_opts *o,
	       const char *tool_options);
void bench_close(struct bench *b);

/* ---- data transfer ---- */

/*
 * Reads every rail's CQ once, counting what it finds in tx_done and
 * rx_done and handing the completed operations' contexts back (busy = false).
 * Returns how many completions it read, or a negative error (an error
 * completion is reported and returned as its error).
 */
int bench_progress(struct bench *b);

/*
 * Busy-polls the CQ until *counter (b->tx_done or b->rx_done) reaches
 * target. Gives up with -FI_ETIMEDOUT if nothing completes for a long
 * while: the peer is gone.
 */
int bench_wait(struct bench *b, const uint64_t *counter, uint64_t target);

/* Busy-polls the CQ until the operation of ctx has completed. */
int bench_wait_ctx(struct bench *b, const struct bench_ctx *ctx);

/*
 * Post with fi_send/fi_tsend (fi_recv/fi_trecv), retrying -FI_EAGAIN, on
 * the next rail in turn if tag is the striped tag, else on the first.
 * ctx must not be busy; it is until the operation completes.
 */
int bench_post_send(struct bench *b, bool tagged, const void *buf, size_t len,
		    uint64_t tag, struct bench_ctx *ctx);
int bench_post_recv(struct bench *b, bool tagged, void *buf, size_t len,
		    uint64_t tag, struct bench_ctx *ctx);
/*
 * fi_write of len bytes from buf (no descriptor: FI_MR_LOCAL is never
 * accepted) to the peer's raddr under key, retrying -FI_EAGAIN.
 */
int bench_post_write(struct bench *b, const void *buf, size_t len,
		     uint64_t raddr, uint64_t key, struct bench_ctx *ctx);

/* ---- memory registration (bench_opts.rma) ---- */

/*
 * Registers buf for access (FI_WRITE, FI_REMOTE_WRITE ...) with the
 * requested key, and tells what a peer must use to reach it: *key (the
 * provider's under FI_MR_PROV_KEY) and *raddr, the remote address of buf's
 * first byte (its virtual address under FI_MR_VIRT_ADDR, else 0).
 */
int bench_mr_reg(struct bench *b, void *buf, size_t len, uint64_t access,
		 uint64_t requested_key, struct fid_mr **mr, uint64_t *key,
		 uint64_t *raddr);

/* ---- control connection ---- */

/*
 * Both sides call it; neither returns before the other arrived. The
 * endpoint keeps progressing while it waits.
 */
int bench_sync(struct bench *b);

/* Exchanges one 64-bit value with the peer. */
int bench_exchange_u64(struct bench *b, uint64_t ours, uint64_t *theirs);

/* ---- reporting ---- */

double bench_now(void);
const char *bench_mode_name(const struct bench_opts *o);

#endif /* MRAIL_BENCH_H */
