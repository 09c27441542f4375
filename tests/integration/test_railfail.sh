#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Rail failover between two emulated hosts over 2 tcp;ofi_rxm rails; every
# run checks data byte for byte and counts completions exactly.
#  - mr1 down on one host from the start: mrail offers both rails all the
#    same, the rail starts failed there and fails on the other host once
#    nothing comes back on it, every test of fi_mrail_msg passes over the
#    rail that works, and each host reports (fi_mrail_msg -H, fi_control
#    FI_MRAIL_GET_PEER_RAILS) rail 1 up and rail 2 not. Then the link comes
#    back during a run, and rail 2 must be up again on both hosts.
#  - mr1 down while the rails are idle, then traffic (fi_mrail_msg -P).
#  - mr1 down mid-run on either host, eager sizes and then every size (and
#    with dynamic striping, whose transfers reserve rails): both hosts fail
#    the rail, and what it had not delivered goes again on rail 1.
#  - mr1 down and up every second for 20 s under the whole run; rail 2
#    losing 30% of its packets for the whole run.
#  - mr1 down under a stream of RMA writes (every byte checked at the
#    target), under RMA reads and writes of every kind (also with dynamic
#    striping), under 20000 fetch-and-adds (the target's word must come
#    out exact), and under a loop of offloaded barriers.
#  - both rails pulled under a stream: both sides end with an error, no
#    hang.
#  - a bad FI_MRAIL_RAIL_TIMEOUT fails fi_getinfo with a warning naming it.
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

# new_pair: the next control port and a log directory for one run_pair.
new_pair() {
	port=$((port + 2))
	PAIR_LOGS=$(mktemp -d "$TEST_LOGDIR/railfail.XXXXXX")
}

# rail2_state_in WHY STATE...: WHY with a complaint for each host whose -H
# line gives rail 2 a state not among the STATEs.
rail2_state_in() {
	local why=$1 h s2
	shift
	for h in server client; do
		s2=$(rail_health "$PAIR_LOGS/$h" 2)
		[[ " $* " == *" ${s2:-nothing} "* ]] ||
			why="${why:+$why; }$h reports rail 2 '${s2:-nothing}'"
	done
	echo "$why"
}

# add_sanitizer_reports WHY: WHY with the first sanitizer reports of the
# pair's logs appended, if there are any.
add_sanitizer_reports() {
	local reports
	reports=$(grep -hiE 'sanitizer|runtime error' "$PAIR_LOGS/server" \
		"$PAIR_LOGS/client" | head -2)
	echo "$1${reports:+${1:+; }$reports}"
}

