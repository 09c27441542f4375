/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Entries for operations an object does not offer. libfabric's own fi_no_*
 * helpers are internal to it, so mrail carries these.
 */
#include "mrail.h"

int mrail_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int mrail_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int mrail_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		      void **ops, void *context)
{
	return -FI_ENOSYS;
}

/* No object of mrail prints itself or takes replacement operations. */
int mrail_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	return -FI_ENOSYS;
}

int mrail_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		     void *ops, void *context)
{
	return -FI_ENOSYS;
}

/* fi_ops_ep: transmit and receive contexts belong to scalable endpoints,
 * which this endpoint is not; the deprecated size_left calls are not
 * provided (fi_endpoint(3) lets them fail with -FI_ENOSYS). */
int mrail_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		    struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

int mrail_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

ssize_t mrail_no_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

/* fi_ops_cm: an FI_EP_RDM endpoint has no connection to set up, accept,
 * refuse or shut down, no single peer, and takes its address from its
 * rails. */
int mrail_no_setname(fid_t fid, void *addr, size_t addrlen)
{
	return -FI_ENOSYS;
}

int mrail_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int mrail_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		     size_t paramlen)
{
	return -FI_ENOSYS;
}

int mrail_no_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

int mrail_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int mrail_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		    size_t paramlen)
{
	return -FI_ENOSYS;
}

int mrail_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}
