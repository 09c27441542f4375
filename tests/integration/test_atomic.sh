#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# FI_ATOMIC between emulated hosts over mrail's rails, executed by mrail at
# the target. fi_mrail_atomic runs every op on every datatype the valid
# calls accept (plain, fetch, compare; 1 and 5 elements; every call of each
# family), hand-computed cases, the count limit, refused atomics (past the
# end, unknown key, region without the access), the valid/query calls and
# atomics through a second AV entry for the target, checking the target's bytes and the fetched values byte for byte, exact
# completions and counters at both ends. Run on 2 and 4 tcp;ofi_rxm rails
# and on tcp;ofi_rxm + udp;ofi_rxd. Then the contention test: clients on h2
# and h3 each do N fetch-and-adds of 1 on one word of h1's, their requests
# spread over both rails; the word must end at 2N and each client's
# fetched values must strictly increase.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
atomic_test=$build/fabtests-ext/fi_mrail_atomic
port=47620
contention_n=${MRAIL_ATOMIC_CONTENTION_N:-2000}

testbed_cleanup_on_exit

# contention NAME LIMIT: server on h1 for 2 clients, clients on h2 and h3.
contention() {
	local name=$1 limit=$2 logs srv c1 c2 ok tool=fi_mrail_atomic
	local run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn)

	logs=$(mktemp -d "$TEST_LOGDIR/contention.XXXXXX")
	timeout "$limit" "$TESTBED" exec 1 "${run[@]}" "$atomic_test" -a -E $port \
		-C "$contention_n" -k 2 >"$logs/server" 2>&1 &
	srv=$!
	sleep 0.5
	timeout "$limit" "$TESTBED" exec 2 "${run[@]}" "$atomic_test" -a -E $port \
		-C "$contention_n" 198.18.1.1 >"$logs/client2" 2>&1 &
	c1=$!
	timeout "$limit" "$TESTBED" exec 3 "${run[@]}" "$atomic_test" -a -E $port \
		-C "$contention_n" 198.18.1.1 >"$logs/client3" 2>&1
	c2=$?
	wait $c1
	c1=$?
	wait $srv
	srv=$?
	ok="^$tool: ([0-9]+) of \\1 checks passed"
	if [[ $srv -eq 0 && $c1 -eq 0 && $c2 -eq 0 ]] &&
	   grep -qE "$ok" "$logs/server" && grep -qE "$ok" "$logs/client2" &&
	   grep -qE "$ok" "$logs/client3"; then
		pass "$name: $(grep -h 'final value' "$logs/server" | sed "s/^$tool: //")"
	else
		fail "$name" "server exit $srv, clients exit $c1 $c2 (limit $limit s): $(grep -hE \
			'FAIL|checks|rror|sanitizer|signal' "$logs"/* | head -8)"
	fi
}

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
run_pair "fi_mrail_atomic over 2 tcp rails" 300 '' "$atomic_test" -E $port
run_pair "fi_mrail_atomic over 2 tcp rails, FI_PROGRESS_AUTO" 300 '' "$atomic_test" -a -E $port
# SHMEM runtimes' targets never insert their initiators.
run_pair "fi_mrail_atomic over 2 tcp rails, target never inserts the initiator" 300 '' \
	"$atomic_test" -u -E $port
# ofi_rxd crawls on a busy machine (see test_msg.sh): more time.
run_pair "fi_mrail_atomic over tcp + udp rails" 900 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' \
	"$atomic_test" -E $port
"$TESTBED" up --hosts 2 --rails 4 >/dev/null || fail testbed "up failed"
run_pair "fi_mrail_atomic over 4 tcp rails" 300 '' "$atomic_test" -E $port
"$TESTBED" up --hosts 3 --rails 2 >/dev/null || fail testbed "up failed"
contention "fetch-and-add from h2 and h3 at once, $contention_n each, 2 tcp rails" 600

finish
