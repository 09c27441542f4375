# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/integration/lib_mpi.sh - running MPI programs on the testbed, for
# the MPI integration tests; sourced after lib.sh, with MRAIL_BUILD set and
# the testbed up.
#
#   MPI_MCA                the mpirun options every job takes (pml cm, mtl ofi)
#   MPI_CORE_PROVIDER      the bare core, on rail 0: tcp;ofi_rxm
#   MPI_MRAIL_RAILS        mrail's rails (FI_MRAIL_RAILS): two tcp;ofi_rxm
#                          rails unless the caller sets others
#   mpi_provider_env PROVIDER
#                          sets the array MPI_PROVIDER_ENV to the mpirun -x
#                          options that select PROVIDER ("mrail" or a core
#                          provider, on rail 0 only)
#   mpi_provider_label PROVIDER
#                          prints how job names call PROVIDER ("mrail" or a
#                          core provider)
#   mpi_limit SECONDS      prints SECONDS, scaled when mrail is sanitized
#                          (MRAIL_SANITIZED=1: times MRAIL_MPI_LIMIT_SCALE,
#                          default 3; ASan and UBSan make MPI jobs 2-3x slower)
#   mpi_run_job NAME LIMIT RANKS PROVIDER SUMMARY PROG [ARGS...]
#                          one mpirun of PROG ARGS on RANKS ranks (round-robin
#                          over the testbed's hosts) over PROVIDER; passes NAME
#                          when mpirun exits 0, no line starts "FAIL: " and a
#                          line matches the extended regex SUMMARY (which is
#                          then noted with the job's time). A job still running
#                          after LIMIT seconds fails as hung: every rank's
#                          stack is dumped (gdb) into the job's log first.
#                          Sets MPI_JOB_SECONDS and MPI_JOB_LOG.
#
# PROG prints verdict lines "PASS: NAME" / "FAIL: NAME: WHY" with NAME
# free of spaces (fabtests-ext/mpi's driver, mpi_p2p_common.c); its own
# watchdog should be set beyond LIMIT so that the stacks come first.
# MRAIL_PRELOAD is preloaded into the MPI processes.

# The provider path under test: pml cm with mtl ofi. The ofi BTL is excluded
# so that it cannot open the provider a second time, openib so that it does
# not look for verbs devices. mtl ofi excludes tcp;ofi_rxm by default (its
# list has "tcp"); the same list without it lets the baseline through and
# changes nothing for mrail.
# shellcheck disable=SC2054 # the commas are inside MCA values
MPI_MCA=(--mca pml cm --mca mtl ofi --mca btl '^ofi,openib'
	--mca mtl_ofi_provider_exclude 'shm,sockets,udp,rstream,usnic')
MPI_CORE_PROVIDER='tcp;ofi_rxm'
MPI_MRAIL_RAILS='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1'
MPI_PROVIDER_ENV=()
MPI_JOB_SECONDS=0
MPI_JOB_LOG=

_mpi_ns_prefix=${MRAIL_TESTBED_NAME:-mrail}-h

mpi_provider_label() {
	if [[ $1 == mrail ]]; then
		echo "mrail over 2 $MPI_CORE_PROVIDER rails"
	else
		echo "$1"
	fi
}

mpi_limit() {
	local scale=1
	[[ ${MRAIL_SANITIZED:-0} == 1 ]] && scale=${MRAIL_MPI_LIMIT_SCALE:-3}
	echo $(($1 * scale))
}

mpi_provider_env() {
	MPI_PROVIDER_ENV=(-x FI_LOG_LEVEL=warn)
	[[ -n ${MRAIL_PRELOAD:-} ]] && MPI_PROVIDER_ENV+=(-x "LD_PRELOAD=$MRAIL_PRELOAD")
	case $1 in
	mrail)
		MPI_PROVIDER_ENV+=(-x FI_PROVIDER=mrail -x "FI_PROVIDER_PATH=${MRAIL_BUILD:?}/.libs"
			-x "FI_MRAIL_RAILS=$MPI_MRAIL_RAILS")
		;;
	*)
		MPI_PROVIDER_ENV+=(-x "FI_PROVIDER=$1" -x FI_TCP_IFACE=mr0)
		;;
	esac
}

# "PID HOST" of every process named PROG of this testbed (pids are shared
# with other clusters on the machine; the network namespace tells them
# apart).
_mpi_job_ranks() {
	local prog=$1 pid ns
	for pid in $(pgrep -x "$prog"); do
		ns=$(ip netns identify "$pid" 2>/dev/null) || continue
		[[ $ns == "$_mpi_ns_prefix"* ]] && echo "$pid ${ns#"$_mpi_ns_prefix"}"
	done
}

# Every rank's stack, appended to LOG.
_mpi_dump_stacks() {
	local log=$1 prog=$2 pid host rank
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
	done < <(_mpi_job_ranks "$prog")
}

# Ends mpirun PID and whatever ranks of PROG outlive it.
_mpi_end_job() {
	local pid=$1 prog=$2 pids
	kill -TERM "$pid" 2>/dev/null
	sleep 3
	kill -KILL "$pid" 2>/dev/null
	pids=$(_mpi_job_ranks "$prog" | awk '{ print $1 }')
	# shellcheck disable=SC2086 # one pid per word
	[[ -n $pids ]] && kill -KILL $pids 2>/dev/null
}

mpi_run_job() {
	local name=$1 limit=$2 ranks=$3 provider=$4 summary_re=$5 prog=$6
	shift 6
	local tool log pid start hung=0 rc fails summary last
	tool=$(basename "$prog")
	_lib_checks=$((_lib_checks + 1))
	log=$(_lib_log_path "$name")
	# shellcheck disable=SC2034 # for the caller
	MPI_JOB_LOG=$log
	mpi_provider_env "$provider"
	start=$SECONDS
	"$TESTBED" mpirun -np "$ranks" "${MPI_MCA[@]}" "${MPI_PROVIDER_ENV[@]}" \
		"$prog" "$@" >"$log" 2>&1 </dev/null &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS - start >= limit)); then
			hung=1
			break
		fi
		sleep 1
	done
	if [[ $hung -eq 1 ]]; then
		_mpi_dump_stacks "$log" "$tool"
		_mpi_end_job "$pid" "$tool"
	fi
	wait "$pid"
	rc=$?
	MPI_JOB_SECONDS=$((SECONDS - start))
	fails=$(grep '^FAIL: ' "$log" | sed 's/^FAIL: \([^ ]*\): .*/\1/' | sort -u |
		tr '\n' ' ')
	summary=$(grep -m1 -E "$summary_re" "$log")
	if [[ $hung -eq 1 ]]; then
		last=$(grep -E '^(PASS|FAIL): ' "$log" | tail -n 1)
		fail "$name" "hung: no end after $limit s (last verdict: ${last:-none}); ranks' stacks in $log"
	elif [[ -n $fails ]]; then
		fail "$name" "${fails% }: $(grep -m1 '^FAIL: ' "$log") (log $log)"
	elif [[ $rc -ne 0 || -z $summary ]]; then
		fail "$name" "mpirun exited $rc: $(grep -m1 -E 'rror|abort|Abort|signal|Sanitizer' "$log") (log $log)"
	else
		pass "$name"
		note "$summary, $MPI_JOB_SECONDS s"
	fi
}
