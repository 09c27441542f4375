#!/bin/bash
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
testbed=$here/../../ci/testbed
prog=$build/fabtests-ext/fi_mrail_progress
port=47610
logs=$(mktemp -d)

testbed_cleanup_on_exit

# pair NAME SET RAILS: server on h1, client on h2, fi_mrail_progress -t SET
# with FI_MRAIL_RAILS=RAILS (empty: discovery).
pair() {
	local name=$1 set=$2 rails=$3 srv cli idle
	local run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn ${rails:+FI_MRAIL_RAILS="$rails"})

	timeout 150 "$testbed" exec 1 "${run[@]}" "$prog" -t "$set" -E $port \
		>"$logs/server" 2>&1 &
	srv=$!
	sleep 0.5
	timeout 150 "$testbed" exec 2 "${run[@]}" "$prog" -t "$set" -E $port \
		198.18.1.1 >"$logs/client" 2>&1
	cli=$?
	wait $srv
	srv=$?
	if [ $srv -eq 0 ] && [ $cli -eq 0 ] &&
	   grep -qE '^fi_mrail_progress: ([0-9]+) of \1 checks passed' "$logs/server" &&
	   grep -qE '^fi_mrail_progress: ([0-9]+) of \1 checks passed' "$logs/client"; then
		pass "$name: $(grep -h 'checks passed' "$logs/server" "$logs/client" |
			sed 's/fi_mrail_progress: //' | paste -sd ';' -)"
	else
		fail "$name" "server exit $srv, client exit $cli: $(grep -hE 'FAILED|checks|sanitizer|runtime error|signal' \
			"$logs/server" "$logs/client" | head -8)"
	fi
	idle=$(grep -h 'idle with' "$logs/server" "$logs/client" | sed 's/fi_mrail_progress: //')
	[ -n "$idle" ] && while read -r line; do note "$name: $line"; done <<<"$idle"
}

"$testbed" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
for rails in '' 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1'; do
	label=${rails:+tcp + udp rails}
	label=${label:-2 tcp rails}
	pair "$label: counters (manual progress)" counters "$rails"
	pair "$label: FI_PROGRESS_AUTO" auto "$rails"
	pair "$label: manual progress, the control" manual "$rails"
done

rm -rf "$logs"
finish
