/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Endpoint aliases (fi_ep_alias, fi_endpoint(3)): another fid_ep for the
 * same endpoint, with default operation flags of its own. The alias owns
 * nothing: its calls become the endpoint's *msg calls with the alias's
 * flags, so they share its rails, queues, CQs, counters and AV, and
 * complete on them. The flags arithmetic is core/ep_alias.c.
 *
 * The calls that take no flags use the alias's (fi_send, fi_write,
 * fi_recv, ...: an alias with FI_TRIGGER among its transmit flags makes
 * every fi_write a triggered one, its context a struct
 * fi_triggered_context); the *msg calls take theirs from the caller, as
 * on the endpoint. Inject calls complete nothing whatever the flags, so
 * they go to the endpoint's as they are. An alias is closed on its own,
 * and the endpoint refuses to close while it has aliases (-FI_EBUSY).
 */
#include "mrail.h"
#include "mrail_ep.h"

#include <errno.h>
#include <stdlib.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "ep_alias.h"

/* FI_TRIGGER is accepted as a default: every mrail *msg call honours it. */
#define ALIAS_TX_FLAGS (MRAIL_TX_OP_FLAGS | FI_TRIGGER)
#define ALIAS_RX_FLAGS (MRAIL_RX_OP_FLAGS | FI_TRIGGER)

struct mrail_ep_alias {
	struct fid_ep ep_fid;
	struct mrail_ep *ep;
	struct mrail_op_flags flags;
	/* A scalable endpoint's context: FI_TRANSMIT or FI_RECV, the side
	 * whose CQs and counters it takes; 0 for an fi_ep_alias alias. */
	uint64_t ctx_side;
};

#define ALIAS(fid_ep) container_of(fid_ep, struct mrail_ep_alias, ep_fid)
#define PARENT(fid_ep) (&ALIAS(fid_ep)->ep->ep_fid)
#define TX_FLAGS(fid_ep) (ALIAS(fid_ep)->flags.tx)
#define RX_FLAGS(fid_ep) (ALIAS(fid_ep)->flags.rx)

static void *one_desc(void *desc, void **slot)
{
	*slot = desc;
	return slot;
}

/* ---- messages ---- */

static ssize_t alias_recvv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			   size_t count, fi_addr_t src, void *context)
{
	struct fi_msg msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = src,
		.context = context,
	};

	return fi_recvmsg(PARENT(fid), &msg, RX_FLAGS(fid));
}

static ssize_t alias_recv(struct fid_ep *fid, void *buf, size_t len, void *desc,
			  fi_addr_t src, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	void *d;

	return alias_recvv(fid, &iov, one_desc(desc, &d), 1, src, context);
}

static ssize_t alias_recvmsg(struct fid_ep *fid, const struct fi_msg *msg,
			     uint64_t flags)
{
	return fi_recvmsg(PARENT(fid), msg, flags);
}

static ssize_t alias_sendv_data(struct fid_ep *fid, const struct iovec *iov,
				void **desc, size_t count, uint64_t data,
				fi_addr_t dest, void *context, uint64_t flags)
{
	struct fi_msg msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = dest,
		.context = context, .data = data,
	};

	return fi_sendmsg(PARENT(fid), &msg, flags);
}

static ssize_t alias_send(struct fid_ep *fid, const void *buf, size_t len,
			  void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	void *d;

	return alias_sendv_data(fid, &iov, one_desc(desc, &d), 1, 0, dest, context,
				TX_FLAGS(fid));
}

static ssize_t alias_sendv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			   size_t count, fi_addr_t dest, void *context)
{
	return alias_sendv_data(fid, iov, desc, count, 0, dest, context,
				TX_FLAGS(fid));
}

static ssize_t alias_sendmsg(struct fid_ep *fid, const struct fi_msg *msg,
			     uint64_t flags)
{
	return fi_sendmsg(PARENT(fid), msg, flags);
}

static ssize_t alias_senddata(struct fid_ep *fid, const void *buf, size_t len,
			      void *desc, uint64_t data, fi_addr_t dest, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	void *d;

	return alias_sendv_data(fid, &iov, one_desc(desc, &d), 1, data, dest,
				context, TX_FLAGS(fid) | FI_REMOTE_CQ_DATA);
}

