#!/bin/bash
# The MPI collective suite (fabtests-ext/mpi/mpi_coll) under Debian's Open
# MPI, through its mtl ofi: on 2 and 4 emulated hosts with one rank each and
# on 2 hosts with two ranks each (two endpoints per host on the same rail
# interfaces), over the bare tcp;ofi_rxm on rail 0 (the baseline, which
# shows the suite itself is right) and over mrail with two tcp;ofi_rxm
# rails. First, on 4 hosts, the reduced case of issue 20: a barrier and a
# gather as the ranks' first contact, where the root receives from every
# rank before it sends to any (it hung until first sends introduced their
# sender). One PASS/FAIL line per job, naming the failing sub-tests.
#
# Every job runs under a time limit. A job still running at its limit
# fails as hung; before it is ended, every rank's stack is dumped (gdb
# through ci/testbed exec) into the job's log and the log's path printed.
# mpi_coll's own watchdog is set beyond that limit so the stacks come first.
#
#   MRAIL_MPI_COLL_MAX     largest block (default 1M; CI budget)
#   MRAIL_MPI_COLL_FULL=1  the full suite: blocks up to 4M, longer limits
#   MRAIL_MPI_COLL_LIMIT   seconds a job may take (default 120, full 400)
#
# Needs MRAIL_BUILD (with fabtests-ext/mpi built, i.e. configure found
# mpicc); MRAIL_PRELOAD is preloaded into the MPI processes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
coll=$build/fabtests-ext/mpi/mpi_coll
ns_prefix=${MRAIL_TESTBED_NAME:-mrail}-h
if [[ ${MRAIL_MPI_COLL_FULL:-0} == 1 ]]; then
	max=${MRAIL_MPI_COLL_MAX:-4M}
	limit=${MRAIL_MPI_COLL_LIMIT:-400}
else
	max=${MRAIL_MPI_COLL_MAX:-1M}
	limit=${MRAIL_MPI_COLL_LIMIT:-120}
fi
core_provider='tcp;ofi_rxm'
mrail_rails='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1'

if [[ ! -x $coll ]]; then
	fail "$TEST_NAME" "$coll is not built (configure found no mpicc?)"
	finish
fi
n_sub_tests=$("$coll" -l | wc -l)
if [[ $n_sub_tests -eq 0 ]]; then
	fail "$TEST_NAME" "mpi_coll -l lists no sub-test"
	finish
fi

testbed_cleanup_on_exit

# As test_mpi.sh: pml cm + mtl ofi; the ofi BTL excluded so that it does not
# open the provider a second time, openib so that it looks for no verbs
# device; mtl ofi's exclusion list without "tcp" lets the baseline through.
# shellcheck disable=SC2054 # the commas are inside MCA values
mca=(--mca pml cm --mca mtl ofi --mca btl '^ofi,openib'
	--mca mtl_ofi_provider_exclude 'shm,sockets,udp,rstream,usnic')

provider_env() {
	prov_env=(-x FI_LOG_LEVEL=warn)
	[[ -n ${MRAIL_PRELOAD:-} ]] && prov_env+=(-x "LD_PRELOAD=$MRAIL_PRELOAD")
	case $1 in
	mrail)
		prov_env+=(-x FI_PROVIDER=mrail -x "FI_PROVIDER_PATH=$build/.libs"
			-x "FI_MRAIL_RAILS=$mrail_rails")
		;;
	*)
		prov_env+=(-x "FI_PROVIDER=$1" -x FI_TCP_IFACE=mr0)
		;;
	esac
}

# The mpi_coll processes of this testbed (pids are shared with other
# clusters on the machine; the network namespace tells them apart).
job_ranks() {
	local pid ns
	for pid in $(pgrep -x mpi_coll); do
		ns=$(ip netns identify "$pid" 2>/dev/null) || continue
		[[ $ns == "$ns_prefix"* ]] && echo "$pid ${ns#"$ns_prefix"}"
	done
}

