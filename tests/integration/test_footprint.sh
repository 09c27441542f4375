#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What one enabled mrail endpoint costs in memory with the defaults. mrail
# sizes ofi_rxm's shared receive queue down in its private libfabric
# (FI_OFI_RXM_MSG_RX_SIZE=1024 unless the application set it; see
# mrail_corelib.c and man fi_mrail, THE RAILS' LIBFABRIC): rxm's own 4096
# buffers cost 70 MiB (1.17) or 134 MiB (2.6) per rail endpoint, and a
# SHMEM runtime opens an endpoint per context.
# tests/integration/ep_footprint enables 8 endpoints and prints the growth
# of its resident set per endpoint, over 2 tcp rails:
#   - with the application's FI_OFI_RXM_MSG_RX_SIZE=0, which gives rxm's
#     own default (4096; with 2.6 an explicit 4096, or anything above 1024,
#     makes fi_getinfo drop the tcp;ofi_rxm stack), the baseline, measured
#     in the same run;
#   - with the defaults: at most half the baseline (a quarter measured,
#     with 1.17 and 2.6 alike).
# The first also shows that the application's own setting reaches the
# rails: were it ignored, both would cost the same and the check fail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
provider_dir=$build/.libs
probe=$build/tests/integration/ep_footprint
require_built "$probe"

testbed_cleanup_on_exit
"$TESTBED" up --hosts 1 --rails 2 >/dev/null || { fail setup "testbed up failed"; finish; }

# Prints the KiB per endpoint, or nothing if the run failed (LOG says why).
footprint() { # log env...
	local log=$1
	shift
	"$TESTBED" exec 1 env FI_PROVIDER=mrail FI_PROVIDER_PATH="$provider_dir" \
		FI_MRAIL_RAILS='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' \
		LD_PRELOAD="${MRAIL_PRELOAD:-}" "$@" "$probe" 8 >"$log" 2>&1 || return 0
	grep -qx 'provider mrail' "$log" && grep -qx 'endpoints 8' "$log" || return 0
	sed -n 's/^per_endpoint_kib \([0-9]*\)$/\1/p' "$log"
}

base_log=$TEST_LOGDIR/rxm-default.log
def_log=$TEST_LOGDIR/mrail-default.log
base=$(footprint "$base_log" FI_OFI_RXM_MSG_RX_SIZE=0)
kib=$(footprint "$def_log")
name="an mrail endpoint over 2 tcp rails costs at most half of what rxm's own queue size costs"
if [ -z "$base" ]; then
	fail "$name" "ep_footprint failed with FI_OFI_RXM_MSG_RX_SIZE=0 (log $base_log)"
	show_log_tail "$base_log"
elif [ -z "$kib" ]; then
	fail "$name" "ep_footprint failed with the defaults (log $def_log)"
	show_log_tail "$def_log"
elif [ $((2 * kib)) -gt "$base" ]; then
	fail "$name" "$kib KiB per endpoint with the defaults, $base KiB with rxm's (FI_OFI_RXM_MSG_RX_SIZE=0)"
else
	pass "$name: $kib KiB per endpoint, $base KiB with rxm's (FI_OFI_RXM_MSG_RX_SIZE=0)"
fi
finish