static ssize_t alias_inject(struct fid_ep *fid, const void *buf, size_t len,
			    fi_addr_t dest)
{
	return fi_inject(PARENT(fid), buf, len, dest);
}

static ssize_t alias_injectdata(struct fid_ep *fid, const void *buf, size_t len,
				uint64_t data, fi_addr_t dest)
{
	return fi_injectdata(PARENT(fid), buf, len, data, dest);
}

static struct fi_ops_msg alias_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = alias_recv,
	.recvv = alias_recvv,
	.recvmsg = alias_recvmsg,
	.send = alias_send,
	.sendv = alias_sendv,
	.sendmsg = alias_sendmsg,
	.inject = alias_inject,
	.senddata = alias_senddata,
	.injectdata = alias_injectdata,
};

/* ---- tagged messages ---- */

static ssize_t alias_trecvv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			    size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore,
			    void *context)
{
	struct fi_msg_tagged msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = src,
		.tag = tag, .ignore = ignore, .context = context,
	};

	return fi_trecvmsg(PARENT(fid), &msg, RX_FLAGS(fid));
}

static ssize_t alias_trecv(struct fid_ep *fid, void *buf, size_t len, void *desc,
			   fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	void *d;

	return alias_trecvv(fid, &iov, one_desc(desc, &d), 1, src, tag, ignore,
			    context);
}

static ssize_t alias_trecvmsg(struct fid_ep *fid, const struct fi_msg_tagged *msg,
			      uint64_t flags)
{
	return fi_trecvmsg(PARENT(fid), msg, flags);
}

static ssize_t alias_tsendv_data(struct fid_ep *fid, const struct iovec *iov,
				 void **desc, size_t count, uint64_t data,
				 fi_addr_t dest, uint64_t tag, void *context,
				 uint64_t flags)
{
	struct fi_msg_tagged msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = dest,
		.tag = tag, .context = context, .data = data,
	};

	return fi_tsendmsg(PARENT(fid), &msg, flags);
}

static ssize_t alias_tsend(struct fid_ep *fid, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	void *d;

	return alias_tsendv_data(fid, &iov, one_desc(desc, &d), 1, 0, dest, tag,
				 context, TX_FLAGS(fid));
}

static ssize_t alias_tsendv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			    size_t count, fi_addr_t dest, uint64_t tag, void *context)
{
	return alias_tsendv_data(fid, iov, desc, count, 0, dest, tag, context,
				 TX_FLAGS(fid));
}

static ssize_t alias_tsendmsg(struct fid_ep *fid, const struct fi_msg_tagged *msg,
			      uint64_t flags)
{
	return fi_tsendmsg(PARENT(fid), msg, flags);
}

static ssize_t alias_tsenddata(struct fid_ep *fid, const void *buf, size_t len,
			       void *desc, uint64_t data, fi_addr_t dest, uint64_t tag,
			       void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	void *d;

	return alias_tsendv_data(fid, &iov, one_desc(desc, &d), 1, data, dest, tag,
				 context, TX_FLAGS(fid) | FI_REMOTE_CQ_DATA);
}

static ssize_t alias_tinject(struct fid_ep *fid, const void *buf, size_t len,
			     fi_addr_t dest, uint64_t tag)
{
	return fi_tinject(PARENT(fid), buf, len, dest, tag);
}

static ssize_t alias_tinjectdata(struct fid_ep *fid, const void *buf, size_t len,
				 uint64_t data, fi_addr_t dest, uint64_t tag)
{
	return fi_tinjectdata(PARENT(fid), buf, len, data, dest, tag);
}

static struct fi_ops_tagged alias_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = alias_trecv,
	.recvv = alias_trecvv,
	.recvmsg = alias_trecvmsg,
	.send = alias_tsend,
	.sendv = alias_tsendv,
	.sendmsg = alias_tsendmsg,
	.inject = alias_tinject,
	.senddata = alias_tsenddata,
	.injectdata = alias_tinjectdata,
};

/* ---- RMA ---- */

