#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The MPI stress run (fabtests-ext/mpi/mpi_stress) under Debian's Open MPI,
# through its mtl ofi, on 4 emulated hosts with 2 ranks each (8 ranks,
# round-robin over the hosts, two endpoints per host on the same rail
# interfaces): all-to-all traffic mixing eager and rendezvous sizes, every
# message checked, VmRSS sampled after the warm-up and until the end. First
# over the bare tcp;ofi_rxm on rail 0 for a shorter time (it shows the
# program is right and gives the memory figures to compare with), then over
# mrail with two tcp;ofi_rxm rails. One PASS/FAIL line per job; the
# program's summary (rounds, messages, bytes, VmRSS) and every rank's
# VmRSS samples follow as notes.
#
# Memory: mpi_stress fails when a rank's VmRSS grows by more than a bound
# after the warm-up (a sixth of the run): 8 MiB over the bare core, 24 MiB
# over mrail. Measured on this machine (8 ranks, another job loading both
# cores): the bare core grows steadily in a short run (+0.46-0.48 MiB per
# rank in the 13 s after the warm-up, default sizes); with 8 KiB messages
# only (many more per second) it levels off at +7.3-7.6 MiB after about
# 35 s and stays there: rxm's and tcp's pools filling up, not a leak. So
# 8 MiB per core stack. mrail runs two such stacks (its rails, in their
# own libfabric and libc) and pools of its own: with 8 KiB messages it
# levelled off at +21 MiB after 80 s and grew by 12 KiB in the next 70 s
# (4.3 million messages); in the default 60 s run it grew by 2.4-2.6 MiB.
# Hence 24 MiB, three stacks' worth: a run on a quicker machine, further
# into the fill-up, does not fail, while a leak of 2 KiB per message
# received (13000 per rank after the warm-up), any leaked eager buffer or
# rendezvous registration, does.
# Under the sanitizers ASan's quarantine holds freed memory (256 MiB unless
# ASAN_OPTIONS sets quarantine_size_mb) and shows as growth (+38 MiB over
# mrail in 60 s): the bound then adds the quarantine, and only gross growth
# fails there; the plain run is the memory check.
#
# Every job runs under a time limit (lib_mpi.sh): the run's time plus 120 s,
# tripled for a sanitized mrail (MRAIL_SANITIZED=1); a job still running
# then fails as hung, after every rank's stack is dumped into its log.
#
#   MRAIL_MPI_STRESS_SECONDS       traffic time over mrail (default 60)
#   MRAIL_MPI_STRESS_CORE_SECONDS  traffic time over the bare core (default 15)
#   MRAIL_MPI_STRESS_ARGS          more mpi_stress options (-M, -n, -s, -G)
#
# Needs MRAIL_BUILD (with fabtests-ext/mpi built, i.e. configure found
# mpicc); MRAIL_PRELOAD is preloaded into the MPI processes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
# shellcheck source=tests/integration/lib_mpi.sh
. "$here/lib_mpi.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
stress=$build/fabtests-ext/mpi/mpi_stress
mrail_seconds=${MRAIL_MPI_STRESS_SECONDS:-60}
core_seconds=${MRAIL_MPI_STRESS_CORE_SECONDS:-15}
read -r -a extra_args <<<"${MRAIL_MPI_STRESS_ARGS:-}"
quarantine_mib=0
if [[ ${MRAIL_SANITIZED:-0} == 1 ]]; then
	quarantine_mib=$(sed -n 's/.*quarantine_size_mb=\([0-9]*\).*/\1/p' <<<"${ASAN_OPTIONS:-}")
	quarantine_mib=${quarantine_mib:-256}
fi

if [[ ! -x $stress ]]; then
	fail "$TEST_NAME" "$stress is not built (configure found no mpicc?)"
	finish
fi

testbed_cleanup_on_exit
if ! "$TESTBED" up --hosts 4 --rails 2 >/dev/null; then
	fail "testbed up --hosts 4 --rails 2" "failed"
	finish
fi

# run_stress PROVIDER SECONDS GROWTH-MIB
run_stress() {
	local provider=$1 seconds=$2 growth_mib=$(($3 + quarantine_mib)) limit
	limit=$(mpi_limit $((seconds + 120)))
	mpi_run_job "$(mpi_provider_label "$provider"), 4 hosts x 2 ranks: mpi_stress -t $seconds" \
		"$limit" 8 "$provider" '^mpi_stress: ' \
		"$stress" -t "$seconds" -w $((limit + 60)) -G "$growth_mib" "${extra_args[@]}"
	# Every rank's VmRSS samples, also when the job failed.
	grep -E '^    rank [0-9]+ VmRSS:' "$MPI_JOB_LOG" | sed 's/^ *//' |
		while read -r line; do note "  $line"; done
}

run_stress "$MPI_CORE_PROVIDER" "$core_seconds" 8
run_stress mrail "$mrail_seconds" 24

finish
