/*
 * Provider entry point: parameters, the fi_provider object, and fabric open.
 */
#include "mrail.h"

struct mrail_env mrail_env = {
	.rails = NULL,
	.private_core = 1,
};

/* Nothing global to release: every railset belongs to the call or object
 * that resolved it, and the private libfabric stays loaded until exit
 * (mrail_corelib.c says why). */
static void mrail_cleanup(void)
{
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
}

static void mrail_read_params(void)
{
	fi_param_get_str(&mrail_prov, "rails", &mrail_env.rails);
	fi_param_get_bool(&mrail_prov, "private_core", &mrail_env.private_core);
}

struct fi_provider *fi_prov_ini(void)
{
	/* No libfabric calls but parameters here: libfabric holds its
	 * initialisation lock while it loads providers. */
	mrail_define_params();
	mrail_read_params();
	return &mrail_prov;
}