static ssize_t alias_rma(struct fid_ep *fid, bool write, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t addr, uint64_t raddr,
			 uint64_t key, uint64_t data, void *context, uint64_t flags)
{
	size_t len = 0, i;
	struct fi_rma_iov rma_iov;
	struct fi_msg_rma msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = addr,
		.rma_iov = &rma_iov, .rma_iov_count = 1, .context = context,
		.data = data,
	};

	for (i = 0; i < count; i++)
		len += iov[i].iov_len;
	rma_iov = (struct fi_rma_iov) { .addr = raddr, .len = len, .key = key };
	return write ? fi_writemsg(PARENT(fid), &msg, flags) :
		       fi_readmsg(PARENT(fid), &msg, flags);
}

static ssize_t alias_read(struct fid_ep *fid, void *buf, size_t len, void *desc,
			  fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	void *d;

	return alias_rma(fid, false, &iov, one_desc(desc, &d), 1, src, addr, key, 0,
			 context, TX_FLAGS(fid));
}

static ssize_t alias_readv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			   size_t count, fi_addr_t src, uint64_t addr, uint64_t key,
			   void *context)
{
	return alias_rma(fid, false, iov, desc, count, src, addr, key, 0, context,
			 TX_FLAGS(fid));
}

static ssize_t alias_readmsg(struct fid_ep *fid, const struct fi_msg_rma *msg,
			     uint64_t flags)
{
	return fi_readmsg(PARENT(fid), msg, flags);
}

static ssize_t alias_write(struct fid_ep *fid, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			   void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	void *d;

	return alias_rma(fid, true, &iov, one_desc(desc, &d), 1, dest, addr, key, 0,
			 context, TX_FLAGS(fid));
}

static ssize_t alias_writev(struct fid_ep *fid, const struct iovec *iov, void **desc,
			    size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
			    void *context)
{
	return alias_rma(fid, true, iov, desc, count, dest, addr, key, 0, context,
			 TX_FLAGS(fid));
}

static ssize_t alias_writemsg(struct fid_ep *fid, const struct fi_msg_rma *msg,
			      uint64_t flags)
{
	return fi_writemsg(PARENT(fid), msg, flags);
}

static ssize_t alias_writedata(struct fid_ep *fid, const void *buf, size_t len,
			       void *desc, uint64_t data, fi_addr_t dest,
			       uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	void *d;

	return alias_rma(fid, true, &iov, one_desc(desc, &d), 1, dest, addr, key,
			 data, context, TX_FLAGS(fid) | FI_REMOTE_CQ_DATA);
}

static ssize_t alias_inject_write(struct fid_ep *fid, const void *buf, size_t len,
				  fi_addr_t dest, uint64_t addr, uint64_t key)
{
	return fi_inject_write(PARENT(fid), buf, len, dest, addr, key);
}

static ssize_t alias_inject_writedata(struct fid_ep *fid, const void *buf,
				      size_t len, uint64_t data, fi_addr_t dest,
				      uint64_t addr, uint64_t key)
{
	return fi_inject_writedata(PARENT(fid), buf, len, data, dest, addr, key);
}

static struct fi_ops_rma alias_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = alias_read,
	.readv = alias_readv,
	.readmsg = alias_readmsg,
	.write = alias_write,
	.writev = alias_writev,
	.writemsg = alias_writemsg,
	.inject = alias_inject_write,
	.writedata = alias_writedata,
	.injectdata = alias_inject_writedata,
};

/* ---- atomics ---- */

static void atomic_msg(struct fi_msg_atomic *msg, struct fi_rma_ioc *rma_ioc,
		       const struct fi_ioc *iov, void **desc, size_t count,
		       fi_addr_t addr, uint64_t raddr, uint64_t key,
		       enum fi_datatype datatype, enum fi_op op, void *context)
{
	size_t n = 0, i;

	for (i = 0; i < count; i++)
		n += iov[i].count;
	*rma_ioc = (struct fi_rma_ioc) { .addr = raddr, .count = n, .key = key };
	*msg = (struct fi_msg_atomic) {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = addr,
		.rma_iov = rma_ioc, .rma_iov_count = 1, .datatype = datatype,
		.op = op, .context = context,
	};
}

