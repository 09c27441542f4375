#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A peer that dies gives errors, never a hang: fi_mrail_peerdeath with
# FI_MRAIL_PEER_TIMEOUT=3 between two emulated hosts (a live peer silent for
# 6 s is not taken for dead; a rendezvous in flight to a peer that exits
# fails with FI_EHOSTUNREACH; later sends to it, and to a peer never reached,
# fail with -FI_EHOSTUNREACH), with manual progress on 2 tcp rails; a
# receiver whose sender is killed mid-rendezvous gets an error that is not
# FI_ECANCELED; and a
# bad FI_MRAIL_PEER_TIMEOUT fails fi_getinfo with a warning naming it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
tool=$build/fabtests-ext/fi_mrail_peerdeath
port=47640

testbed_cleanup_on_exit

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
FI_MRAIL_PEER_TIMEOUT=3 run_pair "peer death, 2 tcp rails" 120 \
	'tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' "$tool" -E $port

# sender_killed: fi_mrail_bw streams 1 MiB tagged messages (rendezvous,
# reads on both rails) from h1 to h2 and is killed with SIGKILL half a
# second into its timed stream.
# Its rails' connections break, the receiver's reads fail, and its receive
# must complete with an error (the rail's, such as FI_ECONNRESET, or
# FI_EIO), never the FI_ECANCELED the tcp rail reports for the reads it
# drops (that would read as the application's own fi_cancel), and well
# before fi_mrail_bw's own 30 s watchdog.
# killed_sender_run SRV_LOG CLI_LOG: one such run; the receiver's exit
# status in rc and the seconds it took after the kill in took. Returns 1,
# killing both, when the sender never got its stream going.
killed_sender_run() {
	local srv_log=$1 cli_log=$2 bw=$build/fabtests-ext/fi_mrail_bw srv cli start waited figures=0
	local rails='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1'
	# Gone before the programs start: the wait below must not read the
	# figures of an earlier run before the sender's log is truncated.
	rm -f "$srv_log" "$cli_log"
	# From the log directory: libpsm2, which libfabric loads, writes a
	# backtrace file to the working directory when a process crashes.
	(cd "$TEST_LOGDIR" && exec "$TESTBED" exec 2 env FI_PROVIDER_PATH="$build/.libs" \
		LD_PRELOAD="${MRAIL_PRELOAD:-}" FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails" \
		timeout 60 "$bw" -T -S 1m -n 1000000 -E $((port + 1)) >"$srv_log" 2>&1) &
	srv=$!
	sleep 1
	"$TESTBED" exec 1 env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
		FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails" \
		"$bw" -T -S 1m -n 1000000 -i 100 -E $((port + 1)) 198.18.1.2 >"$cli_log" 2>&1 &
	cli=$!
	# Kill it once the timed stream runs: 5 of its 100 ms figures in.
	for ((waited = 0; waited < 300; waited++)); do
		figures=$(grep -cE '^[0-9.]+ [0-9.]+$' "$cli_log" 2>/dev/null)
		((${figures:-0} >= 5)) && break
		sleep 0.1
	done
	# testbed exec execs its way to the program: $! is fi_mrail_bw itself.
	kill -KILL "$cli"
	wait "$cli" 2>/dev/null
	if ((${figures:-0} < 5)); then
		kill "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
		return 1
	fi
	start=$SECONDS
	wait "$srv"
	rc=$?
	took=$((SECONDS - start))
}

sender_killed() {
	local name="a sender killed mid-rendezvous: the receive fails, not as cancelled"
	local srv_log=$TEST_LOGDIR/killed-sender.server.log cli_log=$TEST_LOGDIR/killed-sender.client.log
	local rc=0 took=0
	_lib_checks=$((_lib_checks + 1))
	if ! killed_sender_run "$srv_log" "$cli_log"; then
		# Not what this checks: the sender failed before its stream.
		note "the sender never started its stream (its log: $(grep -v '^libfabric' "$cli_log" | tail -n 2)); once more"
		if ! killed_sender_run "$srv_log" "$cli_log"; then
			fail "$name" "the sender never started its stream, twice: $(grep -hv '^libfabric' "$cli_log" "$srv_log" | tail -n 3)"
			return
		fi
	fi
	if [[ $rc -ne 0 && $took -lt 20 ]] &&
	   grep -q 'error completion of a receive: ' "$srv_log" &&
	   ! grep -q 'error completion of a receive: Operation canceled' "$srv_log"; then
		pass "$name (the receiver ended $took s after the kill: $(grep -o 'error completion of a receive: [^(]*' "$srv_log" | head -n 1 | sed 's/^error completion of a //; s/ *$//'))"
		# Seen in about one run in ten: ofi_rxm (libfabric 1.17) crashes
		# in the fi_close of a rail endpoint whose connection broke.
		grep -q 'terminated with signal' "$srv_log" &&
			note "the receiver then crashed closing its endpoint: $(grep -m1 'terminated with signal' "$srv_log")"
	else
		fail "$name" "receiver exit $rc after $took s: $(grep -hvE 'getinfo|OFI_MRAIL|rxm_handle_comp_error|tcpx_cq_report_error' "$srv_log" | tail -n 3)"
	fi
}
sender_killed

bad_env_refused FI_MRAIL_PEER_TIMEOUT 3s \
	"FI_MRAIL_PEER_TIMEOUT: '3s' is not a whole number of seconds"

finish
