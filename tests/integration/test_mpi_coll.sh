#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The MPI collective suite (fabtests-ext/mpi/mpi_coll) under Debian's Open
# MPI, through its mtl ofi, on 2, 4 and 8 emulated hosts with 1 and 2 ranks
# per host (ranks round-robin over the hosts; with 2 per host, two endpoints
# per host share the rail interfaces): over the bare tcp;ofi_rxm on rail 0
# (the baseline, which shows the suite itself is right) and over mrail with
# two tcp;ofi_rxm rails. First, on 4 hosts, the reduced case of issue 20: a
# barrier and a gather as the ranks' first contact, where the root receives
# from every rank before it sends to any (it hung until first sends
# introduced their sender). One PASS/FAIL line per job, naming the failing
# sub-tests, and a line with the suite's summary and the job's time.
#
# CI budget: the largest layout, 8 hosts x 2 ranks (16 ranks on this
# machine's 2 cores), runs blocks up to 256K, not 1M: with 1M it alone took
# 96 s per provider (most of it in the allgather, reduce_scatter and mixed
# sub-tests), and the whole script must stay within about 6 minutes (plain
# build). Sizes past every eager/rendezvous threshold are still covered.
#
# Every job runs under a time limit (lib_mpi.sh): a job still running at its
# limit fails as hung; before it is ended, every rank's stack is dumped (gdb
# through ci/testbed exec) into the job's log and the log's path printed.
# mpi_coll's own watchdog is set beyond that limit so the stacks come first.
# The limit is 60 s plus 10 s per rank (full suite: 300 s plus 40 s per
# rank), tripled for a sanitized mrail (MRAIL_SANITIZED=1).
#
#   MRAIL_MPI_COLL_MAX        largest block (default 1M; CI budget)
#   MRAIL_MPI_COLL_MAX_LARGE  largest block with more than 8 ranks
#                             (default 256K, at most MRAIL_MPI_COLL_MAX)
#   MRAIL_MPI_COLL_FULL=1     the full suite: blocks up to 4M everywhere,
#                             longer limits
#   MRAIL_MPI_COLL_LIMIT      seconds any job may take (default per layout,
#                             as above; not scaled)
#   MRAIL_MPI_COLL_HOSTS      the host counts to run (default "2 4 8")
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
coll=$build/fabtests-ext/mpi/mpi_coll
if [[ ${MRAIL_MPI_COLL_FULL:-0} == 1 ]]; then
	max=${MRAIL_MPI_COLL_MAX:-4M}
	max_large=${MRAIL_MPI_COLL_MAX_LARGE:-$max}
	limit_base=300
	limit_per_rank=40
else
	max=${MRAIL_MPI_COLL_MAX:-1M}
	max_large=${MRAIL_MPI_COLL_MAX_LARGE:-256K}
	limit_base=60
	limit_per_rank=10
fi
host_counts=${MRAIL_MPI_COLL_HOSTS:-2 4 8}

if [[ ! -x $coll ]]; then
	fail "$TEST_NAME" "$coll is not built (configure found no mpicc?)"
	finish
fi
n_sub_tests=$("$coll" -l | wc -l)
if [[ $n_sub_tests -eq 0 ]]; then
	fail "$TEST_NAME" "mpi_coll -l lists no sub-test"
	finish
fi

# Bytes of a size with mpi_coll's K and M suffixes, to compare two of them.
size_bytes() {
	case $1 in
	*[kK]) echo $((${1%?} * 1024)) ;;
	*[mM]) echo $((${1%?} * 1048576)) ;;
	*) echo $(($1)) ;;
	esac
}

if (($(size_bytes "$max_large") > $(size_bytes "$max"))); then
	max_large=$max
fi

# run_coll NAME RANKS PROVIDER MPI_COLL-ARGS...
run_coll() {
	local name=$1 ranks=$2 provider=$3 limit
	shift 3
	limit=${MRAIL_MPI_COLL_LIMIT:-$(mpi_limit $((limit_base + limit_per_rank * ranks)))}
	mpi_run_job "$name" "$limit" "$ranks" "$provider" '^mpi_coll: ' \
		"$coll" -w $((limit + 60)) "$@"
}

testbed_cleanup_on_exit
script_start=$SECONDS

for hosts in $host_counts; do
	if ! "$TESTBED" up --hosts "$hosts" --rails 2 >/dev/null; then
		fail "testbed up --hosts $hosts --rails 2" "failed"
		continue
	fi
	if [[ $hosts -eq 4 ]]; then
		# Issue 20: roots that receive from every rank before sending
		# to any, as a job's first contact between the ranks.
		run_coll "mrail, 4 hosts x 1 rank: barrier and gather as first contact" 4 mrail \
			-t world:barrier,world:gather -M 64K
	fi
	for provider in "$MPI_CORE_PROVIDER" mrail; do
		for per_host in 1 2; do
			ranks=$((hosts * per_host))
			block=$max
			((ranks > 8)) && block=$max_large
			run_coll "$(mpi_provider_label "$provider"), $hosts hosts x $per_host rank$(
				((per_host > 1)) && echo s): mpi_coll -M $block" \
				"$ranks" "$provider" -M "$block"
		done
	done
done
note "all jobs: $((SECONDS - script_start)) s"

finish