static ssize_t alias_atomicv(struct fid_ep *fid, const struct fi_ioc *iov,
			     void **desc, size_t count, fi_addr_t dest, uint64_t addr,
			     uint64_t key, enum fi_datatype datatype, enum fi_op op,
			     void *context)
{
	struct fi_msg_atomic msg;
	struct fi_rma_ioc rma_ioc;

	atomic_msg(&msg, &rma_ioc, iov, desc, count, dest, addr, key, datatype, op,
		   context);
	return fi_atomicmsg(PARENT(fid), &msg, TX_FLAGS(fid));
}

static ssize_t alias_atomic(struct fid_ep *fid, const void *buf, size_t count,
			    void *desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype datatype, enum fi_op op, void *context)
{
	struct fi_ioc ioc = { .addr = (void *) buf, .count = count };
	void *d;

	return alias_atomicv(fid, &ioc, one_desc(desc, &d), 1, dest, addr, key,
			     datatype, op, context);
}

static ssize_t alias_atomicmsg(struct fid_ep *fid, const struct fi_msg_atomic *msg,
			       uint64_t flags)
{
	return fi_atomicmsg(PARENT(fid), msg, flags);
}

static ssize_t alias_inject_atomic(struct fid_ep *fid, const void *buf, size_t count,
				   fi_addr_t dest, uint64_t addr, uint64_t key,
				   enum fi_datatype datatype, enum fi_op op)
{
	return fi_inject_atomic(PARENT(fid), buf, count, dest, addr, key, datatype, op);
}

static ssize_t alias_fetch_atomicv(struct fid_ep *fid, const struct fi_ioc *iov,
				   void **desc, size_t count, struct fi_ioc *resultv,
				   void **result_desc, size_t result_count,
				   fi_addr_t dest, uint64_t addr, uint64_t key,
				   enum fi_datatype datatype, enum fi_op op,
				   void *context)
{
	struct fi_msg_atomic msg;
	struct fi_rma_ioc rma_ioc;

	atomic_msg(&msg, &rma_ioc, iov, desc, count, dest, addr, key, datatype, op,
		   context);
	return fi_fetch_atomicmsg(PARENT(fid), &msg, resultv, result_desc,
				  result_count, TX_FLAGS(fid));
}

