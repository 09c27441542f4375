#!/bin/bash
# Eager messages and tagged messages between emulated hosts over mrail's
# rails: fi_mrail_msg checks data byte for byte, completion fields and exact
# completion counts, ordering of unexpected messages and truncation. Run on
# 2 and 4 tcp;ofi_rxm rails and on tcp;ofi_rxm + udp;ofi_rxd. (The bare core
# providers of libfabric 1.17 fail its truncation check: tcp;ofi_rxm disables
# the endpoint after a truncated receive, udp;ofi_rxd never reports
# truncation; mrail truncates in its own buffers and passes.)
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
testbed=$here/../../ci/testbed
msg_test=$build/fabtests-ext/fi_mrail_msg
port=47592
logs=$(mktemp -d)

testbed_cleanup_on_exit

# pair NAME PROVIDER RAILS: server on h1, client on h2 (the last host), both
# with FI_MRAIL_RAILS=RAILS (empty: discovery).
pair() { # name prov rails last-host [seconds]
	local name=$1 prov=$2 rails=$3 last=$4 limit=${5:-120} srv cli
	local run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn ${rails:+FI_MRAIL_RAILS="$rails"})

	timeout "$limit" "$testbed" exec 1 "${run[@]}" "$msg_test" -p "$prov" -E $port \
		>"$logs/server" 2>&1 &
	srv=$!
	sleep 0.5
	timeout "$limit" "$testbed" exec "$last" "${run[@]}" "$msg_test" -p "$prov" -E $port \
		198.18.1.1 >"$logs/client" 2>&1
	cli=$?
	wait $srv
	srv=$?
	if [ $srv -eq 0 ] && [ $cli -eq 0 ] &&
	   grep -qE 'checks passed' "$logs/server" && grep -qE 'checks passed' "$logs/client"; then
		pass "$name: $(grep -h 'checks passed' "$logs/server" "$logs/client" |
			sed 's/fi_mrail_msg: //' | paste -sd ';' -)"
	else
		fail "$name" "server exit $srv, client exit $cli: $(grep -hE 'FAIL|checks|rror|sanitizer' \
			"$logs/server" "$logs/client" | head -8)"
	fi
}

"$testbed" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
pair "mrail over 2 tcp rails" mrail '' 2
# Even stripes put half of every rendezvous on ofi_rxd, which slows to a few
# MB/s on a busy machine (its 64 MiB bursts took 100 s with load 7 on 2 cores).
pair "mrail over tcp + udp rails" mrail 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' 2 360
"$testbed" up --hosts 2 --rails 4 >/dev/null || fail testbed "up failed"
pair "mrail over 4 tcp rails" mrail '' 2

rm -rf "$logs"
finish
