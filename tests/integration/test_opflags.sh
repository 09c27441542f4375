#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Integration test of operation flags: fi_control FI_GETOPSFLAG and
# FI_SETOPSFLAG, and FI_DELIVERY_COMPLETE (eager and rendezvous, messages
# and tagged) across two emulated hosts, on two tcp rails and on a tcp rail
# plus a udp rail, also with every call made from a non-main thread.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
tool=$build/fabtests-ext/fi_mrail_opflags
port=47596

testbed_cleanup_on_exit

pair() { # name rails [tool options]
	local name=$1 rails=$2
	shift 2
	run_pair "$name" 120 "$rails" "$tool" -E $port "$@"
}

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
pair "operation flags, 2 tcp rails" 'tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1'
pair "operation flags, tagged, 2 tcp rails" 'tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' -T
# ofi_rxd completes a send once its peer acknowledges it: -R.
pair "operation flags, tcp + udp rails" 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' -R
# The rails' private libc has per-thread state: libfabric called only from
# a thread the application started must work as from main.
pair "operation flags from a non-main thread, tcp + udp rails" \
	'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' -R -t

finish
