#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The MPI one-sided suite (fabtests-ext/mpi/mpi_osc) under Debian's Open MPI
# 4.1, through osc rdma and btl ofi, across 2 and 4 emulated hosts over mrail
# with two tcp;ofi_rxm rails, and on 2 hosts with a tcp;ofi_rxm and a
# udp;ofi_rxd rail. One PASS/FAIL line per host count, rail set and
# sub-test (the default set: mpi_osc -l marks the known failures left out).
#
# --mca osc rdma is forced, so that a window osc rdma cannot serve is an
# MPI_Win_create error and not a silent fallback to osc pt2pt over the
# two-sided path. btl ofi in 4.1 does one-sided operations only, so ob1's
# two-sided traffic (the window setup, barriers) needs btl tcp as well.
#
# Then the proof that mrail carried the one-sided traffic: ci/testbed keeps
# btl tcp and the out-of-band traffic on rail 0, so bytes received on h2's
# rail 1 (mr1) during a run of put-fence (puts of 8 B, 64 KiB and 4 MiB
# each way) can only come from mrail striping the puts.
#
# The bare tcp;ofi_rxm as a baseline: btl ofi opens it once tcp is taken off
# btl_ofi_provider_exclude, but (libfabric 1.17) osc rdma then refuses the
# window. The script probes it and runs the suite over it only if the probe
# creates a window; otherwise it says so in a note.
#
# Needs MRAIL_BUILD (with fabtests-ext/mpi built, i.e. configure found
# mpicc); MRAIL_PRELOAD is preloaded into the MPI processes. Wrap it in the
# testbed lock: flock /tmp/mrail-testbed.lock bash tests/integration/test_osc.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
testbed=$here/../../ci/testbed
osc=$build/fabtests-ext/mpi/mpi_osc
# Seconds a sub-test may take before mpi_osc calls it hung (the slowest
# take about 2 s on 4 emulated hosts sharing 2 cores).
watchdog=${MRAIL_MPI_WATCHDOG:-60}
tcp_rails='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1'
mixed_rails='tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1'
mrail_rails=$tcp_rails
# PMIx's default shared-memory data store fails inside the emulated hosts.
export PMIX_MCA_gds=hash

if [[ ! -x $osc ]]; then
	fail "$TEST_NAME" "$osc is not built (configure found no mpicc?)"
	finish