static ssize_t alias_fetch_atomic(struct fid_ep *fid, const void *buf, size_t count,
				  void *desc, void *result, void *result_desc,
				  fi_addr_t dest, uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op,
				  void *context)
{
	struct fi_ioc ioc = { .addr = (void *) buf, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	void *d, *rd;

	return alias_fetch_atomicv(fid, &ioc, one_desc(desc, &d), 1, &res,
				   one_desc(result_desc, &rd), 1, dest, addr, key,
				   datatype, op, context);
}

static ssize_t alias_fetch_atomicmsg(struct fid_ep *fid,
				     const struct fi_msg_atomic *msg,
				     struct fi_ioc *resultv, void **result_desc,
				     size_t result_count, uint64_t flags)
{
	return fi_fetch_atomicmsg(PARENT(fid), msg, resultv, result_desc,
				  result_count, flags);
}

static ssize_t alias_compare_atomicv(struct fid_ep *fid, const struct fi_ioc *iov,
				     void **desc, size_t count,
				     const struct fi_ioc *comparev, void **compare_desc,
				     size_t compare_count, struct fi_ioc *resultv,
				     void **result_desc, size_t result_count,
				     fi_addr_t dest, uint64_t addr, uint64_t key,
				     enum fi_datatype datatype, enum fi_op op,
				     void *context)
{
	struct fi_msg_atomic msg;
	struct fi_rma_ioc rma_ioc;

	atomic_msg(&msg, &rma_ioc, iov, desc, count, dest, addr, key, datatype, op,
		   context);
	return fi_compare_atomicmsg(PARENT(fid), &msg, comparev, compare_desc,
				    compare_count, resultv, result_desc,
				    result_count, TX_FLAGS(fid));
}

static ssize_t alias_compare_atomic(struct fid_ep *fid, const void *buf,
				    size_t count, void *desc, const void *compare,
				    void *compare_desc, void *result,
				    void *result_desc, fi_addr_t dest, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype,
				    enum fi_op op, void *context)
{
	struct fi_ioc ioc = { .addr = (void *) buf, .count = count };
	struct fi_ioc cmp = { .addr = (void *) compare, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	void *d, *cd, *rd;

	return alias_compare_atomicv(fid, &ioc, one_desc(desc, &d), 1, &cmp,
				     one_desc(compare_desc, &cd), 1, &res,
				     one_desc(result_desc, &rd), 1, dest, addr, key,
				     datatype, op, context);
}

static ssize_t alias_compare_atomicmsg(struct fid_ep *fid,
				       const struct fi_msg_atomic *msg,
				       const struct fi_ioc *comparev,
				       void **compare_desc, size_t compare_count,
				       struct fi_ioc *resultv, void **result_desc,
				       size_t result_count, uint64_t flags)
{
	return fi_compare_atomicmsg(PARENT(fid), msg, comparev, compare_desc,
				    compare_count, resultv, result_desc,
				    result_count, flags);
}

static int alias_atomicvalid(struct fid_ep *fid, enum fi_datatype datatype,
			     enum fi_op op, size_t *count)
{
	return fi_atomicvalid(PARENT(fid), datatype, op, count);
}

static int alias_fetch_atomicvalid(struct fid_ep *fid, enum fi_datatype datatype,
				   enum fi_op op, size_t *count)
{
	return fi_fetch_atomicvalid(PARENT(fid), datatype, op, count);
}

static int alias_compare_atomicvalid(struct fid_ep *fid, enum fi_datatype datatype,
				     enum fi_op op, size_t *count)
{
	return fi_compare_atomicvalid(PARENT(fid), datatype, op, count);
}

static struct fi_ops_atomic alias_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = alias_atomic,
	.writev = alias_atomicv,
	.writemsg = alias_atomicmsg,
	.inject = alias_inject_atomic,
	.readwrite = alias_fetch_atomic,
	.readwritev = alias_fetch_atomicv,
	.readwritemsg = alias_fetch_atomicmsg,
	.compwrite = alias_compare_atomic,
	.compwritev = alias_compare_atomicv,
	.compwritemsg = alias_compare_atomicmsg,
	.writevalid = alias_atomicvalid,
	.readwritevalid = alias_fetch_atomicvalid,
	.compwritevalid = alias_compare_atomicvalid,
};

/* ---- collectives: the endpoint's, on the endpoint ---- */

#define COLL(fid, op, ...)						\
	(PARENT(fid)->collective && PARENT(fid)->collective->op ?	\
	 PARENT(fid)->collective->op(PARENT(fid), __VA_ARGS__) : -FI_ENOSYS)

static ssize_t alias_barrier(struct fid_ep *fid, fi_addr_t coll_addr, void *context)
{
	return COLL(fid, barrier, coll_addr, context);
}

static ssize_t alias_broadcast(struct fid_ep *fid, void *buf, size_t count,
			       void *desc, fi_addr_t coll_addr, fi_addr_t root_addr,
			       enum fi_datatype datatype, uint64_t flags,
			       void *context)
{
	return COLL(fid, broadcast, buf, count, desc, coll_addr, root_addr,
		    datatype, flags, context);
}

static ssize_t alias_alltoall(struct fid_ep *fid, const void *buf, size_t count,
			      void *desc, void *result, void *result_desc,
			      fi_addr_t coll_addr, enum fi_datatype datatype,
			      uint64_t flags, void *context)
{
	return COLL(fid, alltoall, buf, count, desc, result, result_desc, coll_addr,
		    datatype, flags, context);
}

static ssize_t alias_allreduce(struct fid_ep *fid, const void *buf, size_t count,
			       void *desc, void *result, void *result_desc,
			       fi_addr_t coll_addr, enum fi_datatype datatype,
			       enum fi_op op, uint64_t flags, void *context)
{
	return COLL(fid, allreduce, buf, count, desc, result, result_desc,
		    coll_addr, datatype, op, flags, context);
}

static ssize_t alias_allgather(struct fid_ep *fid, const void *buf, size_t count,
			       void *desc, void *result, void *result_desc,
			       fi_addr_t coll_addr, enum fi_datatype datatype,
			       uint64_t flags, void *context)
{
	return COLL(fid, allgather, buf, count, desc, result, result_desc,
		    coll_addr, datatype, flags, context);
}

static ssize_t alias_reduce_scatter(struct fid_ep *fid, const void *buf,
				    size_t count, void *desc, void *result,
				    void *result_desc, fi_addr_t coll_addr,
				    enum fi_datatype datatype, enum fi_op op,
				    uint64_t flags, void *context)
{
	return COLL(fid, reduce_scatter, buf, count, desc, result, result_desc,
		    coll_addr, datatype, op, flags, context);
}

static ssize_t alias_reduce(struct fid_ep *fid, const void *buf, size_t count,
			    void *desc, void *result, void *result_desc,
			    fi_addr_t coll_addr, fi_addr_t root_addr,
			    enum fi_datatype datatype, enum fi_op op, uint64_t flags,
			    void *context)
{
	return COLL(fid, reduce, buf, count, desc, result, result_desc, coll_addr,
		    root_addr, datatype, op, flags, context);
}

static ssize_t alias_scatter(struct fid_ep *fid, const void *buf, size_t count,
			     void *desc, void *result, void *result_desc,
			     fi_addr_t coll_addr, fi_addr_t root_addr,
			     enum fi_datatype datatype, uint64_t flags, void *context)
{
	return COLL(fid, scatter, buf, count, desc, result, result_desc, coll_addr,
		    root_addr, datatype, flags, context);
}

static ssize_t alias_gather(struct fid_ep *fid, const void *buf, size_t count,
			    void *desc, void *result, void *result_desc,
			    fi_addr_t coll_addr, fi_addr_t root_addr,
			    enum fi_datatype datatype, uint64_t flags, void *context)
{
	return COLL(fid, gather, buf, count, desc, result, result_desc, coll_addr,
		    root_addr, datatype, flags, context);
}

static ssize_t alias_coll_msg(struct fid_ep *fid, const struct fi_msg_collective *msg,
			      struct fi_ioc *resultv, void **result_desc,
			      size_t result_count, uint64_t flags)
{
	return COLL(fid, msg, msg, resultv, result_desc, result_count, flags);
}

static ssize_t alias_barrier2(struct fid_ep *fid, fi_addr_t coll_addr,
			      uint64_t flags, void *context)
{
	return COLL(fid, barrier2, coll_addr, flags, context);
}

static struct fi_ops_collective alias_coll_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = alias_barrier,
	.broadcast = alias_broadcast,
	.alltoall = alias_alltoall,
	.allreduce = alias_allreduce,
	.allgather = alias_allgather,
	.reduce_scatter = alias_reduce_scatter,
	.reduce = alias_reduce,
	.scatter = alias_scatter,
	.gather = alias_gather,
	.msg = alias_coll_msg,
	.barrier2 = alias_barrier2,
};

