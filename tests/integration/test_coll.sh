#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Collectives across emulated hosts: fi_mrail_coll with N processes (2 to
# 16, powers of two and not) spread round-robin over 2 to 4 hosts with two
# rails, for every barrier algorithm (FI_MRAIL_BARRIER): join, barriers with
# one process entering 200 ms late (none may leave before it entered),
# broadcasts and allreduces checked element by element. FI_PROGRESS_AUTO,
# one manual-progress run, one with rendezvous sends around the ring
# during the barriers (-B, data checked), one over a tcp and a udp rail, a
# group of one,
# and a bad FI_MRAIL_BARRIER. Processes sleep in fi_cq_sread/fi_eq_sread.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
# COLL_QUICK=1 runs every algorithm at N = 3 and 8 only (ci/test, debug build).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
prog=$build/fabtests-ext/fi_mrail_coll

testbed_cleanup_on_exit

# run NAME HOSTS N ALG LATE [ARGS...]: N processes over HOSTS hosts, with
# FI_MRAIL_RAILS=$rails when set (else discovery: two tcp rails).
rails=
run() {
	local name=$1 hosts=$2 n=$3 alg=$4 late=$5 i host dir pids=() rc=0 bad=0
	shift 5
	dir=$(mktemp -d "$TEST_LOGDIR/run.XXXXXX")
	for ((i = 0; i < n; i++)); do
		host=$((i % hosts + 1))
		timeout 240 "$TESTBED" exec "$host" env \
			FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
			FI_LOG_LEVEL=warn FI_MRAIL_BARRIER="$alg" ${rails:+FI_MRAIL_RAILS="$rails"} \
			"$prog" -n "$n" -i "$i" -d "$dir" -L "$late" "$@" \
			>"$dir/out.$i" 2>&1 &
		pids+=($!)
	done
	for ((i = 0; i < n; i++)); do
		wait "${pids[$i]}" || rc=$?
		grep -qE '^fi_mrail_coll: ([0-9]+) of \1 checks passed' "$dir/out.$i" ||
			bad=$((bad + 1))
	done
	if [[ $rc -eq 0 && $bad -eq 0 ]]; then
		pass "$name: $(grep -h 'checks passed' "$dir/out.0" | sed 's/^fi_mrail_coll: //') each; $(grep -h "waited" "$dir/out.$late" | sed 's/^fi_mrail_coll: //')"
	else
		fail "$name" "$bad of $n processes failed (exit $rc): $(grep -hE \
			'FAIL|rror|sanitizer|signal|early|left' "$dir"/out.* | sort | uniq -c | head -8)"
	fi
}

algs=(dissemination pairwise gather gather:3)
if [[ ${COLL_QUICK:-0} = 1 ]]; then
	sizes=(3 8)
else
	sizes=(2 3 4 5 7 8 12 16)
fi

"$TESTBED" up --hosts 4 --rails 2 >/dev/null || { fail testbed "up failed"; finish; }
for alg in "${algs[@]}"; do
	for n in "${sizes[@]}"; do
		hosts=$(( n < 4 ? n : 4 ))
		(( n == 3 )) && hosts=2
		late=$(( (n * 2 + 1) / 3 % n ))
		run "$alg, N=$n over $hosts hosts, process $late late" "$hosts" "$n" "$alg" "$late"
	done
done
run "dissemination, N=6 over 3 hosts, manual progress" 3 6 dissemination 5 -m
run "pairwise, N=1 (a group of one)" 1 1 pairwise 0
run "dissemination, N=8 over 4 hosts, 8 MiB of sends per process during the barriers" 4 8 dissemination 5 -B 1024
rails='tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1'
run "pairwise, N=8 over 4 hosts, tcp + udp rails" 4 8 pairwise 6
rails=

# A bad FI_MRAIL_BARRIER fails the join with a warning naming the value.
dir=$(mktemp -d "$TEST_LOGDIR/bad.XXXXXX")
timeout 60 "$TESTBED" exec 1 env FI_PROVIDER_PATH="$build/.libs" \
	LD_PRELOAD="${MRAIL_PRELOAD:-}" FI_LOG_LEVEL=warn FI_MRAIL_BARRIER=gather:99 \
	"$prog" -n 1 -i 0 -d "$dir" >"$dir/out" 2>&1
rc=$?
if [[ $rc -eq 2 ]] && grep -q 'FI_MRAIL_BARRIER=gather:99: the gather tree degree' "$dir/out" &&
   grep -q 'fi_join_collective: Invalid argument' "$dir/out"; then
	pass "FI_MRAIL_BARRIER=gather:99: the join fails with -FI_EINVAL and says why"
else
	fail "FI_MRAIL_BARRIER=gather:99" "exit $rc: $(tail -n 3 "$dir/out")"
fi

finish
