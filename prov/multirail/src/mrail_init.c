/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Provider entry point: parameters, the fi_provider object, and fabric open.
 */
#include "mrail.h"
#include "barrier.h"
#include "idle.h"
#include "liveness.h"
#include "policy.h"
#include "rail_meter.h"

struct mrail_env mrail_env = {
	.rails = NULL,
	.private_core = 1,
};

/* libfabric unloads this library after calling this: no progress thread
 * may be left running its code (an application may exit with domains
 * open). Nothing else global to release: every railset belongs to the call
 * or object that resolved it, and the private libfabric stays loaded until
 * exit (mrail_corelib.c says why). */
static void mrail_cleanup(void)
{
	mrail_progress_stop_all();
}

struct fi_provider mrail_prov = {
	.name = FI_MRAIL_PROV_NAME,
	.version = MRAIL_PROV_VERSION,
	.fi_version = MRAIL_FI_VERSION,
	.getinfo = mrail_getinfo,
	.fabric = mrail_fabric_open,
	.cleanup = mrail_cleanup,
};

static void mrail_define_params(void)
{
	fi_param_define(&mrail_prov, "rails", FI_PARAM_STRING,
			"Rails to use, comma-separated: STACK@ATTACH where STACK is "
			"a core provider stack (tcp;ofi_rxm, udp;ofi_rxd, "
			"verbs;ofi_rxm, ...) and ATTACH an interface name, a "
			"libfabric domain name, a local IP address or an IP "
			"subnet (ADDR/LEN). Example: "
			"tcp;ofi_rxm@mr0,tcp;ofi_rxm@198.18.2.0/24. "
			"Default: one rail per non-loopback domain of the best "
			"RDM-capable stack (at most %d rails).", MRAIL_MAX_RAILS);
	fi_param_define(&mrail_prov, "private_core", FI_PARAM_BOOL,
			"Open the rails through a private copy of libfabric so "
			"that FI_PROVIDER=mrail does not hide the rails' core "
			"providers (default: yes). With 0, FI_PROVIDER must also "
			"name the rail providers.");
	fi_param_define(&mrail_prov, "progress_rt", FI_PARAM_INT,
			"FI_PROGRESS_AUTO: run the progress thread with this "
			"SCHED_FIFO priority (1..99) so that it is woken at once "
			"even when the application's threads keep every core "
			"busy; it sleeps whenever it has nothing to do. Needs "
			"CAP_SYS_NICE (root); without it the thread runs at "
			"normal priority, with a note in the log. Default 0: "
			"normal priority.");
	fi_param_define(&mrail_prov, "policy", FI_PARAM_STRING,
			"Multiplexing policy: the rail a message sent whole takes. "
			"rr (default), weighted (FI_MRAIL_WEIGHTS), window "
			"(FI_MRAIL_WINDOW messages per rail), local_dynamic (idle "
			"rails only).");
	fi_param_define(&mrail_prov, "stripe_policy", FI_PARAM_STRING,
			"Striping policy: how a large transfer is split over the "
			"rails. adaptive (default: shares from measured rail "
			"speeds, even while they measure equal), even, weighted "
			"(FI_MRAIL_WEIGHTS), "
			"local_dynamic (idle rails, FI_MRAIL_STRIPE_RATIO), "
			"dynamic (rails reserved at both ends, "
			"FI_MRAIL_STRIPE_RATIO), hybrid (whole up to "
			"FI_MRAIL_HYBRID_THRESHOLD, else dynamic).");
	fi_param_define(&mrail_prov, "weights", FI_PARAM_STRING,
			"Weights of the weighted policies: one integer 0..%u per "
			"rail, comma-separated, in rail order, not all 0 (e.g. "
			"4,1). Default: the rails' link speeds, or equal.",
			MRAIL_WEIGHT_MAX);
	fi_param_define(&mrail_prov, "window", FI_PARAM_STRING,
			"Messages per rail of the window policy, at least 1 "
			"(default 8).");
	fi_param_define(&mrail_prov, "adaptive_alpha", FI_PARAM_STRING,
			"History kept by adaptive striping, 0 to below 1 "
			"(default 0.5): 0 follows the last window alone.");
	fi_param_define(&mrail_prov, "adaptive_window", FI_PARAM_STRING,
			"Milliseconds over which adaptive striping measures each "
			"rail's rate before it moves the shares, 0..%u (default "
			"%u; 0: at every read completed).",
			MRAIL_METER_WINDOW_MS_MAX, MRAIL_METER_WINDOW_MS_DEFAULT);
	fi_param_define(&mrail_prov, "min_stripe", FI_PARAM_STRING,
			"Smallest stripe in bytes, at least 1 (default %llu): no "
			"rail is handed less of a transfer.",
			(unsigned long long) MRAIL_RDV_MIN_STRIPE);
	fi_param_define(&mrail_prov, "stripe_ratio", FI_PARAM_STRING,
			"Share of the idle rails local_dynamic and dynamic striping use, 0 "
			"(one rail) to 1 (all, default).");
	fi_param_define(&mrail_prov, "rail_timeout", FI_PARAM_STRING,
			"Milliseconds, 10 to 60000 (default 500): a rail that has "
			"had operations to a peer in flight with nothing back for "
			"this long, while the peer answered on another rail, is "
			"failed for that peer and left out until a probe on it is "
			"answered.");
	fi_param_define(&mrail_prov, "peer_timeout", FI_PARAM_STRING,
			"Seconds a peer's rails may refuse every message (while "
			"this endpoint sends to it or waits on it) before it is "
			"taken for dead and its operations fail with "
			"FI_EHOSTUNREACH, and seconds the link of every rail "
			"may be down on this host before operations with every "
			"peer fail so; 0 never gives up (default %d).",
			MRAIL_LIVE_TIMEOUT_DEFAULT_S);
	fi_param_define(&mrail_prov, "hybrid_threshold", FI_PARAM_STRING,
			"Hybrid striping: longest transfer in bytes sent whole "
			"on one rail without reservation (default 16384); a "
			"longer one reserves rails like dynamic striping.");
	fi_param_define(&mrail_prov, "barrier", FI_PARAM_STRING,
			"Barrier algorithm of fi_barrier and of the join of "
			"fi_join_collective: dissemination (default), pairwise "
			"(recursive doubling, two more steps when the group "
			"size is not a power of two), gather (tree of degree 2) "
			"or gather:K (K from %u to %u). Every member must use "
			"the same value.", MRAIL_BARRIER_MIN_DEGREE,
			MRAIL_BARRIER_MAX_DEGREE);
	fi_param_define(&mrail_prov, "spin_us", FI_PARAM_STRING,
			"Microseconds a process may poll an empty completion "
			"queue before each further empty read yields the core "
			"(sched_yield), so that it leaves the core to the peer "
			"it waits for when processes outnumber cores; 0 never "
			"yields (default %u).", MRAIL_IDLE_SPIN_US_DEFAULT);
}