# down_from_start NAME HOST: mr1 down on HOST before both sides start.
down_from_start() {
	local name=$1 host=$2 why= h s1 s2
	"$TESTBED" exec "$host" ip link set mr1 down
	new_pair
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
	why=$(add_sanitizer_reports "$why")
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
	local name="mr1 down on the server's host, back 5 s in" why= bg
	"$TESTBED" exec 1 ip link set mr1 down
	new_pair
	( sleep 5; "$TESTBED" exec 1 ip link set mr1 up ) &
	bg=$!
	run_pair "$name: fi_mrail_msg" 300 "$rails" "$msg_test" -E $port -H -I 60
	wait $bg
	"$TESTBED" exec 1 ip link set mr1 up
	why=$(rail2_state_in "$why" up)
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

# The link dies while the rails' connections are up and idle (fi_mrail_msg
# -P: both sides silent for 6 s after the ping-pong), then the traffic
# starts: every check passes, and rail 2 has failed on both hosts by the
# end (no traffic found it dead; the first messages on it, or the probe
# of a quiet rail, do).
idle_then_down() {
	local name="mr1 down on the server's host while idle, then traffic" why= bg
	new_pair
	( sleep 3; "$TESTBED" exec 1 ip link set mr1 down ) &
	bg=$!
	run_pair "$name: fi_mrail_msg -P 6" 300 "$rails" "$msg_test" -E $port -H -P 6
	wait $bg
	"$TESTBED" exec 1 ip link set mr1 up
	why=$(rail2_state_in "$why" failed probing)
	why=$(add_sanitizer_reports "$why")
	if [[ -z $why ]]; then
		pass "$name: rail 2 failed on both hosts"
	else
		fail "$name: rail health" "$why"
	fi
}
idle_then_down

# health_field LOG RAIL FIELD: a number from the -H line of a rail.
health_field() {
	sed -n "s/^rail health: $2 .* $3 \([0-9]*\).*/\1/p" "$1" | tail -n 1
}

# Link mr1 of HOST goes down DELAY s into a run of fi_mrail_msg (every
# check of which compares the data byte for byte and counts the
# completions); it comes back after the run. The run must pass on both
# sides, both must report rail 2 failed, and what was out on it must have
# gone again. DELAY has to fall while messages flow: the ordering checks
# that follow the first bursts leave the rails idle for seconds while the
# receiver posts its receives late on purpose.
mid_stream() {
	local name=$1 host=$2 delay=$3 why= h bg srv_reissued cli_reissued; shift 3
	new_pair
	( sleep "$delay"; "$TESTBED" exec "$host" ip link set mr1 down ) &
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
	srv_reissued=$(health_field "$PAIR_LOGS/server" 2 reissued)
	cli_reissued=$(health_field "$PAIR_LOGS/client" 2 reissued)
	(( ${srv_reissued:-0} + ${cli_reissued:-0} > 0 )) ||
		why="${why:+$why; }nothing was sent again"
	if [[ -z $why ]]; then
		pass "$name: rail 2 failed on both hosts, reissued $srv_reissued + $cli_reissued operations"
	else
		fail "$name: rail health" "$why"
	fi
}
# Eager sizes (sends and their copies: 2.5 s in, the first bursts are out;
# by 4 s they are done and the rails idle), then every size up to 1 MiB
# (rendezvous reads caught on the rail are read again on the other).
mid_stream "mr1 down on the server's host mid-run, eager sizes" 1 2.5 -S 16336 -I 200
mid_stream "mr1 down on the client's host mid-run, eager sizes" 2 2.5 -S 16336 -I 200
mid_stream "mr1 down on the server's host mid-run, every size" 1 4 -I 20
mid_stream "mr1 down on the client's host mid-run, every size" 2 4 -I 20
# Dynamic striping: each transfer reserves rails of the peer first. The
# rail's reservations with the peer end when it fails, and the reserved
# transfers' reads go again on the other rail, as without reservations.
FI_MRAIL_STRIPE_POLICY=dynamic \
	mid_stream "mr1 down on the server's host mid-run, every size, dynamic striping" 1 4 -I 20

# Flapping: mr1 of the server's host down and up every second for 20 s
# under the whole fi_mrail_msg run.
flapping() {
	local name="mr1 flapping on the server's host for 20 s" why= h bg failures recoveries
	new_pair
	( sleep 2
	  for _ in 1 2 3 4 5 6 7 8 9 10; do
		"$TESTBED" exec 1 ip link set mr1 down; sleep 1
		"$TESTBED" exec 1 ip link set mr1 up; sleep 1
	  done ) &
	bg=$!
	run_pair "$name: fi_mrail_msg" 300 "$rails" "$msg_test" -E $port -H -I 40
	wait $bg
	"$TESTBED" exec 1 ip link set mr1 up
	# A run that ended early printed no -H line: counted as 0.
	failures=$(health_field "$PAIR_LOGS/server" 2 failures)
	recoveries=$(health_field "$PAIR_LOGS/server" 2 recoveries)
	(( ${failures:-0} >= 2 && ${recoveries:-0} >= 2 )) ||
		why="the server saw rail 2 fail ${failures:-0} times and come back \
${recoveries:-0} times (2 or more each expected)"
	if [[ -z $why ]]; then
		pass "$name: rail 2 failed $(health_field "$PAIR_LOGS/server" 2 \
			failures) times and came back $(health_field "$PAIR_LOGS/server" \
			2 recoveries) on the server"
	else
		fail "$name: rail health" "$why"
	fi
}
flapping

# through_failure NAME DELAY CHECK SERVER_ARGS -- CLIENT_ARGS: PROG (the
# first server argument) on h1 for a client on h2, both over the 2 rails;
# DELAY s after the client starts, mr1 of h1 goes down for 4 s. Both must
# exit 0 within 300 s with no sanitizer report, the client's log must hold
# CHECK (an extended regular expression), and both must have failed rail 2.
through_failure() {
	local name=$1 delay=$2 check=$3 why= srv cli bg h prog
	shift 3
	local sargs=() cargs=()
	while [[ $1 != -- ]]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	prog=${sargs[0]}
	local run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails")
	PAIR_LOGS=$(mktemp -d "$TEST_LOGDIR/railfail.XXXXXX")
	timeout 300 "$TESTBED" exec 1 "${run[@]}" "${sargs[@]}" \
		>"$PAIR_LOGS/server" 2>&1 &
	srv=$!
	sleep 0.5
	( sleep "$delay"; "$TESTBED" exec 1 ip link set mr1 down
	  sleep 4; "$TESTBED" exec 1 ip link set mr1 up ) &
	bg=$!
	timeout 300 "$TESTBED" exec 2 "${run[@]}" "$prog" "${cargs[@]}" 198.18.1.1 \
		>"$PAIR_LOGS/client" 2>&1
	cli=$?
	wait $srv
	srv=$?
	wait $bg
	"$TESTBED" exec 1 ip link set mr1 up
	[[ $srv -eq 0 && $cli -eq 0 ]] || why="server exit $srv, client exit $cli"
	grep -qE "$check" "$PAIR_LOGS/client" ||
		why="${why:+$why; }the client's log lacks '$check'"
	for h in server client; do
		grep -q 'rail 2 (tcp;ofi_rxm@mr1) failed for peer' "$PAIR_LOGS/$h" ||
			why="${why:+$why; }no warning on the $h that rail 2 failed"
	done
	why=$(add_sanitizer_reports "$why")
	if [[ -z $why ]]; then
		pass "$name: $(grep -hE "$check" "$PAIR_LOGS/server" "$PAIR_LOGS/client" |
			sed 's/^fi_mrail_[a-z]*: //' | paste -sd ';' -)"
	else
		fail "$name" "$why: $(grep -hvE 'getinfo|OFI_MRAIL' "$PAIR_LOGS/server" \
			"$PAIR_LOGS/client" | tail -n 4)"
	fi
}