/* ---- the endpoint's other calls ---- */

static ssize_t alias_cancel(fid_t fid, void *context)
{
	return fi_cancel(&PARENT(container_of(fid, struct fid_ep, fid))->fid, context);
}

static int alias_getopt(fid_t fid, int level, int optname, void *optval,
			size_t *optlen)
{
	return fi_getopt(&PARENT(container_of(fid, struct fid_ep, fid))->fid, level,
			 optname, optval, optlen);
}

static int alias_setopt(fid_t fid, int level, int optname, const void *optval,
			size_t optlen)
{
	return fi_setopt(&PARENT(container_of(fid, struct fid_ep, fid))->fid, level,
			 optname, optval, optlen);
}

static struct fi_ops_ep alias_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = alias_cancel,
	.getopt = alias_getopt,
	.setopt = alias_setopt,
	.tx_ctx = mrail_no_tx_ctx,
	.rx_ctx = mrail_no_rx_ctx,
	.rx_size_left = mrail_no_size_left,
	.tx_size_left = mrail_no_size_left,
};

static int alias_getname(fid_t fid, void *addr, size_t *addrlen)
{
	return fi_getname(&PARENT(container_of(fid, struct fid_ep, fid))->fid, addr,
			  addrlen);
}

static int alias_join(struct fid_ep *fid, const void *addr, uint64_t flags,
		      struct fid_mc **mc, void *context)
{
	return fi_join(PARENT(fid), addr, flags, mc, context);
}

