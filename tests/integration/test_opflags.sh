#!/bin/bash
# Integration test of operation flags: fi_control FI_GETOPSFLAG and
# FI_SETOPSFLAG, and FI_DELIVERY_COMPLETE (eager and rendezvous, messages
# and tagged) across two emulated hosts, on two tcp rails and on a tcp rail
# plus a udp rail, also with every call made from a non-main thread.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
testbed=$here/../../ci/testbed
tool=$build/fabtests-ext/fi_mrail_opflags
port=47596
logs=$(mktemp -d)

testbed_cleanup_on_exit

pair() { # name rails [tool options]
	local name=$1 rails=$2 srv cli
	shift 2
	local run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails")

	timeout 120 "$testbed" exec 1 "${run[@]}" "$tool" -E $port "$@" \
		>"$logs/server" 2>&1 &
	srv=$!
	sleep 0.5
	timeout 120 "$testbed" exec 2 "${run[@]}" "$tool" -E $port "$@" 198.18.1.1 \
		>"$logs/client" 2>&1
	cli=$?
	wait $srv
	srv=$?
	if [ $srv -eq 0 ] && [ $cli -eq 0 ] &&
	   grep -q 'checks passed' "$logs/server" && grep -q 'checks passed' "$logs/client"; then
		pass "$name: $(grep -h 'checks passed' "$logs/server" "$logs/client" |
			sed 's/fi_mrail_opflags: //' | paste -sd ';' -)"
	else
		fail "$name" "server exit $srv, client exit $cli: $(grep -hE 'FAIL|checks|rror|sanitizer' \
			"$logs/server" "$logs/client" | head -8)"
	fi
}

"$testbed" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
pair "operation flags, 2 tcp rails" 'tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1'
pair "operation flags, tagged, 2 tcp rails" 'tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' -T
# ofi_rxd completes a send once its peer acknowledges it: -R.
pair "operation flags, tcp + udp rails" 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' -R
# The rails' private libc has per-thread state: libfabric called only from
# a thread the application started must work as from main.
pair "operation flags from a non-main thread, tcp + udp rails" \
	'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' -R -t

rm -rf "$logs"
finish
