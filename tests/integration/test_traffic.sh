#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Synthetic traffic (fabtests-ext/fi_mrail_traffic) on 4 emulated hosts with
# two rails shaped to 1 Gbit/s. Every run checks each message's header and
# bytes and that each rank received exactly the messages each peer says it
# sent (exit 0 and errors=0 on every rank); on top of that:
#   - the closed case: 4 hosts, uniform, 0.1 Gbit/s per host of 16 KiB mean
#     messages (a tenth of one rail): the sum over hosts of accepted is the
#     sum of offered within 5 %, and the offered sum is the asked 0.4 Gbit/s
#     within 15 % (the draws are random; 4 s hold ~12000 messages);
#   - bitrev, 8 processes on the 4 hosts: ranks 0, 2, 5 and 7 (palindromes
#     of 3 bits) send and receive nothing, every other rank receives exactly
#     what its image sent;
#   - complement over the bare tcp;ofi_rxm on one rail (the baseline runs);
#   - bad options end with exit 2 and say which option and why.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
prog=$build/fabtests-ext/fi_mrail_traffic
require_built "$prog"

testbed_cleanup_on_exit

# traffic N HOSTS [VAR=VALUE...] -- ARGS...: N ranks round-robin over HOSTS
# hosts; sets $dir (out.R per rank) and $failed (ranks that exited non-zero
# or reported errors, with their exit status).
dir=
failed=
traffic() {
	local n=$1 hosts=$2 r rc pids=() vars=()
	shift 2
	while [[ $# -gt 0 && $1 != -- ]]; do vars+=("$1"); shift; done
	shift
	dir=$(mktemp -d "$TEST_LOGDIR/run.XXXXXX")
	failed=
	mkdir -p "$dir/meet"
	for ((r = 0; r < n; r++)); do
		timeout 90 "$TESTBED" exec $((r % hosts + 1)) env \
			FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
			FI_LOG_LEVEL=warn "${vars[@]}" \
			"$prog" -n "$n" -r "$r" -d "$dir/meet" "$@" >"$dir/out.$r" 2>&1 &
		pids+=($!)
	done
	for ((r = 0; r < n; r++)); do
		wait "${pids[$r]}"
		rc=$?
		if [[ $rc -ne 0 ]] || ! grep -q '^RESULT .* errors=0$' "$dir/out.$r"; then
			failed+=" rank $r (exit $rc)"
		fi
	done
}

# field RANK KEY: KEY's value in rank RANK's RESULT line.
field() {
	sed -n "s/^RESULT .* $2=\([^ ]*\).*/\1/p" "$dir/out.$1"
}

# why: the lines the failed ranks printed about it.
why() {
	grep -hE 'fi_mrail_traffic: rank [0-9]+:|fi_mrail_traffic: [^r]|sanitizer|rror' \
		"$dir"/out.* | sort | uniq -c | head -6
}

"$TESTBED" up --hosts 4 --rails 2 --rate 1gbit >/dev/null || { fail testbed "up failed"; finish; }

# (1) The closed case.
name="uniform, 4 hosts at 0.1 Gbit/s each, 16 KiB mean, 4 s"
traffic 4 4 -- -P uniform -l 0.1 -s 16k -t 4
if [[ -n $failed ]]; then
	fail "$name" "failed:$failed: $(why)"
else
	read -r offered accepted sent recv < <(for r in 0 1 2 3; do
		echo "$(field $r offered_gbps) $(field $r accepted_gbps)" \
			"$(field $r sent_msgs) $(field $r recv_msgs)"
	done | awk '{ o += $1; a += $2; s += $3; m += $4 } END { print o, a, s, m }')
	verdict=$(awk -v o="$offered" -v a="$accepted" 'BEGIN {
		d = (a - o) / o; if (d < 0) d = -d
		if (d > 0.05) { printf "accepted %.4f is %.1f%% off offered %.4f", a, 100 * d, o; exit }
		d = (o - 0.4) / 0.4; if (d < 0) d = -d
		if (d > 0.15) printf "offered %.4f is %.1f%% off the asked 0.4", o, 100 * d }')
	if [[ $sent != "$recv" ]]; then
		fail "$name" "$sent messages sent, $recv received"
	elif [[ -n $verdict ]]; then
		fail "$name" "$verdict Gbit/s"
	else
		pass "$name: sum offered $offered, accepted $accepted Gbit/s, $recv messages checked"
		note "latency p50/p99 (us) by rank: $(for r in 0 1 2 3; do
			echo -n "$(field $r lat_us_p50)/$(field $r lat_us_p99) "; done)"
	fi
fi

# (2) A permutation with fixed points, two processes per host.
name="bitrev, 8 processes on 4 hosts, 2 s"
traffic 8 4 -- -P bitrev -l 0.1 -s 16k -t 2
if [[ -n $failed ]]; then
	fail "$name" "failed:$failed: $(why)"
else
	bad=
	for r in 0 1 2 3 4 5 6 7; do
		# The 3 bits of r reversed; bitrev is its own inverse.
		image=$(( (r & 1) << 2 | (r & 2) | (r & 4) >> 2 ))
		s=$(field $r sent_msgs)
		m=$(field $r recv_msgs)
		if [[ $image -eq $r ]]; then
			[[ $s == 0 && $m == 0 ]] || bad+=" rank $r (fixed) sent $s received $m;"
		else
			[[ $s -gt 0 && $m == "$(field $image sent_msgs)" ]] ||
				bad+=" rank $r sent $s, received $m of rank $image's $(field $image sent_msgs);"
		fi
	done
	if [[ -n $bad ]]; then
		fail "$name" "$bad"
	else
		pass "$name: ranks 0 2 5 7 sent nothing, the others $(field 1 sent_msgs) $(field 3 sent_msgs) $(field 4 sent_msgs) $(field 6 sent_msgs) messages, all received exactly"
	fi
fi

# (3) The bare core provider, for baselines.
name="complement over tcp;ofi_rxm on mr0, 4 hosts, 2 s"
traffic 4 4 FI_TCP_IFACE=mr0 FI_PROVIDER='tcp;ofi_rxm' -- -P complement -l 0.1 -t 2
if [[ -n $failed ]]; then
	fail "$name" "failed:$failed: $(why)"
elif [[ $(field 0 provider) != 'tcp;ofi_rxm' || $(field 0 sent_msgs) -eq 0 ||
	$(field 0 recv_msgs) != "$(field 3 sent_msgs)" ]]; then
	fail "$name" "$(grep -h '^RESULT' "$dir/out.0")"
else
	pass "$name: rank 0 sent $(field 0 sent_msgs), received $(field 0 recv_msgs) from rank 3"
fi

# (4) Bad options: exit 2 and a line naming the option.
bad_option() { # name expected-text args...
	local name=$1 want=$2 out rc
	shift 2
	out=$("$prog" "$@" 2>&1 >/dev/null)
	rc=$?
	if [[ $rc -eq 2 ]] && grep -qF -- "$want" <<<"$out"; then
		pass "$name: exit 2, \"$(head -n 1 <<<"$out")\""
	else
		fail "$name" "exit $rc, said: $(head -n 2 <<<"$out")"
	fi
}
bad_option "an unknown pattern" "-P bitreverse: no such pattern" \
	-n 4 -r 0 -d /nonexistent -P bitreverse
bad_option "hosts not a power of two" "-n 6: the hosts are a power of two" \
	-n 6 -r 0 -d /nonexistent
bad_option "a negative load" "-l -1: the load is Gbit/s" -n 4 -r 0 -d /nonexistent -l -1
bad_option "a rank beyond N" "-r 4: a rank is below N" -n 4 -r 4 -d /nonexistent

finish
