#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The MPI point-to-point suite (fabtests-ext/mpi/mpi_p2p) under Debian's Open
# MPI, through its mtl ofi, across 2 and 4 emulated hosts with 2 rails: once
# over the bare core provider tcp;ofi_rxm on rail 0 (the baseline, which
# shows the suite itself is right) and once over mrail with two tcp;ofi_rxm
# rails; on 2 hosts also over mrail with a tcp;ofi_rxm and a udp;ofi_rxd
# rail, and over mrail's two tcp;ofi_rxm rails with the second pulled
# (its link down on both hosts) 1 s into the job for 4 s. One PASS/FAIL
# line per provider, host count and sub-test; mpi_bw's figures follow as
# notes (never asserted).
#
# Each provider's suite runs as one mpirun. A sub-test that hangs ends that
# job (mpi_p2p's watchdog), so the sub-tests it left without a verdict run
# again one mpirun each. When a job gives no verdict at all (MPI_Init
# failed), every sub-test fails with the job's error.
#
# libfabric 1.17's tcp;ofi_rxm has two bugs the suite finds: with its
# dynamic receive buffers (the default) a truncated receive breaks the
# connection, so "truncate" hangs; without them, MPI_Mrecv of a claimed
# rendezvous message never completes, so "mprobe" hangs. The baseline runs
# truncate alone with FI_OFI_RXM_ENABLE_DYN_RBUF=0 and everything else with
# the defaults. mrail needs neither: it matches and truncates itself and
# only ever receives into its own bounce buffers on the rails, so its suite
# runs as one job with the defaults.
#
# Needs MRAIL_BUILD (with fabtests-ext/mpi built, i.e. configure found
# mpicc); MRAIL_PRELOAD is preloaded into the MPI processes. Wrap it in the
# testbed lock: flock /tmp/mrail-testbed.lock bash tests/integration/test_mpi.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
# shellcheck source=tests/integration/lib_mpi.sh
. "$here/lib_mpi.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
testbed=$here/../../ci/testbed
p2p=$build/fabtests-ext/mpi/mpi_p2p
bw=$build/fabtests-ext/mpi/mpi_bw
# Seconds a sub-test may take before mpi_p2p calls it hung (on the
# baseline the slowest takes a few seconds), and seconds a suite may spend
# re-running sub-tests one by one, so that a provider that hangs in every
# sub-test does not hold the testbed for an hour.
watchdog=${MRAIL_MPI_WATCHDOG:-60}
rerun_budget=${MRAIL_MPI_RERUN_BUDGET:-300}
core_provider=$MPI_CORE_PROVIDER
tcp_rails=$MPI_MRAIL_RAILS
mixed_rails='tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1'

if [[ ! -x $p2p || ! -x $bw ]]; then
	fail "$TEST_NAME" "$p2p or $bw is not built (configure found no mpicc?)"
	finish
