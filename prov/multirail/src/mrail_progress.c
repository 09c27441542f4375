/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FI_PROGRESS_AUTO: one thread per domain drives every enabled endpoint of
 * the domain, so completions arrive (and counters count) while the
 * application sleeps in fi_cq_sread or fi_cntr_wait, or makes no libfabric
 * call at all.
 *
 * While rail completions keep coming it progresses round after round,
 * letting go of the domain lock between rounds so application threads get
 * their turn. When a round finds nothing, it asks each rail's fabric
 * (fi_trywait) whether it may block on the rail CQs' fds, and if so sleeps
 * in epoll_wait on those fds and on an eventfd that new posts and domain
 * close write to. It never spins: when a rail keeps refusing fi_trywait
 * without producing anything, the thread naps on the same epoll set.
 *
 * Some rail work makes no fd readable: ofi_rxm's connection handshake runs
 * on an event queue that is not part of its CQ's wait set in manual mode,
 * and ofi_rxd retransmits from timers. So a sleep is bounded: it starts at
 * 1 ms after activity or a post and doubles up to MRAIL_PROGRESS_IDLE_MS,
 * which keeps first messages quick and an idle process at a few wakeups a
 * second.
 * A rail whose CQ has no fd at all (ofi_rxd's CQs answer FI_GETWAIT with
 * -FI_ENOSYS) can only be polled: while one is open, sleeps last
 * MRAIL_PROGRESS_POLL_MS, a few per cent of a core at most.
 *
 * Wake-ups wait for the lock to be let go. A completion the thread writes
 * during its round would wake the application's thread in fi_cq_sread or
 * fi_cntr_wait, which would at once block again on the domain lock the
 * round still holds, and need a second wake-up when the round ends: two
 * cross-core wake-ups per completion, each tens of microseconds on a
 * virtual machine. So during a round the thread only notes which CQs and
 * counters to wake (mrail_progress_wake) and wakes them once it has let go
 * of the lock. Their fds are made readable at once: pollers do not hold the
 * lock while they sleep.
 */
#include "mrail.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_trigger.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utlist.h>

/* The longest sleep of an idle thread (ms). */
#define MRAIL_PROGRESS_IDLE_MS 128
/* The longest sleep while a rail CQ without an fd is open (ms). */
#define MRAIL_PROGRESS_POLL_MS 1
/* Rounds that found nothing while a rail refused fi_trywait, before the
 * thread naps anyway (1 ms) rather than spin. */
#define MRAIL_PROGRESS_REFUSALS 16

struct mrail_progress {
	pthread_t thread;
	int epfd;
	int wake_fd;		/* eventfd: posts and close wake the thread */
	bool stop;
	bool asleep;		/* in epoll_wait (or about to be), lock released */
	size_t polled;		/* rail CQs without an fd */
	/* In a round: wake-ups are held back in wakes (under the domain
	 * lock). wake_lock is held while the thread wakes them, without the
	 * domain lock, so a CQ or counter closing waits for that to end. */
	bool holding_wakes;
	struct mrail_wait *wakes;
	pthread_mutex_t wake_lock;
	/* On the list of running threads (under running_lock). */
	struct mrail_domain *domain;
	bool running;
	struct mrail_progress *running_prev, *running_next;
};

/* Every progress thread still running, so that they can be stopped when
 * the process exits with domains open. Without that, libfabric's fi_fini
 * unloads this library (dlclose) under a thread still running its code. */
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mrail_progress *running;
static pthread_once_t running_atexit_once = PTHREAD_ONCE_INIT;

void mrail_progress_wake(struct mrail_domain *domain, struct mrail_wait *wait)
{
	struct mrail_progress *pg = domain->progress;

	mrail_assert_locked(domain);

	if (!pg || !pg->holding_wakes) {
		mrail_wait_signal(wait);
		return;
	}
	mrail_wait_signal_fd(wait);
	if (!wait->wake_pending) {
		wait->wake_pending = true;
		DL_APPEND2(pg->wakes, wait, wake_prev, wake_next);
	}
}

void mrail_progress_forget(struct mrail_domain *domain, struct mrail_wait *wait)
{
	struct mrail_progress *pg = domain->progress;

	mrail_assert_locked(domain);

	if (!pg)
		return;
	if (wait->wake_pending) {
		DL_DELETE2(pg->wakes, wait, wake_prev, wake_next);
		wait->wake_pending = false;
	}
	/* The thread may be waking it right now, from a list it took. */
	pthread_mutex_lock(&pg->wake_lock);
	pthread_mutex_unlock(&pg->wake_lock);
}

