/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_objs: functional test of mrail's counters, CQ wait objects,
 * event queues, memory registration, fi_trywait, poll sets, scalable
 * endpoints, operation tables and fi_getinfo's answers to hints, in one
 * process (no
 * peer: messages for the CQ checks go to the process's own address).
 *
 *   fi_mrail_objs [-t counters|cq|eq|mr|trywait|poll|sep|ops|getinfo|sockaddr|all|exit] [-v]
 *
 * -t ops checks every operation table of every object (as large as the
 * headers know, no NULL entry) and calls the operations mrail refuses
 * (connection management, scalable contexts, fi_set_ops...), which must
 * return -FI_ENOSYS; -t getinfo checks that hints are honoured or refused
 * (caps, ordering, mr_mode); -t sockaddr uses an FI_SOCKADDR_IN offer
 * with an FI_EVENT AV and sends to the endpoint's own socket address.
 *
 * -t exit (not part of all) opens an FI_PROGRESS_AUTO domain, sends a
 * message to itself through the progress thread, and exits with every
 * object still open, as applications that fail do: libfabric then cleans
 * up and unloads mrail while mrail's progress thread is busy.
 *
 * Every check asserts exact values: counts, event bytes, keys, return
 * codes. Timed waits are checked never to return before their timeout (no
 * upper bounds: a slow machine is not a failure); a blocking call that
 * never returns is caught by a watchdog. Prints one line per failed check
 * (every check with -v) and exits 0 only if every check passed.
 *
 * This file holds main, the watchdog and the helpers every section uses;
 * the sections are in fi_mrail_objs_*.c (see fi_mrail_objs.h).
 */
#include "fi_mrail_objs.h"

const char *volatile step = "start";

static void on_watchdog(int sig)
{
	static const char head[] = "FAILED: watchdog: no return after "
				   "120 s in: ";
	const char *s = step;

	(void) sig;
	if (write(STDOUT_FILENO, head, sizeof(head) - 1) < 0 ||
	    write(STDOUT_FILENO, s, strlen(s)) < 0 || write(STDOUT_FILENO, "\n", 1) < 0)
		_exit(3);
	_exit(3);
}

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sleep_ms(int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long) (ms % 1000) * 1000000,
	};

	while (nanosleep(&ts, &ts))
		;
}

/* Whether fd is readable right now. */
bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

static void *later_run(void *arg)
{
	struct later *l = arg;
	uint64_t i;

	sleep_ms(LATER_MS);
	switch (l->kind) {
	case LATER_CNTR_ADD:
		l->ret = fi_cntr_add(l->obj, l->value);
		break;
	case LATER_CNTR_ADD_STEPS:
		for (i = 0; i < l->value && !l->ret; i++) {
			if (i)
				sleep_ms(LATER_MS / 2);
			l->ret = fi_cntr_add(l->obj, 1);
		}
		break;
	case LATER_CNTR_ADDERR:
		l->ret = fi_cntr_adderr(l->obj, l->value);
		break;
	case LATER_CQ_SIGNAL:
		l->ret = fi_cq_signal(l->obj);
		break;
	case LATER_EQ_WRITE:
		l->ret = (int) fi_eq_write(l->obj, FI_NOTIFY, &l->entry, sizeof(l->entry),
					   0);
		break;
	}
	return NULL;
}

void later_start(struct later *l, enum later_kind kind, void *obj, uint64_t value)
{
	l->kind = kind;
	l->obj = obj;
	l->value = value;
	l->ret = 0;
	if (pthread_create(&l->thread, NULL, later_run, l)) {
		perror("pthread_create");
		exit(2);
	}
}

int later_join(struct later *l)
{
	pthread_join(l->thread, NULL);
	return l->ret;
}

int main(int argc, char **argv)
{
	struct fid_fabric *fabric = NULL;
	struct fid_domain *domain = NULL;
	struct fi_info *hints, *info = NULL;
	const char *which = "all";
	int opt, ret;

	while ((opt = getopt(argc, argv, "t:vh")) != -1) {
		switch (opt) {
		case 't':
			which = optarg;
			break;
		case 'v':
			check_verbose = true;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-t counters|cq|eq|mr|trywait|poll|sep|ops|getinfo|sockaddr|all|exit|enable] [-v]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (strcmp(which, "all") && strcmp(which, "counters") && strcmp(which, "cq") &&
	    strcmp(which, "eq") && strcmp(which, "mr") && strcmp(which, "trywait") &&
	    strcmp(which, "poll") && strcmp(which, "sep") && strcmp(which, "ops") &&
	    strcmp(which, "getinfo") &&
	    strcmp(which, "sockaddr") && strcmp(which, "exit") && strcmp(which, "enable")) {
		fprintf(stderr, "fi_mrail_objs: unknown test set \"%s\"\n", which);
		return 2;
	}
	signal(SIGALRM, on_watchdog);
	alarm(WATCHDOG_S);

	hints = fi_allocinfo();
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	check_what(ret == 0, "fi_getinfo(mrail)", "%s", ret ? fi_strerror(-ret) : "");
	if (ret)
		goto out;
	ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	check_what(ret == 0, "fi_fabric", "%s", ret ? fi_strerror(-ret) : "");
	if (ret)
		goto out;
	ret = fi_domain(fabric, info, &domain, NULL);
	check_what(ret == 0, "fi_domain", "%s", ret ? fi_strerror(-ret) : "");
	if (ret)
		goto out;

	if (!strcmp(which, "all") || !strcmp(which, "counters")) {
		step = "counters";
		test_counters(fabric, domain);
	}
	if (!strcmp(which, "all") || !strcmp(which, "cq")) {
		step = "cq";
		test_cq(fabric, domain, info);
	}
	if (!strcmp(which, "all") || !strcmp(which, "eq")) {
		step = "eq";
		test_eq(fabric);
	}
	if (!strcmp(which, "all") || !strcmp(which, "mr")) {
		step = "mr";
		test_mr(fabric, info, domain);
	}
	if (!strcmp(which, "all") || !strcmp(which, "trywait")) {
		step = "trywait";
		test_trywait(fabric, domain);
	}
	if (!strcmp(which, "all") || !strcmp(which, "poll")) {
		step = "poll sets";
		test_poll(domain, info);
	}
	if (!strcmp(which, "all") || !strcmp(which, "sep")) {
		step = "scalable endpoints";
		test_sep(domain, info);
	}
	if (!strcmp(which, "all") || !strcmp(which, "ops")) {
		step = "ops";
		test_ops(fabric, domain, info);
	}
	if (!strcmp(which, "all") || !strcmp(which, "getinfo")) {
		step = "getinfo";
		test_getinfo();
	}
	if (!strcmp(which, "all") || !strcmp(which, "sockaddr")) {
		step = "sockaddr";
		test_sockaddr(fabric);
	}
	if (!strcmp(which, "enable")) {
		step = "enable, fail, enable again";
		test_enable_retry(domain, info);
	}
	if (!strcmp(which, "exit")) {
		step = "exit with objects open";
		test_exit_open(fabric, info);
	}
	step = "close";
out:
	check_close(domain ? &domain->fid : NULL, "close the domain");
	check_close(fabric ? &fabric->fid : NULL, "close the fabric");
	fi_freeinfo(info);
	printf("fi_mrail_objs: %d of %d checks passed\n", check_count - check_failures, check_count);
	return check_failures ? 1 : 0;
}
