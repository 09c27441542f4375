/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_objs's private header. The program is one binary; its sections
 * (counters and CQs, waiting objects, memory registration, operation tables
 * and fi_getinfo, endpoints) live in fi_mrail_objs_<section>.c, main and
 * the helpers they all use in fi_mrail_objs.c.
 */
#ifndef FI_MRAIL_OBJS_H
#define FI_MRAIL_OBJS_H

#include <getopt.h>
#include <netinet/in.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/mrail_check.h"
#include "mrail_compat.h"

/* Poll sets, wait sets and fi_av_bind are deprecated in libfabric 2.x, not
 * removed, and mrail implements them: this program tests them on purpose. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_ext_mrail.h>

/* Seconds a section may take before the watchdog calls it hung. */
#define WATCHDOG_S 120
/* How long the helper thread waits before acting on an object. */
#define LATER_MS 100

/* What the watchdog names when it fires: the section running. */
extern const char *volatile step;

/* Memory the MR tests register (fi_mrail_objs_mr.c); -t ops borrows some. */
extern uint8_t region[4][8192];

/* ---- a helper thread that acts on an object after LATER_MS ---- */

enum later_kind {
	LATER_CNTR_ADD,		/* fi_cntr_add(cntr, value) */
	LATER_CNTR_ADD_STEPS,	/* fi_cntr_add(cntr, 1), value times */
	LATER_CNTR_ADDERR,	/* fi_cntr_adderr(cntr, value) */
	LATER_CQ_SIGNAL,	/* fi_cq_signal(cq) */
	LATER_EQ_WRITE,		/* fi_eq_write(eq, FI_NOTIFY, entry) */
};

struct later {
	pthread_t thread;
	enum later_kind kind;
	void *obj;
	uint64_t value;
	struct fi_eq_entry entry;
	int ret;
};

/* An endpoint that sends to itself: its own AV holds its own address. */
struct self_ep {
	struct fid_av *av;
	struct fid_ep *ep;
	fi_addr_t self;
};

/* fi_mrail_objs.c: clocks, fd readiness, the helper thread */
int64_t now_ns(void);
void sleep_ms(int ms);
bool readable(int fd);
void later_start(struct later *l, enum later_kind kind, void *obj, uint64_t value);
int later_join(struct later *l);

/* fi_mrail_objs_cq.c: counters, CQs, the self-endpoint */
int open_cntr(struct fid_domain *domain, enum fi_wait_obj wait_obj,
	      struct fid_cntr **cntr);
void test_counters(struct fid_fabric *fabric, struct fid_domain *domain);
int self_ep_bind(struct fid_domain *domain, struct fi_info *info,
		 struct fid_cq *cq_tx, struct fid_cq *cq_rx, struct self_ep *s);
int self_ep_address(struct self_ep *s);
int self_ep_open(struct fid_domain *domain, struct fi_info *info,
		 struct fid_cq *cq_tx, struct fid_cq *cq_rx, struct self_ep *s);
int self_send(struct self_ep *s, struct fid_cq *cq_rx, const void *buf, size_t len,
	      void *ctx, struct fi_cq_msg_entry *rx, bool *got_rx);
void test_cq(struct fid_fabric *fabric, struct fid_domain *domain,
	     struct fi_info *info);

/* fi_mrail_objs_wait.c: EQs, fi_trywait, poll sets */
void test_eq(struct fid_fabric *fabric);
void test_trywait(struct fid_fabric *fabric, struct fid_domain *domain);
void test_poll(struct fid_domain *domain, struct fi_info *info);

/* fi_mrail_objs_mr.c: memory registration */
void test_mr(struct fid_fabric *fabric, struct fi_info *info,
	     struct fid_domain *domain);

/* fi_mrail_objs_ops.c: operation tables, fi_getinfo hints */
void test_ops(struct fid_fabric *fabric, struct fid_domain *domain,
	      struct fi_info *info);
void test_getinfo(void);

/* fi_mrail_objs_ep.c: socket addresses, scalable endpoints, enable, exit */
void test_sockaddr(struct fid_fabric *fabric);
void test_sep(struct fid_domain *domain, struct fi_info *info);
void test_enable_retry(struct fid_domain *domain, struct fi_info *info);
void test_exit_open(struct fid_fabric *fabric, struct fi_info *info);

#endif /* FI_MRAIL_OBJS_H */
