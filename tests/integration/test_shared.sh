#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared transmit and receive contexts: fi_mrail_shared in one process
# (four endpoints on one fi_stx_context, two senders to two receivers that
# share one fi_srx_context, one AV; unexpected and expected messages) on 2
# tcp rails and on tcp + udp rails, each in a network namespace of its own
# with two veth ends as the rails (as test_objs.sh). Then named AVs shared
# between processes: fi_mrail_named_av (a writer, a reader that opens the
# AV with FI_READ and sends to map_addr entries, a receiver) on the same.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
tool=$build/fabtests-ext/fi_mrail_shared
named_tool=$build/fabtests-ext/fi_mrail_named_av
out=$(mktemp) err=$(mktemp)

shared() { # name rails [tool options]
	local name=$1 rails=$2 rc
	shift 2
	in_netns env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
		FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails" "$tool" "$@" >"$out" 2>"$err"
	rc=$?
	if [ $rc -eq 0 ] && grep -qE '^fi_mrail_shared: ([0-9]+) of \1 checks passed' "$out"; then
		pass "$name: $(tail -n 1 "$out" | sed 's/fi_mrail_shared: //')"
	else
		fail "$name" "exit $rc: $(grep -E 'FAILED|checks' "$out" | head -8) $(grep -iE 'sanitizer|runtime error' "$err" | head -3)"
	fi
}

shared "shared contexts, 2 tcp rails" 'tcp;ofi_rxm@mo0,tcp;ofi_rxm@mo1' -n 32
shared "shared contexts, tcp + udp rails" 'tcp;ofi_rxm@mo0,udp;ofi_rxd@mo1' -n 16

# named NAME RAILS: fi_mrail_named_av's three processes each pass every
# check, and the named AV leaves nothing behind in /dev/shm.
named() {
	local name=$1 rails=$2 rc
	in_netns env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
		FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails" "$named_tool" \
		-a 198.18.250.1 -n 32 >"$out" 2>"$err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(grep -cE '^fi_mrail_named_av\[[a-z]+\]: ([0-9]+) of \1 checks passed' "$out")" -eq 3 ] &&
	   grep -q '^fi_mrail_named_av: all processes passed' "$out"; then
		pass "$name: $(grep -E '^fi_mrail_named_av\[' "$out" | sed 's/fi_mrail_named_av//' | tr '\n' ' ')"
	else
		fail "$name" "exit $rc: $(grep -E 'FAILED|checks|status' "$out" "$err" | head -8) $(grep -iE 'sanitizer|runtime error' "$err" | head -3)"
	fi
	if compgen -G "/dev/shm/mrail_av.$(id -u).fi_mrail_named_av.*" >/dev/null; then
		fail "$name: nothing left in /dev/shm" "$(ls /dev/shm | grep mrail_av | head -3)"
		rm -f /dev/shm/mrail_av."$(id -u)".fi_mrail_named_av.*
	fi
}

named "named AV shared by processes, 2 tcp rails" 'tcp;ofi_rxm@mo0,tcp;ofi_rxm@mo1'
named "named AV shared by processes, tcp + udp rails" 'tcp;ofi_rxm@mo0,udp;ofi_rxd@mo1'

rm -f "$out" "$err"
finish