fi
mapfile -t all_sub_tests < <("$p2p" -l | awk '{ print $1 }')
if [[ ${#all_sub_tests[@]} -eq 0 ]]; then
	fail "$TEST_NAME" "mpi_p2p -l lists no sub-test"
	finish
fi

testbed_cleanup_on_exit

# ci/testbed mpirun already adds --allow-run-as-root, the rsh agent into the
# emulated hosts, and keeps Open MPI's out-of-band and TCP BTL traffic on
# rail 0's subnet; lib_mpi.sh's MPI_MCA selects the provider path under
# test (pml cm with mtl ofi) and mpi_provider_env the provider, with
# MPI_MRAIL_RAILS as mrail's rails.

# mpi_run HOSTS LOG PROVIDER [MPIRUN-ARGS...] -- PROGRAM ARGS...: one rank
# per host, under a timeout that outlasts mpi_p2p's own watchdog.
mpi_run() {
	local hosts=$1 log=$2 provider=$3 limit=$4
	shift 4
	mpi_provider_env "$provider"
	timeout --kill-after=10 "$limit" "$testbed" mpirun -np "$hosts" "${MPI_MCA[@]}" \
		"${MPI_PROVIDER_ENV[@]}" "$@" >"$log" 2>&1 </dev/null
}

# The first line of a log that tells why a job failed.
job_error() {
	local line
	line=$(grep -m1 -E 'cannot be selected|rror|failed|abort|Abort|timed out|signal' "$1")
	[[ -n $line ]] || line=$(grep -v '^\s*$' "$1" | tail -n 1)
	echo "${line:-no output}"
}

# run_group LABEL HOSTS PROVIDER SUB-TESTS [MPIRUN-ARGS...]: one mpirun
# running the comma-separated SUB-TESTS; the verdicts land in the
# associative array verdict (first line per sub-test wins: on a hang
# several ranks report it).
declare -A verdict
run_group() {
	local label=$1 hosts=$2 provider=$3 list=$4
	shift 4
	local n log rc line name
	n=$(tr ',' '\n' <<<"$list" | wc -l)
	_lib_checks=$((_lib_checks + 1))
	log=$(_lib_log_path "$label $list")
	mpi_run "$hosts" "$log" "$provider" $((watchdog * n + 60)) "$@" \
		"$p2p" -T "$watchdog" -t "$list"
	rc=$?
	while IFS= read -r line; do
		name=${line#*: }
		name=${name%%:*}
		[[ -n ${verdict[$name]:-} ]] || verdict[$name]=$line
	done < <(grep -E '^(PASS|FAIL): ' "$log")
	last_log=$log
	last_rc=$rc
}

# suite LABEL HOSTS PROVIDER: every sub-test, with the verdicts printed.
suite() {
	local label=$1 hosts=$2 provider=$3 name ran_any=0 reason
	local -a main=()
	verdict=()
	for name in "${all_sub_tests[@]}"; do
		[[ $provider != mrail && $name == truncate ]] || main+=("$name")
	done
	run_group "$label" "$hosts" "$provider" "$(IFS=,; echo "${main[*]}")"
	local main_log=$last_log main_rc=$last_rc
	[[ ${#verdict[@]} -gt 0 ]] && ran_any=1
	if [[ $provider != mrail ]]; then
		run_group "$label" "$hosts" "$provider" truncate -x FI_OFI_RXM_ENABLE_DYN_RBUF=0
	fi
	local rerun_start=$SECONDS
	if [[ $ran_any -eq 1 ]]; then
		for name in "${main[@]}"; do
			[[ -n ${verdict[$name]:-} ]] && continue
			((SECONDS - rerun_start < rerun_budget)) || break
			run_group "$label" "$hosts" "$provider" "$name"
		done
	fi
	if [[ $ran_any -eq 1 ]]; then
		reason="not run: an earlier sub-test ended the job and the $rerun_budget s for re-runs are spent"
	else
		reason="no verdict: the job ended (exit $main_rc): $(job_error "$main_log") (log $main_log)"
	fi
	for name in "${all_sub_tests[@]}"; do
		case ${verdict[$name]:-} in
		"PASS: $name") pass "$label: $name" ;;
		"FAIL: $name: "*) fail "$label: $name" "${verdict[$name]#FAIL: "$name": }" ;;
		*) fail "$label: $name" "$reason" ;;
		esac
	done
	[[ $main_rc -eq 0 ]] || note "$label: mpi_p2p exited $main_rc (log $main_log)"
}

# benchmark LABEL PROVIDER: mpi_bw's figures between h1 and h2.
benchmark() {
	local label=$1 provider=$2 log mode
	for mode in bandwidth latency; do
		_lib_checks=$((_lib_checks + 1))
		log=$(_lib_log_path "$label mpi_bw $mode")
		local -a args=(-i 5)
		[[ $mode == latency ]] && args=(-l -i 200)
		if mpi_run 2 "$log" "$provider" 300 "$bw" "${args[@]}" && grep -q '^ ' "$log"; then
			pass "$label: mpi_bw $mode runs"
			grep -E '^(#| )' "$log" | sed 's/^/  /' | while IFS= read -r line; do note "$line"; done
		else
			fail "$label: mpi_bw $mode runs" "$(job_error "$log") (log $log)"
		fi
	done
}

for hosts in 2 4; do
	if ! "$testbed" up --hosts "$hosts" --rails 2 >/dev/null; then
		fail "testbed up --hosts $hosts --rails 2" "failed"
		continue
	fi
	start=$(now)
	suite "$core_provider, $hosts hosts" "$hosts" "$core_provider"
	suite "mrail over 2 tcp;ofi_rxm rails, $hosts hosts" "$hosts" mrail
	if [[ $hosts -eq 2 ]]; then
		MPI_MRAIL_RAILS=$mixed_rails
		suite "mrail over tcp;ofi_rxm + udp;ofi_rxd rails, 2 hosts" 2 mrail
		MPI_MRAIL_RAILS=$tcp_rails
	fi
	if [[ $hosts -eq 2 ]]; then
		# A rail pulled under the suite: mr1 down on both hosts 1 s
		# into the job, back 4 s later. Every sub-test must pass as
		# it does with both rails (mrail fails the rail over).
		( sleep 1; "$testbed" rail 1 down; sleep 4; "$testbed" rail 1 up ) &
		suite "mrail over 2 tcp;ofi_rxm rails, 2 hosts, rail 2 pulled 1 s in for 4 s" \
			2 mrail
		wait $!
		"$testbed" rail 1 up
	fi
	note "$hosts hosts took $(elapsed "$start") s"
	if [[ $hosts -eq 2 ]]; then
		benchmark "$core_provider, 2 hosts" "$core_provider"
		benchmark "mrail over 2 tcp;ofi_rxm rails, 2 hosts" mrail
	fi
done

finish
