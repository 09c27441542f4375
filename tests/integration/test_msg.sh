#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Eager messages and tagged messages between emulated hosts over mrail's
# rails: fi_mrail_msg checks data byte for byte, completion fields and exact
# completion counts, ordering of unexpected messages, truncation, and one
# peer inserted twice (both entries in turn, FI_DELIVERY_COMPLETE, the first
# then removed: the fabtests hang of a second sequence stream). Run on
# 2 and 4 tcp;ofi_rxm rails and on tcp;ofi_rxm + udp;ofi_rxd. (The bare core
# providers of libfabric 1.17 fail its truncation check: tcp;ofi_rxm disables
# the endpoint after a truncated receive, udp;ofi_rxd never reports
# truncation; mrail truncates in its own buffers and passes.)
#
# Each configuration also runs with -N: no address exchange, the client
# reaches the server with fi_getinfo(node=198.18.1.1, service) alone (mrail's
# HELLO over rail 0 brings the other rails in); right after that first
# contact a burst of sends must not be refused while the other rails connect
# (fi_rdm_tagged_peek does not retry). The client host's interface
# byte counters prove every rail carried traffic in that run.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
msg_test=$build/fabtests-ext/fi_mrail_msg
port=47592

testbed_cleanup_on_exit

# pair NAME PROVIDER RAILS [OPTION...]: fi_mrail_msg -p PROVIDER OPTIONs,
# server on h1, client on h2, with FI_MRAIL_RAILS=RAILS (empty: discovery).
# A hang guard of 300 s, 360 with a udp rail: even stripes put half of every
# rendezvous on ofi_rxd, which slows to a few MB/s on a busy machine (its
# 64 MiB bursts took 100 s with load 7 on 2 cores).
pair() {
	local name=$1 prov=$2 rails=$3 limit=300
	shift 3
	[[ $rails == *udp* ]] && limit=360
	run_pair "$name" "$limit" "$rails" "$msg_test" -p "$prov" -E $port "$@"
}

# rail_bytes HOST RAILS: "rx+tx" bytes of each rail interface, space separated.
rail_bytes() {
	local host=$1 rails=$2 r out=()
	for ((r = 0; r < rails; r++)); do
		out+=("$("$TESTBED" exec "$host" sh -c \
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
	pair "$name, peer from fi_getinfo(node, service)" mrail "$rails" -N
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

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
pair "mrail over 2 tcp rails" mrail ''
by_node "mrail over 2 tcp rails" '' 2
# The same peer through fi_av_insertsvc, and fi_av_insertsym's order.
pair "mrail over 2 tcp rails, peer from fi_av_insertsvc" mrail '' -N -A
pair "mrail over tcp + udp rails" mrail 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1'
by_node "mrail over tcp + udp rails" 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' 2
"$TESTBED" up --hosts 2 --rails 4 >/dev/null || fail testbed "up failed"
pair "mrail over 4 tcp rails" mrail ''
by_node "mrail over 4 tcp rails" '' 4

finish
