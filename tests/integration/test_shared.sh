#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared transmit and receive contexts: fi_mrail_shared in one process
# (four endpoints on one fi_stx_context, two senders to two receivers that
# share one fi_srx_context, one AV; unexpected and expected messages) on 2
# tcp rails and on tcp + udp rails, each in a network namespace of its own
# with two veth ends as the rails (as test_objs.sh). Then named AVs shared
# between processes: fi_mrail_named_av (a writer, a reader that opens the
# AV with FI_READ and sends to map_addr entries, a receiver) on the same,
# and a named AV whose writer crashed, taken over by a new writer.
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

# crashed_writer NAME RAILS: a writer that crashed leaves its named AV
# behind, and a new writer of the name takes it over, whatever the dead
# writer's process id names here. The crashing writer runs as process 2 of
# a PID namespace of its own (a container, or ci/ssh-standin's hosts): out
# here, process 2 is the kernel's kthreadd, alive, so a check by process id
# would refuse the name for good.
crashed_writer() {
	local name=$1 rails=$2 av=fi_mrail_named_av.crashed.$$ region pid rc
	local run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails")
	region=/dev/shm/mrail_av.$(id -u).$av
	in_netns unshare --pid --fork --kill-child -- sh -c '"$@"; true' sh \
		"${run[@]}" "$named_tool" -k "$av" >"$out" 2>"$err"
	pid=$(od -An -t d4 -j 20 -N 4 "$region" 2>/dev/null | tr -d ' ')
	if [ -z "$pid" ] || ! grep -q 'now dying' "$out"; then
		fail "$name" "the crashing writer left no region: $(head -c 300 "$out" "$err")"
		rm -f "$region"
		return
	fi
	if [ "$pid" -gt 10 ] || ! kill -0 "$pid" 2>/dev/null; then
		fail "$name" "the dead writer's id $pid names no live process here: no test"
		rm -f "$region"
		return
	fi
	in_netns "${run[@]}" "$named_tool" -t "$av" >"$out" 2>"$err"
	rc=$?
	if [ $rc -eq 0 ] && grep -qE '^fi_mrail_named_av\[takeover\]: ([0-9]+) of \1 checks passed' "$out" &&
	   [ ! -e "$region" ]; then
		pass "$name: taken over (the dead writer was process $pid of its namespace)"
	else
		fail "$name" "exit $rc: $(grep -E 'FAILED|checks' "$out" | head -4) $(grep -iE 'warn|sanitizer' "$err" | head -3)"
	fi
	rm -f "$region"
}

crashed_writer "named AV of a writer that crashed in another PID namespace" \
	'tcp;ofi_rxm@mo0,tcp;ofi_rxm@mo1'

rm -f "$out" "$err"
finish