/* Lets go of the domain lock, then wakes the waiters the round held back. */
static void progress_unlock(struct mrail_domain *domain)
{
	struct mrail_progress *pg = domain->progress;
	struct mrail_wait *wakes = pg->wakes, *wait;

	if (!wakes) {
		pthread_mutex_unlock(&domain->lock);
		return;
	}
	pthread_mutex_lock(&pg->wake_lock);
	pg->wakes = NULL;
	DL_FOREACH2(wakes, wait, wake_next)
		wait->wake_pending = false;
	pthread_mutex_unlock(&domain->lock);
	DL_FOREACH2(wakes, wait, wake_next)
		pthread_cond_broadcast(&wait->cond);
	pthread_mutex_unlock(&pg->wake_lock);
}

/* Whether every rail CQ of every endpoint may be slept on: fi_trywait
 * drains their fds' old signals, or says a completion is already there. */
static bool progress_may_sleep(struct mrail_domain *domain)
{
	struct mrail_fabric *fabric = domain->fabric;
	struct fid *fid;
	struct mrail_ep *ep;
	size_t rail;

	DL_FOREACH2(domain->eps, ep, dom_next) {
		for (rail = 0; rail < ep->rail_count; rail++) {
			if (ep->rail_cq_polled[rail])
				continue;
			fid = &ep->rail_cqs[rail]->fid;
			if (fi_trywait(fabric->rail_fabrics[rail], &fid, 1))
				return false;
		}
	}
	return true;
}

/* Releases the lock for timeout ms at most, asleep on the epoll set.
 * Returns whether the application woke it (new work, or close). */
static bool progress_sleep(struct mrail_domain *domain, int timeout)
{
	struct mrail_progress *pg = domain->progress;
	struct epoll_event events[16];
	eventfd_t value;
	bool kicked;

	pg->asleep = true;
	progress_unlock(domain);
	(void) epoll_wait(pg->epfd, events, 16, timeout);
	kicked = !eventfd_read(pg->wake_fd, &value);
	mrail_domain_lock(domain);
	pg->asleep = false;
	return kicked;
}

/* The time slice the thread asks of the fair scheduler (ns). */
#define MRAIL_PROGRESS_SLICE_NS 100000

/* sched_setattr(2)'s argument, which glibc does not declare. */
struct mrail_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;	/* SCHED_OTHER (Linux 6.12+): the slice */
	uint64_t sched_deadline;
	uint64_t sched_period;
};

/*
 * A normal-priority thread asks for a short time slice. On Linux 6.12 and
 * later (EEVDF) a short slice means an early deadline, so the thread gets a
 * core soon after a rail's fd wakes it even when the application's threads
 * spin on every core; with the default slice it was seen waiting 1.4 s
 * behind 8 spinning threads of its own process (Sandia OpenSHMEM's
 * unit/mt_a2a, 4 processes of 9 threads on 2 cores: 2 to 50 s, 2 to 6 s
 * with the short slice). It needs no privilege and keeps the thread's nice
 * value; older kernels ignore the request.
 */
static void progress_ask_short_slice(void)
{
	struct mrail_sched_attr attr;
	int nice;

	if (sched_getscheduler(0) != SCHED_OTHER)
		return;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = SCHED_OTHER;
	attr.sched_nice = nice;
	attr.sched_runtime = MRAIL_PROGRESS_SLICE_NS;
	if (syscall(SYS_sched_setattr, 0, &attr, 0))
		MRAIL_INFO(FI_LOG_DOMAIN, "the progress thread keeps the "
			   "default time slice: sched_setattr: %s\n",
			   strerror(errno));
}

/*
 * FI_MRAIL_PROGRESS_RT: a real-time priority lets the thread run as soon as
 * a rail's fd wakes it, rather than after a time slice of whichever
 * application thread keeps the core busy (a triggered chain, a barrier
 * stepping while the application computes). Safe because the thread never
 * spins: it sleeps in epoll_wait whenever a round finds nothing. Without
 * it, the thread asks for a short slice instead.
 */
