#!/bin/bash
# Eager messages and tagged messages between emulated hosts over mrail's
# rails: fi_mrail_msg checks data byte for byte, completion fields and exact
# completion counts, ordering of unexpected messages and truncation. Run on
# 2 and 4 tcp;ofi_rxm rails and on tcp;ofi_rxm + udp;ofi_rxd. (The bare core
# providers of libfabric 1.17 fail its truncation check: tcp;ofi_rxm disables
# the endpoint after a truncated receive, udp;ofi_rxd never reports
# truncation; mrail truncates in its own buffers and passes.)
#
# Each configuration also runs with -N: no address exchange, the client
# reaches the server with fi_getinfo(node=198.18.1.1, service) alone (mrail's
# HELLO over rail 0 brings the other rails in). The client host's interface
# byte counters prove every rail carried traffic in that run.
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

# pair NAME PROVIDER RAILS LAST [OPTION...]: server on h1, client on LAST,
# both with FI_MRAIL_RAILS=RAILS (empty: discovery) and fi_mrail_msg OPTIONs.
pair() {
	local name=$1 prov=$2 rails=$3 last=$4 srv cli
	local -a extra=("${@:5}")
	local run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn ${rails:+FI_MRAIL_RAILS="$rails"})

	timeout 300 "$testbed" exec 1 "${run[@]}" "$msg_test" -p "$prov" -E $port \
		"${extra[@]}" >"$logs/server" 2>&1 &
	srv=$!
	sleep 0.5
	timeout 300 "$testbed" exec "$last" "${run[@]}" "$msg_test" -p "$prov" -E $port \
		"${extra[@]}" 198.18.1.1 >"$logs/client" 2>&1
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

# rail_bytes HOST RAILS: "rx+tx" bytes of each rail interface, space separated.
rail_bytes() {
	local host=$1 rails=$2 r out=()
	for ((r = 0; r < rails; r++)); do
		out+=("$("$testbed" exec "$host" sh -c \
			"echo \$((\$(cat /sys/class/net/mr$r/statistics/rx_bytes) + \
			\$(cat /sys/class/net/mr$r/statistics/tx_bytes)))")")
	done
	echo "${out[*]}"
}

# by_node NAME RAILS_CONFIG RAIL_COUNT: pair -N, then every rail must have
# carried at least a MiB (the 1 MiB messages alone stripe many over each).
by_node() {
	local name=$1 rails=$2 count=$3 before after r moved summary="" low=""
	local -a b a
	before=$(rail_bytes 2 "$count")
	pair "$name, peer from fi_getinfo(node, service)" mrail "$rails" 2 -N
	after=$(rail_bytes 2 "$count")
	read -ra b <<<"$before"
	read -ra a <<<"$after"
	for ((r = 0; r < count; r++)); do
		moved=$((a[r] - b[r]))
		summary+="${summary:+, }mr$r $((moved / 1048576)) MiB"
		[ "$moved" -ge 1048576 ] || low+=" mr$r"
	done
	if [ -z "$low" ]; then
		pass "$name, -N: every rail carried traffic ($summary)"
	else
		fail "$name, -N: rails without traffic:$low" "$summary"
	fi
}

"$testbed" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
pair "mrail over 2 tcp rails" mrail '' 2
by_node "mrail over 2 tcp rails" '' 2
pair "mrail over tcp + udp rails" mrail 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' 2
by_node "mrail over tcp + udp rails" 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' 2
"$testbed" up --hosts 2 --rails 4 >/dev/null || fail testbed "up failed"
pair "mrail over 4 tcp rails" mrail '' 2
by_node "mrail over 4 tcp rails" '' 4

rm -rf "$logs"
finish