/* An RDM endpoint has no connection to manage, through an alias or not. */
static struct fi_ops_cm alias_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = mrail_no_setname,
	.getname = alias_getname,
	.getpeer = mrail_no_getpeer,
	.connect = mrail_no_connect,
	.listen = mrail_no_listen,
	.accept = mrail_no_accept,
	.reject = mrail_no_reject,
	.shutdown = mrail_no_shutdown,
	.join = alias_join,
};

static struct fi_ops alias_fi_ops;

static int alias_close(struct fid *fid)
{
	struct mrail_ep_alias *alias = container_of(fid, struct mrail_ep_alias,
						    ep_fid.fid);
	struct mrail_domain *domain = alias->ep->domain;

	mrail_domain_lock(domain);
	if (alias->ctx_side)
		mrail_ep_context_closed(alias->ep, alias->ctx_side);
	alias->ep->aliases--;
	pthread_mutex_unlock(&domain->lock);
	free(alias);
	return 0;
}

/* Binding flags that belong to each side of an endpoint. */
#define CTX_TX_BIND (FI_TRANSMIT | FI_SEND | FI_READ | FI_WRITE | \
		     FI_SELECTIVE_COMPLETION)
#define CTX_RX_BIND (FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE | \
		      FI_SELECTIVE_COMPLETION)

static int alias_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mrail_ep_alias *alias = container_of(fid, struct mrail_ep_alias,
						    ep_fid.fid);
	uint64_t side_flags;

	/* A scalable endpoint's context takes its side's CQs and counters,
	 * which are the endpoint's for that side. */
	if (alias->ctx_side) {
		side_flags = alias->ctx_side == FI_TRANSMIT ? CTX_TX_BIND : CTX_RX_BIND;
		if (!bfid || (bfid->fclass != FI_CLASS_CQ &&
			      bfid->fclass != FI_CLASS_CNTR) || (flags & ~side_flags)) {
			MRAIL_WARN(FI_LOG_EP_CTRL, "a %s context takes CQs and "
				   "counters with its side's flags; bind the AV "
				   "to the scalable endpoint\n",
				   alias->ctx_side == FI_TRANSMIT ? "transmit" :
				   "receive");
			return -FI_EINVAL;
		}
		return fi_ep_bind(&alias->ep->ep_fid, bfid, flags);
	}
	MRAIL_WARN(FI_LOG_EP_CTRL, "an endpoint alias takes no bindings: bind "
		   "CQs, counters, the AV and the EQ to its endpoint, which the "
		   "alias shares\n");
	return -FI_EINVAL;
}

static int alias_new(struct mrail_ep *ep, const struct mrail_op_flags *flags,
		     uint64_t request, struct fid **out);

static int alias_control(struct fid *fid, int command, void *arg)
{
	struct mrail_ep_alias *alias = container_of(fid, struct mrail_ep_alias,
						    ep_fid.fid);
	uint64_t *flags = arg, side;
	int ret = 0;

	switch (command) {
	case FI_ENABLE:
		/* The endpoint is enabled on its own fid. */
		return 0;
	case FI_ALIAS:
		if (!arg)
			return -FI_EINVAL;
		return alias_new(alias->ep, &alias->flags,
				 ((struct fi_alias *) arg)->flags,
				 ((struct fi_alias *) arg)->fid);
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		side = *flags & (FI_TRANSMIT | FI_RECV);
		if (side != FI_TRANSMIT && side != FI_RECV) {
			MRAIL_WARN(FI_LOG_EP_CTRL, "FI_GETOPSFLAG/FI_SETOPSFLAG "
				   "need exactly one of FI_TRANSMIT and FI_RECV\n");
			return -FI_EINVAL;
		}
		mrail_domain_lock(alias->ep->domain);
		if (command == FI_GETOPSFLAG)
			*flags = side | (side == FI_TRANSMIT ? alias->flags.tx :
					 alias->flags.rx);
		else
			ret = mrail_alias_op_flags(*flags, ALIAS_TX_FLAGS,
						   ALIAS_RX_FLAGS, &alias->flags);
		pthread_mutex_unlock(&alias->ep->domain->lock);
		if (ret)
			MRAIL_WARN(FI_LOG_EP_CTRL, "FI_SETOPSFLAG on an alias: "
				   "flags %#llx are not operation flags mrail "
				   "supports\n", (unsigned long long) *flags);
		return ret ? -FI_EBADFLAGS : 0;
	default:
		return fi_control(&alias->ep->ep_fid.fid, command, arg);
	}
}