static void mrail_read_params(void)
{
	fi_param_get_str(&mrail_prov, "rails", &mrail_env.rails);
	fi_param_get_bool(&mrail_prov, "private_core", &mrail_env.private_core);
	fi_param_get_int(&mrail_prov, "progress_rt", &mrail_env.progress_rt);
	fi_param_get_str(&mrail_prov, "policy", &mrail_env.policy);
	fi_param_get_str(&mrail_prov, "stripe_policy", &mrail_env.stripe_policy);
	fi_param_get_str(&mrail_prov, "weights", &mrail_env.weights);
	fi_param_get_str(&mrail_prov, "window", &mrail_env.window);
	fi_param_get_str(&mrail_prov, "adaptive_alpha", &mrail_env.adaptive_alpha);
	fi_param_get_str(&mrail_prov, "adaptive_window",
			 &mrail_env.adaptive_window);
	fi_param_get_str(&mrail_prov, "min_stripe", &mrail_env.min_stripe);
	fi_param_get_str(&mrail_prov, "stripe_ratio", &mrail_env.stripe_ratio);
	fi_param_get_str(&mrail_prov, "peer_timeout", &mrail_env.peer_timeout);
	fi_param_get_str(&mrail_prov, "rail_timeout", &mrail_env.rail_timeout);
	fi_param_get_str(&mrail_prov, "hybrid_threshold",
			 &mrail_env.hybrid_threshold);
	fi_param_get_str(&mrail_prov, "barrier", &mrail_env.barrier);
	fi_param_get_str(&mrail_prov, "spin_us", &mrail_env.spin_us);
}

struct fi_provider *fi_prov_ini(void)
{
	/* No libfabric calls but parameters here: libfabric holds its
	 * initialisation lock while it loads providers. */
	mrail_define_params();
	mrail_read_params();
	return &mrail_prov;
}
