#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2317 # helpers below run through check and retry
# Integration test of the emulated cluster (ci/testbed): building, reaching
# hosts, rail failures, shaping, loss, teardown and mpirun across hosts.
set -uo pipefail

# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tb() {
	"$TESTBED" "$@"
}

not() {
	! "$@"
}

# Tries CMD up to N times, a short pause apart (neighbour resolution after a
# link comes back up).
retry() {
	local n=$1 i
	shift
	for ((i = 1; i <= n; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

ping_once() {
	tb exec "$1" ping -c1 -W1 "$2"
}

link_names() {
	ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort
}

# ------------------------------------------------------------------ checks

check_refuses_without_root() {
	local name="refuses to run without root" dir out rc=0
	# A copy nobody can read, wherever the work tree lives.
	dir=$(mktemp -d)
	chmod 755 "$dir"
	cp "$TESTBED" "$dir/testbed"
	chmod 755 "$dir/testbed"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$dir/testbed" up --hosts 2 --rails 1 2>&1) || rc=$?
	rm -rf "$dir"
	if [[ $rc -eq 0 ]]; then
		fail "$name" "exit status 0 as uid 65534"
	elif [[ $out != *"must run as root (needs network namespaces)"* ]]; then
		fail "$name" "exit status $rc but message was: $out"
	else
		pass "$name"
	fi
}

check_usage_errors() {
	local name="usage errors name the bad argument" out rc=0
	out=$(tb up --hosts 9 --rails 1 2>&1) || rc=$?
	if [[ $rc -eq 0 || $out != *"--hosts '9'"* ]]; then
		fail "$name" "up --hosts 9: status $rc, said: $out"
		return
	fi
	rc=0
	out=$(tb up --hosts 2 --rails 2 --rate 100mbit,fast 2>&1) || rc=$?
	if [[ $rc -eq 0 || $out != *"'fast'"* ]]; then
		fail "$name" "up --rate 100mbit,fast: status $rc, said: $out"
		return
	fi
	rc=0
	out=$(tb frobnicate 2>&1) || rc=$?
	if [[ $rc -eq 0 || $out != *"'frobnicate'"* ]]; then
		fail "$name" "frobnicate: status $rc, said: $out"
		return
	fi
	pass "$name"
}

check_up_4x4() {
	local name="up --hosts 4 --rails 4 in under 10 s" t0 secs log=$TEST_LOGDIR/up4x4.log
	t0=$(now)
	if ! tb up --hosts 4 --rails 4 >"$log" 2>&1; then
		fail "$name" "up failed"
		show_log_tail "$log"
		return 1
	fi
	secs=$(elapsed "$t0")
	note "up --hosts 4 --rails 4 took $secs s"
	if awk -v s="$secs" 'BEGIN { exit !(s < 10) }'; then
		pass "$name"
	else
		fail "$name" "took $secs s"
	fi
}

# Every host has mr0..mr3 with 198.18.<k+1>.<h>/24, and no address outside
# 198.18.0.0/15 apart from loopback.
addresses_ok() {
	local hosts=$1 rails=$2 h k ns addrs bad=0
	for ((h = 1; h <= hosts; h++)); do
		ns=${MRAIL_TESTBED_NAME:-mrail}-h$h
		addrs=$(ip -n "$ns" -o addr show)
		for ((k = 0; k < rails; k++)); do
			if ! grep -qE "^[0-9]+: mr$k +inet 198\.18\.$((k + 1))\.$h/24 " <<<"$addrs"; then
				echo "h$h: mr$k lacks 198.18.$((k + 1)).$h/24"
				bad=1
			fi
		done
		if awk '$2 != "lo" && $3 ~ /^inet/ && $4 !~ /^198\.1[89]\./ { print; found = 1 }
			END { exit !found }' <<<"$addrs"; then
			echo "h$h: address outside 198.18.0.0/15"
			bad=1
		fi
	done
	return "$bad"
}

check_exec() {
	local name="exec passes exit status, stdin and hostname" out rc=0
	out=$(tb exec h3 sh -c 'hostname; exit 7' 2>&1) || rc=$?
	if [[ $rc -ne 7 || $out != h3 ]]; then
		fail "$name" "exec h3: status $rc (want 7), said '$out' (want h3)"
		return
	fi
	rc=0
	out=$(echo through-stdin | tb exec 2 sh -c 'cat; hostname') || rc=$?
	if [[ $rc -ne 0 || $out != $'through-stdin\nh2' ]]; then
		fail "$name" "exec 2: status $rc, said '$out'"
		return
	fi
	pass "$name"
}

check_rail_down_up() {
	check "rail 2 down" tb rail 2 down
	check "rail 2 down: h1 cannot reach h4 on rail 2" not ping_once h1 198.18.3.4
	check "rail 2 down: h1 still reaches h4 on rail 1" ping_once h1 198.18.2.4
	check "rail 2 up" tb rail 2 up
	check "rail 2 up: h1 reaches h4 on rail 2 again" retry 5 ping_once h1 198.18.3.4
}

leftovers() {
	local before=$1 bad=0
	local name=${MRAIL_TESTBED_NAME:-mrail}
	if ip netns list | grep -qE "^$name-(h[0-9]+|sw)( |$)"; then
		echo "namespaces left: $(ip netns list | grep -E "^$name-" | tr '\n' ' ')"
		bad=1
	fi
	if compgen -G "/etc/netns/$name-h*" >/dev/null; then
		echo "left: $(echo "/etc/netns/$name-h"*)"
		bad=1
	fi
	if [[ -e ${MRAIL_TESTBED_STATE:-/run/${MRAIL_TESTBED_NAME:-mrail}-testbed} ]]; then
		echo "state dir left"
		bad=1
	fi
	if command -v nft >/dev/null && nft list tables 2>/dev/null | grep -q mrail; then
		echo "nft tables left: $(nft list tables | grep mrail)"
		bad=1
	fi
	if ! diff <(echo "$before") <(link_names); then
		echo "links in the root namespace changed"
		bad=1
	fi
	return "$bad"
}

# Prints the receiver's TCP goodput in Mbit/s, h2 -> h1 over rail K, ~3 s.
iperf_mbit() {
	local k=$1 i log=$TEST_LOGDIR/iperf-rail$1.log
	local server=198.18.$((k + 1)).1 client=198.18.$((k + 1)).2
	tb exec h1 iperf3 -s -1 -D -B "$server" >"$log" 2>&1 || return 1
	for ((i = 0; i < 30; i++)); do
		tb exec h1 ss -Hltn "sport = :5201" | grep -q . && break
		sleep 0.1
	done
	tb exec h2 iperf3 -c "$server" -B "$client" -t 3 -f m >>"$log" 2>&1 || return 1
	awk '/receiver/ { for (i = 2; i <= NF; i++) if ($i == "Mbits/sec") print $(i - 1) }' "$log"
}

check_shaping() {
	local name log=$TEST_LOGDIR/up-shaped.log r0 r1
	if ! tb up --hosts 2 --rails 2 --rate 100mbit,1gbit >"$log" 2>&1; then
		fail "up --rate 100mbit,1gbit" "up failed"
		show_log_tail "$log"
		return
	fi
	name="rail 0 shaped to 100mbit measures 90..110 Mbit/s"
	r0=$(iperf_mbit 0)
	if [[ -z $r0 ]]; then
		fail "$name" "iperf3 failed"
		show_log_tail "$TEST_LOGDIR/iperf-rail0.log"
	else
		note "rail 0 (100mbit): $r0 Mbit/s TCP goodput"
		if awk -v r="$r0" 'BEGIN { exit !(r >= 90 && r <= 110) }'; then
			pass "$name"
		else
			fail "$name" "measured $r0 Mbit/s"
		fi
	fi
	name="rail 1 shaped to 1gbit measures clearly more than rail 0"
	r1=$(iperf_mbit 1)
	if [[ -z $r1 ]]; then
		fail "$name" "iperf3 failed"
		show_log_tail "$TEST_LOGDIR/iperf-rail1.log"
	else
		note "rail 1 (1gbit): $r1 Mbit/s TCP goodput"
		if awk -v a="$r1" -v b="${r0:-100}" 'BEGIN { exit !(a >= 3 * b) }'; then
			pass "$name"
		else
			fail "$name" "measured $r1 Mbit/s against ${r0:-?} on rail 0"
		fi
	fi
}

# Prints how many of COUNT pings from h1 to ADDR got no answer.
pings_lost() {
	local addr=$1 count=$2 out
	out=$(tb exec h1 ping -q -n -c "$count" -i 0.005 -W 1 "$addr" 2>&1) || true
	awk -v c="$count" '/packets transmitted/ { print c - $4; found = 1 } END { exit !found }' <<<"$out"
}

# Loss P applies once to every packet crossing the rail, so a ping round trip
# survives with (1 - P)^2: at 50% three pings in four are lost. With 200 pings
# the lost count is 150 +- 6; 120..180 fails by chance about once in 10^6,
# while no loss (0), one-way-only loss (~100) or loss applied twice per
# crossing (~188) fail almost always.
check_loss() {
	local name log=$TEST_LOGDIR/up-loss.log lost
	if ! tb up --hosts 2 --rails 2 --loss 0,50 >"$log" 2>&1; then
		fail "up --loss 0,50" "up failed"
		show_log_tail "$log"
		return
	fi
	name="rail 1 with --loss 50 loses 60..90% of 200 pings"
	lost=$(pings_lost 198.18.2.2 200)
	note "rail 1 at 50% loss: ${lost:-?} of 200 pings lost (expected 150)"
	if [[ -n $lost ]] && ((lost >= 120 && lost <= 180)); then
		pass "$name"
	else
		fail "$name" "${lost:-?} of 200 lost"
	fi
	name="rail 0 without loss loses no ping"
	lost=$(pings_lost 198.18.1.2 100)
	if [[ $lost == 0 ]]; then
		pass "$name"
	else
		fail "$name" "${lost:-?} of 100 lost"
	fi
	check "rail 1 loss 0" tb rail 1 loss 0
	name="rail 1 after loss 0 loses no ping"
	lost=$(pings_lost 198.18.2.2 100)
	if [[ $lost == 0 ]]; then
		pass "$name"
	else
		fail "$name" "${lost:-?} of 100 lost"
	fi
}

check_delay() {
	local name="--delay without netem fails with a clear message" out rc=0 t0 rtt
	t0=$(now)
	out=$(tb up --hosts 2 --rails 1 --delay 5ms 2>&1) || rc=$?
	if [[ $rc -ne 0 ]]; then
		note "--delay refused in $(elapsed "$t0") s: $out"
		if [[ $out == *netem* ]]; then
			pass "$name"
		else
			fail "$name" "no mention of netem: $out"
		fi
		return
	fi
	# This kernel has netem: the delay must show in the round trip.
	name="--delay 5ms lengthens the round trip"
	rtt=$(tb exec h1 ping -q -c 5 -i 0.2 198.18.1.2 | awk -F/ '/^rtt/ { print $5 }')
	note "--delay 5ms: average rtt ${rtt:-?} ms"
	if [[ -n $rtt ]] && awk -v r="$rtt" 'BEGIN { exit !(r >= 9) }'; then
		pass "$name"
	else
		fail "$name" "average rtt ${rtt:-?} ms"
	fi
}

two_hostnames() {
	local out
	out=$(tb mpirun -np 2 hostname) || return 1
	echo "$out"
	[[ $(sort <<<"$out") == $'h1\nh2' ]]
}

# ------------------------------------------------------------------- main

require_root
testbed_cleanup_on_exit
start=$(now)

check_refuses_without_root
check_usage_errors
tb down >/dev/null 2>&1 || true
links_before=$(link_names)

if check_up_4x4; then
	check "every host has mr0..mr3 with its 198.18 addresses" addresses_ok 4 4
	for k in 0 1 2 3; do
		check "h1 pings h4 on rail $k" ping_once h1 "198.18.$((k + 1)).4"
	done
	check_exec
	check_rail_down_up
fi
check "down" tb down
check "down leaves nothing behind" leftovers "$links_before"

check_shaping
check_loss
check_delay

check "up is idempotent (first up)" tb up --hosts 2 --rails 2
check "up is idempotent (second up)" tb up --hosts 2 --rails 2
check "second up left one cluster" test "$(ip netns list | grep -cE "^${MRAIL_TESTBED_NAME:-mrail}-(h[0-9]+|sw)( |$)")" -eq 3
check "mpirun -np 2 hostname prints h1 and h2" two_hostnames
check "down (first)" tb down
check "down (second, nothing up)" tb down
check "nothing left after the whole test" leftovers "$links_before"

note "test_testbed took $(elapsed "$start") s"
finish