static void progress_set_priority(void)
{
	struct sched_param param = { .sched_priority = mrail_env.progress_rt };
	int ret;

	if (mrail_env.progress_rt <= 0) {
		progress_ask_short_slice();
		return;
	}
	if (mrail_env.progress_rt > 99) {
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_MRAIL_PROGRESS_RT=%d is not a "
			   "SCHED_FIFO priority (1..99): the progress thread runs "
			   "at normal priority\n", mrail_env.progress_rt);
		progress_ask_short_slice();
		return;
	}
	ret = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
	if (ret) {
		MRAIL_INFO(FI_LOG_DOMAIN, "FI_MRAIL_PROGRESS_RT: cannot raise the "
			   "progress thread to SCHED_FIFO %d (%s; it needs "
			   "CAP_SYS_NICE): it runs at normal priority\n",
			   mrail_env.progress_rt, strerror(ret));
		progress_ask_short_slice();
	}
}

static void *progress_run(void *arg)
{
	struct mrail_domain *domain = arg;
	struct mrail_progress *pg = domain->progress;
	const struct mrail_corelib *lib = domain->fabric->rails.lib;
	int idle_ms = 1, refusals = 0;
	struct mrail_ep *ep;
	size_t done;

	if (lib->thread_init)
		lib->thread_init();
	progress_set_priority();
	mrail_domain_lock(domain);
	while (!pg->stop) {
		done = 0;
		pg->holding_wakes = true;
		DL_FOREACH2(domain->eps, ep, dom_next)
			done += mrail_ep_progress(ep);
		pg->holding_wakes = false;
		/* Triggered operations their counters made ready. One a rail
		 * pushed back stays ready: keep going rather than sleep. */
		mrail_trigger_fire(domain);
		if (domain->trig_ready)
			done++;
		if (done) {
			idle_ms = 1;
			refusals = 0;
			/* Application threads may be waiting for the lock. */
			progress_unlock(domain);
			sched_yield();
			mrail_domain_lock(domain);
			continue;
		}
		if (!progress_may_sleep(domain)) {
			if (++refusals < MRAIL_PROGRESS_REFUSALS)
				continue;
			refusals = 0;
			progress_sleep(domain, 1);
			continue;
		}
		refusals = 0;
		/* New work starts the short sleeps again: what it sets off on
		 * a rail (a connection handshake) may announce itself on no fd. */
		if (progress_sleep(domain, pg->polled && idle_ms > MRAIL_PROGRESS_POLL_MS ?
					   MRAIL_PROGRESS_POLL_MS : idle_ms))
			idle_ms = 1;
		else if (idle_ms < MRAIL_PROGRESS_IDLE_MS)
			idle_ms *= 2;
	}
	progress_unlock(domain);
	return NULL;
}

void mrail_progress_kick(struct mrail_domain *domain)
{
	struct mrail_progress *pg = domain->progress;

	/* One write per sleep is enough; an awake thread will look anyway. */
	if (pg && pg->asleep) {
		pg->asleep = false;
		(void) eventfd_write(pg->wake_fd, 1);
	}
}

static int progress_watch(struct mrail_progress *pg, int fd)
{
	struct epoll_event event = { .events = EPOLLIN };

	event.data.fd = fd;
	return epoll_ctl(pg->epfd, EPOLL_CTL_ADD, fd, &event) ? -errno : 0;
}

static void ep_unwatch(struct mrail_progress *pg, struct mrail_ep *ep, size_t rails)
{
	size_t rail;
	int fd;

	for (rail = 0; rail < rails; rail++) {
		if (ep->rail_cq_polled[rail]) {
			ep->rail_cq_polled[rail] = false;
			pg->polled--;
		} else if (!fi_control(&ep->rail_cqs[rail]->fid, FI_GETWAIT, &fd)) {
			(void) epoll_ctl(pg->epfd, EPOLL_CTL_DEL, fd, NULL);
		}
	}
}

int mrail_progress_add_ep(struct mrail_domain *domain, struct mrail_ep *ep)
{
	struct mrail_progress *pg = domain->progress;
	size_t rail;
	int ret, fd;

	if (!pg) {
		DL_APPEND2(domain->eps, ep, dom_prev, dom_next);
		return 0;
	}
	for (rail = 0; rail < ep->rail_count; rail++) {
		ret = fi_control(&ep->rail_cqs[rail]->fid, FI_GETWAIT, &fd);
		if (ret) {
			MRAIL_INFO(FI_LOG_EP_CTRL, "rail %zu: its CQ has no fd to "
				   "sleep on (%s): the progress thread polls it "
				   "every %d ms\n", rail + 1, fi_strerror(-ret),
				   MRAIL_PROGRESS_POLL_MS);
			ep->rail_cq_polled[rail] = true;
			pg->polled++;
			continue;
		}
		ret = progress_watch(pg, fd);
		if (ret) {
			MRAIL_WARN(FI_LOG_EP_CTRL, "rail %zu: the progress thread "
				   "cannot wait on its CQ's fd: %s\n", rail + 1,
				   fi_strerror(-ret));
			ep_unwatch(pg, ep, rail);
			return ret;
		}
	}
	DL_APPEND2(domain->eps, ep, dom_prev, dom_next);
	mrail_progress_kick(domain);
	return 0;
}