# Every rank's stack, appended to LOG.
dump_stacks() {
	local log=$1 pid host rank
	if ! command -v gdb >/dev/null; then
		echo "== no gdb: stacks not dumped" >>"$log"
		return
	fi
	while read -r pid host; do
		rank=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null |
			sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
		echo "== stack of rank ${rank:-?} (pid $pid, h$host)" >>"$log"
		timeout 60 "$TESTBED" exec "h$host" gdb -p "$pid" -batch -nx \
			-ex 'thread apply all bt' >>"$log" 2>&1 </dev/null
	done < <(job_ranks)
}

# run_job NAME HOSTS RANKS PROVIDER MPI_COLL-ARGS...: one mpirun; passes
# when every sub-test it ran passed and mpi_coll said so.
run_job() {
	local name=$1 hosts=$2 ranks=$3 provider=$4
	shift 4
	local log pid start hung=0 rc fails summary pids
	_lib_checks=$((_lib_checks + 1))
	log=$(_lib_log_path "$name")
	provider_env "$provider"
	start=$SECONDS
	"$TESTBED" mpirun -np "$ranks" "${mca[@]}" "${prov_env[@]}" \
		"$coll" -w $((limit + 60)) "$@" >"$log" 2>&1 </dev/null &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS - start >= limit)); then
			hung=1
			break
		fi
		sleep 1
	done
	if [[ $hung -eq 1 ]]; then
		dump_stacks "$log"
		kill -TERM "$pid" 2>/dev/null
		sleep 3
		kill -KILL "$pid" 2>/dev/null
		pids=$(job_ranks | awk '{ print $1 }')
		# shellcheck disable=SC2086 # one pid per word
		[[ -n $pids ]] && kill -KILL $pids 2>/dev/null
	fi
	wait "$pid"
	rc=$?
	fails=$(grep '^FAIL: ' "$log" | sed 's/^FAIL: \([^:]*:[^:]*\):.*/\1/' | sort -u |
		tr '\n' ' ')
	summary=$(grep -m1 '^mpi_coll: ' "$log")
	if [[ $hung -eq 1 ]]; then
		local last
		last=$(grep -E '^(PASS|FAIL): ' "$log" | tail -n 1)
		fail "$name" "hung: no end after $limit s (last verdict: ${last:-none}); ranks' stacks in $log"
	elif [[ -n $fails ]]; then
		fail "$name" "${fails% }: $(grep -m1 '^FAIL: ' "$log") (log $log)"
	elif [[ $rc -ne 0 || -z $summary ]]; then
		fail "$name" "mpirun exited $rc: $(grep -m1 -E 'rror|abort|Abort|signal' "$log") (log $log)"
	else
		pass "$name"
		note "$summary, $((SECONDS - start)) s"
	fi
}

for hosts in 4 2; do
	if ! "$TESTBED" up --hosts "$hosts" --rails 2 >/dev/null; then
		fail "testbed up --hosts $hosts --rails 2" "failed"
		continue
	fi
	if [[ $hosts -eq 4 ]]; then
		# Issue 20: roots that receive from every rank before sending
		# to any, as a job's first contact between the ranks.
		run_job "mrail, 4 hosts x 1 rank: barrier and gather as first contact" 4 4 mrail \
			-t world:barrier,world:gather -M 64K
	fi
	for provider in "$core_provider" mrail; do
		label=$provider
		[[ $provider == mrail ]] && label="mrail over 2 tcp;ofi_rxm rails"
		run_job "$label, $hosts hosts x 1 rank: mpi_coll -M $max" "$hosts" "$hosts" \
			"$provider" -M "$max"
		if [[ $hosts -eq 2 ]]; then
			run_job "$label, 2 hosts x 2 ranks: mpi_coll -M $max" 2 4 \
				"$provider" -M "$max"
		fi
	done
done

finish
