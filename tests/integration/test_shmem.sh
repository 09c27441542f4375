#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A SHMEM-style program over mrail on 4 emulated hosts with 2 rails:
# fi_mrail_shmem ranks put blocks into each other's symmetric heaps with
# FI_DELIVERY_COMPLETE, meet in mrail's counter-chained fi_barrier, and check
# every byte of what they received, round after round, and their
# FI_REMOTE_WRITE counters; 4 and 8 ranks, 4 KiB and 1 MiB (striped) blocks,
# FI_PROGRESS_AUTO. Each rank sleeps in fi_cq_sread while it waits.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
prog=$build/fabtests-ext/fi_mrail_shmem

testbed_cleanup_on_exit

# ranks NAME N [ARGS...]: N ranks round-robin over the 4 hosts; passes when
# every rank exits 0 having printed "N of N checks passed".
ranks() {
	local name=$1 n=$2 r dir pids=() bad=0
	shift 2
	dir=$(mktemp -d "$TEST_LOGDIR/ranks.XXXXXX")
	for ((r = 0; r < n; r++)); do
		timeout 300 "$TESTBED" exec $((r % 4 + 1)) env \
			FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
			FI_LOG_LEVEL=warn "$prog" -n "$n" -r "$r" -d "$dir" "$@" \
			>"$dir/out.$r" 2>&1 &
		pids+=($!)
	done
	for ((r = 0; r < n; r++)); do
		if ! wait "${pids[$r]}" ||
		   ! grep -qE '^fi_mrail_shmem: ([0-9]+) of \1 checks passed' "$dir/out.$r"; then
			bad=$((bad + 1))
		fi
	done
	if [ $bad -eq 0 ]; then
		pass "$name: $(grep -h 'checks passed' "$dir"/out.* | head -1 | sed 's/^fi_mrail_shmem: //') on each of $n ranks"
	else
		fail "$name" "$bad of $n ranks failed: $(grep -hE 'FAILED|fi_mrail_shmem:|rror' "$dir"/out.* | head -6)"
	fi
}

"$TESTBED" up --hosts 4 --rails 2 >/dev/null || fail testbed "up failed"
ranks "SHMEM-style rounds, 4 ranks on 4 hosts, 4 KiB" 4 -a -R 20
ranks "SHMEM-style rounds, 8 ranks on 4 hosts, 4 KiB" 8 -a -R 20
ranks "SHMEM-style rounds, 4 ranks on 4 hosts, 1 MiB striped" 4 -a -R 8 -s 1048576

finish
