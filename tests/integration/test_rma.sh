#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# FI_RMA between emulated hosts over mrail's rails: fi_mrail_rma runs every
# RMA operation (write, writev, writemsg, inject_write, writedata,
# inject_writedata, read, readv, readmsg) at sizes 0 B to 8 MiB, a write
# followed by a fenced read, and refused accesses (past the end, unknown
# key, region without the access), then writes and reads through a second
# AV entry for the target, checking data and guards byte for byte
# at both ends, exact completions, counters and remote CQ data. Run on 2
# and 4 tcp;ofi_rxm rails and on tcp;ofi_rxm + udp;ofi_rxd. The target's
# per-interface byte counters prove the large transfers were striped over
# every rail.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
rma_test=$build/fabtests-ext/fi_mrail_rma
port=47610

testbed_cleanup_on_exit

# Bytes received plus sent on interface mr<K> of host 1.
rail_bytes() { # rail
	"$TESTBED" exec 1 cat /sys/class/net/mr"$1"/statistics/rx_bytes \
		/sys/class/net/mr"$1"/statistics/tx_bytes | awk '{ s += $1 } END { print s }'
}

# pair NAME RAILS RAIL_COUNT [SECONDS [OPTIONS]]: target on h1, initiator
# on h2, both given OPTIONS; then the per-rail byte check.
pair() {
	local name=$1 rails=$2 count=$3 limit=${4:-180} opts=${5:-} r data min
	local -a before after moved

	for ((r = 0; r < count; r++)); do
		before[r]=$(rail_bytes "$r")
	done
	run_pair "$name" "$limit" "$rails" "$rma_test" ${opts:+"$opts"} -E $port ||
		return
	# Every rail must have carried at least half of an even share of the
	# RMA data the client reports (its interface counts both directions;
	# transport overhead, ofi_rxd's especially, only adds to that).
	data=$(sed -n 's/.* \([0-9]*\) bytes of RMA data moved/\1/p' "$PAIR_LOGS/client")
	min=$(( ${data:-0} / count / 2 ))
	for ((r = 0; r < count; r++)); do
		after[r]=$(rail_bytes "$r")
		moved[r]=$((after[r] - before[r]))
	done
	if [ "$min" -lt $((8 << 20)) ]; then
		fail "$name: stripes on every rail" "the client reports only ${data:-no} bytes of RMA data"
		return
	fi
	for ((r = 0; r < count; r++)); do
		if [ "${moved[r]}" -lt "$min" ]; then
			fail "$name: stripes on every rail" "mr$r moved ${moved[r]} bytes, want >= $min of $data bytes of data"
			return
		fi
	done
	pass "$name: stripes on every rail (MiB of data $((data >> 20)), MiB per rail: $(for ((r = 0; r < count; r++)); do
		printf '%s ' $((moved[r] >> 20)); done))"
}

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
pair "fi_mrail_rma over 2 tcp rails" '' 2
pair "fi_mrail_rma over 2 tcp rails, FI_PROGRESS_AUTO" '' 2 180 -a
# SHMEM runtimes' targets never insert their initiators.
pair "fi_mrail_rma over 2 tcp rails, target never inserts the initiator" '' 2 180 -u
# ofi_rxd crawls on a busy machine (see test_msg.sh): more time.
pair "fi_mrail_rma over tcp + udp rails" 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' 2 600
"$TESTBED" up --hosts 2 --rails 4 >/dev/null || fail testbed "up failed"
pair "fi_mrail_rma over 4 tcp rails" '' 4

finish
