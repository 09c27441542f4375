#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Fabric, domain and address vector over the rails of emulated hosts: a peer's
# address from another host inserts into every rail's AV (fi_mrail_av checks
# lookup, straddr, batches, removal and refusals), and peers whose rails
# differ from ours are refused with a warning that says why.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
testbed=$here/../../ci/testbed
info_tool=$build/fabtests-ext/fi_mrail_info
av_test=$build/fabtests-ext/fi_mrail_av
service=4711
out=$(mktemp) err=$(mktemp)

testbed_cleanup_on_exit

# on HOST RAILS CMD...: runs CMD on an emulated host with FI_MRAIL_RAILS=RAILS
# (empty: discovery); stdout to $out, stderr to $err, status to $rc.
on() {
	local host=$1 rails=$2; shift 2
	"$testbed" exec "$host" env FI_PROVIDER_PATH="$build/.libs" \
		LD_PRELOAD="${MRAIL_PRELOAD:-}" FI_LOG_LEVEL=warn \
		${rails:+FI_MRAIL_RAILS="$rails"} "$@" >"$out" 2>"$err"
	rc=$?
}

address_of() { # HOST RAILS: the host's mrail address, bound to $service
	on "$1" "$2" "$info_tool" -s $service -x
	[ $rc -eq 0 ] && cat "$out"
}

# av_suite NAME HOSTS RAILS-UP RAILS-STRING: fi_mrail_av on h1 with h<last>'s
# address, for both AV types.
av_suite() {
	local name=$1 hosts=$2 rails=$3 config=$4 peer type
	"$testbed" up --hosts "$hosts" --rails "$rails" >/dev/null ||
		{ fail "$name: testbed" "up failed"; return; }
	peer=$(address_of "$hosts" "$config") ||
		{ fail "$name: peer address" "$(head -c 300 "$err")"; return; }
	for type in table map; do
		on 1 "$config" "$av_test" -a "$peer" -s $service -t $type
		if [ $rc -eq 0 ] && grep -qE '^fi_mrail_av: ([0-9]+) of \1 checks passed' "$out"; then
			pass "$name: AV ($type) over every rail: $(tail -n 1 "$out" | sed 's/fi_mrail_av: //')"
		else
			fail "$name: AV ($type) over every rail" "$(grep -E 'FAILED|checks' "$out" | head -5) $(grep -i sanitizer "$err" | head -3)"
		fi
	done
}

av_suite "2 tcp rails" 2 2 ''
av_suite "4 tcp rails" 4 4 ''
av_suite "tcp + udp rails" 2 2 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1'

# refused NAME H2-RAILS PATTERN: h1 (2 tcp rails) refuses h2's address when h2
# runs another rail configuration, and says why.
refused() {
	local peer
	peer=$(address_of 2 "$2") || { fail "$1" "no peer address: $(head -c 300 "$err")"; return; }
	on 1 '' "$av_test" -a "$peer" -s $service
	if [ $rc -ne 0 ] && grep -q 'FAILED: insert the peer' "$out" &&
	   grep -qE -- "$3" "$err"; then
		pass "$1"
	else
		fail "$1" "exit $rc: $(grep -E 'mrail:av' "$err" | head -3)"
	fi
}

"$testbed" up --hosts 2 --rails 2 >/dev/null || fail "testbed" "up failed"
refused "a peer with fewer rails is refused" 'tcp;ofi_rxm@mr0' \
	'cannot reach this endpoint.s rails: .*1 rail.*2'
refused "a peer with other stacks is refused" 'udp;ofi_rxd@mr0,tcp;ofi_rxm@mr1' \
	'cannot reach this endpoint.s rails: .*udp;ofi_rxd'

rm -f "$out" "$err"
finish
