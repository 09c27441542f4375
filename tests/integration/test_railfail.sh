#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A rail whose link is down from the start, on one host of two: mrail offers
# both rails all the same, the rail starts failed on that host and fails on
# the other once nothing comes back on it, and every message test of
# fi_mrail_msg (data byte for byte, exact completion counts, eager and
# rendezvous sizes up to 1 MiB) passes over the rail that works. Each host
# then reports (fi_mrail_msg -H, fi_control FI_MRAIL_GET_PEER_RAILS) rail 1
# up and rail 2 not. Then the link comes back while both processes run a
# second time, and rail 2 must be up again on both hosts. Then the link
# dies mid-run, on either host (eager sizes): every check passes, both
# hosts fail the rail, and what it had not delivered goes again on rail 1.
# Then the link flaps (down and up every second for 20 s) under the whole
# run, every size. And a bad FI_MRAIL_RAIL_TIMEOUT fails fi_getinfo with a
# warning naming it.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
msg_test=$build/fabtests-ext/fi_mrail_msg
require_built "$msg_test"
rails='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1'
port=47740

testbed_cleanup_on_exit
"$TESTBED" up --hosts 2 --rails 2 >"$TEST_LOGDIR/railfail-testbed.log" 2>&1 ||
	{ fail "testbed up" "$(tail -3 "$TEST_LOGDIR/railfail-testbed.log")"; finish; }

# rail_health LOG RAIL: the state fi_mrail_msg -H printed for that rail.
rail_health() {
	sed -n "s/^rail health: $2 \([a-z]*\) .*/\1/p" "$1" | tail -n 1
}

# down_from_start NAME HOST: mr1 down on HOST before both sides start.
down_from_start() {
	local name=$1 host=$2 why= h s1 s2
	"$TESTBED" exec "$host" ip link set mr1 down
	port=$((port + 2))
	PAIR_LOGS=$(mktemp -d "$TEST_LOGDIR/railfail.XXXXXX")
	run_pair "$name: fi_mrail_msg" 300 "$rails" "$msg_test" -E $port -H -I 4
	"$TESTBED" exec "$host" ip link set mr1 up
	local down_log=$PAIR_LOGS/server
	[[ $host == 2 ]] && down_log=$PAIR_LOGS/client
	grep -q 'rail 2 .*interface mr1 (198.18.2.[12]) is down: the rail starts failed' \
		"$down_log" || why="no warning that mr1 is down on h$host"
	for h in server client; do
		s1=$(rail_health "$PAIR_LOGS/$h" 1)
		s2=$(rail_health "$PAIR_LOGS/$h" 2)
		[[ $s1 == up && ( $s2 == failed || $s2 == probing ) ]] ||
			why="${why:+$why; }$h reports rail 1 '${s1:-nothing}', rail 2 '${s2:-nothing}'"
	done
	if grep -qiE 'sanitizer|runtime error' "$PAIR_LOGS/server" "$PAIR_LOGS/client"; then
		why="${why:+$why; }$(grep -hiE 'sanitizer|runtime error' \
			"$PAIR_LOGS/server" "$PAIR_LOGS/client" | head -2)"
	fi
	if [[ -z $why ]]; then
		pass "$name: the rail starts failed on h$host, fails on the other host, 1 up and 2 not on both"
	else
		fail "$name: rail health" "$why"
	fi
}

down_from_start "mr1 down on the server's host from the start" 1
down_from_start "mr1 down on the client's host from the start" 2

# The link comes back while the tests run: 10 s in, rail 2's probes find it
# and it carries traffic again. fi_mrail_msg with more iterations keeps
# both sides busy long enough.
comes_back() {
	local name="mr1 down on the server's host, back 5 s in" why= h s2 bg
	"$TESTBED" exec 1 ip link set mr1 down
	port=$((port + 2))
	PAIR_LOGS=$(mktemp -d "$TEST_LOGDIR/railfail.XXXXXX")
	( sleep 5; "$TESTBED" exec 1 ip link set mr1 up ) &
	bg=$!
	run_pair "$name: fi_mrail_msg" 300 "$rails" "$msg_test" -E $port -H -I 60
	wait $bg
	"$TESTBED" exec 1 ip link set mr1 up
	for h in server client; do
		s2=$(rail_health "$PAIR_LOGS/$h" 2)
		[[ $s2 == up ]] || why="${why:+$why; }$h reports rail 2 '${s2:-nothing}'"
	done
	grep -q 'rail 2 (tcp;ofi_rxm@mr1) is back for peer' "$PAIR_LOGS/server" ||
		why="${why:+$why; }no warning on the server that rail 2 is back"
	if [[ -z $why ]]; then
		pass "$name: rail 2 back and up on both hosts"
	else
		fail "$name: rail health" "$why (the run took $(grep -ho 'in [0-9.]* s' \
			"$PAIR_LOGS/client" | tail -1))"
	fi
}
comes_back

