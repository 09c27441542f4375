#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Counters bound to endpoints and FI_PROGRESS_AUTO between two emulated
# hosts over two rails: fi_mrail_progress checks exact counter values
# (every user send and receive counted once, eager and rendezvous, inject
# and unreported sends; truncations and a cancel as errors), that with
# FI_PROGRESS_AUTO receives complete while the server only sleeps in
# fi_cntr_wait and sends complete while the client makes no libfabric call,
# and that an idle process with a progress thread does not spin (its CPU
# time over 4 s of idleness is printed). The manual set is the control: the
# same sequence under manual progress, where nothing may complete while the
# client sleeps. Run on two tcp;ofi_rxm rails and on tcp;ofi_rxm +
# udp;ofi_rxd.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
prog=$build/fabtests-ext/fi_mrail_progress
port=47610

testbed_cleanup_on_exit

# pair NAME SET RAILS: fi_mrail_progress -t SET with FI_MRAIL_RAILS=RAILS
# (empty: discovery), and the idle CPU figures it prints.
pair() {
	local name=$1 set=$2 rails=$3 idle
	run_pair "$name" 150 "$rails" "$prog" -t "$set" -E $port
	idle=$(grep -h 'idle with' "$PAIR_LOGS/server" "$PAIR_LOGS/client" |
		sed 's/fi_mrail_progress: //')
	[ -n "$idle" ] && while read -r line; do note "$name: $line"; done <<<"$idle"
}

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
for rails in '' 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1'; do
	label=${rails:+tcp + udp rails}
	label=${label:-2 tcp rails}
	pair "$label: counters (manual progress)" counters "$rails"
	pair "$label: FI_PROGRESS_AUTO" auto "$rails"
	pair "$label: manual progress, the control" manual "$rails"
done

finish
