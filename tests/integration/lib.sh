# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/integration/lib.sh - the harness every integration test sources.
#
#   pass NAME            prints "PASS: NAME"
#   fail NAME WHY        prints "FAIL: NAME: WHY" and remembers the failure
#   check NAME CMD...    runs CMD quietly (output kept in a log) and passes or
#                        fails; on failure the last lines of the log follow.
#                        Returns CMD's status (mind it under set -e)
#   note TEXT            prints an indented line of information (figures)
#   finish               exits 1 if anything failed, else 0
#   require_root         fails the test and exits unless run as root
#   testbed_cleanup_on_exit   runs "ci/testbed down" on EXIT/INT/TERM
#   run_pair NAME LIMIT RAILS PROG [ARGS...]
#                        a fabtests-style server/client pair on the testbed
#                        (see below): passes or fails NAME
#
# Only PASS:/FAIL: lines start at column 0; the top-level runner counts them
# and prints the only summary.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TESTBED=$TOP/ci/testbed
TEST_NAME=$(basename "${BASH_SOURCE[1]:-$0}" .sh)
TEST_LOGDIR=${MRAIL_TEST_LOGDIR:-${MRAIL_TEST_LOGS:-${TMPDIR:-/tmp}/mrail-integration}}/$TEST_NAME
mkdir -p "$TEST_LOGDIR" 2>/dev/null || TEST_LOGDIR=$(mktemp -d)
_lib_failures=0
_lib_checks=0

pass() {
	echo "PASS: $1"
}

fail() {
	echo "FAIL: $1: ${2:-failed}"
	_lib_failures=$((_lib_failures + 1))
}

note() {
	echo "    $*"
}

# The log of check number N, named after the check.
_lib_log_path() {
	local slug
	slug=$(printf '%s' "$1" | tr -c 'A-Za-z0-9_.-' '_' | cut -c1-60)
	echo "$TEST_LOGDIR/$(printf '%02d' "$_lib_checks")-$slug.log"
}

show_log_tail() {
	local log=$1 lines=${2:-15}
	[[ -s $log ]] || return 0
	tail -n "$lines" "$log" | sed 's/^/    | /'
	echo "    (full log: $log)"
}

check() {
	local name=$1 log rc=0
	shift
	_lib_checks=$((_lib_checks + 1))
	log=$(_lib_log_path "$name")
	"$@" >"$log" 2>&1 </dev/null || rc=$?
	if [[ $rc -eq 0 ]]; then
		pass "$name"
	else
		fail "$name" "exit status $rc from: $*"
		show_log_tail "$log"
	fi
	return "$rc"
}

finish() {
	[[ $_lib_failures -eq 0 ]] || exit 1
	exit 0
}

require_root() {
	if [[ $EUID -ne 0 ]]; then
		fail "$TEST_NAME" "must run as root (needs network namespaces)"
		finish
	fi
}

# Ends the test with a setup failure unless the tree MRAIL_BUILD names holds
# the provider and each helper program given (paths).
require_built() { # program...
	local build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree} program
	[ -f "$build/.libs/libmrail-fi.so" ] ||
		{ fail setup "no $build/.libs/libmrail-fi.so"; finish; }
	for program in "$@"; do
		[ -x "$program" ] || { fail setup "no $program (make in $build)"; finish; }
	done
}

_lib_testbed_down() {
	local rc=$?
	trap - EXIT INT TERM
	"$TESTBED" down >/dev/null 2>&1 || true
	exit "$rc"
}

testbed_cleanup_on_exit() {
	trap _lib_testbed_down EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# Seconds since the epoch, with fractions, for timing steps.
# in_netns CMD...: runs CMD (at most IN_NETNS_TIMEOUT seconds, default 300)
# in a new network namespace of its own, holding loopback and two connected
# ports, mo0 (198.18.250.1) and mo1 (198.18.251.1): two rails on one host
# without the testbed. The namespace disappears with CMD.
in_netns() {
	timeout "${IN_NETNS_TIMEOUT:-300}" unshare --net -- bash -c '
		set -e
		ip link set lo up
		ip link add mo0 type veth peer name mo1
		ip addr add 198.18.250.1/24 dev mo0
		ip addr add 198.18.251.1/24 dev mo1
		ip link set mo0 up
		ip link set mo1 up
		exec "$@"' in_netns "$@"
}

now() {
	date +%s.%N
}

elapsed() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'
}

# run_pair NAME LIMIT RAILS PROG [ARGS...]
# Runs "PROG ARGS" as the server on h1 and "PROG ARGS 198.18.1.1" as the
# client on h2, each for at most LIMIT seconds, with the provider of
# $MRAIL_BUILD, $MRAIL_PRELOAD preloaded, FI_LOG_LEVEL=warn and
# FI_MRAIL_RAILS=RAILS (empty: discovery). NAME passes when both exit 0 and
# both print "<prog>: N of N checks passed"; it fails with the exit codes and
# the lines that say why (and returns 1). Both outputs stay in
# $PAIR_LOGS/{server,client} until the next call.
PAIR_LOGS=
run_pair() {
	local name=$1 limit=$2 rails=$3 prog=$4 tool srv cli ok
	shift 4
	tool=$(basename "$prog")
	local run=(env FI_PROVIDER_PATH="${MRAIL_BUILD:?}/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn ${rails:+FI_MRAIL_RAILS="$rails"})

	[[ -n $PAIR_LOGS ]] || PAIR_LOGS=$(mktemp -d "$TEST_LOGDIR/pair.XXXXXX")
	timeout "$limit" "$TESTBED" exec 1 "${run[@]}" "$prog" "$@" \
		>"$PAIR_LOGS/server" 2>&1 &
	srv=$!
	sleep 0.5
	timeout "$limit" "$TESTBED" exec 2 "${run[@]}" "$prog" "$@" 198.18.1.1 \
		>"$PAIR_LOGS/client" 2>&1
	cli=$?
	wait $srv
	srv=$?
	ok="^$tool: ([0-9]+) of \\1 checks passed"
	if [[ $srv -eq 0 && $cli -eq 0 ]] && grep -qE "$ok" "$PAIR_LOGS/server" &&
	   grep -qE "$ok" "$PAIR_LOGS/client"; then
		pass "$name: $(grep -h 'checks passed' "$PAIR_LOGS/server" "$PAIR_LOGS/client" |
			sed "s/^$tool: //" | paste -sd ';' -)"
	else
		fail "$name" "server exit $srv, client exit $cli (limit $limit s): $(grep -hE \
			'FAIL|checks|rror|sanitizer|signal' "$PAIR_LOGS/server" \
			"$PAIR_LOGS/client" | head -8)"
		return 1
	fi
}

# bad_env_refused VAR VALUE TEXT: fi_info on h1 with VAR=VALUE must not list
# mrail, and its warning must hold TEXT (fixed string).
bad_env_refused() {
	local var=$1 value=$2 text=$3 log=$TEST_LOGDIR/bad-$1.log
	"$TESTBED" exec 1 env FI_PROVIDER_PATH="${MRAIL_BUILD:?}/.libs" \
		LD_PRELOAD="${MRAIL_PRELOAD:-}" FI_LOG_LEVEL=warn "$var=$value" \
		fi_info -p mrail >"$log" 2>&1
	if grep -q "provider: mrail" "$log"; then
		fail "bad $var" "fi_info still lists mrail"
	elif ! grep -qF "$text" "$log"; then
		fail "bad $var" "no warning naming it: $(grep -i mrail "$log" | head -3)"
	else
		pass "bad $var: fi_getinfo fails, the warning names it"
	fi
}
