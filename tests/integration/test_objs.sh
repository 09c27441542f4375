#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Counters, CQ wait objects, event queues, memory registration,
# fi_trywait, poll sets, scalable endpoints, every operation table (full,
# unsupported calls -FI_ENOSYS), fi_getinfo's answers to hints and the
# socket address format with an FI_EVENT AV over two rails: fi_mrail_objs
# checks each set of calls with exact values (counts, event bytes, keys,
# return codes, fd readability, waits woken from another thread). It needs
# no peer, so it runs in a
# private network namespace of its own, with two ports (a veth pair) made
# for it, and leaves the shared emulated cluster alone; run twice, on two
# tcp;ofi_rxm rails and on tcp;ofi_rxm + udp;ofi_rxd. The MR set also runs
# with info logging, to see that a duplicate key is refused by mrail itself
# (not by a rail) and that both rails took the application's keys. Last,
# a process exits ten times with an FI_PROGRESS_AUTO domain left open, and
# an endpoint whose fi_enable failed on one rail (its address taken away)
# is enabled again and works once the address is back.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
objs=$build/fabtests-ext/fi_mrail_objs
out=$(mktemp) err=$(mktemp)

# objs RAILS SET [LOG_LEVEL]: fi_mrail_objs -t SET over RAILS; stdout to
# $out, stderr to $err, status to $rc.
objs() {
	in_netns env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
		FI_LOG_LEVEL="${3:-warn}" FI_MRAIL_RAILS="$1" "$objs" -t "$2" \
		>"$out" 2>"$err"
	rc=$?
}

# suite NAME RAILS: every set of checks, one PASS or FAIL line each.
suite() {
	local name=$1 rails=$2 set
	for set in counters cq eq mr trywait poll sep ops getinfo sockaddr; do
		objs "$rails" $set
		if [ $rc -eq 0 ] && grep -qE '^fi_mrail_objs: ([0-9]+) of \1 checks passed' "$out"; then
			pass "$name: $set: $(tail -n 1 "$out" | sed 's/fi_mrail_objs: //')"
		else
			fail "$name: $set" "exit $rc: $(grep -E 'FAILED|checks' "$out" | head -8) $(grep -iE 'sanitizer|runtime error' "$err" | head -3) $(grep -vE '^libfabric:' "$err" | head -3)"
		fi
	done
}

suite "2 tcp rails" 'tcp;ofi_rxm@mo0,tcp;ofi_rxm@mo1'
suite "tcp + udp rails" 'tcp;ofi_rxm@mo0,udp;ofi_rxd@mo1'

# keys RAILS: the MR set with info logging.
keys() {
	local name="$1: a duplicate key is refused by mrail, before any rail"
	objs "$2" mr info
	if [ $rc -eq 0 ] && grep -q 'mrail:mr:.*key 0x1001 is already in use in this domain' "$err" &&
	   ! grep -q 'mrail:mr:.*cannot register' "$err"; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(grep -E 'mrail:mr:' "$err" | head -4)"
	fi
	name="$1: every rail took the application's keys (no key translation)"
	if [ $rc -eq 0 ] && grep -q 'mrail:mr:' "$err" && ! grep -q 'key translation' "$err"; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(grep -E 'key translation' "$err" | head -3)"
	fi
}

keys "2 tcp rails" 'tcp;ofi_rxm@mo0,tcp;ofi_rxm@mo1'
keys "tcp + udp rails" 'tcp;ofi_rxm@mo0,udp;ofi_rxd@mo1'

# exit_open NAME RAILS: fi_mrail_objs -t exit, 10 times: a process that
# exits with an FI_PROGRESS_AUTO domain open (libfabric unloads mrail at
# exit) must exit cleanly every time. Unstopped progress threads crashed
# 6 of 40 such exits: 5 of 20 under ASan, where dlclose really unmaps.
exit_open() {
	local name="$1: exit with an FI_PROGRESS_AUTO domain open, 10 times" i bad=0 why=
	for ((i = 0; i < 10; i++)); do
		objs "$2" exit
		if [ $rc -ne 0 ] || ! grep -qE '^fi_mrail_objs: ([0-9]+) of \1 checks passed' "$out"; then
			bad=$((bad + 1))
			why="exit $rc: $(grep -E 'FAILED|checks' "$out" | head -3) $(grep -iE 'sanitizer|signal|runtime error' "$err" | head -2)"
		fi
	done
	if [ $bad -eq 0 ]; then
		pass "$name: $(tail -n 1 "$out" | sed 's/fi_mrail_objs: //') each time"
	else
		fail "$name" "$bad of 10 failed; last: $why"
	fi
}

# enable_retry NAME RAILS: fi_mrail_objs -t enable, the second rail's
# address taken away before the endpoint's first fi_enable and given back
# before its second. The first must fail and close the rail it had opened,
# the second must succeed and the endpoint carry a message.
enable_retry() {
	local name=$1 rails=$2
	in_netns env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
		FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails" OUT="$out" bash -c '
		fifo=$(mktemp -u) && mkfifo "$fifo" || exit 2
		"$1" -t enable <"$fifo" >"$OUT" &
		exec 3>"$fifo"
		said() {
			for _ in $(seq 300); do
				grep -q "^enable: $1" "$OUT" && return 0
				sleep 0.1
			done
			return 1
		}
		said ready && ip addr del 198.18.251.1/24 dev mo1 && echo go >&3 &&
			said refused && ip addr add 198.18.251.1/24 dev mo1 && echo go >&3 &&
			said enabled && ss -Hltn | wc -l >"$OUT.listeners" && echo go >&3
		exec 3>&-
		wait $!' in_netns_enable "$objs" 2>"$err"
	rc=$?
	listeners=$(cat "$out.listeners" 2>/dev/null)
	rm -f "$out.listeners"
	if [ $rc -eq 0 ] && grep -qE '^fi_mrail_objs: ([0-9]+) of \1 checks passed' "$out" &&
	   grep -q 'rail 2 (.*): cannot enable its endpoint' "$err" && [ "$listeners" = 2 ]; then
		pass "$name: $(tail -n 1 "$out" | sed 's/fi_mrail_objs: //'); rail 2's failure named in the log; 2 listening sockets, one per rail"
	else
		fail "$name" "exit $rc, ${listeners:-no} listening sockets (2 expected, one per rail): $(grep -E 'FAILED|checks|enable:' "$out" | head -8) $(grep -vE '^libfabric:.*fi_getinfo' "$err" | head -4)"
	fi
}

enable_retry "fi_enable fails on a rail, then succeeds: 2 tcp rails" \
	'tcp;ofi_rxm@mo0,tcp;ofi_rxm@mo1'

exit_open "2 tcp rails" 'tcp;ofi_rxm@mo0,tcp;ofi_rxm@mo1'
exit_open "tcp + udp rails" 'tcp;ofi_rxm@mo0,udp;ofi_rxd@mo1'

rm -f "$out" "$err"
finish
