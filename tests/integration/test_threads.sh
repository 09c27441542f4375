#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# FI_THREAD_SAFE under load: fi_mrail_threads runs 8 client threads on one
# mrail endpoint and one CQ at once (fi_inject_write, fi_write, large
# striped writes, fi_read, fi_atomic FI_SUM on per-thread and shared words,
# fi_fetch_atomic, tagged eager and rendezvous sends, fi_inject) against 4
# server threads posting receives concurrently, then checks the target's
# region byte for byte, the shared words exactly, the counters bound to the
# region with fi_mr_bind, the endpoints' counters and every completion.
# Over 2 tcp;ofi_rxm rails with manual and with automatic progress, and
# once over tcp;ofi_rxm + udp;ofi_rxd.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load
# mrail (ci/tsan preloads ThreadSanitizer's runtime this way).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
threads_test=$build/fabtests-ext/fi_mrail_threads
port=47650
# Sanitized runs (ci/test's ASan pass, ci/tsan) are several times slower:
# fewer iterations, the same threads.
if [[ -n ${MRAIL_SANITIZED:-} ]]; then
	iters=${MRAIL_THREADS_ITERS:-100}
else
	iters=${MRAIL_THREADS_ITERS:-400}
fi
limit=${MRAIL_THREADS_LIMIT:-180}

testbed_cleanup_on_exit

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
run_pair "fi_mrail_threads, 8 threads x $iters iterations, 2 tcp rails" "$limit" '' \
	"$threads_test" -n "$iters" -E $port
run_pair "fi_mrail_threads, 8 threads x $iters iterations, 2 tcp rails, FI_PROGRESS_AUTO" \
	"$limit" '' "$threads_test" -a -n "$iters" -E $port
# ofi_rxd crawls on a busy machine (see test_msg.sh): fewer iterations.
run_pair "fi_mrail_threads, 8 threads x $((iters / 4)) iterations, tcp + udp rails" \
	"$((limit * 2))" 'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' "$threads_test" \
	-n "$((iters / 4))" -E $port

finish