fi
mapfile -t sub_tests < <("$osc" -l | grep -v 'known failure' | awk '{ print $1 }')
if [[ ${#sub_tests[@]} -eq 0 ]]; then
	fail "$TEST_NAME" "mpi_osc -l lists no sub-test"
	finish
fi

testbed_cleanup_on_exit

# shellcheck disable=SC2054 # the commas are inside MCA values
mca=(--mca pml ob1 --mca btl self,ofi,tcp --mca osc rdma)

# osc_run HOSTS LOG LIMIT PROVIDER MPI_OSC-ARGS...: one rank per host.
osc_run() {
	local hosts=$1 log=$2 limit=$3 provider=$4
	shift 4
	local -a env=(-x FI_LOG_LEVEL=warn)
	[[ -n ${MRAIL_PRELOAD:-} ]] && env+=(-x "LD_PRELOAD=$MRAIL_PRELOAD")
	if [[ $provider == mrail ]]; then
		env+=(-x FI_PROVIDER=mrail -x "FI_PROVIDER_PATH=$build/.libs"
			-x "FI_MRAIL_RAILS=$mrail_rails")
	else
		# btl ofi excludes tcp by default; the same list without it.
		env+=(-x "FI_PROVIDER=$provider" -x FI_TCP_IFACE=mr0
			--mca btl_ofi_provider_exclude 'shm,sockets,udp,rstream,usnic')
	fi
	timeout --kill-after=10 "$limit" "$testbed" mpirun -np "$hosts" "${mca[@]}" \
		"${env[@]}" "$osc" -T "$watchdog" "$@" >"$log" 2>&1 </dev/null
}

# The first line of a log that tells why a job failed.
job_error() {
	local line
	line=$(grep -m1 -E 'FAIL:|cannot be selected|rror|failed|abort|Abort|timed out|signal' "$1")
	[[ -n $line ]] || line=$(grep -v '^\s*$' "$1" | tail -n 1)
	echo "${line:-no output}"
}

# suite LABEL HOSTS PROVIDER: the default set in one mpirun, one verdict
# line per sub-test (the first line per sub-test wins: on a hang every
# rank reports it).
suite() {
	local label=$1 hosts=$2 provider=$3 log rc line name
	local -A verdict=()
	_lib_checks=$((_lib_checks + 1))
	log=$(_lib_log_path "$label")
	osc_run "$hosts" "$log" $((watchdog * 4 + 120)) "$provider"
	rc=$?
	while IFS= read -r line; do
		name=${line#*: }
		name=${name%%:*}
		[[ -n ${verdict[$name]:-} ]] || verdict[$name]=$line
	done < <(grep -E '^(PASS|FAIL): ' "$log")
	for name in "${sub_tests[@]}"; do
		case ${verdict[$name]:-} in
		"PASS: $name") pass "$label: $name" ;;
		"FAIL: $name: "*) fail "$label: $name" "${verdict[$name]#FAIL: "$name": }" ;;
		*) fail "$label: $name" "no verdict: the job ended (exit $rc): $(job_error "$log") (log $log)" ;;
		esac
	done
	[[ $rc -eq 0 ]] || note "$label: mpi_osc exited $rc (log $log)"
}

# rx_bytes HOST IFACE
rx_bytes() {
	"$testbed" exec "$1" cat "/sys/class/net/$2/statistics/rx_bytes"
}

# rail_evidence: h2's rail 1 must receive at least a quarter of the 4 MiB
# put (mrail stripes it over both rails, so about half is expected).
rail_evidence() {
	local name="mrail, 2 hosts: put-fence moved the one-sided bytes over rail 1"
	local b0 b1 a0 a1 log moved need=$((1024 * 1024))
	_lib_checks=$((_lib_checks + 1))
	log=$(_lib_log_path "rail evidence")
	b0=$(rx_bytes h2 mr0) b1=$(rx_bytes h2 mr1)
	if ! osc_run 2 "$log" $((watchdog + 60)) mrail -t put-fence; then
		fail "$name" "put-fence failed: $(job_error "$log") (log $log)"
		return
	fi
	a0=$(rx_bytes h2 mr0) a1=$(rx_bytes h2 mr1)
	moved=$((a1 - b1))
	note "h2 received mr0 $(((a0 - b0) / 1024)) KiB, mr1 $((moved / 1024)) KiB during put-fence"
	if ((moved >= need)); then
		pass "$name"
	else
		fail "$name" "mr1 received $moved bytes, expected at least $need"
	fi
}

# baseline HOSTS: the suite over the bare tcp;ofi_rxm if osc rdma accepts
# a window over it.
baseline() {
	local hosts=$1 log label="tcp;ofi_rxm, $1 hosts"
	_lib_checks=$((_lib_checks + 1))
	log=$(_lib_log_path "$label probe")
	osc_run "$hosts" "$log" $((watchdog + 60)) 'tcp;ofi_rxm' -t put-fence
	if grep -q 'MPI_Win_create returned' "$log"; then
		note "SKIP $label baseline: btl ofi opens tcp;ofi_rxm but osc rdma refuses the window: $(grep -m1 -o 'MPI_Win_create returned.*invalid window' "$log") (log $log)"
		return
	fi
	suite "$label" "$hosts" 'tcp;ofi_rxm'
}

for hosts in 2 4; do
	if ! "$testbed" up --hosts "$hosts" --rails 2 >/dev/null; then
		fail "testbed up --hosts $hosts --rails 2" "failed"
		continue
	fi
	start=$(now)
	baseline "$hosts"
	suite "mrail over 2 tcp;ofi_rxm rails, $hosts hosts" "$hosts" mrail
	if [[ $hosts -eq 2 ]]; then
		rail_evidence
		mrail_rails=$mixed_rails
		suite "mrail over tcp;ofi_rxm + udp;ofi_rxd rails, 2 hosts" 2 mrail
		mrail_rails=$tcp_rails
	fi
	note "$hosts hosts took $(elapsed "$start") s"
done

finish
