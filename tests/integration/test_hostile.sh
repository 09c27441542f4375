#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A hostile peer: fi_mrail_hostile's client opens the rails' core providers
# itself and sends the mrail server on another emulated host malformed rail
# messages (bad headers, bad RTS descriptors and ACKs, HELLO, far-ahead
# sequence numbers) between valid ones. The server must report each with
# exactly one FI_EIO error completion and one "dropped a message from a
# peer" warning, drop a second copy of a message without a report (what a
# sender whose rail failed sends), and still deliver the valid messages
# byte for byte.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
testbed=$here/../../ci/testbed
hostile=$build/fabtests-ext/fi_mrail_hostile
port=47597
rails='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1'
logs=$(mktemp -d)

testbed_cleanup_on_exit

"$testbed" up --hosts 2 --rails 2 >/dev/null || { fail testbed "up failed"; finish; }

run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
     FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails")
timeout 120 "$testbed" exec 1 "${run[@]}" "$hostile" -E $port \
	>"$logs/server" 2>"$logs/server.err" &
srv=$!
sleep 0.5
# The attacker does not load mrail, only the core providers.
timeout 120 "$testbed" exec 2 env LD_PRELOAD="${MRAIL_PRELOAD:-}" FI_LOG_LEVEL=warn \
	"$hostile" -E $port 198.18.1.1 \
	>"$logs/client" 2>"$logs/client.err"
cli=$?
wait $srv
srv=$?

# The program's own checks, indented: the runner counts this script's lines.
grep -hE '^(PASS|FAIL): ' "$logs/server" "$logs/client" | sed 's/^/    /'

if [ $srv -eq 0 ] && [ $cli -eq 0 ] && grep -q 'server: .* checks passed' "$logs/server" &&
   grep -q 'client: .* checks passed' "$logs/client"; then
	pass "hostile peer: server and client exit 0 ($(grep -h 'checks passed' "$logs/server" \
		"$logs/client" | sed 's/fi_mrail_hostile: //' | paste -sd ';' -))"
else
	fail "hostile peer" "server exit $srv, client exit $cli: $(grep -hE 'FAIL|rror|sanitizer' \
		"$logs/server" "$logs/server.err" "$logs/client" "$logs/client.err" | head -8)"
fi

announced=$(sed -n 's/.*: \([0-9]*\) malformed messages announced$/\1/p' "$logs/server" |
	awk '{ n += $1 } END { print n + 0 }')
# Warnings are rate-limited (10 a second per endpoint); the ones held back
# are counted in a later warning or when the endpoint closes, so every
# malformed message is accounted for in the log exactly once.
warned=$(grep -c 'dropped a message from a peer' "$logs/server.err")
held=$(sed -n 's/.* \([0-9]*\) more messages from peers were dropped as bad.*/\1/p' \
	"$logs/server.err" | awk '{ n += $1 } END { print n + 0 }')
if [ "$announced" -gt 0 ] && [ $((warned + held)) -eq "$announced" ]; then
	pass "hostile peer: every malformed message accounted for in the log ($warned warned, $held counted in summaries, $announced sent)"
else
	fail "hostile peer" "$warned 'dropped a message from a peer' warnings and $held counted in summaries for $announced malformed messages"
fi
if grep -qE 'AddressSanitizer|runtime error:' "$logs/server.err" "$logs/client.err"; then
	fail "hostile peer" "sanitizer report: $(grep -hE 'AddressSanitizer|runtime error:' \
		"$logs/server.err" "$logs/client.err" | head -3)"
else
	pass "hostile peer: no sanitizer report"
fi

rm -rf "$logs"
finish