# 30% loss on rail 2 (ci/testbed rail 1 loss 30: each packet crossing it,
# either way, dropped with that chance) under the whole fi_mrail_msg run:
# tcp retransmits with growing timeouts, the rail stalls, is failed and
# comes back by turns; every check must pass.
lossy() {
	local name="rail 2 losing 30% of its packets"
	new_pair
	"$TESTBED" rail 1 loss 30 >/dev/null
	run_pair "$name: fi_mrail_msg" 300 "$rails" "$msg_test" -E $port -H &&
		note "$name: the server saw it fail $(health_field "$PAIR_LOGS/server" 2 \
			failures) times, the client $(health_field "$PAIR_LOGS/client" 2 failures)"
	"$TESTBED" rail 1 loss 0 >/dev/null
}
lossy

# RMA writes (fi_mrail_bw -r: the target checks every byte of every slot
# afterwards, the initiator counts its completions): the stripes a rail
# held are read again on the other, and the WRITE requests it had not
# delivered go again, run once at the target by their sequence numbers.
bw=$build/fabtests-ext/fi_mrail_bw
through_failure "mr1 down on the target's host under RMA writes of 4 KiB to 1 MiB" 1.5 \
	'mrail write 1048576 x 10000' \
	"$bw" -E $((port += 2)) -r -S 4k,64k,1m -n 10000 -- -E $port -r -S 4k,64k,1m -n 10000
# RMA reads and writes of every kind (fi_mrail_rma: each checked byte for
# byte, completions and counters counted at both ends), twelve rounds of
# 16 MiB transfers.
rma_sizes=16m,16m,16m,16m,16m,16m,16m,16m,16m,16m,16m,16m
rma_through_failure() { # NAME-SUFFIX (FI_MRAIL_* from the caller's environment)
	through_failure "mr1 down on the target's host under RMA reads and writes of 16 MiB$1" 1 \
		'fi_mrail_rma: ([0-9]+) of \1 checks passed' \
		"$build/fabtests-ext/fi_mrail_rma" -E $((port += 2)) -s $rma_sizes -- \
		-E $port -s $rma_sizes
}
rma_through_failure ""
# The same with dynamic striping: the reads that carry them reserve rails.
FI_MRAIL_STRIPE_POLICY=dynamic rma_through_failure ", dynamic striping"
# Fetch-and-add, one word of the target's: a request run twice or lost
# would leave the word off the count or the fetched values not strictly
# increasing (fi_mrail_atomic -C checks both). 20000 of them take about
# 20 s, well past the 4 s outage that starts 1.5 s in (60000 took 70 s of
# CI's time, 105 s under ASan).
atomic=$build/fabtests-ext/fi_mrail_atomic
fadds=${MRAIL_RAILFAIL_FADDS:-20000}
through_failure "mr1 down on the target's host under $fadds fetch-and-adds" 1.5 \
	"$fadds fetch-and-adds, last fetched $((fadds - 1))" \
	"$atomic" -E $((port += 2)) -C "$fadds" -k 1 -- -E $port -C "$fadds"
grep -q "final value $fadds\$" "$PAIR_LOGS/server" ||
	fail "fetch-and-adds through a rail failure: the target's word" \
		"$(grep -h 'final value' "$PAIR_LOGS/server" || echo 'no final value printed')"

