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
