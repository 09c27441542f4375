#!/bin/bash
# mrail's rail policies between emulated hosts, checked exactly through
# FI_MRAIL_GET_STATS on both sides by fi_mrail_policy (every message also
# checked byte for byte):
#   - multiplexing: rr over 2 and 4 rails gives equal eager counts per rail;
#     weighted 3,1 exactly 3:1 over whole cycles; window 4 runs of 4 (per-rail
#     counts after 4, 8, 12 messages); each set by FI_MRAIL_* and by
#     FI_MRAIL_SET_POLICY at run time (GET_POLICY returns what was set);
#   - striping (the reading side's policy): even, and weighted 3,1 reading
#     per rail exactly the bytes of mrail_stripe_weighted's split of 1 MiB
#     messages, by variable and at run time; adaptive and local_dynamic
#     deliver every byte with shares summing to 1;
#   - fi_control with bad input: -FI_EINVAL, policy unchanged;
#   - a bad FI_MRAIL_* value makes fi_getinfo fail, with a warning that
#     names the variable and the value.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
prog=$build/fabtests-ext/fi_mrail_policy
port=47830

testbed_cleanup_on_exit

pair() { # NAME ARGS... (FI_MRAIL_* from the caller's environment)
	local name=$1
	shift
	port=$((port + 1))
	run_pair "$name" 120 '' "$prog" -E $port "$@"
}

# bad_env NAME VAR=VALUE... EXPECTED-LOG-TEXT: fi_getinfo must fail (exit 3)
# and the warning must contain the text.
bad_env() {
	local name=$1 expect=${!#} log rc
	local -a vars=("${@:2:$#-2}")
	log=$TEST_LOGDIR/bad-env-$port.log
	port=$((port + 1))
	"$TESTBED" exec 1 env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
		FI_LOG_LEVEL=warn "${vars[@]}" "$prog" -g >"$log" 2>&1
	rc=$?
	if [ $rc -ne 3 ]; then
		fail "$name" "fi_getinfo did not fail as expected (exit $rc, want 3): $(tail -n 3 "$log")"
	elif ! grep -qF -- "$expect" "$log"; then
		fail "$name" "the log lacks '$expect': $(grep -i mrail "$log" | head -3)"
	else
		pass "$name"
	fi
}

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"

pair "rr over 2 rails (default)" -x mux -c 2,4,8,64
FI_MRAIL_POLICY=weighted FI_MRAIL_WEIGHTS=3,1 \
	pair "weighted 3,1 by variables" -x mux -c 4,8,40
FI_MRAIL_POLICY=window FI_MRAIL_WINDOW=4 \
	pair "window 4 by variables" -x mux -c 4,8,12,13,20
pair "weighted 3,1 by FI_MRAIL_SET_POLICY" -x mux -c 4,8,40 -P weighted -w 3,1
pair "window 4 by FI_MRAIL_SET_POLICY" -x mux -c 4,8,12 -P window -W 4
pair "rr by FI_MRAIL_SET_POLICY after window" -x mux -c 2,6 -P rr -W 4
FI_MRAIL_POLICY=local_dynamic \
	pair "local_dynamic messages (data and stats only)" -x mux -c 8,32

pair "even striping (default), 1 MiB" -x stripe -n 2
FI_MRAIL_STRIPE_POLICY=weighted FI_MRAIL_WEIGHTS=3,1 \
	pair "weighted striping 3,1 by variables, 1 MiB" -x stripe -n 2
pair "weighted striping 3,1 by FI_MRAIL_SET_POLICY, 1 MiB" -x stripe -n 2 -X weighted -w 3,1
FI_MRAIL_STRIPE_POLICY=weighted FI_MRAIL_WEIGHTS=3,1 FI_MRAIL_MIN_STRIPE=300000 \
	pair "weighted striping, min stripe drops the light rail" -x stripe -n 1
FI_MRAIL_STRIPE_POLICY=adaptive FI_MRAIL_ADAPTIVE_ALPHA=0.3 \
	pair "adaptive striping (functional), 1 MiB" -x stripe -n 12
pair "local_dynamic striping by FI_MRAIL_SET_POLICY" -x stripe -n 3 -X local_dynamic
pair "fi_control with bad input" -x control

bad_env "bad FI_MRAIL_POLICY" FI_MRAIL_POLICY=fastest 'FI_MRAIL_POLICY="fastest" is invalid'
bad_env "striping name in FI_MRAIL_POLICY" FI_MRAIL_POLICY=even 'FI_MRAIL_POLICY="even" is invalid'
bad_env "bad FI_MRAIL_STRIPE_POLICY" FI_MRAIL_STRIPE_POLICY=zigzag 'FI_MRAIL_STRIPE_POLICY="zigzag" is invalid'
bad_env "FI_MRAIL_STRIPE_POLICY=dynamic not wired" FI_MRAIL_STRIPE_POLICY=dynamic 'not wired in this release'
bad_env "FI_MRAIL_STRIPE_POLICY=hybrid not wired" FI_MRAIL_STRIPE_POLICY=hybrid 'FI_MRAIL_STRIPE_POLICY="hybrid" is invalid'
bad_env "FI_MRAIL_WEIGHTS count != rails" FI_MRAIL_WEIGHTS=1,2,3 'FI_MRAIL_WEIGHTS="1,2,3" is invalid: 3 weights for 2 rails'
bad_env "bad FI_MRAIL_WEIGHTS" FI_MRAIL_WEIGHTS=0,0 'FI_MRAIL_WEIGHTS="0,0" is invalid'
bad_env "bad FI_MRAIL_WINDOW" FI_MRAIL_WINDOW=0 'FI_MRAIL_WINDOW="0" is invalid'
bad_env "bad FI_MRAIL_ADAPTIVE_ALPHA" FI_MRAIL_ADAPTIVE_ALPHA=1 'FI_MRAIL_ADAPTIVE_ALPHA="1" is invalid'
bad_env "bad FI_MRAIL_MIN_STRIPE" FI_MRAIL_MIN_STRIPE=16k 'FI_MRAIL_MIN_STRIPE="16k" is invalid'
bad_env "bad FI_MRAIL_STRIPE_RATIO" FI_MRAIL_STRIPE_RATIO=2 'FI_MRAIL_STRIPE_RATIO="2" is invalid'

"$TESTBED" up --hosts 2 --rails 4 >/dev/null || fail testbed "up failed"
pair "rr over 4 rails" -x mux -c 4,8,12,64
FI_MRAIL_POLICY=window FI_MRAIL_WINDOW=4 \
	pair "window 4 over 4 rails" -x mux -c 4,8,12,16,20
FI_MRAIL_POLICY=weighted FI_MRAIL_WEIGHTS=1,2,3,4 \
	pair "weighted 1,2,3,4 over 4 rails" -x mux -c 10,40
pair "even striping over 4 rails, 1 MiB" -x stripe -n 2
pair "weighted striping 4,2,1,1 by FI_MRAIL_SET_POLICY, 4 rails" -x stripe -n 2 -X weighted -w 4,2,1,1

finish