# A loop of offloaded barriers (fi_barrier: mrail runs each as
# counter-chained triggered operations), rank 0 on h1 and rank 1 on h2:
# mr1 of h1 down 1.5 s in for 4 s. The signals the rail held go again on
# the other, each run once; both ranks must complete every barrier.
barrier_through_failure() {
	local name="mr1 down on one host under $1 offloaded barriers" dir r rc=0 why=
	local pids=() bg
	dir=$(mktemp -d "$TEST_LOGDIR/barrier.XXXXXX")
	for r in 0 1; do
		timeout 300 "$TESTBED" exec $((r + 1)) env FI_PROVIDER_PATH="$build/.libs" \
			LD_PRELOAD="${MRAIL_PRELOAD:-}" FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails" \
			"$build/fabtests-ext/fi_mrail_barrier" -n 2 -r $r -d "$dir" \
			-m offload -t lat -i "$1" >"$dir/rank$r.log" 2>&1 &
		pids+=($!)
	done
	( sleep 1.5; "$TESTBED" exec 1 ip link set mr1 down
	  sleep 4; "$TESTBED" exec 1 ip link set mr1 up ) &
	bg=$!
	for r in 0 1; do
		wait "${pids[$r]}" || { rc=$?; why="${why:+$why; }rank $r exit $rc"; }
	done
	wait $bg
	"$TESTBED" exec 1 ip link set mr1 up
	grep -q 'rail 2 (tcp;ofi_rxm@mr1) failed for peer' "$dir/rank0.log" ||
		why="${why:+$why; }no warning on h1 that rail 2 failed"
	for r in 0 1; do
		grep -q "^fi_mrail_barrier: rank $r test lat" "$dir/rank$r.log" ||
			why="${why:+$why; }rank $r printed no result"
	done
	if grep -qiE 'sanitizer|runtime error' "$dir"/rank*.log; then
		why="${why:+$why; }$(grep -hiE 'sanitizer|runtime error' "$dir"/rank*.log | head -2)"
	fi
	if [[ -z $why ]]; then
		pass "$name: both ranks completed them"
	else
		fail "$name" "$why: $(grep -hvE 'getinfo|OFI_MRAIL' "$dir"/rank*.log | tail -n 3)"
	fi
}
barrier_through_failure "${MRAIL_RAILFAIL_BARRIERS:-40000}"

# Both rails pulled (ci/testbed rail K down: every host loses both
# carriers) under a 1 MiB tagged stream, FI_MRAIL_PEER_TIMEOUT=3: each side
# finds every link of its own down for 3 s and fails what waits on the
# peer with FI_EHOSTUNREACH. Both must end with an error completion, well
# before fi_mrail_bw's 30 s watchdog, and neither may crash.
both_rails_down() {
	local name="both rails pulled under a 1 MiB tagged stream" why= srv cli start took h
	local run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails" FI_MRAIL_PEER_TIMEOUT=3)
	new_pair
	timeout 120 "$TESTBED" exec 1 "${run[@]}" "$bw" -T -S 1m -n 1000000 -E $port \
		>"$PAIR_LOGS/server" 2>&1 &
	srv=$!
	sleep 0.5
	timeout 120 "$TESTBED" exec 2 "${run[@]}" "$bw" -T -S 1m -n 1000000 -E $port \
		198.18.1.1 >"$PAIR_LOGS/client" 2>&1 &
	cli=$!
	sleep 3
	"$TESTBED" rail 0 down
	"$TESTBED" rail 1 down
	start=$SECONDS
	wait $cli
	cli=$?
	wait $srv
	srv=$?
	took=$((SECONDS - start))
	"$TESTBED" rail 0 up
	"$TESTBED" rail 1 up
	[[ $srv -ne 0 && $cli -ne 0 ]] || why="server exit $srv, client exit $cli"
	((took < 20)) || why="${why:+$why; }they ended $took s after the links went down"
	for h in server client; do
		grep -q 'error completion of a' "$PAIR_LOGS/$h" ||
			why="${why:+$why; }the $h reported no error completion"
		grep -q 'the link of every rail is down on this host' "$PAIR_LOGS/$h" ||
			why="${why:+$why; }no warning on the $h that every link is down"
		! grep -qE 'terminated with signal|Segmentation' "$PAIR_LOGS/$h" ||
			why="${why:+$why; }the $h crashed"
	done
	why=$(add_sanitizer_reports "$why")
	if [[ -z $why ]]; then
		pass "$name: both sides failed it $took s after the links went down ($(grep -ho \
			'error completion of a [a-z]*: [^(]*' "$PAIR_LOGS/server" | head -n 1 | sed 's/ *$//'))"
	else
		fail "$name" "$why: $(grep -hvE 'getinfo|OFI_MRAIL' "$PAIR_LOGS/server" \
			"$PAIR_LOGS/client" | tail -n 4)"
	fi
}
both_rails_down

bad_env_refused FI_MRAIL_RAIL_TIMEOUT 5 \
	"FI_MRAIL_RAIL_TIMEOUT: '5' is not a whole number of milliseconds from 10 to 60000"

finish
