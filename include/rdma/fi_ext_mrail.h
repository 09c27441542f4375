/*
 * mrail: libfabric multirail provider - public extension header.
 *
 * What an application may need beyond the standard libfabric API to work
 * with mrail endpoints: the provider's name and the format of its endpoint
 * addresses (see fi_mrail(7), "ADDRESSES").
 */
#ifndef FI_EXT_MRAIL_H
#define FI_EXT_MRAIL_H

#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_MRAIL_PROV_NAME "mrail"

/*
 * fi_info addr_format of mrail endpoint addresses: a self-describing blob
 * carrying every rail's core address ("mra" magic, version, rails). Treat it
 * as opaque bytes; its length comes from fi_getname or fi_info src_addrlen.
 */
#define FI_ADDR_MRAIL (FI_PROV_SPECIFIC | 0x6d72)

/* Most rails one mrail endpoint uses. */
#define FI_MRAIL_MAX_RAILS 8

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_MRAIL_H */