# health_field LOG RAIL FIELD: a number from the -H line of a rail.
health_field() {
	sed -n "s/^rail health: $2 .* $3 \([0-9]*\).*/\1/p" "$1" | tail -n 1
}

# Link mr1 of host goes down 4 s into a run of fi_mrail_msg (every check of
# which compares the data byte for byte and counts the completions); it
# comes back after the run. The run must pass on both sides, both must
# report rail 2 failed, and what was out on it must have gone again.
mid_stream() {
	local name=$1 host=$2 why= h bg; shift 2
	port=$((port + 2))
	PAIR_LOGS=$(mktemp -d "$TEST_LOGDIR/railfail.XXXXXX")
	( sleep 4; "$TESTBED" exec "$host" ip link set mr1 down ) &
	bg=$!
	run_pair "$name: fi_mrail_msg $*" 300 "$rails" "$msg_test" -E $port -H "$@"
	wait $bg
	"$TESTBED" exec "$host" ip link set mr1 up
	for h in server client; do
		grep -q 'rail 2 (tcp;ofi_rxm@mr1) failed for peer' "$PAIR_LOGS/$h" ||
			why="${why:+$why; }no warning on the $h that rail 2 failed"
		[[ $(health_field "$PAIR_LOGS/$h" 1 failures) == 0 ]] ||
			why="${why:+$why; }the $h failed rail 1 too"
	done
	(( $(health_field "$PAIR_LOGS/server" 2 reissued) +
	   $(health_field "$PAIR_LOGS/client" 2 reissued) > 0 )) ||
		why="${why:+$why; }nothing was sent again"
	if [[ -z $why ]]; then
		pass "$name: rail 2 failed on both hosts, reissued $(health_field \
			"$PAIR_LOGS/server" 2 reissued) + $(health_field \
			"$PAIR_LOGS/client" 2 reissued) operations"
	else
		fail "$name: rail health" "$why"
	fi
}
# Eager sizes: a rendezvous read out on a rail whose link stays down waits
# for it (see RAIL FAILURE in fi_mrail(7)); the flapping test below has
# every size.
mid_stream "mr1 down on the server's host mid-run, eager sizes" 1 -S 16336 -I 200
mid_stream "mr1 down on the client's host mid-run, eager sizes" 2 -S 16336 -I 200

# Flapping: mr1 of the server's host down and up every second for 20 s
# under the whole fi_mrail_msg run.
flapping() {
	local name="mr1 flapping on the server's host for 20 s" why= h bg
	port=$((port + 2))
	PAIR_LOGS=$(mktemp -d "$TEST_LOGDIR/railfail.XXXXXX")
	( sleep 2
	  for _ in 1 2 3 4 5 6 7 8 9 10; do
		"$TESTBED" exec 1 ip link set mr1 down; sleep 1
		"$TESTBED" exec 1 ip link set mr1 up; sleep 1
	  done ) &
	bg=$!
	run_pair "$name: fi_mrail_msg" 300 "$rails" "$msg_test" -E $port -H -I 40
	wait $bg
	"$TESTBED" exec 1 ip link set mr1 up
	(( $(health_field "$PAIR_LOGS/server" 2 failures) >= 2 &&
	   $(health_field "$PAIR_LOGS/server" 2 recoveries) >= 2 )) ||
		why="the server saw rail 2 fail $(health_field "$PAIR_LOGS/server" \
			2 failures) and come back $(health_field "$PAIR_LOGS/server" \
			2 recoveries) times (2 or more each expected)"
	if [[ -z $why ]]; then
		pass "$name: rail 2 failed $(health_field "$PAIR_LOGS/server" 2 \
			failures) times and came back $(health_field "$PAIR_LOGS/server" \
			2 recoveries) on the server"
	else
		fail "$name: rail health" "$why"
	fi
}
flapping

bad_env_refused FI_MRAIL_RAIL_TIMEOUT 5 \
	"FI_MRAIL_RAIL_TIMEOUT: '5' is not a whole number of milliseconds from 10 to 60000"

finish
