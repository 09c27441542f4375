/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Triggered operations and deferred work (mrail_trigger.c): posting one,
 * firing those whose counter reached the threshold, completing, cancelling
 * and dropping them.
 */
#ifndef MRAIL_TRIGGER_SRC_H
#define MRAIL_TRIGGER_SRC_H

#include "mrail.h"

struct mrail_cntr;
struct mrail_cq_entry;

/*
 * Triggered operations and deferred work (mrail_trigger.c).
 */
struct mrail_trig_work;
/* fi_*msg with FI_TRIGGER: copies the operation (msg is the fi_msg,
 * fi_msg_tagged, fi_msg_rma or fi_msg_atomic of type; fetch and compare
 * for the fetch and compare atomics) and arms it. Lock not held. */
ssize_t mrail_trigger_post(struct mrail_ep *ep, enum fi_op_type type,
			   const void *msg, const struct fi_msg_fetch *fetch,
			   const struct fi_msg_compare *compare, uint64_t flags);
/* Issues the operations whose threshold was reached, in order. Caller
 * holds the lock, which is released while each one is issued. */
void mrail_trigger_fire(struct mrail_domain *domain);
/* A completion of an issued triggered operation becomes the application's
 * (returns true), or is not one (false). Lock held. */
bool mrail_trigger_complete(struct mrail_ep *ep, const struct mrail_cq_entry *entry,
			    bool report);
/* fi_cancel of a triggered operation (lock held): 0 or -FI_ENOENT. */
ssize_t mrail_trigger_cancel(struct mrail_ep *ep, void *context);
/* Triggered operations and deferred work not completed yet that arm on,
 * count on or set cntr (lock held). */
size_t mrail_trigger_cntr_users(struct mrail_domain *domain, struct mrail_cntr *cntr);
/* The endpoint closes: its triggered work is dropped (lock held). */
void mrail_trigger_ep_close(struct mrail_ep *ep);
/* fi_control FI_QUEUE_WORK, FI_CANCEL_WORK, FI_FLUSH_WORK on the domain
 * (takes the lock); -FI_ENOSYS for other commands. */
int mrail_trigger_domain_control(struct mrail_domain *domain, int command, void *arg);

#endif /* MRAIL_TRIGGER_SRC_H */