static struct fi_ops alias_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = alias_close,
	.bind = alias_bind,
	.control = alias_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

static int alias_new(struct mrail_ep *ep, const struct mrail_op_flags *flags,
		     uint64_t request, struct fid **out)
{
	struct mrail_ep_alias *alias;
	int ret;

	if (!out)
		return -FI_EINVAL;
	alias = calloc(1, sizeof(*alias));
	if (!alias)
		return -FI_ENOMEM;
	alias->ep = ep;
	alias->flags = *flags;
	ret = mrail_alias_op_flags(request, ALIAS_TX_FLAGS, ALIAS_RX_FLAGS,
				   &alias->flags);
	if (ret) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_alias: flags %#llx %s\n",
			   (unsigned long long) request, ret == -EINVAL ?
			   "must name one of FI_TRANSMIT and FI_RECV (not both) "
			   "with that side's operation flags" :
			   "hold operation flags mrail does not support on "
			   "that side");
		free(alias);
		return ret == -EINVAL ? -FI_EINVAL : -FI_EBADFLAGS;
	}
	alias->ep_fid.fid.fclass = FI_CLASS_EP;
	alias->ep_fid.fid.context = ep->ep_fid.fid.context;
	alias->ep_fid.fid.ops = &alias_fi_ops;
	alias->ep_fid.ops = &alias_ep_ops;
	alias->ep_fid.cm = &alias_cm_ops;
	alias->ep_fid.msg = &alias_msg_ops;
	alias->ep_fid.tagged = &alias_tagged_ops;
	alias->ep_fid.rma = &alias_rma_ops;
	alias->ep_fid.atomic = &alias_atomic_ops;
	alias->ep_fid.collective = &alias_coll_ops;
	mrail_domain_lock(ep->domain);
	ep->aliases++;
	pthread_mutex_unlock(&ep->domain->lock);
	*out = &alias->ep_fid.fid;
	return 0;
}

int mrail_ep_context_open(struct mrail_ep *ep, uint64_t side, uint64_t op_flags,
			  struct fid_ep **ctx, void *context)
{
	struct mrail_op_flags flags;
	struct mrail_ep_alias *alias;
	struct fid *fid;
	int ret;

	mrail_domain_lock(ep->domain);
	flags = (struct mrail_op_flags) { .tx = ep->tx_op_flags, .rx = ep->rx_op_flags };
	pthread_mutex_unlock(&ep->domain->lock);
	ret = alias_new(ep, &flags, side | op_flags, &fid);
	if (ret)
		return ret;
	alias = container_of(fid, struct mrail_ep_alias, ep_fid.fid);
	alias->ctx_side = side;
	alias->ep_fid.fid.fclass = side == FI_TRANSMIT ? FI_CLASS_TX_CTX :
				   FI_CLASS_RX_CTX;
	alias->ep_fid.fid.context = context;
	*ctx = &alias->ep_fid;
	return 0;
}

struct mrail_ep *mrail_ep_or_alias(struct fid *fid)
{
	if (fid && fid->ops == &alias_fi_ops)
		return container_of(fid, struct mrail_ep_alias, ep_fid.fid)->ep;
	return mrail_ep_from_fid(fid);
}

int mrail_ep_alias(struct mrail_ep *ep, struct fi_alias *req)
{
	struct mrail_op_flags flags;

	if (!req)
		return -FI_EINVAL;
	mrail_domain_lock(ep->domain);
	flags = (struct mrail_op_flags) { .tx = ep->tx_op_flags, .rx = ep->rx_op_flags };
	pthread_mutex_unlock(&ep->domain->lock);
	return alias_new(ep, &flags, req->flags, req->fid);
}