void mrail_progress_remove_ep(struct mrail_domain *domain, struct mrail_ep *ep)
{
	DL_DELETE2(domain->eps, ep, dom_prev, dom_next);
	ep->dom_prev = ep->dom_next = NULL;
	if (domain->progress)
		ep_unwatch(domain->progress, ep, ep->rail_count);
}

/* Tells the thread to stop and waits until it has. */
static void progress_join(struct mrail_progress *pg)
{
	struct mrail_domain *domain = pg->domain;

	mrail_domain_lock(domain);
	pg->stop = true;
	(void) eventfd_write(pg->wake_fd, 1);
	pthread_mutex_unlock(&domain->lock);
	pthread_join(pg->thread, NULL);
}

void mrail_progress_stop_all(void)
{
	struct mrail_progress *pg, *tmp;

	pthread_mutex_lock(&running_lock);
	DL_FOREACH_SAFE2(running, pg, tmp, running_next) {
		DL_DELETE2(running, pg, running_prev, running_next);
		pg->running = false;
		progress_join(pg);
	}
	pthread_mutex_unlock(&running_lock);
}

/* exit() runs this before any library's destructor, so no thread is left
 * in a rail provider that libfabric is cleaning up, nor in this library
 * when fi_fini unloads it. The domains themselves stay: the process is
 * ending. */
static void progress_register_atexit(void)
{
	if (atexit(mrail_progress_stop_all))
		MRAIL_WARN(FI_LOG_DOMAIN, "atexit failed: a process that exits "
			   "with an FI_PROGRESS_AUTO domain open may crash\n");
}

int mrail_progress_start(struct mrail_domain *domain)
{
	struct mrail_progress *pg;
	int ret;

	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return -FI_ENOMEM;
	pg->wake_fd = -1;
	pg->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (pg->epfd < 0) {
		ret = -errno;
		goto err;
	}
	pg->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (pg->wake_fd < 0) {
		ret = -errno;
		goto err;
	}
	ret = progress_watch(pg, pg->wake_fd);
	if (ret)
		goto err;
	pthread_mutex_init(&pg->wake_lock, NULL);
	pthread_once(&running_atexit_once, progress_register_atexit);
	pg->domain = domain;
	domain->progress = pg;
	pthread_mutex_lock(&running_lock);
	ret = -pthread_create(&pg->thread, NULL, progress_run, domain);
	if (!ret) {
		pg->running = true;
		DL_APPEND2(running, pg, running_prev, running_next);
	}
	pthread_mutex_unlock(&running_lock);
	if (ret) {
		domain->progress = NULL;
		pthread_mutex_destroy(&pg->wake_lock);
		goto err;
	}
	return 0;
err:
	MRAIL_WARN(FI_LOG_DOMAIN, "cannot start the progress thread of "
		   "FI_PROGRESS_AUTO: %s; the domain is not opened: raise the "
		   "limit of open files (ulimit -n) or threads, or ask for "
		   "FI_PROGRESS_MANUAL\n", fi_strerror(-ret));
	if (pg->wake_fd >= 0)
		close(pg->wake_fd);
	if (pg->epfd >= 0)
		close(pg->epfd);
	free(pg);
	return ret;
}

void mrail_progress_stop(struct mrail_domain *domain)
{
	struct mrail_progress *pg = domain->progress;
	bool was_running;

	if (!pg)
		return;
	/* Whoever takes the thread off the running list joins it: here, or
	 * mrail_progress_stop_all, which has finished once we get the lock. */
	pthread_mutex_lock(&running_lock);
	was_running = pg->running;
	if (was_running) {
		DL_DELETE2(running, pg, running_prev, running_next);
		pg->running = false;
	}
	pthread_mutex_unlock(&running_lock);
	if (was_running)
		progress_join(pg);
	domain->progress = NULL;
	pthread_mutex_destroy(&pg->wake_lock);
	close(pg->wake_fd);
	close(pg->epfd);
	free(pg);
}
