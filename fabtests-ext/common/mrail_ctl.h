/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_ctl: the TCP control connection two fabtests-ext programs use to
 * swap endpoint names and to order their steps, outside the fabric under
 * test. The server listens on PORT, the client connects (retrying for ten
 * seconds while the server starts). Every failure is fatal: the program
 * prints "PROG: what: why" and exits 2.
 */
#ifndef MRAIL_CTL_H
#define MRAIL_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>

/* The name failures are reported under (the program's). */
extern const char *ctl_prog;

/* Prints "ctl_prog: what: strerror" (ret is a libfabric or errno code,
 * either sign) and exits 2. */
void ctl_die(const char *what, int ret) __attribute__((noreturn));

/*
 * server NULL: listens on port and accepts clients connections into
 * socks[0..clients); else connects to server into socks[0] (clients is
 * then ignored). Returns how many sockets it filled.
 */
int ctl_connect(const char *server, unsigned port, int *socks, int clients);
void ctl_write(int sock, const void *buf, size_t len);
/* Reads len bytes; calls progress (if not NULL) every millisecond that
 * nothing arrives, so a program waiting here still drives its endpoint. */
void ctl_read(int sock, void *buf, size_t len, void (*progress)(void));

/* Sends ep's name over sock, inserts the peer's into av: its fi_addr. */
fi_addr_t ctl_swap_names(int sock, struct fid_ep *ep, struct fid_av *av);
/* The same exchange, but the peer's name is not inserted (a target that
 * never names its initiators, as SHMEM runtimes' targets do). */
void ctl_give_name(int sock, struct fid_ep *ep);

/* The options the programs on a control connection share. */
struct ctl_opts {
	const char *prov;	/* -p PROV */
	unsigned port;		/* -E PORT */
	bool auto_progress;	/* -a: FI_PROGRESS_AUTO */
	bool target_inserts;	/* cleared by -u: the target inserts no initiator */
};

/* Takes opt (getopt's answer, arg its argument) into o when it is one of
 * -a, -p, -E and -u: true; false for any other option. */
bool ctl_opt(struct ctl_opts *o, int opt, const char *arg);

/*
 * fi_getinfo for an FI_EP_RDM endpoint of provider prov with caps, mode
 * FI_CONTEXT allowed, memory registration mode bits mr_mode, and with
 * auto_progress FI_PROGRESS_AUTO for data and control. Fatal on failure,
 * saying which capabilities were asked.
 */
struct fi_info *ctl_getinfo(const char *prov, uint64_t caps, uint64_t mr_mode,
			    bool auto_progress);
/* The same, asking for the threading level threading (FI_THREAD_UNSPEC:
 * none, as ctl_getinfo does). */
struct fi_info *ctl_getinfo_thread(const char *prov, uint64_t caps, uint64_t mr_mode,
				   bool auto_progress, enum fi_threading threading);
/* The same hints, for a program that reports failures its own way: 0 with
 * *info set, or fi_getinfo's negative fi_errno. */
int ctl_try_getinfo(const char *prov, uint64_t caps, uint64_t mr_mode,
		    bool auto_progress, enum fi_threading threading,
		    struct fi_info **info);

/*
 * Processes of one machine meet through a directory they all see: rank
 * writes ep's name to DIR/name.RANK, waits (up to 60 s) for the names of
 * ranks 0..n-1 and inserts them into av in rank order, into addrs[0..n).
 */
void ctl_meet(const char *dir, unsigned rank, unsigned n, struct fid_ep *ep,
	      struct fid_av *av, fi_addr_t *addrs);

/*
 * Joins ep to a collective group of the n consecutive AV entries
 * addrs[0..n) and waits (up to 60 s) for FI_JOIN_COMPLETE on eq, reading
 * cq meanwhile since a provider may need its CQ progressed to get the join
 * done. Returns the group's address for collective calls; *set and *mc are
 * for the caller to close. Fatal on failure.
 */
fi_addr_t ctl_join_all(struct fid_ep *ep, struct fid_av *av, struct fid_eq *eq,
		       struct fid_cq *cq, const fi_addr_t *addrs, unsigned n,
		       struct fid_av_set **set, struct fid_mc **mc);

#endif /* MRAIL_CTL_H */
